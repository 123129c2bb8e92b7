// The runtime end to end inside one process: instances are registry sessions on one memory
// store, time is a SimulatedClock, and the tests wait on reported item runs (condition
// variables), never on sleeps.
#include "elasticjob/bootstrap/schedule_job_bootstrap.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "elasticjob/metrics/metrics.h"
#include "metrics/metrics_impl.h"
#include "unit/bootstrap/forwarding_registry.h"
#include "unit/bootstrap/runtime_test_support.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;

class Reports {
 public:
  void Add(const ItemRunReport& r) {
    std::lock_guard<std::mutex> l(mu_);
    runs_.push_back(r);
    cv_.notify_all();
  }
  bool WaitFor(size_t n, std::chrono::seconds timeout = 20s) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, timeout, [&] { return runs_.size() >= n; });
  }
  std::vector<ItemRunReport> runs() {
    std::lock_guard<std::mutex> l(mu_);
    return runs_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ItemRunReport> runs_;
};

class CountingJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext& ctx) override {
    std::unique_lock<std::mutex> l(mu);
    ++active;
    max_active_per_item[ctx.sharding_item] =
        std::max(max_active_per_item[ctx.sharding_item], active);
    contexts.push_back(ctx);
    cv.notify_all();
    cv.wait(l, [&] { return !block; });
    --active;
  }
  void Release() {
    std::lock_guard<std::mutex> l(mu);
    block = false;
    cv.notify_all();
  }
  bool WaitStarted(size_t n) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, 20s, [&] { return contexts.size() >= n; });
  }
  std::mutex mu;
  std::condition_variable cv;
  bool block = false;
  int active = 0;
  std::map<int, int> max_active_per_item;
  std::vector<ShardingContext> contexts;
};

// Counts the reads made through it (cache and server), and forwards everything.
class CountingRegistry final : public test_support::ForwardingRegistry {
 public:
  explicit CountingRegistry(RegistryCenter& inner) : ForwardingRegistry(inner) {}
  int reads() const { return reads_.load(); }
  // Writes of misfire marks (each step of a transaction, or a single write).
  int misfire_writes() const { return misfire_writes_.load(); }
  // The keys read so far, in order (for failure messages).
  std::string ReadsSince(int n) {
    std::lock_guard<std::mutex> l(mu_);
    std::string out;
    for (size_t i = static_cast<size_t>(n); i < keys_.size(); ++i) out += keys_[i] + "\n";
    return out;
  }

  Result<std::string> Get(std::string_view key) override { return Read(key), inner().Get(key); }
  Result<std::string> GetDirectly(std::string_view key) override {
    return Read(key), inner().GetDirectly(key);
  }
  Result<bool> IsExisted(std::string_view key) override {
    return Read(key), inner().IsExisted(key);
  }
  Result<std::vector<std::string>> GetChildrenKeys(std::string_view key) override {
    return Read(key), inner().GetChildrenKeys(key);
  }
  Result<int> GetNumChildren(std::string_view key) override {
    return Read(key), inner().GetNumChildren(key);
  }
  Result<std::vector<std::string>> GetChildrenKeysDirectly(std::string_view key) override {
    return Read(key), inner().GetChildrenKeysDirectly(key);
  }
  Status Persist(std::string_view key, std::string_view value) override {
    CountWrite(key);
    return inner().Persist(key, value);
  }
  Status Remove(std::string_view key) override {
    CountWrite(key);
    return inner().Remove(key);
  }
  Status ExecuteInTransaction(const std::vector<TransactionOp>& ops) override {
    for (const auto& op : ops) CountWrite(op.key);
    return inner().ExecuteInTransaction(ops);
  }
  void ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                 std::function<void(Status)> done) override {
    for (const auto& op : ops) CountWrite(op.key);
    inner().ExecuteInTransactionAsync(std::move(ops), executor, std::move(done));
  }
  void ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops, Executor& executor,
                                        std::function<void(Result<int64_t>)> done) override {
    for (const auto& op : ops) CountWrite(op.key);
    inner().ExecuteInTransactionStampedAsync(std::move(ops), executor, std::move(done));
  }

 private:
  void Read(std::string_view key) {
    std::lock_guard<std::mutex> l(mu_);
    keys_.emplace_back(key);
    ++reads_;
  }
  void CountWrite(std::string_view key) {
    if (key.ends_with("/misfire")) ++misfire_writes_;
  }
  std::atomic<int> reads_{0};
  std::atomic<int> misfire_writes_{0};
  std::mutex mu_;
  std::vector<std::string> keys_;  // guarded by mu_
};

