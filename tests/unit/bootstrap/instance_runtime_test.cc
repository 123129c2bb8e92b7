// The `runtime/{instanceId}` node (a layout extension Java ignores): its value, and that it is
// written with the instance node, comes back with it after a new session and goes with it.
#include "instance/instance_runtime.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "unit/bootstrap/runtime_test_support.h"

namespace elasticjob {
namespace {

using instance::InstanceRuntime;
using test_support::GateJob;

TEST(InstanceRuntimeTest, JsonRoundTripsAndUnknownKeysAreIgnored) {
  InstanceRuntime r{"0.1.0", "host-a", 42, 1000, 2000, 3000, 15000};
  auto back = InstanceRuntime::FromJson(r.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, r);
  auto newer = InstanceRuntime::FromJson(R"({"version":"9.0","pid":7,"more":[1,2]})");
  ASSERT_TRUE(newer.ok()) << newer.status();
  EXPECT_EQ(newer->version, "9.0");
  EXPECT_EQ(newer->pid, 7);
  EXPECT_EQ(newer->session_timeout_ms, 0);
  // No session (memory://): the timeout is left out.
  EXPECT_EQ(InstanceRuntime{}.ToJson().find("sessionTimeoutMs"), std::string::npos);
}

TEST(InstanceRuntimeTest, HostileValuesAreErrorsNamingTheKey) {
  EXPECT_FALSE(InstanceRuntime::FromJson("jobInstanceId: x").ok());
  EXPECT_FALSE(InstanceRuntime::FromJson("[1]").ok());
  auto bad = InstanceRuntime::FromJson(R"({"pid":"42"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("'pid'"), std::string::npos) << bad.status();
}

TEST(InstanceRuntimeTest, VersionAndProcessStartAreThisBuildsAndThisProcesss) {
  EXPECT_FALSE(instance::LibraryVersion().empty());
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  EXPECT_GT(instance::ProcessStartTime(), 0);
  EXPECT_LE(instance::ProcessStartTime(), now_ms);
}

class InstanceRuntimeNodeTest : public test_support::RuntimeTest {
 protected:
  static int64_t Ms(Clock::WallTime t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  }
};

TEST_F(InstanceRuntimeNodeTest, IsWrittenWithTheInstanceAndGoesWithIt) {
  auto reg = Session();
  const std::string node = "/job/runtime/" + Id("10.0.0.1");
  const int64_t started = Ms(clock_.WallNow());
  {
    ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(1), Options("10.0.0.1"));
    ASSERT_TRUE(boot.Schedule().ok());
    ASSERT_TRUE(*reg->IsExisted("/job/instances/" + Id("10.0.0.1")));
    auto value = reg->GetDirectly(node);
    ASSERT_TRUE(value.ok()) << value.status();
    auto r = InstanceRuntime::FromJson(*value);
    ASSERT_TRUE(r.ok()) << *value;
    EXPECT_EQ(r->version, instance::LibraryVersion());
    EXPECT_FALSE(r->hostname.empty());
    EXPECT_EQ(r->pid, getpid());
    EXPECT_EQ(r->process_start_time, instance::ProcessStartTime());
    EXPECT_EQ(r->job_start_time, started);
    EXPECT_EQ(r->registered_time, started);

    // A new session: both nodes come back, the registration time is the new one.
    clock_.Advance(std::chrono::seconds(5));
    reg->ExpireSession();
    ASSERT_TRUE(WaitRegistry(*reg, [&] {
      auto again = reg->GetDirectly(node);
      auto parsed =
          again.ok() ? InstanceRuntime::FromJson(*again) : Result<InstanceRuntime>(again.status());
      return parsed.ok() && parsed->registered_time > started &&
             reg->IsExisted("/job/instances/" + Id("10.0.0.1")).value_or(false);
    }));
    auto after = InstanceRuntime::FromJson(*reg->GetDirectly(node));
    ASSERT_TRUE(after.ok());
    EXPECT_EQ(after->job_start_time, started);
    EXPECT_GE(after->registered_time, started + 5000);
    boot.Shutdown();
  }
  EXPECT_FALSE(*reg->IsExisted("/job/instances/" + Id("10.0.0.1")));
  EXPECT_FALSE(*reg->IsExisted(node));
}

// Java instances never read `runtime/`; this one's instance node is still exactly the
// two keys ElasticJob's JobInstance has.
TEST_F(InstanceRuntimeNodeTest, LeavesTheInstanceNodeAsElasticJobReadsIt) {
  auto reg = Session();
  ScheduleJobBootstrap boot(*reg, std::make_shared<GateJob>(), Config(1), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  EXPECT_EQ(*reg->GetDirectly("/job/instances/" + Id("10.0.0.1")),
            "jobInstanceId: " + Id("10.0.0.1") + "\nserverIp: 10.0.0.1\n");
  boot.Shutdown();
}

}  // namespace
}  // namespace elasticjob
