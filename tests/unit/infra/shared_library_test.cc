#include "infra/shared_library.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "infra/thread_name.h"

namespace elasticjob::infra {
namespace {

TEST(SharedLibraryTest, ALibraryThatCannotBeLoadedIsNamedWithWhatNeedsIt) {
  auto library = LoadSharedLibrary("libelasticjob-missing.so.9", "the test's purpose");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(library.status().message().find("libelasticjob-missing.so.9 cannot be loaded"),
            std::string::npos)
      << library.status().message();
  EXPECT_NE(library.status().message().find("the test's purpose"), std::string::npos);
}

TEST(SharedLibraryTest, AFunctionResolvedFromALoadedLibraryIsThatFunction) {
  auto library = LoadSharedLibrary("libc.so.6", "the test");
  ASSERT_TRUE(library.ok()) << library.status().message();
  decltype(&std::strlen) strlen_from_libc = nullptr;
  ASSERT_TRUE(ResolveFunction(*library, "libc.so.6", "strlen", strlen_from_libc).ok());
  ASSERT_NE(strlen_from_libc, nullptr);
  EXPECT_EQ(strlen_from_libc("four"), 4u);
}

TEST(SharedLibraryTest, AMissingSymbolIsNamedWithItsLibrary) {
  auto library = LoadSharedLibrary("libc.so.6", "the test");
  ASSERT_TRUE(library.ok());
  void (*missing)() = nullptr;
  Status s = ResolveFunction(*library, "libc.so.6", "elasticjob_no_such_function", missing);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("libc.so.6 has no elasticjob_no_such_function"), std::string::npos)
      << s.message();
  EXPECT_EQ(missing, nullptr);
}

TEST(ThreadNameTest, AThreadNamedIsShownByThatNameCutToFifteenCharacters) {
  const std::string before = ThisThreadName();
  NameThisThread("ej-a-name-longer-than-fifteen");
  EXPECT_EQ(ThisThreadName(), "ej-a-name-longe");
  NameThisThread(before);
  EXPECT_EQ(ThisThreadName(), before);
}

}  // namespace
}  // namespace elasticjob::infra