class ScheduleJobBootstrapTest : public test_support::RuntimeTest {
 protected:
  BootstrapOptions Options(const std::string& ip) {
    BootstrapOptions o;
    o.server_ip = ip;
    o.clock = &clock_;
    o.on_item_run = [this](const ItemRunReport& r) { reports_.Add(r); };
    o.on_trigger = [this](const TriggerReport& t) {
      std::lock_guard<std::mutex> g(trigger_mu_);
      if (t.outcome == TriggerReport::Outcome::kMisfire) ++misfires_;
      ++triggers_;
      trigger_cv_.notify_all();
    };
    return o;
  }
  JobConfiguration Config(int items, const std::string& params = "") {
    return *JobConfiguration::Builder("job", items)
                .Cron("* * * * * ?")
                .ShardingItemParameters(params)
                .Build();
  }

  Reports reports_;
  std::mutex trigger_mu_;
  std::condition_variable trigger_cv_;
  int misfires_ = 0;
  int triggers_ = 0;
};

TEST_F(ScheduleJobBootstrapTest, RunsEveryLocalItemOnEachTriggerAndClearsRunningMarks) {
  auto reg = Session();
  auto job = std::make_shared<CountingJob>();
  ScheduleJobBootstrap boot(*reg, job, Config(3, "0=Beijing,1=Shanghai"), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  EXPECT_EQ(*reg->GetDirectly("/job"), "CPP_SIMPLE");
  EXPECT_EQ(*reg->GetDirectly("/job/servers/10.0.0.1"), "ENABLED");
  clock_.Advance(1s);
  ASSERT_TRUE(reports_.WaitFor(3));
  std::set<int> items;
  for (const auto& r : reports_.runs()) {
    items.insert(r.item);
    EXPECT_TRUE(r.success);
    EXPECT_EQ(r.job_name, "job");
  }
  EXPECT_EQ(items, (std::set<int>{0, 1, 2}));
  std::lock_guard<std::mutex> l(job->mu);
  for (const auto& ctx : job->contexts) {
    EXPECT_EQ(ctx.sharding_total_count, 3);
    if (ctx.sharding_item == 0) {
      EXPECT_EQ(ctx.sharding_parameter, "Beijing");
    }
    if (ctx.sharding_item == 2) {
      EXPECT_FALSE(ctx.sharding_parameter.has_value());
    }
    EXPECT_EQ(ctx.task_id.rfind("job@-@0,1,2@-@READY@-@10.0.0.1@-@", 0), 0u) << ctx.task_id;
  }
}

TEST_F(ScheduleJobBootstrapTest, TwoInstancesSplitTheItemsAndNeverRunOneTwice) {
  auto r1 = Session(), r2 = Session();
  auto job1 = std::make_shared<CountingJob>(), job2 = std::make_shared<CountingJob>();
  ScheduleJobBootstrap a(*r1, job1, Config(4), Options("10.0.0.1"));
  ScheduleJobBootstrap b(*r2, job2, Config(4), Options("10.0.0.2"));
  ASSERT_TRUE(a.Schedule().ok());
  ASSERT_TRUE(b.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*r1, 4, 2)) << DumpTree(*r1, "/job");
  clock_.Advance(1s);
  ASSERT_TRUE(reports_.WaitFor(4));
  std::map<int, std::string> owner;
  for (const auto& r : reports_.runs()) {
    EXPECT_TRUE(owner.emplace(r.item, r.instance_id).second) << "item " << r.item << " ran twice";
  }
  EXPECT_EQ(owner.size(), 4u);
  int on_a = 0;
  for (const auto& [item, id] : owner) on_a += id.rfind("10.0.0.1@-@", 0) == 0 ? 1 : 0;
  EXPECT_EQ(on_a, 2);  // AVG_ALLOCATION: two each
}

