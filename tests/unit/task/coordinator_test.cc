// The coordinator against in-process workers on loopback (no registry): every sub-task once,
// multi-level maps, retries, a dead worker's sub-tasks elsewhere, broadcast results.
#include "task/coordinator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "task/worker_service.h"

namespace elasticjob::task {
namespace {

// Root maps `groups` GROUP sub-tasks; each maps `per` NUMBER sub-tasks; a number returns
// itself. Numbers in `flaky` fail their first attempt; `poison` always fails.
class SumJob final : public MapReduceJob {
 public:
  int groups = 4;
  int per = 50;
  std::set<int> flaky;
  int poison = -1;
  std::mutex mu;
  std::map<int, int> runs;  // number -> Process calls, under mu
  std::vector<SubtaskResult> reduced;

  // The workers' counts, read under their lock: the gRPC library is not built for TSan, so the
  // order its threads give (a reply after Process) is invisible to it without the lock.
  std::map<int, int> Runs() {
    std::lock_guard<std::mutex> lock(mu);
    return runs;
  }

  TaskResult Process(TaskContext& ctx) override {
    if (ctx.IsRootTask()) {
      std::vector<Subtask> g;
      for (int i = 0; i < groups; ++i) g.push_back({std::to_string(i)});
      if (Status s = ctx.Map(std::move(g), "GROUP"); !s.ok()) return {false, s.ToString()};
      return {true, ""};
    }
    if (ctx.task_name() == "GROUP") {
      int base = std::stoi(ctx.payload()) * per;
      std::vector<Subtask> n;
      for (int i = 1; i <= per; ++i) n.push_back({std::to_string(base + i)});
      if (Status s = ctx.Map(std::move(n), "NUMBER"); !s.ok()) return {false, s.ToString()};
      return {true, ""};
    }
    int n = std::stoi(ctx.payload());
    {
      std::lock_guard<std::mutex> lock(mu);
      ++runs[n];
    }
    if (n == poison) throw std::runtime_error("poison");
    if (flaky.count(n) != 0 && ctx.attempt() == 1) throw std::runtime_error("flaky");
    return {true, ctx.payload()};
  }
  void Reduce(TaskContext&, const SubtaskResults& results) override {
    ASSERT_TRUE(results.ForEach([&](const SubtaskResult& r) { reduced.push_back(r); }).ok());
  }
};

class HelloJob final : public BroadcastJob {
 public:
  std::atomic<int> pre{0};
  std::atomic<int> processed{0};
  std::vector<InstanceResult> posted;
  void PreProcess(TaskContext&) override { ++pre; }
  TaskResult Process(TaskContext& ctx) override {
    ++processed;
    return {true, ctx.instance_id()};
  }
  void PostProcess(TaskContext& ctx, const std::vector<InstanceResult>& results) override {
    posted = results;
    BroadcastJob::PostProcess(ctx, results);
  }
};

class CoordinatorTest : public ::testing::Test {
 protected:
  void StartWorkers(std::shared_ptr<TaskJob> job, int n, TaskSettings settings = {}) {
    for (int i = 0; i < n; ++i) {
      std::string id = "10.0.0." + std::to_string(i) + "@-@1";
      auto server = WorkerServer::Start("127.0.0.1:0",
                                        std::make_unique<WorkerService>(job, "sum", id, settings));
      ASSERT_TRUE(server.ok()) << server.status();
      endpoints_.push_back({id, (*server)->address()});
      servers_.push_back(std::move(server).value());
    }
  }
  Coordinator::ListWorkers List() {
    return [this]() -> Result<std::vector<WorkerEndpoint>> { return endpoints_; };
  }
  std::vector<WorkerEndpoint> endpoints_;
  std::vector<std::unique_ptr<WorkerServer>> servers_;
};

TEST_F(CoordinatorTest, EverySubtaskRunsOnceAndReduceSeesEveryResultOnce) {
  auto job = std::make_shared<SumJob>();
  TaskSettings settings;
  settings.batch_size = 7;  // many batches
  StartWorkers(job, 3, settings);
  Coordinator c(*job, "sum", "", "me", "run-1", settings, List());
  ASSERT_TRUE(c.Run().ok());
  const std::map<int, int> runs = job->Runs();
  EXPECT_EQ(runs.size(), 200u);
  for (const auto& [n, count] : runs) EXPECT_EQ(count, 1) << n;
  std::set<uint64_t> ids;
  long sum = 0;
  for (const auto& r : job->reduced) {
    EXPECT_TRUE(ids.insert(r.id).second) << "reduced twice: " << r.id;
    if (r.name == "NUMBER") sum += std::stol(r.data);
  }
  EXPECT_EQ(job->reduced.size(), 204u);  // 4 groups + 200 numbers
  EXPECT_EQ(sum, 200L * 201 / 2);
  EXPECT_EQ(c.counts().created, 204);
  EXPECT_EQ(c.counts().failed, 0);
}

TEST_F(CoordinatorTest, AFailedSubtaskIsRetriedThenReportedToReduce) {
  auto job = std::make_shared<SumJob>();
  job->flaky = {3, 60};
  job->poison = 7;
  TaskSettings settings;
  settings.max_attempts = 3;
  StartWorkers(job, 2, settings);
  Coordinator c(*job, "sum", "", "me", "run-1", settings, List());
  ASSERT_TRUE(c.Run().ok());  // Reduce decides; it did not throw
  std::map<int, int> runs = job->Runs();
  EXPECT_EQ(runs[3], 2);
  EXPECT_EQ(runs[60], 2);
  EXPECT_EQ(runs[7], 3);
  int failed = 0;
  for (const auto& r : job->reduced) {
    if (!r.success) {
      ++failed;
      EXPECT_EQ(r.data, "threw: poison");
    }
  }
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(c.counts().retried, 4);  // 3 and 60 once, 7 twice
}

TEST_F(CoordinatorTest, AnUnreachableWorkersSubtasksRunElsewhere) {
  auto job = std::make_shared<SumJob>();
  TaskSettings settings;
  settings.batch_size = 5;
  StartWorkers(job, 2, settings);
  // A worker listed but gone: its RPCs fail, its batches go to the two others.
  auto dead = WorkerServer::Start(
      "127.0.0.1:0", std::make_unique<WorkerService>(job, "sum", "dead@-@1", settings));
  ASSERT_TRUE(dead.ok());
  endpoints_.insert(endpoints_.begin(), {"dead@-@1", (*dead)->address()});
  (*dead)->Shutdown(std::chrono::milliseconds(0));
  Coordinator c(*job, "sum", "", "me", "run-1", settings, List());
  ASSERT_TRUE(c.Run().ok());
  const std::map<int, int> runs = job->Runs();
  EXPECT_EQ(runs.size(), 200u);
  for (const auto& [n, count] : runs) EXPECT_EQ(count, 1) << n;
  EXPECT_EQ(c.counts().failed, 0);
}

TEST_F(CoordinatorTest, NoWorkerFailsTheRunWithAClearReason) {
  auto job = std::make_shared<SumJob>();
  Coordinator c(*job, "sum", "", "me", "run-1", {}, List());
  Status s = c.Run();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("no live task worker for 4 pending sub-task(s)"), std::string::npos)
      << s;
}

TEST_F(CoordinatorTest, ARootMapOverTheLimitFailsTheRunNamingIt) {
  class Big final : public MapJob {
    TaskResult Process(TaskContext& ctx) override {
      std::vector<Subtask> s{{std::string(11, 'x')}};
      Status m = ctx.Map(std::move(s), "BIG");
      return {m.ok(), m.ToString()};
    }
  };
  auto job = std::make_shared<Big>();
  TaskSettings settings;
  settings.max_payload_bytes = 10;
  StartWorkers(job, 1, settings);
  Coordinator c(*job, "big", "", "me", "run-1", settings, List());
  Status s = c.Run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("payload of 11 bytes is over task.max.payload.bytes (10)"),
            std::string::npos)
      << s;
}

