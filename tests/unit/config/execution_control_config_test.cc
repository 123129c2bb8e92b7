// The execution-control settings (fixedRate, fixedDelay, timeoutMs, maxRetries,
// retryIntervalMs): parsing, validation and their carriage in the registry's config node.
#include <gtest/gtest.h>

#include "elasticjob/config/job_configuration.h"

namespace elasticjob {
namespace {

using std::chrono::milliseconds;

TEST(DurationTest, ParsesEveryUnit) {
  EXPECT_EQ(*ParseDuration("1500ms", "fixedRate"), milliseconds(1500));
  EXPECT_EQ(*ParseDuration("30s", "fixedRate"), milliseconds(30000));
  EXPECT_EQ(*ParseDuration("5m", "fixedRate"), milliseconds(300000));
  EXPECT_EQ(*ParseDuration("1h", "fixedRate"), milliseconds(3600000));
  EXPECT_EQ(*ParseDuration("250", "fixedRate"), milliseconds(250));
}

TEST(DurationTest, RefusesWhatIsNotADurationNamingFieldAndValue) {
  for (const char* bad : {"", "s", "-5s", "5 s", "5d", "1.5s", "30sec", "99999999999999999h"}) {
    auto d = ParseDuration(bad, "fixedDelay");
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_NE(d.status().message().find("fixedDelay"), std::string::npos);
    EXPECT_NE(d.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << d.status().message();
  }
}

TEST(DurationTest, FormatsTheShortestExactForm) {
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1500ms");
  EXPECT_EQ(FormatDuration(milliseconds(30000)), "30s");
  EXPECT_EQ(FormatDuration(milliseconds(300000)), "5m");
  EXPECT_EQ(FormatDuration(milliseconds(7200000)), "2h");
  EXPECT_EQ(FormatDuration(milliseconds(0)), "0ms");
}

TEST(ExecutionControlConfigTest, AtMostOneScheduleKind) {
  auto both = JobConfiguration::Builder("j", 1)
                  .Cron("0/5 * * * * ?")
                  .FixedRate(milliseconds(30000))
                  .Build();
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("give exactly one"), std::string::npos);
  EXPECT_NE(both.status().message().find("30s"), std::string::npos);
  auto two = JobConfiguration::Builder("j", 1)
                 .FixedRate(milliseconds(1000))
                 .FixedDelay(milliseconds(1000))
                 .Build();
  EXPECT_FALSE(two.ok());
  EXPECT_TRUE(JobConfiguration::Builder("j", 1).FixedDelay(milliseconds(1000)).Build().ok());
}

TEST(ExecutionControlConfigTest, NegativeValuesNameTheField) {
  auto timeout = JobConfiguration::Builder("j", 1).TimeoutMs(-1).Build();
  ASSERT_FALSE(timeout.ok());
  EXPECT_EQ(timeout.status().message().rfind("timeoutMs: ", 0), 0u);
  auto retries = JobConfiguration::Builder("j", 1).MaxRetries(kMaxRetries + 1).Build();
  ASSERT_FALSE(retries.ok());
  EXPECT_EQ(retries.status().message().rfind("maxRetries: ", 0), 0u);
  auto interval = JobConfiguration::Builder("j", 1).RetryIntervalMs(-2).Build();
  ASSERT_FALSE(interval.ok());
  EXPECT_NE(interval.status().message().find("retryIntervalMs: "), std::string::npos);
  EXPECT_NE(interval.status().message().find("-2"), std::string::npos);
}

TEST(ExecutionControlConfigTest, RegistryNodeCarriesThemInNamespacedProps) {
  auto c = JobConfiguration::Builder("rateJob", 2)
               .FixedRate(milliseconds(1500))
               .TimeoutMs(5000)
               .MaxRetries(3)
               .RetryIntervalMs(200)
               .SetProperty("script.command.line", "echo hi")
               .Build();
  ASSERT_TRUE(c.ok()) << c.status();
  const std::string yaml = ConfigToYaml(*c);
  EXPECT_EQ(yaml.find("\nfixedRate"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("\ntimeoutMs"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("props:\n"
                      "  elasticjob-cpp.fixedRate: 1500ms\n"
                      "  elasticjob-cpp.maxRetries: '3'\n"
                      "  elasticjob-cpp.retryIntervalMs: '200'\n"
                      "  elasticjob-cpp.timeoutMs: '5000'\n"
                      "  script.command.line: echo hi\n"),
            std::string::npos)
      << yaml;
  auto back = ConfigFromYaml(yaml);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *c);  // the settings come back as fields, not as props
  EXPECT_EQ(back->props.size(), 1u);
}

TEST(ExecutionControlConfigTest, UnsetSettingsLeaveTheNodeAsJavaWritesIt) {
  auto c = JobConfiguration::Builder("myJob", 3).Cron("0/5 * * * * ?").Build();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(ConfigToYaml(*c).find("props"), std::string::npos);
}

TEST(ExecutionControlConfigTest, RunFileSpellingIsReadFromTopLevelKeys) {
  auto c = ConfigFromYaml(
      "jobName: j\nshardingTotalCount: 1\nfixedDelay: 5m\ntimeoutMs: 1000\nmaxRetries: 2\n"
      "retryIntervalMs: 10\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->fixed_delay, milliseconds(300000));
  EXPECT_EQ(c->timeout_ms, 1000);
  EXPECT_EQ(c->max_retries, 2);
  EXPECT_EQ(c->retry_interval_ms, 10);
  EXPECT_TRUE(c->props.empty());
}

TEST(ExecutionControlConfigTest, BadValuesNameFieldAndValue) {
  auto rate = ConfigFromYaml("jobName: j\nshardingTotalCount: 1\nfixedRate: soon\n");
  ASSERT_FALSE(rate.ok());
  EXPECT_NE(rate.status().message().find("fixedRate"), std::string::npos);
  EXPECT_NE(rate.status().message().find("'soon'"), std::string::npos);
  auto timeout = ConfigFromYaml(
      "jobName: j\nshardingTotalCount: 1\nprops:\n  elasticjob-cpp.timeoutMs: ten\n");
  ASSERT_FALSE(timeout.ok());
  EXPECT_NE(timeout.status().message().find("props.elasticjob-cpp.timeoutMs"), std::string::npos)
      << timeout.status().message();
  EXPECT_NE(timeout.status().message().find("'ten'"), std::string::npos);
  auto retries = ConfigFromYaml("jobName: j\nshardingTotalCount: 1\nmaxRetries: -1\n");
  ASSERT_FALSE(retries.ok());
  EXPECT_NE(retries.status().message().find("maxRetries"), std::string::npos);
}

}  // namespace
}  // namespace elasticjob
