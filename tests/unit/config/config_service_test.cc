#include "config/config_service.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "elasticjob/simulated_clock.h"
#include "reg/memory/memory_registry.h"

namespace elasticjob::config {
namespace {

class ConfigServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(reg_.Init().ok()); }
  JobConfiguration Config(int count, bool overwrite = false) {
    return *JobConfiguration::Builder("orderJob", count)
                .Cron("0/5 * * * * ?")
                .Overwrite(overwrite)
                .Build();
  }

  SimulatedClock clock_{Clock::WallTime{} + std::chrono::hours(24 * 365 * 56)};
  std::shared_ptr<reg::MemoryServer> server_ = std::make_shared<reg::MemoryServer>(clock_);
  std::unique_ptr<reg::ComposedRegistry> registry_ = reg::NewMemoryRegistry(server_, "ns");
  reg::ComposedRegistry& reg_ = *registry_;
  storage::JobNodeStorage storage_{reg_, "orderJob"};
  ConfigService service_{storage_, clock_};
};

TEST_F(ConfigServiceTest, FirstStartWritesTypeNameAndConfig) {
  auto c = service_.SetUp("com.acme.OrderJob", Config(3));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*reg_.GetDirectly("/orderJob"), "com.acme.OrderJob");
  EXPECT_EQ(*reg_.GetDirectly("/orderJob/config"), ConfigToYaml(Config(3)));
}

TEST_F(ConfigServiceTest, RegistryConfigWinsUnlessOverwrite) {
  ASSERT_TRUE(service_.SetUp("SCRIPT", Config(3)).ok());
  auto second = service_.SetUp("SCRIPT", Config(5));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->sharding_total_count, 3);  // the registry's
  auto forced = service_.SetUp("SCRIPT", Config(5, /*overwrite=*/true));
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(forced->sharding_total_count, 5);
  EXPECT_EQ(service_.Load(false)->sharding_total_count, 5);
}

TEST_F(ConfigServiceTest, ALocalConfigThatDiffersLogsOneLineNamingTheFieldsAndThatTheRegistryWins) {
  JobConfiguration registered = Config(3);
  registered.props["script.command.line"] = "echo new";
  ASSERT_TRUE(service_.SetUp("SCRIPT", registered).ok());
  JobConfiguration local = Config(3);
  local.props["script.command.line"] = "echo old";
  local.cron = "0/9 * * * * ?";
  ::testing::internal::CaptureStderr();
  auto effective = service_.SetUp("SCRIPT", local);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(effective.ok());
  EXPECT_EQ(effective->props.at("script.command.line"), "echo new");
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("differs from the one given here in cron, props.script.command.line: the "
                     "registry's wins"),
            std::string::npos)
      << err;
  // The same as the registry's: nothing to say.
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(service_.SetUp("SCRIPT", registered).ok());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST_F(ConfigServiceTest, ARegistryConfigTheRunnableCheckRefusesKeepsTheLastGood) {
  ASSERT_TRUE(service_.SetUp("SCRIPT", Config(3)).ok());
  service_.SetRunnableCheck([](const JobConfiguration& c) {
    return c.job_sharding_strategy_type == "NO_SUCH"
               ? InvalidArgument("jobShardingStrategyType: unknown strategy 'NO_SUCH'")
               : Status::Ok();
  });
  ASSERT_TRUE(service_.LoadLastGood(false).ok());
  JobConfiguration bad = Config(5);
  bad.job_sharding_strategy_type = "NO_SUCH";
  ASSERT_TRUE(reg_.Update("/orderJob/config", ConfigToYaml(bad)).ok());
  EXPECT_EQ(service_.Load(false).status().code(), StatusCode::kInvalidArgument);
  auto kept = service_.LoadLastGood(false);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->sharding_total_count, 3);
  EXPECT_FALSE(kept->job_sharding_strategy_type.has_value());
}