TEST_F(CoordinatorTest, BroadcastRunsProcessOnEveryWorkerAndPostProcessSeesAll) {
  auto job = std::make_shared<HelloJob>();
  StartWorkers(job, 3);
  Coordinator c(*job, "sum", "", "me", "run-1", {}, List());
  ASSERT_TRUE(c.Run().ok());
  EXPECT_EQ(job->pre, 1);
  EXPECT_EQ(job->processed, 3);
  ASSERT_EQ(job->posted.size(), 3u);
  for (const auto& r : job->posted) {
    EXPECT_TRUE(r.success);
    EXPECT_EQ(r.data, r.instance_id);
  }
}

TEST_F(CoordinatorTest, ABroadcastToAnUnreachableInstanceFailsNamingIt) {
  auto job = std::make_shared<HelloJob>();
  StartWorkers(job, 1);
  endpoints_.push_back({"gone@-@9", "127.0.0.1:1"});
  Coordinator c(*job, "sum", "", "me", "run-1", {}, List());
  Status s = c.Run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("instances failed: gone@-@9"), std::string::npos) << s;
  EXPECT_EQ(job->processed, 1);
}

TEST_F(CoordinatorTest, CancelEndsARunInProgressWithTheReason) {
  class Blocking final : public MapJob {
   public:
    std::mutex mu;
    std::condition_variable cv;
    bool started = false;
    bool release = false;
    TaskResult Process(TaskContext& ctx) override {
      if (ctx.IsRootTask()) {
        std::vector<Subtask> one{{"x"}};
        return {ctx.Map(std::move(one), "ONE").ok(), ""};
      }
      std::unique_lock<std::mutex> lock(mu);
      started = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
      return {true, ""};
    }
  };
  auto job = std::make_shared<Blocking>();
  StartWorkers(job, 1);
  Coordinator c(*job, "sum", "", "me", "run-1", {}, List());
  Status result;
  bool ended = false;
  std::thread run([&] {
    Status s = c.Run();
    std::lock_guard<std::mutex> lock(job->mu);
    result = s;
    ended = true;
    job->cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(job->mu);
    job->cv.wait(lock, [&] { return job->started || ended; });
    ASSERT_FALSE(ended) << "the run ended before its sub-task started: " << result;
  }
  c.Cancel("the session expired");
  run.join();
  EXPECT_EQ(result.code(), StatusCode::kCancelled);
  EXPECT_NE(result.message().find("cancelled: the session expired"), std::string::npos) << result;
  {
    std::lock_guard<std::mutex> lock(job->mu);
    job->release = true;
  }
  job->cv.notify_all();
}

// The sub-tasks sent to `stuck` do not answer until released (a stopped process).
class StuckJob final : public MapReduceJob {
 public:
  std::string stuck;
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::map<std::string, int> runs;  // payload -> answered runs, under mu
  std::vector<SubtaskResult> reduced;
  std::map<std::string, int> Runs() {
    std::lock_guard<std::mutex> lock(mu);
    return runs;
  }
  TaskResult Process(TaskContext& ctx) override {
    if (ctx.IsRootTask()) {
      std::vector<Subtask> n;
      for (int i = 1; i <= 40; ++i) n.push_back({std::to_string(i)});
      return {ctx.Map(std::move(n), "N").ok(), ""};
    }
    std::unique_lock<std::mutex> lock(mu);
    if (ctx.instance_id() == stuck) {
      cv.wait(lock, [&] { return release; });
      return {true, "late"};
    }
    ++runs[ctx.payload()];
    return {true, ctx.payload()};
  }
  void Reduce(TaskContext&, const SubtaskResults& results) override {
    ASSERT_TRUE(results.ForEach([&](const SubtaskResult& r) { reduced.push_back(r); }).ok());
  }
};

TEST_F(CoordinatorTest, AWorkerThatStopsAnsweringIsGivenUpOnAfterTheDeadline) {
  auto job = std::make_shared<StuckJob>();
  TaskSettings settings;
  settings.batch_size = 5;
  settings.rpc_deadline_ms = 300;
  StartWorkers(job, 2, settings);
  job->stuck = endpoints_[0].instance_id;
  Coordinator c(*job, "sum", "", "me", "run-1", settings, List());
  Status s = c.Run();
  {
    std::lock_guard<std::mutex> lock(job->mu);
    job->release = true;
  }
  job->cv.notify_all();
  ASSERT_TRUE(s.ok()) << s;
  // Every sub-task answered once, by the other worker; the stuck one's came back as retries.
  const std::map<std::string, int> runs = job->Runs();
  EXPECT_EQ(runs.size(), 40u);
  for (const auto& [n, count] : runs) EXPECT_EQ(count, 1) << n;
  ASSERT_EQ(job->reduced.size(), 40u);
  for (const SubtaskResult& r : job->reduced) {
    EXPECT_TRUE(r.success);
    EXPECT_NE(r.data, "late");
  }
  EXPECT_EQ(c.counts().failed, 0);
  EXPECT_EQ(c.counts().retried, 10);  // two batches of five were in flight on the stuck one
}

TEST(TaskSettingsTest, TheRpcDeadlineIsAPropInMilliseconds) {
  auto t = TaskSettings::FromProps({{"task.rpc.deadline.ms", "2500"}});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->rpc_deadline_ms, 2500);
  EXPECT_EQ(TaskSettings::FromProps({})->rpc_deadline_ms, 0);
  auto bad = TaskSettings::FromProps({{"task.rpc.deadline.ms", "-1"}});
  EXPECT_EQ(bad.status().message(),
            "props: task.rpc.deadline.ms: '-1' is not an integer in [0, 86400000]");
}

}  // namespace
}  // namespace elasticjob::task
