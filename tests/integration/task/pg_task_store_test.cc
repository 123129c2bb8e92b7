// The shared task store against a real PostgreSQL server (scripts/pg-server.sh, a free port,
// a temp dir): what a new coordinator finds when it resumes a run its predecessor left, the
// workers' own writes, and a coordinator replaced mid-run with nothing run twice.
#include "task/postgresql/pg_task_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "task/coordinator.h"
#include "task/worker_service.h"

namespace elasticjob::task {
namespace {

std::string RunCommand(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[256];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  if (pclose(p) != 0) return "";
  return out;
}

class PgTaskStoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/ej-task-store-XXXXXX";
    dir_ = new std::string(mkdtemp(tmpl));
    if (RunCommand("bash " ELASTICJOB_SCRIPTS "/pg-server.sh start " + *dir_).empty()) return;
    std::ifstream f(*dir_ + "/url");
    url_ = new std::string;
    std::getline(f, *url_);
  }
  static void TearDownTestSuite() {
    RunCommand("bash " ELASTICJOB_SCRIPTS "/pg-server.sh stop " + *dir_ + " 2>&1");
    std::filesystem::remove_all(*dir_);
    delete dir_;
    delete url_;
  }
  void SetUp() override { ASSERT_NE(url_, nullptr) << "PostgreSQL did not start"; }

  std::unique_ptr<PgTaskStore> Connect() {
    auto s = PgTaskStore::Connect(*url_, "job", 3);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  std::unique_ptr<PgOutcomeWriter> Writer() {
    auto w = PgOutcomeWriter::Create(*url_);
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? std::move(w).value() : nullptr;
  }
  // A run of `n` sub-tasks (payloads "1".."n") with its root done.
  std::unique_ptr<PgTaskStore> NewRun(const std::string& run_id, int n) {
    auto store = Connect();
    if (store == nullptr) return nullptr;
    EXPECT_TRUE(store->Create(run_id).ok());
    std::vector<std::string> p;
    for (int i = 1; i <= n; ++i) p.push_back(std::to_string(i));
    EXPECT_TRUE(store->Add("N", p).ok());
    EXPECT_TRUE(store->MarkRootDone().ok());
    return store;
  }
  // Takes `n` pending sub-tasks for `worker`, committed.
  static std::vector<StoredTask> Dispatch(TaskStore& store, int n, const std::string& worker) {
    EXPECT_TRUE(store.Begin().ok());
    auto sent = store.TakePending(n, SIZE_MAX, worker);
    EXPECT_TRUE(sent.ok()) << sent.status();
    EXPECT_TRUE(store.Commit().ok());
    return sent.ok() ? *sent : std::vector<StoredTask>{};
  }
  static std::map<std::string, std::string> Results(const TaskStore& store) {
    std::map<std::string, std::string> out;
    EXPECT_TRUE(
        store.ForEach([&](const SubtaskResult& r) { out[r.name + ":" + r.data] = r.name; }).ok());
    return out;
  }

  static std::string* dir_;
  static std::string* url_;
};
std::string* PgTaskStoreTest::dir_ = nullptr;
std::string* PgTaskStoreTest::url_ = nullptr;

TEST_F(PgTaskStoreTest, AResumedRunKeepsWhatWasDoneAndSendsTheInFlightAgain) {
  uint64_t one = 0;  // ids (from a sequence shared by the runs)
  uint64_t two = 0;
  {
    auto first = Connect();
    ASSERT_NE(first, nullptr);
    ASSERT_TRUE(first->Create("run-1").ok());
    std::vector<std::string> p{"a", "b", "c"};
    ASSERT_TRUE(first->Add("N", p).ok());
    ASSERT_TRUE(first->MarkRootDone().ok());
    ASSERT_TRUE(first->Begin().ok());
    auto sent = first->TakePending(2);
    ASSERT_TRUE(sent.ok());
    ASSERT_EQ(sent->size(), 2u);
    one = sent->at(0).id;
    two = sent->at(1).id;
    EXPECT_EQ(*first->Record(one, true, "one"), TaskStore::Recorded::kFirst);
    ASSERT_TRUE(first->Commit().ok());
  }  // the coordinator is gone: sub-task 2 was in flight
  auto next = Connect();
  ASSERT_NE(next, nullptr);
  auto resumed = next->Resume("run-1");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_TRUE(*resumed);
  EXPECT_TRUE(next->resumed());
  EXPECT_EQ(next->total(), 3);
  EXPECT_EQ(next->done(), 1);
  EXPECT_EQ(next->pending(), 2);
  EXPECT_EQ(next->redispatched(), 1);
  ASSERT_TRUE(next->Begin().ok());
  auto again = next->TakePending(10);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 2u);
  EXPECT_EQ(again->at(0).id, two);
  EXPECT_EQ(again->at(0).attempt, 1);  // the lost dispatch does not count
  const uint64_t three = again->at(1).id;
  EXPECT_GT(three, two);
  // A late outcome for the sub-task done before changes nothing.
  EXPECT_EQ(*next->Record(one, true, "late"), TaskStore::Recorded::kDuplicate);
  EXPECT_EQ(*next->Record(two, true, "two"), TaskStore::Recorded::kFirst);
  EXPECT_EQ(*next->Record(three, false, "boom"), TaskStore::Recorded::kRetry);
  ASSERT_TRUE(next->Commit().ok());
  auto last = next->TakePending(10);
  ASSERT_TRUE(last.ok());
  ASSERT_EQ(last->size(), 1u);
  EXPECT_EQ(*next->Record(three, true, "three"), TaskStore::Recorded::kFirst);
  std::vector<std::string> results;
  ASSERT_TRUE(next->ForEach([&](const SubtaskResult& r) {
                    results.push_back(std::to_string(r.id) + "=" + r.data);
                  })
                  .ok());
  EXPECT_EQ(results,
            (std::vector<std::string>{std::to_string(one) + "=one", std::to_string(two) + "=two",
                                      std::to_string(three) + "=three"}));
  EXPECT_EQ(next->retried(), 1);
  ASSERT_TRUE(next->Finish().ok());
  auto gone = Connect();
  ASSERT_NE(gone, nullptr);
  EXPECT_FALSE(*gone->Resume("run-1"));
}

