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
