#include "cli/run_file.h"

#include <gtest/gtest.h>

#include <string>

namespace elasticjob::cli {
namespace {

using namespace std::string_literals;

// A run file whose job `orderSync` has `settings` (one per line, indented by the caller).
std::string FileWith(const std::string& settings) {
  return "elasticjob:\n  jobs:\n    orderSync:\n      elasticJobType: SCRIPT\n"
         "      cron: 0/5 * * * * ?\n" +
         settings;
}

// The error message of parsing `text`, which must fail with INVALID_ARGUMENT.
std::string ErrorOf(const std::string& text) {
  auto file = ParseRunFile(text);
  EXPECT_FALSE(file.ok()) << text;
  if (file.ok()) return "";
  EXPECT_EQ(file.status().code(), StatusCode::kInvalidArgument);
  return file.status().message();
}

TEST(RunFileTest, ReadsJobsRegistryAndWarnings) {
  std::vector<std::string> warnings;
  auto file = ParseRunFile(
      "elasticjob:\n  regCenter:\n    serverLists: 127.0.0.1:2181\n    namespace: demo\n"
      "    digest: u:p\n    maxRetries: 5\n  jobs:\n    orderSync:\n"
      "      elasticJobType: SCRIPT\n      cron: 0/5 * * * * ?\n      shardingTotalCount: 3\n"
      "      jobListenerTypes: LOG, DISTRIBUTE_ONCE_LOG\n      shardingTotalCont: 4\n",
      "", &warnings);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->registry_url, "zookeeper://127.0.0.1:2181/demo?digest=u:p&maxRetries=5");
  ASSERT_EQ(file->jobs.size(), 1u);
  EXPECT_EQ(file->jobs[0].type, "SCRIPT");
  EXPECT_EQ(file->jobs[0].config.job_name, "orderSync");
  EXPECT_EQ(file->jobs[0].config.sharding_total_count, 3);
  EXPECT_EQ(file->jobs[0].config.job_listener_types,
            (std::vector<std::string>{"LOG", "DISTRIBUTE_ONCE_LOG"}));
  EXPECT_EQ(warnings,
            std::vector<std::string>{"job 'orderSync': unknown key 'shardingTotalCont' ignored"});
}

TEST(RunFileTest, TheFlagOverridesTheRegistryAndMemoryIsTheDefault) {
  const std::string text = FileWith("      shardingTotalCount: 1\n");
  EXPECT_EQ(ParseRunFile(text)->registry_url, "memory://elasticjob");
  EXPECT_EQ(ParseRunFile(text, "memory://x")->registry_url, "memory://x");
  EXPECT_EQ(
      ParseRunFile("elasticjob:\n  regCenter:\n    namespace: q\n" + text.substr(12))->registry_url,
      "memory://q");
}

TEST(RunFileTest, BinaryGarbageIsAnErrorNotAnAbort) {
  // Found by hand: yaml-cpp read this as a scalar, and subscripting it threw BadSubscript.
  std::string garbage;
  for (int i = 0; i < 512; ++i) garbage += static_cast<char>((i * 131 + 7) % 256);
  ErrorOf(garbage);
  EXPECT_EQ(ErrorOf("\x7f"
                    "ELF\x02\x01\x01\xff"),
            "expected a top-level 'elasticjob:' map");
  // The parser's message quotes the bad bytes: escaped, the error stays one printable line.
  const std::string quoted = ErrorOf(
      "\x7f"
      "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0"s);
  EXPECT_EQ(quoted.rfind("not valid YAML: ", 0), 0u) << quoted;
  for (char c : quoted) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << quoted;
  EXPECT_NE(ErrorOf("elasticjob: [\n").find("not valid YAML"), std::string::npos);
}

TEST(RunFileTest, AScalarOrListTopLevelNamesTheExpectedMap) {
  for (const char* text : {"5", "hello", "- a\n- b\n", "", "elasticjob: 5", "elasticjob:\n", "{}",
                           "spring:\n  x: 1\n"}) {
    EXPECT_EQ(ErrorOf(text), "expected a top-level 'elasticjob:' map") << text;
  }
}

TEST(RunFileTest, ARegistryThatIsNotAMapOfStringsNamesFieldAndValue) {
  const std::string jobs = FileWith("      shardingTotalCount: 1\n").substr(12);
  EXPECT_EQ(ErrorOf("elasticjob:\n  regCenter: 5\n" + jobs),
            "elasticjob.regCenter: expected a map of settings, got '5'");
  EXPECT_EQ(ErrorOf("elasticjob:\n  regCenter: [a]\n" + jobs),
            "elasticjob.regCenter: expected a map of settings, got a list");
  EXPECT_EQ(ErrorOf("elasticjob:\n  regCenter:\n    serverLists: [a, b]\n" + jobs),
            "elasticjob.regCenter.serverLists: expected a string, got a list");
  EXPECT_EQ(ErrorOf("elasticjob:\n  regCenter:\n    namespace: {a: b}\n" + jobs),
            "elasticjob.regCenter.namespace: expected a string, got a map");
  EXPECT_EQ(ErrorOf("elasticjob:\n  regCenter:\n    serverLists: h:1\n    digest: [x]\n" + jobs),
            "elasticjob.regCenter.digest: expected a string, got a list");
}

TEST(RunFileTest, JobNamesAndSettingsOfTheWrongShapeNameFieldAndValue) {
  EXPECT_EQ(ErrorOf("elasticjob:\n  jobs:\n    [a, b]:\n      cron: x\n"),
            "elasticjob.jobs: expected job names, got a list");
  EXPECT_EQ(ErrorOf("elasticjob:\n  jobs:\n    ? {a: 1}\n    : {cron: x}\n"),
            "elasticjob.jobs: expected job names, got a map");
  EXPECT_EQ(ErrorOf("elasticjob:\n  jobs: 5\n"), "elasticjob.jobs: no jobs declared");
  EXPECT_EQ(ErrorOf("elasticjob:\n  regCenter: {}\n"), "elasticjob.jobs: no jobs declared");
  EXPECT_EQ(ErrorOf("elasticjob:\n  jobs:\n    orderSync: 5\n"),
            "job 'orderSync': expected a map of settings, got '5'");
  EXPECT_EQ(ErrorOf("elasticjob:\n  jobs:\n    orderSync:\n      [a]: 1\n"),
            "job 'orderSync': expected setting names, got a list");
  EXPECT_EQ(ErrorOf(FileWith("      shardingTotalCount: [1]\n")),
            "job 'orderSync': shardingTotalCount: expected an integer, got a list");
  EXPECT_EQ(ErrorOf("elasticjob:\n  jobs:\n    orderSync:\n      elasticJobType: [SCRIPT]\n"
                    "      shardingTotalCount: 1\n"),
            "job 'orderSync': elasticJobType: expected a string, got a list");
  EXPECT_EQ(ErrorOf(FileWith("      shardingTotalCount: 1\n      props: 5\n")),
            "job 'orderSync': props: expected a map of property names to values, got '5'");
}

TEST(RunFileTest, ItemCountsAboveTheBoundAreRefused) {
  // Found by hand: 1000000000 items hung the memory registry instead of being refused.
  EXPECT_EQ(ErrorOf(FileWith("      shardingTotalCount: 1000000000\n")),
            "job 'orderSync': shardingTotalCount: must be at most " +
                std::to_string(kMaxShardingTotalCount) + ", got 1000000000");
  EXPECT_EQ(ErrorOf(FileWith("      shardingTotalCount: 99999999999\n")),
            "job 'orderSync': shardingTotalCount: expected an integer, got '99999999999'");
  auto at_bound = ParseRunFile(
      FileWith("      shardingTotalCount: " + std::to_string(kMaxShardingTotalCount) + "\n"));
  EXPECT_TRUE(at_bound.ok()) << at_bound.status();
}

TEST(RunFileTest, AJobNameWithALineBreakGivesAOneLineError) {
  // Found by the run file fuzzer.
  EXPECT_EQ(ErrorOf("elasticjob:\n  jobs:\n    \"order\\nc\":\n      shardingTotalCount: 1\n"),
            "job 'order\\x0Ac': jobName: 'order\\x0Ac' contains a control character");
}

TEST(RunFileTest, ControlCharactersInValuesAreShownEscaped) {
  EXPECT_EQ(ErrorOf(FileWith("      shardingTotalCount: \"1\\x01\\n\"\n")),
            "job 'orderSync': shardingTotalCount: expected an integer, got '1\\x01\\x0A'");
}

TEST(RunFileTest, DumpPortFromTheJobOrTheFileWithItsAddress) {
  std::vector<std::string> warnings;
  auto file = ParseRunFile(
      "elasticjob:\n  dump:\n    port: 9888\n    address: 0.0.0.0\n  jobs:\n"
      "    own:\n      elasticJobType: SCRIPT\n      cron: 0/5 * * * * ?\n"
      "      shardingTotalCount: 1\n      monitorPort: 9999\n"
      "      props:\n        script.command.line: /bin/true\n"
      "    inherits:\n      elasticJobType: SCRIPT\n      cron: 0/5 * * * * ?\n"
      "      shardingTotalCount: 1\n      props:\n        script.command.line: /bin/true\n",
      {}, &warnings);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  ASSERT_EQ(file->jobs.size(), 2u);
  EXPECT_EQ(file->jobs[0].config.monitor_port, 9999);
  EXPECT_EQ(file->jobs[1].config.monitor_port, 9888);
  EXPECT_EQ(file->dump_address, "0.0.0.0");
  // Without any: off, and no address.
  auto plain =
      ParseRunFile(FileWith("      shardingTotalCount: 1\n      props:\n"
                            "        script.command.line: /bin/true\n"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->jobs[0].config.monitor_port, -1);
  EXPECT_FALSE(plain->dump_address.has_value());
}

TEST(RunFileTest, ABadDumpPortOrAddressNamesFieldAndValue) {
  const std::string job =
      "  jobs:\n    j:\n      elasticJobType: SCRIPT\n      cron: 0/5 * * * * ?\n"
      "      shardingTotalCount: 1\n      props:\n        script.command.line: /bin/true\n";
  std::string e = ErrorOf("elasticjob:\n  dump:\n    port: 70000\n" + job);
  EXPECT_NE(e.find("elasticjob.dump.port"), std::string::npos) << e;
  EXPECT_NE(e.find("70000"), std::string::npos) << e;
  e = ErrorOf("elasticjob:\n  dump:\n    address: localhost\n" + job);
  EXPECT_NE(e.find("elasticjob.dump.address"), std::string::npos) << e;
  EXPECT_NE(e.find("'localhost'"), std::string::npos) << e;
  e = ErrorOf("elasticjob:\n  dump: 9888\n" + job);
  EXPECT_NE(e.find("elasticjob.dump"), std::string::npos) << e;
  e = ErrorOf(FileWith("      shardingTotalCount: 1\n      monitorPort: -2\n"));
  EXPECT_NE(e.find("monitorPort"), std::string::npos) << e;
  EXPECT_NE(e.find("-2"), std::string::npos) << e;
}

}  // namespace
}  // namespace elasticjob::cli