TEST_F(PgTaskStoreTest, ARunLostBeforeItsRootFinishedIsNotResumed) {
  {
    auto first = Connect();
    ASSERT_NE(first, nullptr);
    ASSERT_TRUE(first->Create("run-2").ok());
    std::vector<std::string> p{"a", "b"};
    ASSERT_TRUE(first->Add("N", p).ok());
  }
  auto next = Connect();
  ASSERT_NE(next, nullptr);
  auto resumed = next->Resume("run-2");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_FALSE(*resumed);
  EXPECT_FALSE(next->resumed());
  // Its rows are gone: the run may start again from the root, under the same id even.
  ASSERT_TRUE(next->Create("run-2").ok());
  EXPECT_EQ(next->total(), 0);
  ASSERT_TRUE(next->Finish().ok());
}

TEST_F(PgTaskStoreTest, ACoordinatorWhoseRunWasTakenOverChangesNothing) {
  auto old = Connect();
  ASSERT_NE(old, nullptr);
  ASSERT_TRUE(old->Create("run-3").ok());
  std::vector<std::string> p{"a", "b"};
  ASSERT_TRUE(old->Add("N", p).ok());
  ASSERT_TRUE(old->MarkRootDone().ok());
  ASSERT_TRUE(old->Begin().ok());
  auto first = old->TakePending(10);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 2u);
  const uint64_t id = first->at(0).id;
  ASSERT_TRUE(old->Commit().ok());
  // A new coordinator resumes the run while the old one is still at it (its session lost,
  // not noticed yet).
  auto next = Connect();
  ASSERT_NE(next, nullptr);
  ASSERT_TRUE(*next->Resume("run-3"));
  ASSERT_TRUE(old->Begin().ok());
  ASSERT_EQ(*old->Record(id, true, "stale"), TaskStore::Recorded::kDuplicate);  // pending now
  ASSERT_EQ(old->TakePending(10)->size(), 2u);  // would strand them as dispatched: rolled back
  Status s = old->Commit();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("run run-3 was taken over by another coordinator"), std::string::npos)
      << s;
  EXPECT_EQ(old->Finish().code(), StatusCode::kFailedPrecondition);
  // The new one's run is whole.
  ASSERT_TRUE(next->Begin().ok());
  auto sent = next->TakePending(10);
  ASSERT_TRUE(sent.ok());
  ASSERT_EQ(sent->size(), 2u);
  EXPECT_EQ(*next->Record(id, true, "one"), TaskStore::Recorded::kFirst);
  ASSERT_TRUE(next->Commit().ok());
  ASSERT_TRUE(next->Finish().ok());
}

