// Differential test: our String.hashCode (which decides ODEVITY and ROUND_ROBIN) against the
// JVM's own, on generated names mixing ASCII, CJK, emoji (surrogate pairs) and edge values.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "infra/java_string.h"
#include "reference/hex.h"
#include "reference/reference_oracle.h"

namespace elasticjob {
namespace {

TEST(JavaStringHashTest, MatchesTheJvmOnGeneratedNames) {
  const std::vector<std::string> pieces = {"a",
                                           "Z",
                                           "0",
                                           "_",
                                           "-",
                                           ".",
                                           "订单",
                                           "同步",
                                           "作业",
                                           "😀",
                                           "𝄞",
                                           "é",
                                           "ß",
                                           "\xef\xbf\xbd",
                                           "job",
                                           " ",
                                           "\xe2\x80\xa8",
                                           "\xf0\x9f\x87\xa8\xf0\x9f\x87\xb3"};
  std::mt19937 rng(5);
  std::vector<std::string> names = {"",      "polygenelubricants", "1", "2", "3",
                                    "myJob", "com.acme.OrderJob"};
  for (int i = 0; i < 3000; ++i) {
    std::string n;
    int len = std::uniform_int_distribution<int>(1, 40)(rng);
    for (int k = 0; k < len; ++k) {
      n += pieces[std::uniform_int_distribution<size_t>(0, pieces.size() - 1)(rng)];
    }
    names.push_back(n);
  }
  std::vector<std::string> lines;
  for (const auto& n : names) lines.push_back(testing::Hex(n));
  auto expected = testing::RunJavaOracle("/usr/share/java", ELASTICJOB_JAVA_STRING_ORACLE, lines);
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(std::to_string(infra::JavaStringHashCode(names[i])), (*expected)[i])
        << "name '" << names[i] << "'";
  }
}

}  // namespace
}  // namespace elasticjob