TEST_F(ScheduleJobBootstrapTest, ARunLongerThanItsIntervalGivesExactlyOneMisfireRerun) {
  auto reg = Session();
  auto job = std::make_shared<CountingJob>();
  job->block = true;
  ScheduleJobBootstrap boot(*reg, job, Config(1), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  // A failed assertion must not leave the item blocked (the test would hang, not fail).
  std::unique_ptr<CountingJob, void (*)(CountingJob*)> release_at_end(
      job.get(), [](CountingJob* j) { j->Release(); });
  clock_.Advance(1s);
  ASSERT_TRUE(job->WaitStarted(1));
  // The mark follows the item's start.
  const std::string self = reg->GetChildrenKeys("/job/instances")->at(0);
  EXPECT_TRUE(WaitRegistry(
      *reg, [&] { return reg->GetDirectly("/job/sharding/0/running").value_or("") == self; }));
  // Three more triggers while it runs: each finds it running and marks misfire. One second
  // at a time, each handled before the next (a jump of several seconds at once would be a
  // clock step, whose missed fire times are skipped, not queued).
  for (int i = 1; i <= 3; ++i) {
    clock_.Advance(1s);
    std::unique_lock<std::mutex> g(trigger_mu_);
    ASSERT_TRUE(trigger_cv_.wait_for(g, 20s, [&] { return misfires_ == i; }));
  }
  // The mark is sent, not waited for (JobExecutor: a trigger never waits on the registry):
  // a misfire's report may come before its mark lands.
  EXPECT_TRUE(WaitRegistry(*reg, [&] { return *reg->IsExisted("/job/sharding/0/misfire"); }));
  job->Release();
  ASSERT_TRUE(reports_.WaitFor(2));
  auto runs = reports_.runs();
  EXPECT_FALSE(runs[0].misfire_rerun);
  EXPECT_TRUE(runs[1].misfire_rerun);
  // Our mark stays through the re-run and goes once no other re-run follows.
  EXPECT_TRUE(WaitRegistry(*reg, [&] { return !*reg->IsExisted("/job/sharding/0/misfire"); }));
  std::lock_guard<std::mutex> l(job->mu);
  EXPECT_EQ(job->max_active_per_item[0], 1);  // never concurrently
  EXPECT_EQ(job->contexts.size(), 2u);        // the run, then one re-run
}

// BootstrapOptions::metrics: readiness follows Schedule and Shutdown; an item run, its
// lateness, a running item and a misfire are recorded under the job's name.
TEST_F(ScheduleJobBootstrapTest, RecordsRunsMisfiresAndReadinessInItsMetrics) {
  auto reg = Session();
  auto job = std::make_shared<CountingJob>();
  job->block = true;
  auto metrics = Metrics::Create();
  metrics->AddRegistry(*reg, "test");
  BootstrapOptions options = Options("10.0.0.1");
  options.metrics = metrics;
  std::string why;
  {
    ScheduleJobBootstrap boot(*reg, job, Config(1), options);
    EXPECT_FALSE(metrics->Ready(&why));
    EXPECT_EQ(why, "job 'job': not scheduled yet");
    ASSERT_TRUE(boot.Schedule().ok());
    EXPECT_TRUE(metrics->Ready(&why)) << why;
    auto recorded = metrics::JobMetricsOf(metrics, "job");
    std::unique_ptr<CountingJob, void (*)(CountingJob*)> release_at_end(
        job.get(), [](CountingJob* j) { j->Release(); });
    clock_.Advance(1s);
    ASSERT_TRUE(job->WaitStarted(1));
    EXPECT_EQ(recorded->running_items.value(), 1);
    clock_.Advance(1s);  // finds the item running: a misfire
    {
      std::unique_lock<std::mutex> g(trigger_mu_);
      ASSERT_TRUE(trigger_cv_.wait_for(g, 20s, [&] { return misfires_ == 1; }));
    }
    EXPECT_EQ(recorded->misfires.value(), 1u);
    job->Release();
    ASSERT_TRUE(reports_.WaitFor(2));  // the run and its misfire re-run
    EXPECT_EQ(recorded->runs_succeeded.value(), 2u);
    EXPECT_EQ(recorded->runs_failed.value(), 0u);
    EXPECT_EQ(recorded->trigger_lateness.Snapshot().count, 1u);  // the cron fire's run only
    EXPECT_EQ(recorded->item_duration.Snapshot().count, 2u);
    EXPECT_EQ(recorded->running_items.value(), 0);
    const std::string text = metrics->Render();
    EXPECT_NE(text.find("elasticjob_item_runs_total{job_name=\"job\",outcome=\"success\"} 2\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("elasticjob_job_scheduled{job_name=\"job\"} 1\n"), std::string::npos);
    boot.Shutdown();
    EXPECT_NE(metrics->Render().find("elasticjob_job_scheduled{job_name=\"job\"} 0\n"),
              std::string::npos);
  }
  EXPECT_TRUE(metrics->Ready(&why)) << why;  // a job gone holds nothing back
}

// Each run waits for its own gate: run k ends once Open(k + 1) has been called.
class GatedJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext&) override {
    std::unique_lock<std::mutex> l(mu_);
    const int k = started_++;
    cv_.notify_all();
    cv_.wait(l, [&] { return opened_ > k; });
  }
  void Open(int n) {
    std::lock_guard<std::mutex> l(mu_);
    opened_ = n;
    cv_.notify_all();
  }
  bool WaitStarted(int n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, 20s, [&] { return started_ >= n; });
  }
  int started() {
    std::lock_guard<std::mutex> l(mu_);
    return started_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int started_ = 0;  // guarded by mu_
  int opened_ = 0;   // guarded by mu_
};

