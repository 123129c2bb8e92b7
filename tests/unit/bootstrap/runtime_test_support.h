// Shared scaffolding of the runtime's in-process tests: instances are registry sessions on
// one memory store, time is a SimulatedClock, and tests wait on reports and registry events
// (condition variables, bounded), never on sleeps.
#ifndef ELASTICJOB_TESTS_UNIT_BOOTSTRAP_RUNTIME_TEST_SUPPORT_H_
#define ELASTICJOB_TESTS_UNIT_BOOTSTRAP_RUNTIME_TEST_SUPPORT_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/simulated_clock.h"
#include "reg/memory/memory_registry.h"
#include "unit/reg/memory_registry_support.h"

namespace elasticjob::test_support {

using namespace std::chrono_literals;

// Records every report and lets a test wait for a condition over them.
class Recorder {
 public:
  void Add(const ItemRunReport& r) {
    std::lock_guard<std::mutex> l(mu_);
    runs_.push_back(r);
    cv_.notify_all();
  }
  void Add(const TriggerReport& t) {
    std::lock_guard<std::mutex> l(mu_);
    triggers_.push_back(t);
    cv_.notify_all();
  }
  bool Wait(const std::function<bool(const std::vector<ItemRunReport>&,
                                     const std::vector<TriggerReport>&)>& done,
            std::chrono::milliseconds timeout = 20s) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, timeout, [&] { return done(runs_, triggers_); });
  }
  bool WaitRuns(size_t n) {
    return Wait([n](const auto& runs, const auto&) { return runs.size() >= n; });
  }
  std::vector<ItemRunReport> runs() {
    std::lock_guard<std::mutex> l(mu_);
    return runs_;
  }
  // What happened so far, for failure messages.
  static int64_t Millis(Clock::WallTime t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  }
  std::string Dump() {
    std::lock_guard<std::mutex> l(mu_);
    std::string out;
    for (const auto& t : triggers_) {
      out += "trigger source=" + std::to_string(static_cast<int>(t.source)) +
             " outcome=" + std::to_string(static_cast<int>(t.outcome)) +
             " scheduled=" + std::to_string(Millis(t.scheduled)) + " " + t.error + "\n";
    }
    for (const auto& r : runs_) {
      out += "run item=" + std::to_string(r.item) + " on " + r.instance_id +
             " fire=" + (r.fire_time ? std::to_string(Millis(*r.fire_time)) : "-") + "\n";
    }
    return out;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ItemRunReport> runs_;
  std::vector<TriggerReport> triggers_;
};

// A job whose items block until released (per job object).
class GateJob final : public SimpleJob {
 public:
  explicit GateJob(bool block = false) : block_(block) {}
  void Execute(const ShardingContext& ctx) override {
    std::unique_lock<std::mutex> l(mu_);
    ++started_;
    totals_.insert(ctx.sharding_total_count);
    parameters_.push_back(ctx.job_parameter);
    cv_.notify_all();
    cv_.wait(l, [&] { return !block_; });
  }
  void Release() {
    std::lock_guard<std::mutex> l(mu_);
    block_ = false;
    cv_.notify_all();
  }
  // Item runs from now on block until Release.
  void Close() {
    std::lock_guard<std::mutex> l(mu_);
    block_ = true;
  }
  int started() {
    std::lock_guard<std::mutex> l(mu_);
    return started_;
  }
  bool WaitStarted(int n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, 20s, [&] { return started_ >= n; });
  }
  std::set<int> totals() {
    std::lock_guard<std::mutex> l(mu_);
    return totals_;
  }
  // Each item run's job parameter, in the order they started.
  std::vector<std::string> parameters() {
    std::lock_guard<std::mutex> l(mu_);
    return parameters_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool block_;
  int started_ = 0;
  std::set<int> totals_;
  std::vector<std::string> parameters_;
};

// The sessions a fixture made and has not destroyed yet, so that a wait can let all of them
// catch up, not just the one a test reads.
class LiveSessions {
 public:
  void Add(reg::ComposedRegistry* r) {
    std::lock_guard<std::mutex> l(mu_);
    live_.insert(r);
  }
  // Called by a session's deleter before it is destroyed; waits for a WaitIdle in progress.
  void Remove(reg::ComposedRegistry* r) {
    std::lock_guard<std::mutex> l(mu_);
    live_.erase(r);
  }
  // WaitIdle over every live session: every write made before the call is then in each
  // session's caches.
  void WaitIdle() {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<RegistryCenter*> all(live_.begin(), live_.end());
    test_support::WaitIdle(all);
  }

 private:
  std::mutex mu_;
  std::set<reg::ComposedRegistry*> live_;
};

