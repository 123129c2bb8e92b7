#include "elasticjob/schedule/cron_expression.h"

#include <gtest/gtest.h>

#include <vector>

namespace elasticjob {
namespace {

using TP = CronExpression::TimePoint;

class CronExpressionTest : public ::testing::Test {
 protected:
  // The next `n` fire times after `from` (ISO-8601 in `zone`), formatted in `zone`.
  static std::vector<std::string> Next(const std::string& expr, const std::string& zone_id,
                                       const std::string& from, int n) {
    auto cron = CronExpression::Parse(expr);
    EXPECT_TRUE(cron.ok()) << cron.status();
    auto zone = TimeZone::Parse(zone_id);
    EXPECT_TRUE(zone.ok()) << zone.status();
    std::vector<std::string> out;
    if (!cron.ok() || !zone.ok()) return out;
    // NextFireTimes chains NextFireTimeAfter: every case below checks both.
    for (TP next : cron->NextFireTimes(*zone->ParseIso8601(from), *zone, n)) {
      out.push_back(zone->FormatIso8601(next));
    }
    return out;
  }

  static std::string Error(const std::string& expr) {
    auto cron = CronExpression::Parse(expr);
    EXPECT_FALSE(cron.ok()) << expr;
    return cron.ok() ? "" : cron.status().message();
  }
};

TEST_F(CronExpressionTest, YearsFarPastQuartzsLimitNeverFire) {
  // Found by the cron fuzzer: setting year 320600206 overflowed the calendar's milliseconds
  // (UBSan: signed overflow) before the search gave up past 2999 as Quartz does.
  for (const char* expr :
       {" 1 15 10 L-1 * ? 320600206", "0 0 0 1 1 ? 3000", "0 0 0 * * ? 2147483647"}) {
    EXPECT_EQ(Next(expr, "UTC", "2026-03-29T00:30:00Z", 1), std::vector<std::string>{}) << expr;
  }
  EXPECT_EQ(Next("0 0 0 1 1 ? 2030", "UTC", "2026-03-29T00:30:00Z", 1),
            std::vector<std::string>{"2030-01-01T00:00:00+00:00"});
}

TEST_F(CronExpressionTest, EveryFiveSeconds) {
  EXPECT_EQ(Next("0/5 * * * * ?", "Asia/Shanghai", "2026-11-22T08:00:00", 3),
            (std::vector<std::string>{"2026-11-22T08:00:05+08:00", "2026-11-22T08:00:10+08:00",
                                      "2026-11-22T08:00:15+08:00"}));
}

TEST_F(CronExpressionTest, StrictlyAfterTheGivenInstant) {
  EXPECT_EQ(Next("0 0 12 * * ?", "UTC", "2026-01-01T12:00:00", 1),
            (std::vector<std::string>{"2026-01-02T12:00:00+00:00"}));
  EXPECT_EQ(Next("0 0 12 * * ?", "UTC", "2026-01-01T11:59:59.999", 1),
            (std::vector<std::string>{"2026-01-01T12:00:00+00:00"}));
}

TEST_F(CronExpressionTest, RangesStepsListsAndNames) {
  EXPECT_EQ(Next("0 3-59/7 * * * ?", "UTC", "2026-01-01T00:00:00", 3),
            (std::vector<std::string>{"2026-01-01T00:03:00+00:00", "2026-01-01T00:10:00+00:00",
                                      "2026-01-01T00:17:00+00:00"}));
  EXPECT_EQ(Next("0 0 9 ? JAN,MAR MON-FRI", "UTC", "2026-01-30T10:00:00", 2),
            (std::vector<std::string>{"2026-03-02T09:00:00+00:00", "2026-03-03T09:00:00+00:00"}));
  EXPECT_EQ(Next("0 0 22-2 * * ?", "UTC", "2026-01-01T23:30:00", 3),  // wraps past midnight
            (std::vector<std::string>{"2026-01-02T00:00:00+00:00", "2026-01-02T01:00:00+00:00",
                                      "2026-01-02T02:00:00+00:00"}));
}

TEST_F(CronExpressionTest, LastDayForms) {
  EXPECT_EQ(Next("0 0 0 L * ?", "UTC", "2026-02-01T00:00:00", 2),
            (std::vector<std::string>{"2026-02-28T00:00:00+00:00", "2026-03-31T00:00:00+00:00"}));
  EXPECT_EQ(Next("0 0 0 L-2 * ?", "UTC", "2028-02-01T00:00:00", 1),
            (std::vector<std::string>{"2028-02-27T00:00:00+00:00"}));
  // LW: last weekday. 2026-05-31 is a Sunday, so Friday the 29th.
  EXPECT_EQ(Next("0 0 0 LW * ?", "UTC", "2026-05-01T00:00:00", 1),
            (std::vector<std::string>{"2026-05-29T00:00:00+00:00"}));
  // 6L: last Friday of the month.
  EXPECT_EQ(Next("0 0 0 ? * 6L", "UTC", "2026-11-01T00:00:00", 1),
            (std::vector<std::string>{"2026-11-27T00:00:00+00:00"}));
}

TEST_F(CronExpressionTest, NearestWeekdayAndNthWeekday) {
  // 15W in August 2026: the 15th is a Saturday, so Friday the 14th.
  EXPECT_EQ(Next("0 0 0 15W * ?", "UTC", "2026-08-01T00:00:00", 1),
            (std::vector<std::string>{"2026-08-14T00:00:00+00:00"}));
  // 1W when the 1st is a Saturday moves forward to Monday the 3rd (never to last month).
  EXPECT_EQ(Next("0 0 0 1W * ?", "UTC", "2026-07-31T00:00:00", 1),
            (std::vector<std::string>{"2026-08-03T00:00:00+00:00"}));
  // 6#3: third Friday.
  EXPECT_EQ(Next("0 0 0 ? * 6#3", "UTC", "2026-11-01T00:00:00", 1),
            (std::vector<std::string>{"2026-11-20T00:00:00+00:00"}));
  // FRI#5 exists only in some months.
  EXPECT_EQ(Next("0 0 12 ? * FRI#5", "GMT+08:00", "2026-01-01T00:00:00", 2),
            (std::vector<std::string>{"2026-01-30T12:00:00+08:00", "2026-05-29T12:00:00+08:00"}));
}

TEST_F(CronExpressionTest, SpringForwardGapDoesNotFireThatDay) {
  EXPECT_EQ(Next("0 30 2 * * ?", "America/New_York", "2026-03-07T12:00:00", 2),
            (std::vector<std::string>{"2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"}));
}

TEST_F(CronExpressionTest, FallBackRepeatedHourFiresOnceAtStandardTime) {
  EXPECT_EQ(Next("0 30 1 * * ?", "America/New_York", "2026-10-31T12:00:00", 2),
            (std::vector<std::string>{"2026-11-01T01:30:00-05:00", "2026-11-02T01:30:00-05:00"}));
}

TEST_F(CronExpressionTest, YearsAndNeverAgain) {
  EXPECT_EQ(Next("0 0 0 1 1 ? 2027-2028", "UTC", "2026-06-01T00:00:00", 5),
            (std::vector<std::string>{"2027-01-01T00:00:00+00:00", "2028-01-01T00:00:00+00:00"}));
  EXPECT_TRUE(Next("0 0 0 * * ? 2020", "UTC", "2026-06-01T00:00:00", 1).empty());
  EXPECT_TRUE(Next("0 0 0 30 2 ?", "UTC", "2026-06-01T00:00:00", 1).empty());
  EXPECT_TRUE(Next("0 0 0 ? * 9#2", "UTC", "2026-06-01T00:00:00", 1).empty());
}

TEST_F(CronExpressionTest, LowerCaseAndExtraWhitespaceAreAccepted) {
  EXPECT_EQ(Next("0  0\t12 ? * mon", "UTC", "2026-11-22T00:00:00", 1),
            (std::vector<std::string>{"2026-11-23T12:00:00+00:00"}));
}

TEST_F(CronExpressionTest, ErrorsNameTheFieldAndWhy) {
  EXPECT_EQ(Error("0 0 25 * * ?"),
            "cron '0 0 25 * * ?': hour field '25': hour values must be between 0 and 23");
  EXPECT_NE(Error("0 0 0 5 * MON").find("both a day-of-month and a day-of-week"),
            std::string::npos);
  EXPECT_NE(Error("0 0 0 ? * ?").find("'?' can only be specified for day-of-month -OR-"),
            std::string::npos);
  EXPECT_NE(Error("0 0 0 * *").find("expected 6 or 7 fields"), std::string::npos);
  EXPECT_NE(Error("*/60 * * * * ?").find("second field '*/60'"), std::string::npos);
  EXPECT_NE(Error("0 0 0 ? * MON#6").find("between 1 and 5"), std::string::npos);
  EXPECT_NE(Error("0 0 0 ? JUX *").find("month field 'JUX': invalid month value"),
            std::string::npos);
  EXPECT_NE(Error("0 0 0 ? * 1L,2").find("'L' cannot be combined"), std::string::npos);
  EXPECT_NE(Error("0 0 0 32 * ?").find("between 1 and 31"), std::string::npos);
  EXPECT_NE(Error("0 0 0 * * ? 2030-2020").find("year field"), std::string::npos);
  EXPECT_NE(Error("L 0 0 * * ?").find("second field 'L': has no values"), std::string::npos);
}

TEST_F(CronExpressionTest, RejectsZeroWeekdayThatQuartzLoopsOn) {
  EXPECT_NE(Error("0 0 0 0W * ?").find("day-of-month"), std::string::npos);
}

TEST_F(CronExpressionTest, IsSatisfiedByIgnoresMilliseconds) {
  auto cron = CronExpression::Parse("0/5 * * * * ?");
  auto utc = TimeZone::Utc();
  EXPECT_TRUE(cron->IsSatisfiedBy(TP{} + std::chrono::milliseconds(10'400), utc));
  EXPECT_FALSE(cron->IsSatisfiedBy(TP{} + std::chrono::milliseconds(11'000), utc));
}

}  // namespace
}  // namespace elasticjob