namespace elasticjob::cli {
namespace {

std::string WithTracing(const std::string& tracing) {
  return "elasticjob:\n" + tracing +
         "  jobs:\n    orderSync:\n      elasticJobType: SCRIPT\n      cron: 0/5 * * * * ?\n"
         "      shardingTotalCount: 1\n      props:\n        script.command.line: /bin/true\n";
}

TEST(RunFileTracingTest, ReadsTheTracingUrlAsAScalarOrAMap) {
  auto off = ParseRunFile(WithTracing(""));
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->tracing_url.has_value());
  auto scalar = ParseRunFile(WithTracing("  tracing: sqlite:///tmp/e.db\n"));
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ(scalar->tracing_url, "sqlite:///tmp/e.db");
  std::vector<std::string> warnings;
  auto map = ParseRunFile(
      WithTracing("  tracing:\n    type: RDB\n    url: postgresql://u:p@h:5432/d\n    pool: 3\n"),
      "", &warnings);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->tracing_url, "postgresql://u:p@h:5432/d");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("elasticjob.tracing: unknown key 'pool'"), std::string::npos);
  auto empty = ParseRunFile(WithTracing("  tracing: {}\n"));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->tracing_url, kDefaultTracingUrl);
  auto bad = ParseRunFile(WithTracing("  tracing: [a, b]\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("elasticjob.tracing"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace elasticjob::cli
