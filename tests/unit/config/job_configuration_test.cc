#include "elasticjob/config/job_configuration.h"

#include <gtest/gtest.h>

#include "infra/java_string.h"

namespace elasticjob {
namespace {

constexpr const char* kGolden = R"(cron: 0/5 * * * * ?
description: ''
disabled: false
failover: false
jobName: myJob
jobParameter: ''
maxTimeDiffSeconds: -1
misfire: true
monitorExecution: true
overwrite: false
reconcileIntervalMinutes: 10
shardingItemParameters: ''
shardingTotalCount: 3
staticSharding: false
)";

std::string ErrorOf(const Result<JobConfiguration>& r) {
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(JobConfigurationTest, BuilderAppliesElasticJobDefaults) {
  auto c = JobConfiguration::Builder("myJob", 3).Build();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->monitor_execution);
  EXPECT_FALSE(c->failover);
  EXPECT_TRUE(c->misfire);
  EXPECT_EQ(c->max_time_diff_seconds, -1);
  EXPECT_EQ(c->reconcile_interval_minutes, 10);
  EXPECT_FALSE(c->cron.has_value());
  EXPECT_FALSE(c->time_zone.has_value());
  EXPECT_EQ(c->sharding_item_parameters, "");
  EXPECT_EQ(c->job_parameter, "");
  EXPECT_EQ(c->description, "");
  EXPECT_FALSE(c->disabled);
  EXPECT_FALSE(c->overwrite);
  EXPECT_FALSE(c->static_sharding);
}

TEST(JobConfigurationTest, ValidationNamesTheFieldAndTheValue) {
  EXPECT_EQ(ErrorOf(JobConfiguration::Builder("", 3).Build()), "jobName: must not be empty");
  EXPECT_EQ(ErrorOf(JobConfiguration::Builder("a/b", 3).Build()),
            "jobName: 'a/b' cannot be a registry node name (no '/', '.' or '..')");
  EXPECT_EQ(ErrorOf(JobConfiguration::Builder("j", 0).Build()),
            "shardingTotalCount: must be greater than 0, got 0");
  EXPECT_EQ(ErrorOf(JobConfiguration::Builder("j", -2).Build()),
            "shardingTotalCount: must be greater than 0, got -2");
  EXPECT_TRUE(JobConfiguration::Builder("j", kMaxShardingTotalCount).Build().ok());
  EXPECT_EQ(ErrorOf(JobConfiguration::Builder("j", kMaxShardingTotalCount + 1).Build()),
            "shardingTotalCount: must be at most " + std::to_string(kMaxShardingTotalCount) +
                ", got " + std::to_string(kMaxShardingTotalCount + 1));
  EXPECT_EQ(ErrorOf(JobConfiguration::Builder("j", 1000000000).Build()),
            "shardingTotalCount: must be at most " + std::to_string(kMaxShardingTotalCount) +
                ", got 1000000000");
  EXPECT_NE(ErrorOf(JobConfiguration::Builder("j", 1).Cron("0 0 25 * * ?").Build())
                .find("cron: cron '0 0 25 * * ?': hour field '25'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(JobConfiguration::Builder("j", 1).TimeZone("Mars/Olympus").Build())
                .find("timeZone: unknown time zone 'Mars/Olympus'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(JobConfiguration::Builder("j", 1).MaxTimeDiffSeconds(-5).Build())
                .find("maxTimeDiffSeconds: must be -1 (no check) or at least 0, got -5"),
            std::string::npos);
  EXPECT_NE(ErrorOf(JobConfiguration::Builder("j", 1).ReconcileIntervalMinutes(-3).Build())
                .find("reconcileIntervalMinutes"),
            std::string::npos);
  EXPECT_NE(ErrorOf(JobConfiguration::Builder("j", 1).JobShardingStrategyType("").Build())
                .find("jobShardingStrategyType: must not be empty"),
            std::string::npos);
  EXPECT_NE(ErrorOf(JobConfiguration::Builder("j", 1).JobListenerTypes({"a", ""}).Build())
                .find("jobListenerTypes[1]"),
            std::string::npos);
}

TEST(JobConfigurationTest, EmptyCronMeansNoneAndIsValid) {
  EXPECT_TRUE(JobConfiguration::Builder("oneOff", 1).Cron("").Build().ok());
}

TEST(ShardingItemParametersTest, ParsesTrimmedPairs) {
  auto p = ParseShardingItemParameters(" 0=Beijing, 1 = Shanghai ,2=Guangzhou,", 3);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, (std::map<int, std::string>{{0, "Beijing"}, {1, "Shanghai"}, {2, "Guangzhou"}}));
  EXPECT_TRUE(ParseShardingItemParameters("", 3)->empty());
}

TEST(ShardingItemParametersTest, RejectsMalformedEntriesNamingThem) {
  auto err = [](const char* text, int total) {
    auto r = ParseShardingItemParameters(text, total);
    EXPECT_FALSE(r.ok()) << text;
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(err("0=A,x=B", 3).find("item 'x' is not an integer"), std::string::npos);
  EXPECT_NE(err("0=A,0=B", 3).find("item 0 is given twice"), std::string::npos);
  EXPECT_NE(err("0=A,3=B", 3).find("item 3 is not below shardingTotalCount 3"), std::string::npos);
  EXPECT_NE(err("0=A,1", 3).find("entry '1' must have exactly one '='"), std::string::npos);
  EXPECT_NE(err("0=A=B", 3).find("exactly one '='"), std::string::npos);
  EXPECT_NE(err("0=", 3).find("exactly one '='"), std::string::npos);
  EXPECT_NE(err("-1=A", 3).find("item -1 is negative"), std::string::npos);
  EXPECT_NE(err("0=A,,1=B", 3).find("entry ''"), std::string::npos);
  EXPECT_NE(err("0=A,x=B", 3).find("shardingItemParameters: '0=A,x=B'"), std::string::npos);
  // Surfaced through the builder too.
  auto c = JobConfiguration::Builder("j", 2).ShardingItemParameters("0=A,5=B").Build();
  EXPECT_FALSE(c.ok());
}

TEST(ConfigYamlTest, WritesTheGoldenYaml) {
  auto c = JobConfiguration::Builder("myJob", 3).Cron("0/5 * * * * ?").Build();
  EXPECT_EQ(ConfigToYaml(*c), kGolden);
}

TEST(ConfigYamlTest, RoundTripsTheGoldenYaml) {
  auto c = ConfigFromYaml(kGolden);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job_name, "myJob");
  EXPECT_EQ(c->sharding_total_count, 3);
  EXPECT_EQ(*c->cron, "0/5 * * * * ?");
  EXPECT_EQ(ConfigToYaml(*c), kGolden);
}

TEST(ConfigYamlTest, VersionPicksTheThreadPoolKey) {
  auto c = JobConfiguration::Builder("j", 1)
               .JobExecutorThreadPoolSizeProviderType("SINGLE_THREAD")
               .Build();
  std::string v5 = ConfigToYaml(*c, ConfigYamlVersion::kV3_0_5);
  std::string v4 = ConfigToYaml(*c, ConfigYamlVersion::kV3_0_4);
  EXPECT_NE(v5.find("jobExecutorThreadPoolSizeProviderType: SINGLE_THREAD\n"), std::string::npos);
  EXPECT_EQ(v5.find("jobExecutorServiceHandlerType"), std::string::npos);
  EXPECT_NE(v4.find("jobExecutorServiceHandlerType: SINGLE_THREAD\n"), std::string::npos);
  EXPECT_EQ(v4.find("jobExecutorThreadPoolSizeProviderType"), std::string::npos);
  // Either key reads back.
  EXPECT_EQ(ConfigFromYaml(v4)->job_executor_thread_pool_size_provider_type, "SINGLE_THREAD");
  EXPECT_EQ(ConfigFromYaml(v5)->job_executor_thread_pool_size_provider_type, "SINGLE_THREAD");
}

TEST(ConfigYamlTest, LeavesOutNullsAndEmptyCollectionsAndSortsKeys) {
  auto c = JobConfiguration::Builder("j", 2)
               .Cron("0 * * * * ?")
               .TimeZone("Asia/Shanghai")
               .JobListenerTypes({"b", "a"})
               .SetProperty("z.key", "1")
               .SetProperty("a.key", "x")
               .Label("blue")
               .Build();
  EXPECT_EQ(ConfigToYaml(*c), R"(cron: 0 * * * * ?
description: ''
disabled: false
failover: false
jobListenerTypes:
- b
- a
jobName: j
jobParameter: ''
label: blue
maxTimeDiffSeconds: -1
misfire: true
monitorExecution: true
overwrite: false
props:
  a.key: x
  z.key: '1'
reconcileIntervalMinutes: 10
shardingItemParameters: ''
shardingTotalCount: 2
staticSharding: false
timeZone: Asia/Shanghai
)");
}

TEST(ConfigYamlTest, QuotesStringsThatWouldReadAsOtherTypes) {
  auto c = JobConfiguration::Builder("123", 1).JobParameter("true").Description("a: b").Build();
  std::string y = ConfigToYaml(*c);
  EXPECT_NE(y.find("jobName: '123'\n"), std::string::npos);
  EXPECT_NE(y.find("jobParameter: 'true'\n"), std::string::npos);
  EXPECT_NE(y.find("description: 'a: b'\n"), std::string::npos);
  EXPECT_EQ(ConfigFromYaml(y)->job_name, "123");
}

TEST(ConfigYamlTest, IgnoresUnknownKeysAndClassTags) {
  auto c = ConfigFromYaml(R"(!!org.apache.shardingsphere.elasticjob.infra.pojo.JobConfigurationPOJO
jobName: tagged
shardingTotalCount: 2
someFutureKey: whatever
cron: 0/5 * * * * ?
)");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job_name, "tagged");
  EXPECT_EQ(c->sharding_total_count, 2);
  EXPECT_TRUE(c->monitor_execution);  // missing keys take the defaults
}

TEST(ConfigYamlTest, CarriesJobExtraConfigurationsThroughUnchanged) {
  const std::string extra =
      "\n- !!org.apache.shardingsphere.elasticjob.tracing.yaml.YamlTracingConfiguration\n"
      "  tracingStorageConfiguration: !!org.apache.shardingsphere.elasticjob.tracing.yaml.x\n"
      "    url: jdbc:h2:mem:job_event_storage\n"
      "  type: RDB";
  std::string yaml = "cron: 0/5 * * * * ?\njobExtraConfigurations:" + extra +
                     "\njobName: traced\nshardingTotalCount: 1\n";
  auto c = ConfigFromYaml(yaml);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job_extra_configurations, extra);
  std::string out = ConfigToYaml(*c);
  EXPECT_NE(out.find("failover: false\njobExtraConfigurations:" + extra + "\njobName: traced\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(ConfigFromYaml(out)->job_extra_configurations, extra);
}

TEST(ConfigYamlTest, WrongTypesNameTheKeyAndValue) {
  auto err = [](const char* yaml) {
    auto r = ConfigFromYaml(yaml);
    EXPECT_FALSE(r.ok()) << yaml;
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_EQ(err("jobName: j\nshardingTotalCount: three\n"),
            "config: shardingTotalCount: expected an integer, got 'three'");
  EXPECT_EQ(err("jobName: j\nfailover: maybe\n"),
            "config: failover: expected true or false, got 'maybe'");
  EXPECT_EQ(err("jobName: [a, b]\n"), "config: jobName: expected a string, got a list");
  EXPECT_EQ(err("jobName: j\nprops: [1]\n"),
            "config: props: expected a map of property names to values, got a list");
  EXPECT_NE(err("jobName: [a, b\nfailover: {\n").find("config: not valid YAML"), std::string::npos);
  EXPECT_EQ(err("- just\n- a list\n"), "config: expected a YAML mapping of job settings");
}

TEST(ConfigYamlTest, ReadsYaml11BooleansAndNulls) {
  auto c = ConfigFromYaml(
      "jobName: j\nshardingTotalCount: 1_0\nfailover: yes\nmisfire: off\n"
      "label: ~\ntimeZone: null\ndescription:\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->sharding_total_count, 10);
  EXPECT_TRUE(c->failover);
  EXPECT_FALSE(c->misfire);
  EXPECT_FALSE(c->label.has_value());
  EXPECT_FALSE(c->time_zone.has_value());
  EXPECT_EQ(c->description, "");
}

TEST(ConfigYamlTest, InvalidUtf8IsReadAsJavaReadsItAndRoundTrips) {
  // Found by the config fuzzer: a props key with bytes FF FF FF read back, once written,
  // as something else. Java decodes the node with replacement; so do we.
  auto c = ConfigFromYaml("jobName: j\nshardingTotalCount: 1\nprops:\n  k\xff\xff: v\xc3\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->props,
            (std::map<std::string, std::string>{{"k\xEF\xBF\xBD\xEF\xBF\xBD", "v\xEF\xBF\xBD"}}));
  auto back = ConfigFromYaml(ConfigToYaml(*c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *c);
}

TEST(ConfigYamlTest, JobExtraConfigurationsThatWouldSwallowTheNextKeyAreRefused) {
  // Found by the config fuzzer: a double-quoted scalar left open at the end (yaml-cpp
  // accepts it) was carried verbatim, and every key written after it vanished into it.
  auto c = ConfigFromYaml(
      "jobName: j\nshardingTotalCount: 4\njobExtraConfigurations:\n- !!x\n  b: \"multi\n");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "config: jobExtraConfigurations: cannot be carried as written: "
            "'\\x0A- !!x\\x0A  b: \"multi'");
}

TEST(ConfigYamlTest, NonPrintableCharactersAreRefusedAsSnakeYamlRefusesThem) {
  // Found by the config fuzzer: yaml-cpp read "\x01\0_" in a plain scalar as the bytes
  // 01 A0 (not UTF-8), so the config did not survive being written and read back.
  using namespace std::string_literals;
  EXPECT_EQ(ConfigFromYaml("jobName: j\nshardingTotalCount: 1\njobListenerTypes:\n- A\x01\0_B\n"s)
                .status()
                .message(),
            "config: not valid YAML: special character U+0001 (character 55) is not allowed");
  EXPECT_EQ(ConfigFromYaml("jobName: j\x7f\n").status().message(),
            "config: not valid YAML: special character U+007F (character 11) is not allowed");
  // Escaped in a double-quoted scalar, a control character is a value like any other.
  auto c = ConfigFromYaml("jobName: j\nshardingTotalCount: 1\njobParameter: \"a\\x01\\0b\"\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job_parameter, "a\x01"s + '\0' + "b");
  EXPECT_EQ(*ConfigFromYaml(ConfigToYaml(*c)), *c);
  // Tabs, line breaks, NEL and everything from U+00A0 up are fine.
  EXPECT_TRUE(ConfigFromYaml(
                  "jobName: j\r\nshardingTotalCount: 1\t\njobParameter: \u00e9\u4e2d\U0001F600\n")
                  .ok());
}

TEST(ConfigYamlTest, NextLineAndNoBreakSpaceEscapesRoundTrip) {
  // Found by the config fuzzer: YamlWriter writes U+0085 as \N (SnakeYAML does), and
  // yaml-cpp reads \N (and \_, U+00A0) as a lone byte, not UTF-8.
  auto nbsp = ConfigFromYaml("jobName: j\nshardingTotalCount: 1\ndescription: \"a\\_b\\Nc\"\n");
  ASSERT_TRUE(nbsp.ok()) << nbsp.status();
  EXPECT_EQ(nbsp->description,
            "a\xC2\xA0"
            "b\xC2\x85"
            "c");
  auto c =
      ConfigFromYaml("jobName: j\nshardingTotalCount: 1\nprops:\n  b: \"a\n  x\\\\\xc2\x85y\"\n");
  ASSERT_TRUE(c.ok()) << c.status();
  for (const auto& [k, v] : c->props) {
    EXPECT_EQ(infra::Utf16ToUtf8(infra::Utf8ToUtf16(v)), v) << "not UTF-8: " << v;
  }
  auto back = ConfigFromYaml(ConfigToYaml(*c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *c);
}

TEST(ConfigYamlTest, ErrorsStayOneLine) {
  // Found by the run file fuzzer: a job name holding a line break broke the one-line error.
  EXPECT_EQ(ErrorOf(JobConfiguration::Builder("order\nSync", 1).Build()),
            "jobName: 'order\\x0ASync' contains a control character");
  EXPECT_EQ(ConfigFromYaml("jobName: j\nshardingTotalCount: \"1\\n2\"\n").status().message(),
            "config: shardingTotalCount: expected an integer, got '1\\x0A2'");
  EXPECT_EQ(ConfigFromYaml("? \"a\\nb\"\n: x\nprops:\n  \"k\\n\": [1]\n").status().message(),
            "config: props.k\\x0A: expected a string, got a list");
}

TEST(ConfigYamlTest, MultiLineAndLongTextsRoundTrip) {
  auto c = JobConfiguration::Builder("j", 1)
               .Description(std::string(100, 'x') + " " + std::string(30, 'y') + " tail")
               .SetProperty("script.command.line", "line1\nline2\n")
               .Build();
  auto back = ConfigFromYaml(ConfigToYaml(*c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *c);
}

TEST(JobConfigurationTest, MonitorPortIsReadButNeverWrittenToTheRegistry) {
  auto c = JobConfiguration::Builder("dumped", 1).MonitorPort(9888).Build();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(JobConfiguration::Builder("j", 1).Build()->monitor_port, -1);  // off by default
  // ElasticJob 3.0.5's SnakeYAML refuses a key it does not know: never written.
  const std::string yaml = ConfigToYaml(*c);
  EXPECT_EQ(yaml.find("monitorPort"), std::string::npos) << yaml;
  auto read = ConfigFromYaml(yaml + "monitorPort: 9888\n");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->monitor_port, 9888);
  for (int bad : {-2, 65536}) {
    auto v = JobConfiguration::Builder("j", 1).MonitorPort(bad).Build();
    ASSERT_FALSE(v.ok());
    EXPECT_NE(v.status().message().find("monitorPort"), std::string::npos) << v.status();
    EXPECT_NE(v.status().message().find(std::to_string(bad)), std::string::npos) << v.status();
  }
  EXPECT_TRUE(JobConfiguration::Builder("j", 1).MonitorPort(0).Build().ok());
  auto wrong = ConfigFromYaml("jobName: j\nshardingTotalCount: 1\nmonitorPort: abc\n");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("monitorPort"), std::string::npos) << wrong.status();
}

// A hostile value of a megabyte is refused before it is parsed (a Debug build took over a
// second to parse one, on a trigger's path: chaos hostile_config).
TEST(ConfigYamlTest, RefusesATextLongerThanTheBoundWithoutParsingIt) {
  std::string big =
      "jobName: j\nshardingTotalCount: 1\ncron: '" + std::string(kMaxConfigYamlBytes, 'x') + "'\n";
  auto c = ConfigFromYaml(big);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find(std::to_string(big.size()) + " bytes"), std::string::npos)
      << c.status();
  // The bound itself is accepted.
  std::string fits = "jobName: j\nshardingTotalCount: 1\ndescription: '";
  fits += std::string(kMaxConfigYamlBytes - fits.size() - 2, 'x') + "'\n";
  ASSERT_EQ(fits.size(), kMaxConfigYamlBytes);
  EXPECT_TRUE(ConfigFromYaml(fits).ok()) << ConfigFromYaml(fits).status();
}

}  // namespace
}  // namespace elasticjob