TEST_F(ConfigServiceTest, TheConfigASetUpCreatedIsAdoptedAsTheLastGoodWithoutAReadOrAParseAgain) {
  bool created = false;
  ASSERT_TRUE(service_.SetUp("SCRIPT", Config(3), /*seen_absent=*/true, &created).ok());
  ASSERT_TRUE(created);
  auto adopted = service_.AdoptWritten();
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  EXPECT_EQ(adopted->sharding_total_count, 3);
  EXPECT_EQ(service_.parses(), 1u);
  // The text adopted is the registry's: loading it parses nothing again.
  ASSERT_TRUE(service_.Load(false).ok());
  EXPECT_EQ(service_.parses(), 1u);
  // Adopted once: a second call, or a SetUp that created nothing, has nothing to adopt.
  EXPECT_EQ(service_.AdoptWritten().status().code(), StatusCode::kFailedPrecondition);
  // It is the last good one: a bad text later keeps it.
  ASSERT_TRUE(reg_.Update("/orderJob/config", "jobName: orderJob\nshardingTotalCount: 0\n").ok());
  auto kept = service_.LoadLastGood(false);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->sharding_total_count, 3);
}

TEST_F(ConfigServiceTest, TheTextParsedLastIsHandedBackWithoutParsingAndAnyOtherIsNot) {
  bool created = false;
  ASSERT_TRUE(service_.SetUp("SCRIPT", Config(3), /*seen_absent=*/true, &created).ok());
  // Nothing parsed yet: nothing to hand back.
  EXPECT_FALSE(service_.ParsedBefore(ConfigToYaml(Config(3))).has_value());
  ASSERT_TRUE(service_.AdoptWritten().ok());
  auto same = service_.ParsedBefore(ConfigToYaml(Config(3)));
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->sharding_total_count, 3);
  EXPECT_EQ(service_.parses(), 1u);
  EXPECT_FALSE(service_.ParsedBefore(ConfigToYaml(Config(4))).has_value());
  // A refused text is not a parsed one: the last good text is still the one handed back.
  ASSERT_TRUE(reg_.Update("/orderJob/config", "jobName: orderJob\nshardingTotalCount: 0\n").ok());
  ASSERT_FALSE(service_.Load(false).ok());
  EXPECT_FALSE(service_.ParsedBefore("jobName: orderJob\nshardingTotalCount: 0\n").has_value());
  EXPECT_TRUE(service_.ParsedBefore(ConfigToYaml(Config(3))).has_value());
}

TEST_F(ConfigServiceTest, ASetUpThatFoundTheJobRegisteredHasNothingToAdopt) {
  ASSERT_TRUE(service_.SetUp("SCRIPT", Config(3)).ok());
  bool created = true;
  ASSERT_TRUE(service_.SetUp("SCRIPT", Config(5), /*seen_absent=*/true, &created).ok());
  EXPECT_FALSE(created);
  EXPECT_EQ(service_.AdoptWritten().status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(ConfigServiceTest, ADifferentTypeNameIsAJobConflict) {
  ASSERT_TRUE(service_.SetUp("com.acme.OrderJob", Config(3)).ok());
  auto c = service_.SetUp("SCRIPT", Config(3));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(c.status().message().find("Job conflict with register center. The job 'orderJob' in "
                                      "register center's class is 'com.acme.OrderJob', your job "
                                      "class is 'SCRIPT'"),
            std::string::npos);
}

TEST_F(ConfigServiceTest, MalformedRegistryConfigNamesTheJobAndProblem) {
  ASSERT_TRUE(
      reg_.Persist("/orderJob/config", "jobName: orderJob\nshardingTotalCount: lots\n").ok());
  auto c = service_.Load(false);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "job 'orderJob': config: shardingTotalCount: expected an integer, got 'lots'");
  ASSERT_TRUE(reg_.Persist("/orderJob/config", "jobName: orderJob\nshardingTotalCount: 0\n").ok());
  EXPECT_EQ(service_.Load(false).status().message(),
            "job 'orderJob': config: shardingTotalCount: must be greater than 0, got 0");
}

TEST_F(ConfigServiceTest, ItemCountsAboveTheBoundAreRefusedAndTheLastGoodConfigIsKept) {
  ASSERT_TRUE(service_.SetUp("SCRIPT", Config(3)).ok());
  ASSERT_TRUE(service_.LoadLastGood(false).ok());
  ASSERT_TRUE(
      reg_.Persist("/orderJob/config", "jobName: orderJob\nshardingTotalCount: 100000\n").ok());
  EXPECT_EQ(service_.Load(false).status().message(),
            "job 'orderJob': config: shardingTotalCount: must be at most " +
                std::to_string(kMaxShardingTotalCount) + ", got 100000");
  auto kept = service_.LoadLastGood(false);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->sharding_total_count, 3);
}

