#include "infra/free_memory.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace elasticjob::infra {
namespace {

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#elif defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

bool ThreadCacheOn() {
  bool on = false;
  size_t len = sizeof(on);
  EXPECT_EQ(mallctl("thread.tcache.enabled", &on, &len, nullptr, 0), 0);
  return on;
}

TEST(FreeMemoryTest, ReleaseUsesTheAllocatorTheProcessLinks) {
  const std::string found = ReleaseFreeMemory();
  if (kSanitized) {
    EXPECT_EQ(found, "none");
  } else {
    // This binary links the executables' allocator (tests/CMakeLists.txt): jemalloc.
    ASSERT_NE(mallctl, nullptr);
    EXPECT_EQ(found, "jemalloc");
  }
}

TEST(FreeMemoryTest, NoThreadCacheTurnsTheCacheOffForItsScopeOnly) {
  if (kSanitized || mallctl == nullptr) GTEST_SKIP() << "no jemalloc in this build";
  ASSERT_TRUE(ThreadCacheOn());
  {
    ScopedNoThreadCache off;
    EXPECT_FALSE(ThreadCacheOn());
    {
      ScopedNoThreadCache nested;  // already off: leaves it off
      EXPECT_FALSE(ThreadCacheOn());
    }
    EXPECT_FALSE(ThreadCacheOn());
  }
  EXPECT_TRUE(ThreadCacheOn());
}

}  // namespace
}  // namespace elasticjob::infra
