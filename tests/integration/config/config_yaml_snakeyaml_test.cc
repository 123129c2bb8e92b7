// Differential test: the config YAML we write is exactly what SnakeYAML 1.33 (ElasticJob's
// YAML library, Debian's libyaml-snake-java) writes for the same values, and SnakeYAML reads
// back the values we meant. Strings are chosen to hit every quoting rule: YAML 1.1 booleans
// and numbers, indicators, `: ` and ` #`, leading and trailing spaces, quotes, line breaks,
// long text that folds at 80 columns, non-ASCII.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "elasticjob/config/job_configuration.h"
#include "reference/hex.h"
#include "reference/reference_oracle.h"

namespace elasticjob {
namespace {

const std::vector<std::string>& TrickyStrings() {
  static const std::vector<std::string> k = {
      "",
      "plain",
      "true",
      "False",
      "yes",
      "NO",
      "on",
      "off",
      "y",
      "n",
      "null",
      "Null",
      "~",
      "123",
      "-1",
      "+7",
      "0x1F",
      "0b101",
      "017",
      "1_000",
      "1.5",
      ".5",
      "1e5",
      "1.0e+3",
      ".inf",
      "-.Inf",
      ".NaN",
      "12:30",
      "1:20:30",
      "2026-11-22",
      "2026-11-22 08:00:00",
      "2026-1-2T3:04:05Z",
      "<<",
      "=",
      "!",
      "&",
      "*",
      "? x",
      "- x",
      "-x",
      ": x",
      "a: b",
      "a:b",
      "a #b",
      "a#b",
      "#c",
      "[x]",
      "{x}",
      "a,b",
      "@x",
      "`x",
      "%x",
      "|x",
      ">x",
      "'q'",
      "\"dq\"",
      "it's",
      " lead",
      "trail ",
      "two  spaces",
      "0/5 * * * * ?",
      "0=Beijing,1=Shanghai,2=Guangzhou",
      "/bin/sh -c 'echo run $0'",
      "http://127.0.0.1:8080/api?x=1&y=2",
      "订单同步作业",
      "emoji 😀 ok",
      "line1\nline2",
      "line1\nline2\n",
      "trailing\n\n",
      "\nleading",
      "tab\there",
      "cr\r\nlf",
      "a \nb",
      "---",
      "...x",
      "x...",
      "a\\b",
      "ünïcödé",
      "\xc2\xa0nbsp",
      "a very long description with many words that goes past the eighty column limit so it "
      "folds, and then keeps going for a while longer to fold twice over the width limit",
      "a very long description: with a colon-space so that it must be single quoted, and long "
      "enough to fold inside the single quotes as well, it's true",
      "averyveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryverylongword"
      "withoutspaces",
  };
  return k;
}

std::vector<JobConfiguration> Corpus() {
  std::vector<JobConfiguration> out;
  std::mt19937 rng(42);
  const auto& s = TrickyStrings();
  auto pick = [&] { return s[std::uniform_int_distribution<size_t>(0, s.size() - 1)(rng)]; };
  for (size_t i = 0; i < s.size(); ++i) {
    JobConfiguration c;
    c.job_name = "job" + std::to_string(i);
    c.sharding_total_count = static_cast<int>(i % 7) + 1;
    c.cron = "0/5 * * * * ?";
    c.description = s[i];
    c.job_parameter = pick();
    c.sharding_item_parameters = pick();
    if (i % 2 == 0) c.label = pick();
    if (i % 3 == 0) c.time_zone = pick();
    if (i % 4 == 0) c.job_error_handler_type = pick();
    if (i % 5 == 0) c.job_listener_types = {pick(), pick()};
    if (i % 2 == 1) c.props = {{"script.command.line", pick()}, {pick() + "k", pick()}};
    c.failover = i % 2 == 0;
    c.max_time_diff_seconds = static_cast<int>(i) - 3;
    // Execution control (docs/scheduling.md): carried in props, under elasticjob-cpp.*.
    if (i % 3 == 1) {
      c.cron.reset();
      c.fixed_rate = std::chrono::milliseconds(1500 * static_cast<int64_t>(i + 1));
    }
    if (i % 3 == 2) {
      c.timeout_ms = static_cast<int64_t>(i) * 250;
      c.max_retries = static_cast<int>(i % 4);
      c.retry_interval_ms = static_cast<int64_t>(i);
    }
    out.push_back(c);
  }
  return out;
}

TEST(ConfigYamlSnakeYamlTest, OurYamlIsWhatSnakeYamlWritesForTheSameValues) {
  std::vector<JobConfiguration> corpus = Corpus();
  std::vector<std::string> lines;
  std::vector<std::string> ours;
  for (const auto& c : corpus) {
    ours.push_back(ConfigToYaml(c));
    lines.push_back(testing::Hex(ours.back()));
  }
  auto result =
      testing::RunJavaOracle(ELASTICJOB_SNAKEYAML_JAR, ELASTICJOB_SNAKEYAML_ORACLE, lines);
  ASSERT_TRUE(result.ok()) << result.status();
  for (size_t i = 0; i < corpus.size(); ++i) {
    const std::string& line = (*result)[i];
    ASSERT_NE(line.rfind("ERROR", 0), 0u) << "SnakeYAML cannot read ours:\n" << ours[i] << line;
    EXPECT_EQ(testing::Unhex(line), ours[i]) << "description: '" << corpus[i].description << "'";
    // And we read back what we wrote.
    auto back = ConfigFromYaml(ours[i]);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, corpus[i]) << ours[i];
  }
}

// ElasticJob 3.0.5 loads the node with yaml.loadAs(text, JobConfigurationPOJO.class), which
// fails on an unknown top-level key: the execution-control settings must travel in props,
// and arrive there as Strings (Properties.getProperty returns null for an Integer). Both a
// node C++ wrote and one as Java writes it (its Properties, quoted values, in bean order)
// load there and here, with the settings.
TEST(ConfigYamlSnakeYamlTest, ExecutionControlSettingsLoadAsElasticJobsPojo) {
  JobConfiguration c;
  c.job_name = "ctl";
  c.sharding_total_count = 2;
  c.cron = "0/5 * * * * ?";
  c.props = {{"script.command.line", "echo hi"}};
  c.timeout_ms = 1500;
  c.max_retries = 3;
  c.retry_interval_ms = 30000;
  JobConfiguration rate = c;
  rate.cron.reset();
  rate.fixed_rate = std::chrono::minutes(5);
  JobConfiguration delay = c;
  delay.cron.reset();
  delay.fixed_delay = std::chrono::seconds(2);
  JobConfiguration plain = c;  // a config without them loads as before
  plain.timeout_ms = 0;
  plain.max_retries = 0;
  plain.retry_interval_ms = 0;
  // A top-level key ElasticJob does not know: the check itself can fail.
  const std::string unknown = ConfigToYaml(plain) + "timeoutMs: 1500\n";
  // As Java 3.0.5 writes a JobConfigurationPOJO whose props carry the settings.
  const std::string java =
      "cron: ''\n"
      "description: ''\n"
      "disabled: false\n"
      "failover: true\n"
      "jobName: javaCtl\n"
      "jobParameter: ''\n"
      "maxTimeDiffSeconds: -1\n"
      "misfire: true\n"
      "monitorExecution: true\n"
      "overwrite: false\n"
      "props:\n"
      "  elasticjob-cpp.fixedDelay: 2s\n"
      "  elasticjob-cpp.maxRetries: '2'\n"
      "  elasticjob-cpp.timeoutMs: '750'\n"
      "  script.command.line: echo java\n"
      "reconcileIntervalMinutes: 10\n"
      "shardingItemParameters: ''\n"
      "shardingTotalCount: 3\n"
      "staticSharding: false\n";
  std::vector<std::string> lines;
  for (const auto* config : {&c, &rate, &delay, &plain}) {
    lines.push_back("pojo " + testing::Hex(ConfigToYaml(*config)));
  }
  lines.push_back("pojo " + testing::Hex(unknown));
  lines.push_back("pojo " + testing::Hex(java));
  auto result =
      testing::RunJavaOracle(ELASTICJOB_SNAKEYAML_JAR, ELASTICJOB_SNAKEYAML_ORACLE, lines);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->size(), 6u);
  EXPECT_EQ(testing::Unhex((*result)[0]),
            "jobName=ctl\nelasticjob-cpp.maxRetries=3\nelasticjob-cpp.retryIntervalMs=30000\n"
            "elasticjob-cpp.timeoutMs=1500\nscript.command.line=echo hi")
      << ConfigToYaml(c) << (*result)[0];
  EXPECT_NE(testing::Unhex((*result)[1]).find("elasticjob-cpp.fixedRate=5m"), std::string::npos)
      << (*result)[1];
  EXPECT_NE(testing::Unhex((*result)[2]).find("elasticjob-cpp.fixedDelay=2s"), std::string::npos)
      << (*result)[2];
  EXPECT_EQ(testing::Unhex((*result)[3]), "jobName=ctl\nscript.command.line=echo hi");
  EXPECT_EQ((*result)[4].rfind("ERROR", 0), 0u) << "an unknown top-level key loaded";
  EXPECT_EQ(testing::Unhex((*result)[5]),
            "jobName=javaCtl\nelasticjob-cpp.fixedDelay=2s\nelasticjob-cpp.maxRetries=2\n"
            "elasticjob-cpp.timeoutMs=750\nscript.command.line=echo java")
      << (*result)[5];
  // And we read back what we wrote, and what Java wrote.
  for (const auto* config : {&c, &rate, &delay, &plain}) {
    auto back = ConfigFromYaml(ConfigToYaml(*config));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, *config);
  }
  auto from_java = ConfigFromYaml(java);
  ASSERT_TRUE(from_java.ok()) << from_java.status();
  EXPECT_EQ(from_java->fixed_delay, std::chrono::seconds(2));
  EXPECT_EQ(from_java->max_retries, 3 - 1);
  EXPECT_EQ(from_java->timeout_ms, 750);
  EXPECT_EQ(from_java->props,
            (std::map<std::string, std::string>{{"script.command.line", "echo java"}}));
}

}  // namespace
}  // namespace elasticjob
