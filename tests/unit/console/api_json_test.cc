// The console API's JSON: configurations both ways, the field an error names, statuses.
#include "console/api_json.h"

#include <gtest/gtest.h>

namespace elasticjob::console {
namespace {

TEST(ConsoleApiJsonTest, ConfigRoundTripsThroughJson) {
  auto config = JobConfiguration::Builder("orders", 3)
                    .Cron("0/5 * * * * ?")
                    .TimeZone("Asia/Shanghai")
                    .Description("<b>html</b> stays as is")
                    .SetProperty("script.command.line", "echo hi")
                    .JobListenerTypes({"a", "b"})
                    .Build();
  ASSERT_TRUE(config.ok());
  nlohmann::json j = ConfigToJson(*config);
  EXPECT_EQ(j["cron"], "0/5 * * * * ?");
  EXPECT_EQ(j["shardingTotalCount"], 3);
  EXPECT_EQ(j["description"], "<b>html</b> stays as is");
  EXPECT_TRUE(j["label"].is_null());
  JobConfiguration back;
  ASSERT_TRUE(ConfigFromJson(j, &back).ok());
  EXPECT_EQ(back, *config);
}

TEST(ConsoleApiJsonTest, ExecutionControlSettingsRoundTripAndNameTheirField) {
  auto config = JobConfiguration::Builder("orders", 2)
                    .FixedRate(std::chrono::seconds(30))
                    .TimeoutMs(5000)
                    .MaxRetries(2)
                    .RetryIntervalMs(100)
                    .Build();
  ASSERT_TRUE(config.ok());
  nlohmann::json j = ConfigToJson(*config);
  EXPECT_EQ(j["fixedRate"], "30s");
  EXPECT_TRUE(j["fixedDelay"].is_null());
  EXPECT_EQ(j["timeoutMs"], 5000);
  EXPECT_EQ(j["maxRetries"], 2);
  EXPECT_EQ(j["retryIntervalMs"], 100);
  JobConfiguration back;
  ASSERT_TRUE(ConfigFromJson(j, &back).ok());
  EXPECT_EQ(back, *config);
  Status bad = ConfigFromJson({{"fixedRate", "soon"}}, &back);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("fixedRate"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("'soon'"), std::string::npos) << bad.message();
  // An empty input (the editor's) clears it.
  ASSERT_TRUE(ConfigFromJson({{"fixedRate", ""}}, &back).ok());
  EXPECT_EQ(back.fixed_rate.count(), 0);
}

TEST(ConsoleApiJsonTest, PartialJsonKeepsTheOtherFields) {
  auto config = JobConfiguration::Builder("orders", 3).Cron("0/5 * * * * ?").Build();
  ASSERT_TRUE(config.ok());
  JobConfiguration edited = *config;
  ASSERT_TRUE(ConfigFromJson({{"cron", "0 0 * * * ?"}, {"timeZone", nullptr}}, &edited).ok());
  EXPECT_EQ(edited.cron, "0 0 * * * ?");
  EXPECT_EQ(edited.sharding_total_count, 3);
  EXPECT_FALSE(edited.time_zone.has_value());
}

TEST(ConsoleApiJsonTest, NamesTheFieldOfAWrongValue) {
  JobConfiguration c;
  Status s = ConfigFromJson({{"shardingTotalCount", "3"}}, &c);
  EXPECT_EQ(s.message(), "shardingTotalCount: expected an integer, got \"3\"");
  EXPECT_EQ(FieldOf(s.message()), "shardingTotalCount");
  s = ConfigFromJson({{"cronn", "x"}}, &c);
  EXPECT_EQ(s.message(), "cronn: unknown configuration field");
  s = ConfigFromJson({{"props", {{"k", 1}}}}, &c);
  EXPECT_EQ(FieldOf(s.message()), "props");
  EXPECT_EQ(ConfigFromJson(nlohmann::json::array(), &c).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FieldOf("config: cron: bad"), "cron");
  EXPECT_EQ(FieldOf("jobListenerTypes[1]: must not be empty"), "jobListenerTypes");
  EXPECT_EQ(FieldOf("job 'x' not found"), "");
}

TEST(ConsoleApiJsonTest, MapsStatusesToHttp) {
  EXPECT_EQ(HttpStatusOf(InvalidArgument("x")), 400);
  EXPECT_EQ(HttpStatusOf(NotFound("x")), 404);
  EXPECT_EQ(HttpStatusOf(Status(StatusCode::kAlreadyExists, "x")), 409);
  EXPECT_EQ(HttpStatusOf(FailedPrecondition("x")), 409);
  EXPECT_EQ(HttpStatusOf(Status(StatusCode::kConnectionLoss, "x")), 503);
  EXPECT_EQ(HttpStatusOf(Status(StatusCode::kUnavailable, "x")), 503);
  EXPECT_EQ(HttpStatusOf(Internal("x")), 500);
}

// The overview's statistics: completed executions per bucket, the success rate, and the
// failures that were timeouts (timeoutMs) counted apart.
TEST(ConsoleApiJsonTest, ExecutionStatsCountTimeoutsApart) {
  auto at = [](int64_t ms) { return Clock::WallTime(std::chrono::milliseconds(ms)); };
  auto run = [&](int64_t start, bool success, std::string cause) {
    JobExecutionEvent e;
    e.job_name = "j";
    e.start_time = at(start);
    e.complete_time = at(start + 10);
    e.success = success;
    e.failure_cause = std::move(cause);
    return e;
  };
  std::vector<JobExecutionEvent> rows = {run(2500, false, "timeout after 300 ms"),
                                         run(2100, false, "boom"), run(1500, true, ""),
                                         run(1200, false, "timeout after 300 ms (attempt 2 of 2)"),
                                         run(500, true, "")};  // before `from`: not counted
  JobExecutionEvent running = run(2900, true, "");
  running.complete_time.reset();  // not completed: not counted
  rows.insert(rows.begin(), running);
  const nlohmann::json stats =
      ExecutionStatsJson(rows, /*from=*/1000, /*width=*/1000, /*now=*/2999);
  ASSERT_EQ(stats["buckets"].size(), 2u);
  EXPECT_EQ(stats["buckets"][0]["succeeded"], 1);
  EXPECT_EQ(stats["buckets"][0]["failed"], 1);
  EXPECT_EQ(stats["buckets"][1]["failed"], 2);
  EXPECT_EQ(stats["timedOut"], 2);
  EXPECT_DOUBLE_EQ(stats["successRate"].get<double>(), 0.25);
  ASSERT_EQ(stats["recentFailures"].size(), 3u);
  EXPECT_EQ(stats["recentFailures"][0]["failureCause"], "timeout after 300 ms");
  EXPECT_TRUE(ExecutionStatsJson({}, 1000, 1000, 2999)["successRate"].is_null());
}

}  // namespace
}  // namespace elasticjob::console
