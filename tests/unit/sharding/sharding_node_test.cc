#include "sharding/sharding_node.h"

#include <gtest/gtest.h>

namespace elasticjob::sharding {
namespace {

TEST(ShardingNodeTest, ItemNamesAreDecimalDigitsWithinInt) {
  EXPECT_EQ(ParseItemName("0"), 0);
  EXPECT_EQ(ParseItemName("17"), 17);
  EXPECT_EQ(ParseItemName("007"), 7);
  EXPECT_EQ(ParseItemName("2147483647"), 2147483647);
  // std::stoi took the first three as 12, 5 and 1 and threw for the out-of-range one.
  for (const char* bad : {"12abc", " 5", "1e5", "+1", "-1", "-0", "", "x", "2147483648",
                          "99999999999", "1 ", "0x10"}) {
    EXPECT_EQ(ParseItemName(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace elasticjob::sharding