TEST_F(ConfigServiceTest, GarbageInTheConfigNodeIsAnErrorAndTheLastGoodConfigIsKept) {
  ASSERT_TRUE(service_.SetUp("SCRIPT", Config(3)).ok());
  ASSERT_TRUE(service_.LoadLastGood(false).ok());
  std::string garbage;
  for (int i = 0; i < 512; ++i) garbage += static_cast<char>((i * 131 + 7) % 256);
  for (const std::string& bad : {garbage, std::string("5"), std::string("- a\n- b\n"),
                                 std::string("jobName: [a]\n"), std::string("{a: [")}) {
    ASSERT_TRUE(reg_.Persist("/orderJob/config", bad).ok());
    auto loaded = service_.Load(false);
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument) << loaded.status();
    EXPECT_EQ(loaded.status().message().rfind("job 'orderJob': config: ", 0), 0u)
        << loaded.status();
    auto kept = service_.LoadLastGood(false);
    ASSERT_TRUE(kept.ok()) << kept.status();
    EXPECT_EQ(kept->sharding_total_count, 3);
  }
}

TEST_F(ConfigServiceTest, ARefusedTextIsRefusedAgainWithoutParsingIt) {
  ASSERT_TRUE(service_.SetUp("SCRIPT", Config(3)).ok());
  ASSERT_TRUE(service_.LoadLastGood(false).ok());
  const uint64_t before = service_.parses();
  ASSERT_TRUE(reg_.Persist("/orderJob/config", "cron: " + std::string(100000, 'x') + "\n").ok());
  auto first = service_.Load(false);
  ASSERT_FALSE(first.ok());
  auto again = service_.Load(false);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().ToString(), first.status().ToString());
  auto kept = service_.LoadLastGood(false);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->sharding_total_count, 3);
  EXPECT_EQ(service_.parses(), before + 1);
  // The good text back: parsed again (it was not the last parsed), and good.
  ASSERT_TRUE(reg_.Persist("/orderJob/config", ConfigToYaml(Config(4))).ok());
  auto good = service_.Load(false);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->sharding_total_count, 4);
  EXPECT_EQ(service_.parses(), before + 2);
}

TEST_F(ConfigServiceTest, TimeSkewCheckUsesTheRegistryClock) {
  auto config = *JobConfiguration::Builder("orderJob", 1).MaxTimeDiffSeconds(2).Build();
  ASSERT_TRUE(service_.SetUp("SCRIPT", config).ok());
  EXPECT_TRUE(service_.CheckMaxTimeDiffSecondsTolerable().ok());
  // This machine's clock runs 10 s ahead of the registry's: the registry stamps its own time.
  SimulatedClock local(clock_.WallNow() + std::chrono::seconds(10));
  ConfigService skewed(storage_, local);
  Status s = skewed.CheckMaxTimeDiffSecondsTolerable();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("exceed '10' seconds, max time different is '2' seconds"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace elasticjob::config
