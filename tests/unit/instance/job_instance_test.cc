#include "instance/job_instance.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace elasticjob::instance {
namespace {

TEST(JobInstanceTest, IdAndYamlAsElasticJobWritesThem) {
  JobInstance i = JobInstance::For("10.0.0.5", 4242);
  EXPECT_EQ(i.instance_id, "10.0.0.5@-@4242");
  EXPECT_EQ(i.ToYaml(), "jobInstanceId: 10.0.0.5@-@4242\nserverIp: 10.0.0.5\n");
  auto back = JobInstance::FromYaml(i.ToYaml());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, i);
  EXPECT_FALSE(JobInstance::FromYaml("serverIp: 1.2.3.4\n").ok());
}

TEST(JobInstanceTest, HostileInstanceValuesAreErrorsNotExceptions) {
  std::string garbage;
  for (int i = 0; i < 256; ++i) garbage += static_cast<char>((i * 131 + 7) % 256);
  for (const std::string& bad :
       {garbage, std::string("5"), std::string("- a\n"), std::string("jobInstanceId: [a, b]\n"),
        std::string("jobInstanceId: {a: b}\n"), std::string("{jobInstanceId: ["),
        std::string("\0\x01\x02", 3)}) {
    auto i = JobInstance::FromYaml(bad);
    ASSERT_FALSE(i.ok());
    EXPECT_EQ(i.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(i.status().message().rfind("instance: ", 0), 0u) << i.status();
    EXPECT_EQ(i.status().message().find('\n'), std::string::npos) << i.status();
  }
  // A server IP that is not a string falls back to the id's own.
  auto i = JobInstance::FromYaml("jobInstanceId: 1.2.3.4@-@5\nserverIp: [x]\n");
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(i->server_ip, "1.2.3.4");
}

class DetectIpTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("ELASTICJOB_PREFERRED_NETWORK_IP");
    unsetenv("ELASTICJOB_PREFERRED_NETWORK_INTERFACE");
  }
};

TEST_F(DetectIpTest, PicksAnIpv4AddressThatIsNotLoopbackWhenTheHostHasOne) {
  auto ip = DetectIp();
  ASSERT_TRUE(ip.ok()) << ip.status();
  EXPECT_NE(ip->find('.'), std::string::npos);
}

TEST_F(DetectIpTest, ConfigurationAndEnvironmentOverride) {
  EXPECT_EQ(*DetectIp("192.168.7.7"), "192.168.7.7");
  EXPECT_FALSE(DetectIp("not-an-ip").ok());
  setenv("ELASTICJOB_PREFERRED_NETWORK_IP", "10.9.8.7", 1);
  EXPECT_EQ(*DetectIp(), "10.9.8.7");
  EXPECT_EQ(*DetectIp("192.168.7.7"), "192.168.7.7");  // configuration wins
  setenv("ELASTICJOB_PREFERRED_NETWORK_IP", "999.1.1.1", 1);
  EXPECT_NE(DetectIp().status().message().find("ELASTICJOB_PREFERRED_NETWORK_IP: '999.1.1.1'"),
            std::string::npos);
  unsetenv("ELASTICJOB_PREFERRED_NETWORK_IP");
  setenv("ELASTICJOB_PREFERRED_NETWORK_INTERFACE", "lo", 1);
  EXPECT_EQ(*DetectIp(), "127.0.0.1");
  setenv("ELASTICJOB_PREFERRED_NETWORK_INTERFACE", "nosuchif0", 1);
  EXPECT_FALSE(DetectIp().ok());
}

}  // namespace
}  // namespace elasticjob::instance
