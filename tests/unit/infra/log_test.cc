#include "infra/log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "elasticjob/api/job_log.h"
#include "unit/infra/capturing_logger.h"

namespace elasticjob::infra {
namespace {

TEST(JsonLogTest, EscapesQuotesControlsAndInvalidUtf8) {
  EXPECT_EQ(JsonEscape("a\"b\\c\nd\te\x01"), "a\\\"b\\\\c\\nd\\te\\u0001");
  EXPECT_EQ(JsonEscape("北京"), "北京");  // valid UTF-8 kept
  EXPECT_EQ(JsonEscape("x\xff"
                       "y"),
            "x\\ufffdy");                               // an invalid byte replaced
  EXPECT_EQ(JsonEscape("\xe5\x8c"), "\\ufffd\\ufffd");  // a cut sequence
}

TEST(JsonLogTest, OneObjectWithEveryField) {
  auto j = nlohmann::json::parse(JsonLogLine(
      "WARN", {.job = "orderSync", .item = 2, .instance = "10.0.0.1@-@42"}, "it \"failed\""));
  EXPECT_EQ(j["level"], "WARN");
  EXPECT_EQ(j["job"], "orderSync");
  EXPECT_EQ(j["item"], 2);
  EXPECT_EQ(j["instance"], "10.0.0.1@-@42");
  EXPECT_EQ(j["message"], "it \"failed\"");
  const std::string time = j["time"];
  ASSERT_EQ(time.size(), 24u) << time;  // 2026-01-02T03:04:05.678Z
  EXPECT_EQ(time[10], 'T');
  EXPECT_EQ(time.back(), 'Z');
}

TEST(JsonLogTest, FieldsNotGivenComeFromTheMessageOrAreNull) {
  auto a = nlohmann::json::parse(
      JsonLogLine("WARN", {}, "job=orderSync instance=10.0.0.1@-@42 items=0: not cleared"));
  EXPECT_EQ(a["job"], "orderSync");
  EXPECT_EQ(a["instance"], "10.0.0.1@-@42");
  EXPECT_TRUE(a["item"].is_null());
  auto b = nlohmann::json::parse(JsonLogLine("INFO", {}, "job 'my job' item 3: threw"));
  EXPECT_EQ(b["job"], "my job");
  EXPECT_EQ(b["item"], 3);
  auto c = nlohmann::json::parse(JsonLogLine("INFO", {}, "the job runs without a port"));
  EXPECT_TRUE(c["job"].is_null());  // prose, not a job name
  EXPECT_TRUE(c["instance"].is_null());
}

TEST(LoggerTest, TheBuiltInLoggersTextLineIsTheLevelAndMessageAndAJobLogLineNamesItsItem) {
  auto logger = MakeStderrLogger();
  ::testing::internal::CaptureStderr();
  logger->Log(LogLevel::kWarn, {}, "job 'a': config: bad");
  logger->Log(LogLevel::kInfo, {.job = "a", .item = 3, .instance = {}}, "synced");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "elasticjob WARN job 'a': config: bad\n"
            "elasticjob INFO job=a item=3: synced\n");
}

TEST(LoggerTest, TheBuiltInLoggerWritesOneJsonObjectPerLineInJsonFormat) {
  SetLogFormat(LogFormat::kJson);
  ::testing::internal::CaptureStderr();
  MakeStderrLogger()->Log(LogLevel::kError, {.job = "a", .item = std::nullopt, .instance = "i"},
                          "boom");
  const std::string out = ::testing::internal::GetCapturedStderr();
  SetLogFormat(LogFormat::kText);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.back(), '\n');
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["level"], "ERROR");
  EXPECT_EQ(j["job"], "a");
  EXPECT_EQ(j["instance"], "i");
  EXPECT_EQ(j["message"], "boom");
}

TEST(LoggerTest, SetDefaultLoggerTakesTheLinesOfCodeOutsideAnyJobAndNullRestoresStderr) {
  auto capture = std::make_shared<test_support::CapturingLogger>();
  SetDefaultLogger(capture);
  ::testing::internal::CaptureStderr();
  LogLine("WARN", "registry 10.0.0.1:2181: session expired");
  LogLine(nullptr, LogLevel::kInfo, {.job = "a", .item = std::nullopt, .instance = {}}, "x");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  SetDefaultLogger(nullptr);
  ::testing::internal::CaptureStderr();
  LogLine("WARN", "after");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "elasticjob WARN after\n");
  auto lines = capture->lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].level, LogLevel::kWarn);
  EXPECT_EQ(lines[0].message, "registry 10.0.0.1:2181: session expired");
  EXPECT_EQ(lines[1].job, "a");
}

TEST(LoggerTest, TheNullLoggerDropsEveryLine) {
  ::testing::internal::CaptureStderr();
  LogLine(NullLogger().get(), LogLevel::kError, {}, "dropped");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace elasticjob::infra