TEST_F(PgTaskStoreTest, AWorkerRecordsItsOutcomesAndWhatTheFirstSuccessesMapped) {
  auto store = NewRun("run-w1", 3);
  ASSERT_NE(store, nullptr);
  auto sent = Dispatch(*store, 3, "w1");
  ASSERT_EQ(sent.size(), 3u);
  auto writer = Writer();
  ASSERT_NE(writer, nullptr);
  using R = TaskStore::Recorded;
  std::vector<PgOutcomeWriter::Outcome> outcomes{
      {sent[0].id, 1, true, "one", {{"CHILD", "a"}, {"CHILD", "b"}}},
      {sent[1].id, 1, false, "boom", {{"CHILD", "dropped"}}},
      {sent[2].id, 1, true, "three", {}},
  };
  auto written = writer->Write("run-w1", "w1", 3, outcomes);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, (std::vector<R>{R::kFirst, R::kRetry, R::kFirst}));
  // The same outcomes again (a retried write, a late duplicate): nothing changes.
  auto again = writer->Write("run-w1", "w1", 3, outcomes);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, (std::vector<R>{R::kDuplicate, R::kDuplicate, R::kDuplicate}));
  ASSERT_TRUE(store->Reload().ok());
  EXPECT_EQ(store->total(), 5);  // 3 + the two children of the first success
  EXPECT_EQ(store->done(), 2);
  EXPECT_EQ(store->pending(), 3);  // the retry and the children
  EXPECT_EQ(store->retried(), 1);
  EXPECT_EQ(Results(*store),
            (std::map<std::string, std::string>{{"N:one", "N"}, {"N:three", "N"}}));
  auto next = Dispatch(*store, 10, "w1");
  ASSERT_EQ(next.size(), 3u);
  std::set<std::string> payloads;
  for (const StoredTask& t : next) payloads.insert(t.payload);
  EXPECT_EQ(payloads, (std::set<std::string>{"2", "a", "b"}));
  ASSERT_TRUE(store->Finish().ok());
}

TEST_F(PgTaskStoreTest, AWorkersWriteCountsOnlyForItsOwnDispatchOfThatAttempt) {
  auto store = NewRun("run-w2", 2);
  ASSERT_NE(store, nullptr);
  auto sent = Dispatch(*store, 2, "w1");
  ASSERT_EQ(sent.size(), 2u);
  auto writer = Writer();
  ASSERT_NE(writer, nullptr);
  using R = TaskStore::Recorded;
  // Another worker, or this one with another attempt's outcome: ignored.
  auto other = writer->Write("run-w2", "w2", 3, {{sent[0].id, 1, true, "x", {}}});
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ((*other)[0], R::kDuplicate);
  auto stale = writer->Write("run-w2", "w1", 3, {{sent[0].id, 2, false, "x", {}}});
  ASSERT_TRUE(stale.ok()) << stale.status();
  EXPECT_EQ((*stale)[0], R::kDuplicate);
  // The last attempt's failure is final.
  auto last = writer->Write("run-w2", "w1", 1, {{sent[1].id, 1, false, "gave up", {}}});
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ((*last)[0], R::kFailed);
  ASSERT_TRUE(store->Reload().ok());
  EXPECT_EQ(store->done(), 1);
  EXPECT_EQ(store->failed(), 1);
  ASSERT_TRUE(store->Finish().ok());
}