struct SessionDeleter {
  std::shared_ptr<LiveSessions> live;
  void operator()(reg::ComposedRegistry* r) const {
    live->Remove(r);
    delete r;
  }
};
using SessionPtr = std::unique_ptr<reg::ComposedRegistry, SessionDeleter>;

class RuntimeTest : public ::testing::Test {
 protected:
  // A new session on the fixture's server (an instance, or an operator's tools).
  SessionPtr Session() {
    SessionPtr r(reg::NewMemoryRegistry(server_, "ns").release(), SessionDeleter{sessions_});
    EXPECT_TRUE(r->Init().ok());
    sessions_->Add(r.get());
    return r;
  }
  BootstrapOptions Options(const std::string& ip) {
    BootstrapOptions o;
    o.server_ip = ip;
    o.clock = &clock_;
    o.on_item_run = [this](const ItemRunReport& r) { rec_.Add(r); };
    o.on_trigger = [this](const TriggerReport& t) { rec_.Add(t); };
    o.shutdown_timeout = 5s;
    return o;
  }
  JobConfiguration Config(int items, bool failover = false) {
    return *JobConfiguration::Builder("job", items).Cron("* * * * * ?").Failover(failover).Build();
  }
  // Waits (on registry events, bounded) until `ready` holds, first letting `reg` and every
  // other live session catch up with every write made before the call (another session's
  // write reaches a cache a moment later), and after it holds, letting them all catch up
  // with what `reg` saw: a fire on any instance then reads the state `ready` checked.
  bool WaitRegistry(RegistryCenter& reg, const std::function<bool()>& ready) {
    WaitIdle({&reg});
    sessions_->WaitIdle();
    bool held = WaitEvents(reg, ready);
    sessions_->WaitIdle();
    return held;
  }
  // Waits on `reg`'s events (bounded) until `ready` holds.
  bool WaitEvents(RegistryCenter& reg, const std::function<bool()>& ready) {
    std::mutex mu;
    std::condition_variable cv;
    auto sub = reg.Watch("/job", pool_, [&](const TreeEvent&) {
      std::lock_guard<std::mutex> l(mu);
      cv.notify_all();
    });
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, 20s, ready);
  }
  // Waits until the leader has sharded `items` items among `instances` instances and no
  // resharding is pending: a trigger now sees the same assignment on every instance.
  bool WaitSettled(RegistryCenter& reg, int items, size_t instances) {
    return WaitRegistry(reg, [&] {
      if (reg.IsExisted("/job/leader/sharding/necessary").value_or(true)) return false;
      std::set<std::string> owners;
      for (int i = 0; i < items; ++i) {
        auto owner = reg.Get("/job/sharding/" + std::to_string(i) + "/instance");
        if (!owner.ok()) return false;
        owners.insert(*owner);
      }
      return owners.size() == instances;
    });
  }
  static std::string Id(const std::string& ip) { return ip + "@-@" + std::to_string(getpid()); }
  // Writes an operator trigger for `ip` and waits for that trigger's report.
  bool OperatorTrigger(RegistryCenter& reg, const std::string& ip) {
    size_t before = OperatorTriggers();
    if (!reg.Persist("/job/trigger/" + Id(ip), "").ok()) return false;
    return rec_.Wait([&](const auto&, const auto& triggers) {
      size_t n = 0;
      for (const auto& t : triggers) n += t.source == TriggerReport::Source::kOperator ? 1 : 0;
      return n > before;
    });
  }
  size_t OperatorTriggers() {
    size_t n = 0;
    rec_.Wait([&](const auto&, const auto& triggers) {
      for (const auto& t : triggers) n += t.source == TriggerReport::Source::kOperator ? 1 : 0;
      return true;
    });
    return n;
  }
  std::string ConfigYaml(const JobConfiguration& c) { return ConfigToYaml(c); }
  // The subtree at `key`, one "path = value" line per node, for failure messages.
  static std::string DumpTree(RegistryCenter& reg, const std::string& key) {
    std::string out = key + " = " + reg.GetDirectly(key).value_or("?") + "\n";
    auto children = reg.GetChildrenKeys(key);
    if (!children.ok()) return out;
    for (const auto& c : *children) out += DumpTree(reg, key + "/" + c);
    return out;
  }

  SimulatedClock clock_{Clock::WallTime{} + std::chrono::seconds(1'795'305'600)};
  std::shared_ptr<LiveSessions> sessions_ = std::make_shared<LiveSessions>();
  std::shared_ptr<reg::MemoryServer> server_ = std::make_shared<reg::MemoryServer>(clock_);
  ThreadPool pool_{1};
  Recorder rec_;
};

}  // namespace elasticjob::test_support

#endif  // ELASTICJOB_TESTS_UNIT_BOOTSTRAP_RUNTIME_TEST_SUPPORT_H_
