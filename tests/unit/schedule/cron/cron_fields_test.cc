#include "schedule/cron/cron_fields.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <set>

namespace elasticjob::schedule {
namespace {

// IntSet answers as Java's TreeSet (std::set here) does, whatever the values: bits below
// 128, ranges above (years) and below zero, added in any order, adjacent or not.
TEST(IntSetTest, AnswersAsASortedSetForRandomValuesOfEveryKind) {
  std::mt19937 rng(42);
  for (int round = 0; round < 500; ++round) {
    IntSet set;
    std::set<int> want;
    const int n = static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      int v = 0;
      switch (rng() % 4) {
        case 0:
          v = static_cast<int>(rng() % 128);
          break;
        case 1:
          v = 1970 + static_cast<int>(rng() % 40);
          break;  // sparse years
        case 2:
          v = 2000 + static_cast<int>(rng() % 8);
          break;  // runs that merge
        default:
          v = -1 - static_cast<int>(rng() % 5);
          break;
      }
      set.Add(v);
      want.insert(v);
    }
    ASSERT_EQ(set.empty(), want.empty()) << round;
    for (int q = -10; q < 2100; ++q) {
      auto it = want.lower_bound(q);
      auto got = set.LowerBound(q);
      ASSERT_EQ(got.has_value(), it != want.end()) << round << " " << q;
      if (got) {
        ASSERT_EQ(*got, *it) << round << " " << q;
      }
      ASSERT_EQ(set.Contains(q), want.count(q) > 0) << round << " " << q;
    }
    if (!want.empty()) {
      EXPECT_EQ(set.First(), *want.begin()) << round;
      EXPECT_EQ(set.Last(), *want.rbegin()) << round;
      EXPECT_EQ(set.LowerBound(std::numeric_limits<int>::min()), *want.begin()) << round;
    }
  }
}

TEST(IntSetTest, AYearFieldOfEveryYearIsOneRange) {
  auto fields = ParseCronFields("0 0 0 * * ?", 2126);
  ASSERT_TRUE(fields.ok()) << fields.status();
  // Quartz's set holds its `*` marker (99) and every year from 1970 to MAX_YEAR.
  EXPECT_TRUE(fields->years.Contains(kAllSpec));
  EXPECT_EQ(fields->years.LowerBound(128), 1970);
  EXPECT_EQ(fields->years.Last(), 2126);
  EXPECT_EQ(fields->years.LowerBound(2050), 2050);
  EXPECT_FALSE(fields->years.LowerBound(2127).has_value());
  EXPECT_EQ(fields->years.range_count(), 1u);
}

}  // namespace
}  // namespace elasticjob::schedule