TEST_F(PgTaskStoreTest, AResumeLeavesALiveWorkersSubtasksWithItAndItsWriteStands) {
  auto old = NewRun("run-w3", 6);
  ASSERT_NE(old, nullptr);
  auto on_live = Dispatch(*old, 2, "live");
  auto on_gone = Dispatch(*old, 2, "gone");
  ASSERT_EQ(on_live.size(), 2u);
  ASSERT_EQ(on_gone.size(), 2u);
  auto next = Connect();
  ASSERT_NE(next, nullptr);
  auto resumed = next->Resume("run-w3", {"live"});
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ASSERT_TRUE(*resumed);
  EXPECT_EQ(next->epoch(), 1u);
  EXPECT_EQ(next->redispatched(), 2);  // the gone worker's
  EXPECT_EQ(next->awaited(), (std::map<std::string, int64_t>{{"live", 2}}));
  EXPECT_EQ(next->pending(), 4);
  // The old coordinator is fenced off; the live worker's write stands under the new one.
  ASSERT_TRUE(old->Begin().ok());
  EXPECT_EQ(old->Commit().code(), StatusCode::kFailedPrecondition);
  auto writer = Writer();
  ASSERT_NE(writer, nullptr);
  auto written = writer->Write("run-w3", "live", 3, {{on_live[0].id, 1, true, "done", {}}});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ((*written)[0], TaskStore::Recorded::kFirst);
  // The worker ran no more of its batch: the rest goes back, not counted as an attempt.
  ASSERT_TRUE(next->Begin().ok());
  ASSERT_TRUE(next->RequeueWorker("live", /*lost=*/false, "").ok());
  ASSERT_TRUE(next->Commit().ok());
  EXPECT_EQ(next->done(), 1);
  EXPECT_EQ(next->pending(), 5);
  EXPECT_EQ(next->retried(), 0);
  auto rest = Dispatch(*next, 10, "live");
  ASSERT_EQ(rest.size(), 5u);
  for (const StoredTask& t : rest) EXPECT_EQ(t.attempt, 1) << t.id;
  // A worker lost: its sub-tasks go back as an attempt; after the last, they fail.
  ASSERT_TRUE(next->Begin().ok());
  ASSERT_TRUE(next->RequeueWorker("live", /*lost=*/true, "worker live lost").ok());
  ASSERT_TRUE(next->Commit().ok());
  EXPECT_EQ(next->pending(), 5);
  EXPECT_EQ(next->retried(), 5);
  ASSERT_TRUE(next->Finish().ok());
}

// A coordinator replaced mid-run (cancelled, as one whose session went, with its batches cut
// at once, as a kill -9 cuts them): the workers record what they ran, the new coordinator
// waits for the live ones and sends only what never ran; every number runs once.
class CountingJob final : public MapReduceJob {
 public:
  std::mutex mu;
  std::condition_variable cv;
  std::map<int, int> runs;
  int gate_at = -1;  // this number blocks until released, once `gate_hit` is set
  bool gate_hit = false;
  bool release = false;
  std::vector<SubtaskResult> reduced;
  TaskResult Process(TaskContext& ctx) override {
    if (ctx.IsRootTask()) {
      std::vector<Subtask> n;
      for (int i = 1; i <= 300; ++i) n.push_back({std::to_string(i)});
      return {ctx.Map(std::move(n), "N").ok(), ""};
    }
    const int n = std::stoi(ctx.payload());
    std::unique_lock<std::mutex> lock(mu);
    ++runs[n];
    if (n == gate_at) {
      gate_hit = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
    }
    return {true, ctx.payload()};
  }
  void Reduce(TaskContext&, const SubtaskResults& results) override {
    ASSERT_TRUE(results.ForEach([&](const SubtaskResult& r) { reduced.push_back(r); }).ok());
  }
};