// A job that keeps falling behind (its misfire re-run is found running too) writes its
// misfire mark once and clears it once, after its last re-run: not a write per trigger,
// each a change of the job's view that would send the next trigger back to the registry.
TEST_F(ScheduleJobBootstrapTest, AJobThatKeepsFallingBehindWritesItsMisfireMarkOnce) {
  auto base = Session();
  CountingRegistry reg(*base);
  auto job = std::make_shared<GatedJob>();
  std::unique_ptr<GatedJob, void (*)(GatedJob*)> open_at_end(job.get(),
                                                             [](GatedJob* j) { j->Open(1000); });
  ScheduleJobBootstrap boot(reg, job, Config(1), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(job->WaitStarted(1));
  auto misfire_triggers = [&](int total) {
    clock_.Advance(1s);
    std::unique_lock<std::mutex> g(trigger_mu_);
    return trigger_cv_.wait_for(g, 20s, [&] { return misfires_ == total; });
  };
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(misfire_triggers(i));
  EXPECT_TRUE(WaitRegistry(*base, [&] { return *base->IsExisted("/job/sharding/0/misfire"); }));
  EXPECT_EQ(reg.misfire_writes(), 1);
  job->Open(1);  // the run ends: its re-run starts, and falls behind too
  ASSERT_TRUE(job->WaitStarted(2));
  for (int i = 4; i <= 5; ++i) ASSERT_TRUE(misfire_triggers(i));
  EXPECT_EQ(reg.misfire_writes(), 1);  // still the one mark
  EXPECT_TRUE(*base->IsExisted("/job/sharding/0/misfire"));
  job->Open(2);  // the re-run ends: one more, for the triggers it missed
  ASSERT_TRUE(job->WaitStarted(3));
  job->Open(3);  // nothing missed this time: the mark goes
  EXPECT_TRUE(WaitRegistry(*base, [&] { return !*base->IsExisted("/job/sharding/0/misfire"); }));
  ASSERT_TRUE(reports_.WaitFor(3));
  EXPECT_EQ(reg.misfire_writes(), 2);  // set once, cleared once
  EXPECT_EQ(job->started(), 3);        // the run and two re-runs
  auto runs = reports_.runs();
  EXPECT_FALSE(runs[0].misfire_rerun);
  EXPECT_TRUE(runs[1].misfire_rerun);
  EXPECT_TRUE(runs[2].misfire_rerun);
}

TEST_F(ScheduleJobBootstrapTest, DisabledItemsAndServersDoNotRun) {
  auto reg = Session();
  auto job = std::make_shared<CountingJob>();
  ASSERT_TRUE(reg->Persist("/job/sharding/1/disabled", "").ok());
  ScheduleJobBootstrap boot(*reg, job, Config(3), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(reports_.WaitFor(2));
  for (const auto& r : reports_.runs()) EXPECT_NE(r.item, 1);
}

// The run plan: while nothing of the job changes in the registry, a trigger reads nothing
// from it; the first change makes the next trigger read it all again.
TEST_F(ScheduleJobBootstrapTest, ATriggerReadsNothingWhileTheJobsRegistryViewIsUnchanged) {
  auto reg = Session();
  CountingRegistry counting(*reg);
  auto job = std::make_shared<CountingJob>();
  ScheduleJobBootstrap boot(counting, job, Config(3), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  auto run_once = [&](size_t runs_after) {
    int triggers;
    {
      std::lock_guard<std::mutex> g(trigger_mu_);
      triggers = triggers_;
    }
    clock_.Advance(1s);
    EXPECT_TRUE(reports_.WaitFor(runs_after));
    std::unique_lock<std::mutex> g(trigger_mu_);  // the trigger's end is reported after its runs
    EXPECT_TRUE(trigger_cv_.wait_for(g, 20s, [&] { return triggers_ > triggers; }));
  };
  // Start-up settles first: its sharding, and the resharding its own registration events
  // may ask for once they are delivered (late on a loaded machine). Then three triggers in
  // a row read nothing.
  size_t expected = 0;
  int quiet = 0;
  for (int i = 0; i < 15 && quiet < 3; ++i) {
    const int reads = counting.reads();
    run_once(expected += 3);
    quiet = counting.reads() == reads ? quiet + 1 : 0;
  }
  ASSERT_EQ(quiet, 3) << "no three triggers in a row read nothing:\n" << counting.ReadsSince(0);
  const int before = counting.reads();
  run_once(expected += 3);
  run_once(expected += 3);
  EXPECT_EQ(counting.reads(), before) << "triggers with nothing changed read the registry:\n"
                                      << counting.ReadsSince(before);
  // A change: item 1 disabled. The next trigger reads, and leaves it out.
  ASSERT_TRUE(reg->Persist("/job/sharding/1/disabled", "").ok());
  run_once(expected += 2);
  EXPECT_GT(counting.reads(), before);
  auto runs = reports_.runs();
  std::set<int> last({runs[runs.size() - 2].item, runs[runs.size() - 1].item});
  EXPECT_EQ(last, (std::set<int>{0, 2}));
  // And it is taken back: item 1 runs again.
  ASSERT_TRUE(reg->Remove("/job/sharding/1/disabled").ok());
  const size_t from = expected;
  run_once(expected += 3);
  runs = reports_.runs();
  std::set<int> again;
  for (size_t i = from; i < runs.size(); ++i) again.insert(runs[i].item);
  EXPECT_EQ(again, (std::set<int>{0, 1, 2}));
}

TEST_F(ScheduleJobBootstrapTest, ScriptJobsGetTheShardingContextAsTheirLastArgument) {
  auto reg = Session();
  std::string out = ::testing::TempDir() + "/script_job_out_" + std::to_string(getpid());
  JobConfiguration c = Config(1, "0=Beijing");
  c.props["script.command.line"] = "/bin/sh -c 'printf %s \"$0\" > " + out + "'";
  ScheduleJobBootstrap boot(*reg, "SCRIPT", c, Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  EXPECT_EQ(*reg->GetDirectly("/job"), "SCRIPT");
  clock_.Advance(1s);
  ASSERT_TRUE(reports_.WaitFor(1));
  EXPECT_TRUE(reports_.runs()[0].success) << reports_.runs()[0].error;
  std::ifstream f(out);
  std::string json((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find(R"("jobName":"job")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("shardingItem":0,"shardingParameter":"Beijing"})"), std::string::npos)
      << json;
  std::remove(out.c_str());
}

TEST_F(ScheduleJobBootstrapTest, FailingItemsAreReportedNotFatal) {
  auto reg = Session();
  JobConfiguration c = Config(1);
  c.props["script.command.line"] = "/bin/false";
  ScheduleJobBootstrap boot(*reg, "SCRIPT", c, Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(reports_.WaitFor(1));
  EXPECT_FALSE(reports_.runs()[0].success);
  EXPECT_NE(reports_.runs()[0].error.find("exited with 1"), std::string::npos);
  clock_.Advance(1s);
  ASSERT_TRUE(reports_.WaitFor(2));  // the next trigger still runs
}

TEST_F(ScheduleJobBootstrapTest, ScheduleErrorsNameTheJobAndProblem) {
  auto reg = Session();
  JobConfiguration c = Config(1);
  ScheduleJobBootstrap no_command(*reg, "SCRIPT", c, Options("10.0.0.1"));
  EXPECT_EQ(no_command.Schedule().message(), "job 'job': props.script.command.line: missing");
  ScheduleJobBootstrap unknown(*reg, "DATAFLOW_X", c, Options("10.0.0.1"));
  EXPECT_NE(unknown.Schedule().message().find("unknown job type 'DATAFLOW_X'"), std::string::npos);
  ASSERT_TRUE(reg->Persist("/job", "com.acme.OtherJob").ok());
  ScheduleJobBootstrap conflict(*reg, std::make_shared<CountingJob>(), c, Options("10.0.0.1"));
  EXPECT_NE(conflict.Schedule().message().find("Job conflict with register center"),
            std::string::npos);
}

TEST_F(ScheduleJobBootstrapTest, ShutdownRemovesInstanceAndLeadership) {
  auto reg = Session();
  auto boot = std::make_unique<ScheduleJobBootstrap>(*reg, std::make_shared<CountingJob>(),
                                                     Config(1), Options("10.0.0.1"));
  ASSERT_TRUE(boot->Schedule().ok());
  EXPECT_EQ(reg->GetChildrenKeys("/job/instances")->size(), 1u);
  EXPECT_TRUE(*reg->IsExisted("/job/leader/election/instance"));
  boot->Shutdown();
  EXPECT_TRUE(reg->GetChildrenKeys("/job/instances")->empty());
  EXPECT_FALSE(*reg->IsExisted("/job/leader/election/instance"));
  EXPECT_EQ(*reg->GetDirectly("/job/servers/10.0.0.1"), "ENABLED");  // servers stay
}

TEST_F(ScheduleJobBootstrapTest, ScheduleAllRegistersEveryJobAndReportsEachFailureInPlace) {
  auto reg = Session();
  std::vector<std::unique_ptr<ScheduleJobBootstrap>> boots;
  constexpr int kJobs = 40;
  for (int i = 0; i < kJobs; ++i) {
    auto config =
        JobConfiguration::Builder("job" + std::to_string(i), 1).Cron("* * * * * ?").Build();
    ASSERT_TRUE(config.ok()) << config.status();
    if (i == 7) {  // a script job without its command: Schedule() fails
      boots.push_back(
          std::make_unique<ScheduleJobBootstrap>(*reg, "SCRIPT", *config, Options("10.0.0.1")));
    } else {
      boots.push_back(std::make_unique<ScheduleJobBootstrap>(*reg, std::make_shared<CountingJob>(),
                                                             *config, Options("10.0.0.1")));
    }
  }
  std::vector<ScheduleJobBootstrap*> ptrs;
  for (auto& b : boots) ptrs.push_back(b.get());
  const std::vector<Status> statuses = ScheduleJobBootstrap::ScheduleAll(ptrs, 8);
  ASSERT_EQ(statuses.size(), static_cast<size_t>(kJobs));
  for (int i = 0; i < kJobs; ++i) {
    const std::string job = "/job" + std::to_string(i);
    if (i == 7) {
      EXPECT_EQ(statuses[i].message(), "job 'job7': props.script.command.line: missing");
      continue;
    }
    EXPECT_TRUE(statuses[i].ok()) << i << ": " << statuses[i];
    EXPECT_EQ(reg->GetChildrenKeys(job + "/instances")->size(), 1u) << job;
    EXPECT_TRUE(*reg->IsExisted(job + "/leader/election/instance")) << job;
  }
  // Every scheduled job runs on the next fire.
  clock_.Advance(1s);
  ASSERT_TRUE(reports_.WaitFor(kJobs - 1));
  std::set<std::string> ran;
  for (const auto& r : reports_.runs()) ran.insert(r.job_name);
  EXPECT_EQ(ran.size(), static_cast<size_t>(kJobs - 1));
  EXPECT_EQ(ran.count("job7"), 0u);

  ScheduleJobBootstrap::ShutdownAll(ptrs, 8);
  for (int i = 0; i < kJobs; ++i) {
    if (i == 7) continue;
    const std::string job = "/job" + std::to_string(i);
    EXPECT_TRUE(reg->GetChildrenKeys(job + "/instances")->empty()) << job;
    EXPECT_FALSE(*reg->IsExisted(job + "/leader/election/instance")) << job;
  }
}

}  // namespace
}  // namespace elasticjob
