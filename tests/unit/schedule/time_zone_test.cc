#include "elasticjob/schedule/time_zone.h"

#include <gtest/gtest.h>

namespace elasticjob {
namespace {

using std::chrono::milliseconds;
using TP = std::chrono::system_clock::time_point;

TEST(TimeZoneTest, ParsesIanaIds) {
  auto z = TimeZone::Parse("Asia/Shanghai");
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->id(), "Asia/Shanghai");
  EXPECT_EQ(z->OffsetSecondsAt(TP{}), 8 * 3600);
}

TEST(TimeZoneTest, ParsesJavaCustomOffsets) {
  for (const char* id : {"GMT+08:00", "GMT+8", "GMT+0800", "GMT+08"}) {
    auto z = TimeZone::Parse(id);
    ASSERT_TRUE(z.ok()) << id << ": " << z.status();
    EXPECT_EQ(z->id(), "GMT+08:00") << id;
    EXPECT_EQ(z->OffsetSecondsAt(TP{}), 8 * 3600);
  }
  auto z = TimeZone::Parse("GMT-03:30");
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->OffsetSecondsAt(TP{}), -(3 * 3600 + 1800));
  EXPECT_EQ(TimeZone::Parse("GMT+00:00")->id(), "GMT");
}

TEST(TimeZoneTest, ParsesJavaShortIds) {
  auto z = TimeZone::Parse("CTT");
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->id(), "Asia/Shanghai");
}

TEST(TimeZoneTest, RejectsUnknownAndMalformedIdsNamingThem) {
  for (const char* id : {"", "Mars/Olympus", "GMT+24:00", "GMT+8:0", "GMT+", "../../etc/passwd",
                         "/etc/localtime", "GMT+08:60"}) {
    auto z = TimeZone::Parse(id);
    ASSERT_FALSE(z.ok()) << id;
    EXPECT_EQ(z.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(z.status().message().find("timeZone"), std::string::npos);
    if (*id != '\0') {
      EXPECT_NE(z.status().message().find(id), std::string::npos) << id;
    }
  }
}

TEST(TimeZoneTest, FormatsIso8601WithOffset) {
  auto z = TimeZone::Parse("America/New_York");
  EXPECT_EQ(z->FormatIso8601(TP{} + milliseconds(1793514600000)), "2026-11-01T01:30:00-05:00");
  EXPECT_EQ(z->FormatIso8601(TP{} + milliseconds(1793514600250)), "2026-11-01T01:30:00.250-05:00");
  EXPECT_EQ(TimeZone::Utc().FormatIso8601(TP{}), "1970-01-01T00:00:00+00:00");
}

TEST(TimeZoneTest, ParsesIso8601InZoneOrWithOffset) {
  auto z = TimeZone::Parse("Asia/Shanghai");
  EXPECT_EQ(*z->ParseIso8601("1970-01-01T08:00:00"), TP{});
  EXPECT_EQ(*z->ParseIso8601("1970-01-01T00:00:00Z"), TP{});
  EXPECT_EQ(*z->ParseIso8601("1970-01-01T01:00:00+01:00"), TP{});
  EXPECT_EQ(*z->ParseIso8601("1970-01-01T08:00:00.5"), TP{} + milliseconds(500));
  EXPECT_FALSE(z->ParseIso8601("1970-13-01T00:00:00").ok());
  EXPECT_FALSE(z->ParseIso8601("2026-02-30T00:00:00").ok());
  EXPECT_FALSE(z->ParseIso8601("yesterday").ok());
}

TEST(TimeZoneTest, Iso8601TimesOutsideTheClocksRangeAreRefused) {
  // Found by the cron fuzzer: year 54 overflowed the nanosecond clock (UBSan).
  auto z = TimeZone::Parse("Asia/Shanghai");
  for (const char* text : {"0054-04-20", "0054-04-20T00:00:00Z", "1677-01-01T00:00:00",
                           "2262-12-31T00:00:00+01:00", "9999-12-31T23:59:59"}) {
    auto t = z->ParseIso8601(text);
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_NE(t.status().message().find("out of range (years 1678 to 2261)"), std::string::npos)
        << t.status();
  }
  EXPECT_TRUE(z->ParseIso8601("1678-01-01T00:00:00Z").ok());
  EXPECT_TRUE(z->ParseIso8601("2261-12-31T23:59:59").ok());
}

}  // namespace
}  // namespace elasticjob
