#include "infra/log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

}  // namespace
}  // namespace elasticjob::infra
