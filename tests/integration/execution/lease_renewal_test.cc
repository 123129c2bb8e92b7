// The session lease at a fire, against a real ZooKeeper server: a run's claim (its running
// marks' multi-op) renews the lease with its answer, so no probe goes beside it; a job without
// running marks sends no claim, and its fires renew the lease with a probe (one exists of the
// namespace root) when it is past half its bound. The session timeout here (4 s: a lease of
// 1.33 s, probed past 0.67 s) is shorter than the second between two fires, so that every
// fire finds the lease past half its bound.
#include <gtest/gtest.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/config/job_configuration.h"
#include "elasticjob/executor.h"
#include "elasticjob/reg/registry_center.h"
#include "reg/composed_registry.h"
#include "reg/zk_test_server.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;

class NoOpJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext&) override {}
};

// Counts the runs an item reported; waits for a number of them.
class RunCounter {
 public:
  void Add() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++runs_;
    }
    cv_.notify_all();
  }
  bool WaitFor(int runs, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return runs_ >= runs; });
  }
  int runs() {
    std::lock_guard<std::mutex> lock(mu_);
    return runs_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int runs_ = 0;
};

class LeaseRenewalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status up = server_.Start();
    ASSERT_TRUE(up.ok()) << up;
  }

  // Runs an every-second job of two items on a fresh namespace until `fires` fires after its
  // first one have reported both items, and returns the exists requests sent meanwhile.
  uint64_t ExistsOverFires(bool monitor_execution, int fires) {
    static int n = 0;
    auto made = NewRegistryCenter(server_.Url("lease" + std::to_string(++n),
                                              "sessionTimeoutMs=4000&connectionTimeoutMs=5000"));
    EXPECT_TRUE(made.ok()) << made.status();
    if (!made.ok()) return 0;
    std::unique_ptr<RegistryCenter> reg = std::move(made).value();
    EXPECT_TRUE(reg->Init().ok());
    auto& zk = static_cast<reg::ComposedRegistry&>(*reg);
    RunCounter counter;
    BootstrapOptions options;
    options.on_item_run = [&](const ItemRunReport&) { counter.Add(); };
    auto config = *JobConfiguration::Builder("leaseJob", 2)
                       .Cron("* * * * * ?")
                       .MonitorExecution(monitor_execution)
                       .Build();
    ScheduleJobBootstrap job(*reg, std::make_shared<NoOpJob>(), config, options);
    EXPECT_TRUE(job.Schedule().ok());
    // The first fire's runs: start-up (the caches' loads, the first sharding) is over.
    EXPECT_TRUE(counter.WaitFor(2, 10s));
    const uint64_t before = zk.request_counts().at("exists");
    const int from = counter.runs();
    EXPECT_TRUE(counter.WaitFor(from + 2 * fires, 10s + std::chrono::seconds(fires)));
    const uint64_t exists = zk.request_counts().at("exists") - before;
    job.Shutdown();
    return exists;
  }

  testing::ZkTestServer server_;
};

TEST_F(LeaseRenewalTest, AClaimRenewsTheLeaseWithItsAnswerAndNoProbeGoesBesideIt) {
  // Every fire sends a claim (monitorExecution): its answer renews the lease.
  EXPECT_EQ(ExistsOverFires(/*monitor_execution=*/true, 4), 0u);
}

TEST_F(LeaseRenewalTest, AJobWithoutRunningMarksRenewsTheLeaseAheadWithAProbe) {
  // No claim, no other request at a fire: each fire finds the lease past half its bound and
  // probes (at most one on its way at a time).
  EXPECT_GE(ExistsOverFires(/*monitor_execution=*/false, 4), 3u);
}

}  // namespace
}  // namespace elasticjob
