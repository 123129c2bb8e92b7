#include "snapshot/snapshot_service.h"

#include <gtest/gtest.h>

#include "elasticjob/reg/registry_center.h"

namespace elasticjob::snapshot {
namespace {

TEST(ParseDumpCommandTest, ReadsTheJobNameAsElasticJobSplitsTheLine) {
  EXPECT_EQ(ParseDumpCommand("dump@orderJob"), "orderJob");
  EXPECT_EQ(ParseDumpCommand("dump@orderJob@"), "orderJob");  // split drops trailing empties
  EXPECT_EQ(ParseDumpCommand("dump@"), std::nullopt);
  EXPECT_EQ(ParseDumpCommand("dump@a@b"), std::nullopt);
  EXPECT_EQ(ParseDumpCommand("dump@@a"), std::nullopt);
  EXPECT_EQ(ParseDumpCommand("DUMP@orderJob"), std::nullopt);
  EXPECT_EQ(ParseDumpCommand("hello"), std::nullopt);
  EXPECT_EQ(ParseDumpCommand(""), std::nullopt);
}

TEST(FilterSensitiveIpsTest, MasksEachAddressByFirstAppearanceAcrossLines) {
  auto out =
      FilterSensitiveIps({"/j/servers/192.168.1.10 | ENABLED", "/j/instances/192.168.1.10@-@42 | ",
                          "/j/x | 10.0.0.2,192.168.1.10", "/j/config | cron: 0/5 * * * * ?"});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], "/j/servers/ip1 | ENABLED");
  EXPECT_EQ(out[1], "/j/instances/ip1@-@42 | ");
  EXPECT_EQ(out[2], "/j/x | ip2,ip1");
  EXPECT_EQ(out[3], "/j/config | cron: 0/5 * * * * ?");
}

TEST(FilterSensitiveIpsTest, ReplacesAsJavaStringReplaceDoes) {
  // The first address met is replaced everywhere on the line, inside the longer one too,
  // which is then not found any more (but still numbered), as in ElasticJob.
  auto out = FilterSensitiveIps({"1.2.3.4 and 11.2.3.44", "11.2.3.44"});
  EXPECT_EQ(out[0], "ip1 and 1ip14");
  EXPECT_EQ(out[1], "ip2");
  // Octets above 255 are not addresses; the longest valid octet is taken, as the regex does.
  EXPECT_EQ(FilterSensitiveIps({"v256.1.1.1"})[0], "v2ip1");
}

class DumpJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = NewRegistryCenter("memory://snapshot-service-test");
    ASSERT_TRUE(r.ok());
    registry_ = std::move(r).value();
    ASSERT_TRUE(registry_->Init().ok());
    ASSERT_TRUE(registry_->Remove("/dumpJob").ok());
  }
  void TearDown() override { registry_->Close(); }
  std::unique_ptr<RegistryCenter> registry_;
};

TEST_F(DumpJobTest, ListsTheSubtreeDepthFirstNamesDescendingWithIpsMasked) {
  ASSERT_TRUE(registry_->Persist("/dumpJob/config", "cron: 0/5 * * * * ?").ok());
  ASSERT_TRUE(registry_->Persist("/dumpJob/servers/192.168.0.7", "ENABLED").ok());
  ASSERT_TRUE(registry_->Persist("/dumpJob/instances/192.168.0.7@-@42", "").ok());
  ASSERT_TRUE(registry_->Persist("/dumpJob/sharding/0/instance", "192.168.0.7@-@42").ok());
  auto dump = DumpJob(*registry_, "dumpJob");
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(*dump,
            "/dumpJob/sharding | \n"
            "/dumpJob/sharding/0 | \n"
            "/dumpJob/sharding/0/instance | ip1@-@42\n"
            "/dumpJob/servers | \n"
            "/dumpJob/servers/ip1 | ENABLED\n"
            "/dumpJob/instances | \n"
            "/dumpJob/instances/ip1@-@42 | \n"
            "/dumpJob/config | cron: 0/5 * * * * ?\n");
}

TEST_F(DumpJobTest, AJobWithoutNodesGivesAnEmptyLineAsElasticJob) {
  auto dump = DumpJob(*registry_, "noSuchJob");
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(*dump, "\n");
}

}  // namespace
}  // namespace elasticjob::snapshot