TEST_F(PgTaskStoreTest, ANewCoordinatorWaitsForTheLiveWorkersAndNothingRunsTwice) {
  auto job = std::make_shared<CountingJob>();
  job->gate_at = 150;
  TaskSettings settings;
  settings.batch_size = 10;
  std::vector<WorkerEndpoint> endpoints;
  std::vector<std::unique_ptr<WorkerServer>> servers;
  for (int i = 0; i < 2; ++i) {
    std::string id = "w" + std::to_string(i) + "@-@1";
    auto server = WorkerServer::Start(
        "127.0.0.1:0", std::make_unique<WorkerService>(job, "job", id, settings, Writer()));
    ASSERT_TRUE(server.ok()) << server.status();
    endpoints.push_back({id, (*server)->address()});
    servers.push_back(std::move(server).value());
  }
  auto list = [&]() -> Result<std::vector<WorkerEndpoint>> { return endpoints; };
  auto first_store = Connect();
  ASSERT_NE(first_store, nullptr);
  ASSERT_TRUE(first_store->Create("run-c").ok());
  Coordinator first(*job, "job", "", "coordinator-1", "run-c", settings, list,
                    std::move(first_store));
  Status first_status;
  std::thread run([&] { first_status = first.Run(); });
  {
    std::unique_lock<std::mutex> lock(job->mu);
    job->cv.wait(lock, [&] { return job->gate_hit; });
  }
  // Number 150 is running; the coordinator goes, cutting its calls.
  first.Cancel("replaced");
  run.join();
  ASSERT_EQ(first_status.code(), StatusCode::kCancelled) << first_status;
  ASSERT_TRUE(first.handed_over());
  auto next_store = Connect();
  ASSERT_NE(next_store, nullptr);
  auto resumed = next_store->Resume("run-c", {endpoints[0].instance_id, endpoints[1].instance_id});
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ASSERT_TRUE(*resumed);
  EXPECT_FALSE(next_store->awaited().empty());
  EXPECT_EQ(next_store->redispatched(), 0);
  {
    std::lock_guard<std::mutex> lock(job->mu);
    job->release = true;
  }
  job->cv.notify_all();
  Coordinator next(*job, "job", "", "coordinator-2", "run-c", settings, list,
                   std::move(next_store));
  Status s = next.Run();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(job->runs.size(), 300u);
  for (const auto& [n, count] : job->runs) EXPECT_EQ(count, 1) << "number " << n;
  std::set<uint64_t> ids;
  long sum = 0;
  for (const SubtaskResult& r : job->reduced) {
    EXPECT_TRUE(ids.insert(r.id).second) << "reduced twice: " << r.id;
    sum += std::stol(r.data);
  }
  EXPECT_EQ(job->reduced.size(), 300u);
  EXPECT_EQ(sum, 300L * 301 / 2);
  EXPECT_EQ(next.counts().created, 300);
  EXPECT_EQ(next.counts().retried, 0);
}

TEST(PgTaskStoreUrlTest, AnUnreachableStoreFailsNamingItWithoutThePassword) {
  auto s = PgTaskStore::Connect("postgresql://u:secret@127.0.0.1:1/db", "job", 3);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(s.status().message().find("task store 'postgresql://u:***@127.0.0.1:1/db': cannot "
                                      "connect"),
            std::string::npos)
      << s.status();
  EXPECT_EQ(s.status().message().find("secret"), std::string::npos);
}

}  // namespace
}  // namespace elasticjob::task
