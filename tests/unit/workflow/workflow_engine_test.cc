// The workflow engine end to end in one process: real job runtimes (OneOffJobBootstrap) and
// coordinators over memory:// sessions of one namespace.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "elasticjob/api/task_job.h"
#include "elasticjob/bootstrap/one_off_job_bootstrap.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/simulated_clock.h"
#include "elasticjob/workflow/workflow_api.h"
#include "unit/infra/capturing_logger.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;

struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> events;
  std::map<std::string, std::string> upstream;
  std::map<std::string, std::string> context;
  std::map<std::string, std::string> param;
  std::map<std::string, int> runs;
  std::map<std::string, int> node_runs;  // "{workflow instance} {node}" -> item runs
  std::set<std::string> failing;         // nodes that throw while listed here
  bool gate_open = true;

  size_t IndexOf(const std::string& event) {
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i] == event) return i;
    }
    return events.size() + 1000;
  }
  bool WaitFor(const std::string& event, long count = 1) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, 10s,
                       [&] { return std::count(events.begin(), events.end(), event) >= count; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu);
    gate_open = true;
    cv.notify_all();
  }
};

class NodeTestJob final : public SimpleJob {
 public:
  NodeTestJob(std::string name, Recorder& rec, bool fail = false, bool gated = false)
      : name_(std::move(name)), rec_(rec), fail_(fail), gated_(gated) {}
  void Execute(const ShardingContext& ctx) override {
    {
      std::unique_lock<std::mutex> lock(rec_.mu);
      rec_.events.push_back("start " + name_);
      ++rec_.runs[name_];
      rec_.param[name_] = ctx.job_parameter;
      if (ctx.workflow != nullptr) {
        ++rec_.node_runs[ctx.workflow->instance_id() + " " + ctx.workflow->node_id()];
        rec_.upstream[name_] = ctx.workflow->upstream_results_json();
        rec_.context[name_] = ctx.workflow->context_json();
      }
      rec_.cv.notify_all();
    }
    if (gated_) {
      // Waits for the gate, or for the run's cancellation (a stopped workflow instance).
      uint64_t id = 0;
      if (ctx.cancellation != nullptr) {
        id = ctx.cancellation->OnRequest([this] {
          std::lock_guard<std::mutex> lock(rec_.mu);
          rec_.cv.notify_all();
        });
      }
      bool cancelled = false;
      {
        std::unique_lock<std::mutex> lock(rec_.mu);
        rec_.cv.wait_for(lock, 10s, [&] { return rec_.gate_open || ctx.cancelled(); });
        cancelled = ctx.cancelled();
        if (cancelled) {
          rec_.events.push_back("cancelled " + name_);
          rec_.cv.notify_all();
        }
      }
      if (ctx.cancellation != nullptr) ctx.cancellation->Unregister(id);
      if (cancelled) throw std::runtime_error("cancelled " + name_);
    }
    if (ctx.workflow != nullptr) {
      ctx.workflow->SetResult("res-" + name_);
      (void)ctx.workflow->PutContext("key" + name_, "\"" + name_ + "\"");
    }
    {
      std::lock_guard<std::mutex> lock(rec_.mu);
      rec_.events.push_back("end " + name_);
      rec_.cv.notify_all();
    }
    bool fail = fail_;
    {
      std::lock_guard<std::mutex> lock(rec_.mu);
      fail = fail || rec_.failing.count(name_) > 0;
    }
    if (fail) throw std::runtime_error("boom " + name_);
  }

 private:
  const std::string name_;
  Recorder& rec_;
  const bool fail_;
  const bool gated_;
};

class WorkflowEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    ns_ = "wfengine" + std::to_string(counter.fetch_add(1));
    workers_ = Session();
  }
  void TearDown() override {
    for (auto& c : coordinators_) c->Stop();
    for (auto& b : boots_) b->Shutdown();
  }
  std::unique_ptr<RegistryCenter> Session() {
    auto reg = NewRegistryCenter("memory://" + ns_);
    EXPECT_TRUE(reg.ok());
    EXPECT_TRUE((*reg)->Init().ok());
    return std::move(*reg);
  }
  // One instance of each job, in the workers' session.
  void AddJob(const std::string& job, std::shared_ptr<SimpleJob> code) {
    BootstrapOptions o;
    o.server_ip = "10.0.0.1";
    o.shutdown_timeout = 5s;
    auto config = JobConfiguration::Builder(job, 1).Build();
    ASSERT_TRUE(config.ok());
    boots_.push_back(std::make_unique<OneOffJobBootstrap>(*workers_, code, *config, o));
    ASSERT_TRUE(boots_.back()->Start().ok());
  }
  // Waits until `ready`, looking again at every change under `root` (no polling).
  bool WaitRegistry(const std::string& root, const std::function<bool()>& ready) {
    std::mutex mu;
    std::condition_variable cv;
    auto sub = workers_->Watch(root, pool_, [&](const TreeEvent&) {
      std::lock_guard<std::mutex> l(mu);
      cv.notify_all();
    });
    if (!sub.ok()) return false;
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, std::chrono::seconds(10), ready);
  }
  WorkflowCoordinator& Coordinate(RegistryCenter& reg, const std::string& id) {
    coordinators_.push_back(NewWorkflowCoordinator(reg, pool_, {.instance_id = id}));
    EXPECT_TRUE(coordinators_.back()->Start().ok());
    return *coordinators_.back();
  }
  WorkflowDefinition Diamond() {
    auto d = WorkflowFromYaml(R"(
name: diamond
nodes:
  - {id: A, job: jobA, param: "pA"}
  - {id: B, job: jobB}
  - {id: C, job: jobC}
  - {id: D, job: jobD}
edges:
  - {from: A, to: B}
  - {from: A, to: C}
  - {from: B, to: D}
  - {from: C, to: D}
)");
    EXPECT_TRUE(d.ok()) << d.status();
    return *d;
  }
  // A workflow `name` of one node, A, whose job jobA runs here; a coordinator.
  std::unique_ptr<WorkflowAPI> OneNodeWorkflow(const std::string& name) {
    AddJob("jobA", std::make_shared<NodeTestJob>("A", rec_));
    Coordinate(*workers_, "coordinator-1");
    auto api = NewWorkflowAPI(*workers_);
    auto d = WorkflowFromYaml("name: " + name + "\nnodes:\n  - {id: A, job: jobA}\n");
    EXPECT_TRUE(d.ok()) << d.status();
    if (d.ok()) {
      EXPECT_TRUE(api->Add(*d).ok());
    }
    return api;
  }
  WorkflowInstanceStatus RunAndWait(WorkflowAPI& api, const std::string& name,
                                    const std::string& param = "") {
    auto id = api.Run(name, param);
    EXPECT_TRUE(id.ok()) << id.status();
    auto end = api.Wait(*id, 15s);
    EXPECT_TRUE(end.ok()) << end.status();
    return end.ok() ? *end : WorkflowInstanceStatus{};
  }
  std::string NodeState(const WorkflowInstanceStatus& s, const std::string& node) {
    for (const auto& n : s.nodes) {
      if (n.id == node) return n.state;
    }
    return "?";
  }

  std::string ns_;
  ThreadPool pool_{2};
  std::unique_ptr<RegistryCenter> workers_;
  std::vector<std::unique_ptr<RegistryCenter>> sessions_;  // outlive the coordinators
  std::vector<std::unique_ptr<OneOffJobBootstrap>> boots_;
  std::unique_ptr<SimulatedClock> clock_;  // outlives the coordinators given it
  std::vector<std::unique_ptr<WorkflowCoordinator>> coordinators_;
  Recorder rec_;
};

TEST_F(WorkflowEngineTest, ADiamondRunsInOrderAndPassesResultsAndContext) {
  for (const char* j : {"A", "B", "C", "D"}) {
    AddJob(std::string("job") + j, std::make_shared<NodeTestJob>(j, rec_));
  }
  Coordinate(*workers_, "coordinator-1");
  auto api = NewWorkflowAPI(*workers_);
  ASSERT_TRUE(api->Add(Diamond()).ok());
  auto end = RunAndWait(*api, "diamond", R"({"day": "2026-11-28"})");
  ASSERT_EQ(end.status, "SUCCEEDED") << end.message;
  EXPECT_LT(rec_.IndexOf("end A"), rec_.IndexOf("start B"));
  EXPECT_LT(rec_.IndexOf("end A"), rec_.IndexOf("start C"));
  EXPECT_LT(rec_.IndexOf("end B"), rec_.IndexOf("start D"));
  EXPECT_LT(rec_.IndexOf("end C"), rec_.IndexOf("start D"));
  EXPECT_EQ(rec_.runs["D"], 1);
  EXPECT_EQ(rec_.param["A"], "pA");
  auto upstream = nlohmann::json::parse(rec_.upstream["D"]);
  EXPECT_EQ(upstream, nlohmann::json({{"A", "res-A"}, {"B", "res-B"}, {"C", "res-C"}}));
  auto context = nlohmann::json::parse(rec_.context["D"]);
  EXPECT_EQ(context["day"], "2026-11-28");
  EXPECT_EQ(context["keyA"], "A");
  EXPECT_EQ(context["keyB"], "B");
  EXPECT_EQ(context["keyC"], "C");
  for (const auto& n : end.nodes) {
    EXPECT_EQ(n.state, "SUCCEEDED") << n.id;
    EXPECT_EQ(n.result, "res-" + n.id);
  }
}

TEST_F(WorkflowEngineTest, AFailedNodeFailsTheInstanceUnlessItAllowsFailure) {
  AddJob("jobA", std::make_shared<NodeTestJob>("A", rec_));
  AddJob("jobB", std::make_shared<NodeTestJob>("B", rec_, /*fail=*/true));
  AddJob("jobC", std::make_shared<NodeTestJob>("C", rec_));
  AddJob("jobD", std::make_shared<NodeTestJob>("D", rec_));
  Coordinate(*workers_, "coordinator-1");
  auto api = NewWorkflowAPI(*workers_);
  WorkflowDefinition d = Diamond();
  d.nodes[1].retries = 1;  // runs twice, then counts as failed
  ASSERT_TRUE(api->Add(d).ok());
  auto failed = RunAndWait(*api, "diamond");
  EXPECT_EQ(failed.status, "FAILED");
  EXPECT_NE(failed.message.find("node 'B' failed"), std::string::npos) << failed.message;
  EXPECT_EQ(NodeState(failed, "B"), "FAILED");
  EXPECT_EQ(NodeState(failed, "D"), "WAITING");
  EXPECT_EQ(rec_.runs["B"], 2);
  EXPECT_EQ(rec_.runs["D"], 0);

  d.nodes[1].allow_failure = true;
  ASSERT_TRUE(api->Add(d, /*replace=*/true).ok());
  auto allowed = RunAndWait(*api, "diamond");
  EXPECT_EQ(allowed.status, "SUCCEEDED") << allowed.message;
  EXPECT_EQ(NodeState(allowed, "B"), "FAILED");
  EXPECT_EQ(rec_.runs["D"], 1);
}

TEST_F(WorkflowEngineTest, ADecisionPicksABranchAndADisabledNodeIsPassedThrough) {
  for (const char* j : {"A", "B", "C", "D"}) {
    AddJob(std::string("job") + j, std::make_shared<NodeTestJob>(j, rec_));
  }
  Coordinate(*workers_, "coordinator-1");
  auto api = NewWorkflowAPI(*workers_);
  auto d = WorkflowFromYaml(R"(
name: branchy
nodes:
  - {id: A, job: jobA}
  - {id: check, kind: decision, expression: "ctx.rows > 10"}
  - {id: big, job: jobB}
  - {id: small, job: jobC}
  - {id: off, job: jobD, disabled: true}
  - {id: last, job: jobD}
edges:
  - {from: A, to: check}
  - {from: check, to: big, when: "true"}
  - {from: check, to: small, when: "false"}
  - {from: small, to: off}
  - {from: off, to: last}
)");
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_TRUE(api->Add(*d).ok());
  auto end = RunAndWait(*api, "branchy", R"({"rows": 3})");
  ASSERT_EQ(end.status, "SUCCEEDED") << end.message;
  EXPECT_EQ(NodeState(end, "check"), "SUCCEEDED");
  EXPECT_EQ(NodeState(end, "big"), "SKIPPED");
  EXPECT_EQ(NodeState(end, "small"), "SUCCEEDED");
  EXPECT_EQ(NodeState(end, "off"), "SKIPPED");
  EXPECT_EQ(NodeState(end, "last"), "SUCCEEDED");
  EXPECT_EQ(rec_.runs["B"], 0);
  EXPECT_EQ(rec_.runs["D"], 1);  // `last` only
}

TEST_F(WorkflowEngineTest, ANewCoordinatorCarriesOnAndNoNodeRunsTwice) {
  AddJob("jobA", std::make_shared<NodeTestJob>("A", rec_));
  AddJob("jobB", std::make_shared<NodeTestJob>("B", rec_, false, /*gated=*/true));
  AddJob("jobC", std::make_shared<NodeTestJob>("C", rec_));
  AddJob("jobD", std::make_shared<NodeTestJob>("D", rec_));
  sessions_.push_back(Session());
  sessions_.push_back(Session());
  RegistryCenter* first_session = sessions_[0].get();
  RegistryCenter* second_session = sessions_[1].get();
  WorkflowCoordinator& first = Coordinate(*first_session, "coordinator-1");
  auto api = NewWorkflowAPI(*workers_);
  ASSERT_TRUE(api->Add(Diamond()).ok());
  {
    std::lock_guard<std::mutex> lock(rec_.mu);
    rec_.gate_open = false;
  }
  auto id = api->Run("diamond");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(rec_.WaitFor("start B"));
  EXPECT_EQ(first.Leading(), std::vector<std::string>{"diamond"});
  Coordinate(*second_session, "coordinator-2");
  // A second request while the first runs: skipped (overlap: skip).
  auto skipped = api->Run("diamond");
  ASSERT_TRUE(skipped.ok());
  auto skipped_end = api->Wait(*skipped, 10s);
  ASSERT_TRUE(skipped_end.ok());
  EXPECT_EQ(skipped_end->status, "SKIPPED");
  // The coordinator's session ends (a crash): the other one takes over.
  first.Stop();
  first_session->Close();
  rec_.Open();
  auto end = api->Wait(*id, 15s);
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(end->status, "SUCCEEDED") << end->message;
  EXPECT_EQ(rec_.runs["A"], 1);
  EXPECT_EQ(rec_.runs["B"], 1);
  EXPECT_EQ(rec_.runs["D"], 1);
  EXPECT_EQ(coordinators_.back()->Leading(), std::vector<std::string>{"diamond"});
}

TEST_F(WorkflowEngineTest, ANestedWorkflowRunsAsANodeAndHandsBackItsContext) {
  for (const char* j : {"A", "B", "C"}) {
    AddJob(std::string("job") + j, std::make_shared<NodeTestJob>(j, rec_));
  }
  Coordinate(*workers_, "coordinator-1");
  auto api = NewWorkflowAPI(*workers_);
  auto inner = WorkflowFromYaml("name: inner\nnodes:\n  - {id: B, job: jobB}\n");
  ASSERT_TRUE(api->Add(*inner).ok());
  auto outer = WorkflowFromYaml(R"(
name: outer
nodes:
  - {id: A, job: jobA}
  - {id: sub, kind: workflow, workflow: inner}
  - {id: C, job: jobC}
edges:
  - {from: A, to: sub}
  - {from: sub, to: C}
)");
  ASSERT_TRUE(api->Add(*outer).ok());
  auto end = RunAndWait(*api, "outer");
  ASSERT_EQ(end.status, "SUCCEEDED") << end.message;
  EXPECT_EQ(NodeState(end, "sub"), "SUCCEEDED");
  EXPECT_LT(rec_.IndexOf("end B"), rec_.IndexOf("start C"));
  auto context = nlohmann::json::parse(rec_.context["C"]);
  EXPECT_EQ(context["keyA"], "A");
  EXPECT_EQ(context["keyB"], "B");  // added inside the nested instance
  auto nested = api->History("inner");
  ASSERT_TRUE(nested.ok());
  ASSERT_EQ(nested->size(), 1u);
  EXPECT_EQ((*nested)[0].trigger, "workflow");
  // A workflow that nests itself through another is refused.
  auto again =
      WorkflowFromYaml("name: inner\nnodes:\n  - {id: X, kind: workflow, workflow: outer}\n");
  EXPECT_NE(api->Add(*again, true).message().find("a cycle"), std::string::npos);
}

TEST_F(WorkflowEngineTest, RetentionKeepsTheNewestInstancesOnly) {
  AddJob("jobA", std::make_shared<NodeTestJob>("A", rec_));
  Coordinate(*workers_, "coordinator-1");
  auto api = NewWorkflowAPI(*workers_);
  auto d = WorkflowFromYaml("name: one\nretention: 2\nnodes:\n  - {id: A, job: jobA}\n");
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(api->Add(*d).ok());
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    auto end = RunAndWait(*api, "one");
    EXPECT_EQ(end.status, "SUCCEEDED");
    ids.push_back(end.id);
    // A cancel for a runner that died before taking it: nobody takes it.
    if (i == 0) {
      ASSERT_TRUE(workers_->Persist("/jobA/workflowRuns/gone@-@1#" + end.id + "#A#1", "x").ok());
    }
  }
  // Retention follows the instance's end (a moment after Wait sees it).
  ASSERT_TRUE(WaitRegistry("/.workflows/one", [&] {
    auto h = api->History("one");
    return h.ok() && h->size() <= 2;
  }));
  auto history = api->History("one");
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].id, ids[3]);
  EXPECT_EQ((*history)[1].id, ids[2]);
  EXPECT_EQ(api->Instance(ids[0]).status().code(), StatusCode::kNotFound);
  // It went with its instance.
  ASSERT_TRUE(WaitRegistry("/jobA", [&] {
    return !workers_->IsExisted("/jobA/workflowRuns/gone@-@1#" + ids[0] + "#A#1").value_or(true);
  }));
}

TEST_F(WorkflowEngineTest, FortyInstancesOfATenNodeChainLeaveNoGarbage) {
  std::string yaml = "name: chain\nretention: 3\nnodes:\n";
  for (int k = 0; k < 10; ++k) {
    const std::string name = "c" + std::to_string(k);
    AddJob("job" + name, std::make_shared<NodeTestJob>(name, rec_));
    yaml += "  - {id: " + name + ", job: job" + name + "}\n";
  }
  yaml += "edges:\n";
  for (int k = 0; k + 1 < 10; ++k) {
    yaml += "  - {from: c" + std::to_string(k) + ", to: c" + std::to_string(k + 1) + "}\n";
  }
  Coordinate(*workers_, "coordinator-1");
  auto api = NewWorkflowAPI(*workers_);
  auto d = WorkflowFromYaml(yaml);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_TRUE(api->Add(*d).ok());
  // 40, not the issue's 100, to keep the unit suite quick: bench/workflow_bench.sh runs 100
  // on ZooKeeper.
  for (int i = 0; i < 40; ++i) {
    auto end = RunAndWait(*api, "chain");
    ASSERT_EQ(end.status, "SUCCEEDED") << i << ": " << end.message;
  }
  for (int k = 0; k < 10; ++k) EXPECT_EQ(rec_.runs["c" + std::to_string(k)], 40);
  ASSERT_TRUE(WaitRegistry("/.workflows/chain", [&] {
    auto k = workers_->GetChildrenKeysDirectly("/.workflows/chain/instances");
    return k.ok() && k->size() <= 3;
  }));
  auto kept = workers_->GetChildrenKeysDirectly("/.workflows/chain/instances");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->size(), 3u);
  for (int k = 0; k < 10; ++k) {
    auto requests =
        workers_->GetChildrenKeysDirectly("/jobc" + std::to_string(k) + "/workflowRuns");
    EXPECT_TRUE(!requests.ok() || requests->empty()) << k;
  }
}

TEST_F(WorkflowEngineTest, ParallelInstancesRunEveryNodeOnceEvenWhenTwoNodesShareAJob) {
  // B and C are nodes of one job, not ordered: their requests queue on its one instance.
  AddJob("jobA", std::make_shared<NodeTestJob>("A", rec_));
  AddJob("jobBC", std::make_shared<NodeTestJob>("BC", rec_));
  AddJob("jobD", std::make_shared<NodeTestJob>("D", rec_));
  Coordinate(*workers_, "coordinator-1");
  auto api = NewWorkflowAPI(*workers_);
  WorkflowDefinition d = Diamond();
  d.name = "par";
  d.overlap = WorkflowOverlap::kParallel;
  d.retention = 100;
  d.nodes[0].param.reset();
  for (auto& node : d.nodes)
    node.job = node.id == "B" || node.id == "C" ? "jobBC" : "job" + node.id;
  ASSERT_TRUE(api->Add(d).ok());
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) {
    auto id = api->Run("par");
    ASSERT_TRUE(id.ok()) << id.status();
    ids.push_back(*id);
  }
  for (const std::string& id : ids) {
    auto end = api->Wait(id, 15s);
    ASSERT_TRUE(end.ok()) << end.status();
    EXPECT_EQ(end->status, "SUCCEEDED") << id << ": " << end->message;
    for (const auto& node : end->nodes) EXPECT_EQ(node.attempt, 1) << id << " " << node.id;
  }
  std::lock_guard<std::mutex> lock(rec_.mu);
  for (const std::string& id : ids) {
    for (const char* node : {"A", "B", "C", "D"}) {
      EXPECT_EQ(rec_.node_runs[id + " " + node], 1) << id << " " << node;
    }
  }
  EXPECT_EQ(rec_.runs["BC"], 40);
  EXPECT_EQ(rec_.node_runs.size(), 80u);
}

TEST_F(WorkflowEngineTest, MaxConcurrentHoldsTheInstancesBeyondItQueued) {
  AddJob("jobA", std::make_shared<NodeTestJob>("A", rec_, false, /*gated=*/true));
  Coordinate(*workers_, "coordinator-1");
  auto api = NewWorkflowAPI(*workers_);
  auto d = WorkflowFromYaml(
      "name: bounded\noverlap: parallel\nmaxConcurrent: 2\nnodes:\n  - {id: A, job: jobA}\n");
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_TRUE(api->Add(*d).ok());
  {
    std::lock_guard<std::mutex> lock(rec_.mu);
    rec_.gate_open = false;
  }
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    auto id = api->Run("bounded");
    ASSERT_TRUE(id.ok());
    ids.push_back(*id);
  }
  // The first two start (their runs queue on the job's one instance); the others wait.
  ASSERT_TRUE(rec_.WaitFor("start A"));
  ASSERT_TRUE(WaitRegistry("/.workflows/bounded", [&] {
    auto a = api->Instance(ids[0]);
    auto b = api->Instance(ids[1]);
    return a.ok() && b.ok() && a->status == "RUNNING" && b->status == "RUNNING";
  }));
  for (int i = 2; i < 4; ++i) {
    auto waiting = api->Instance(ids[i]);
    ASSERT_TRUE(waiting.ok());
    EXPECT_EQ(waiting->status, "QUEUED") << i;
  }
  rec_.Open();
  int64_t first_end = INT64_MAX;
  for (int i = 0; i < 4; ++i) {
    auto end = api->Wait(ids[i], 10s);
    ASSERT_TRUE(end.ok()) << end.status();
    EXPECT_EQ(end->status, "SUCCEEDED") << i;
    // The waiting ones start once a running one has ended.
    if (i < 2) first_end = std::min(first_end, end->ended_ms);
    if (i >= 2) {
      EXPECT_GE(end->nodes[0].started_ms, first_end) << i;
    }
  }
  EXPECT_EQ(rec_.runs["A"], 4);
}

TEST_F(WorkflowEngineTest,
       RunRequestsAndAnOperatorTriggerQueueBehindARunWithoutReplacingEachOther) {
  AddJob("jobA", std::make_shared<NodeTestJob>("A", rec_, false, /*gated=*/true));
  Coordinate(*workers_, "coordinator-1");
  auto api = NewWorkflowAPI(*workers_);
  auto d = WorkflowFromYaml("name: mix\noverlap: parallel\nnodes:\n  - {id: A, job: jobA}\n");
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_TRUE(api->Add(*d).ok());
  {
    std::lock_guard<std::mutex> lock(rec_.mu);
    rec_.gate_open = false;
  }
  auto first = api->Run("mix");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(rec_.WaitFor("start A"));  // the first run holds the job's lane, gated
  auto second = api->Run("mix");
  auto third = api->Run("mix");
  ASSERT_TRUE(second.ok() && third.ok());
  // Both requests taken (their run marks there): they wait behind the first run.
  ASSERT_TRUE(WaitRegistry("/.workflows/mix", [&] {
    for (const auto& id : {*second, *third}) {
      auto marks =
          workers_->GetChildrenKeysDirectly("/.workflows/mix/instances/" + id + "/nodes/A/runs");
      if (!marks.ok() || marks->empty()) return false;
    }
    return true;
  }));
  // An operator trigger meanwhile (ElasticJob's trigger node): it waits too, replacing none.
  auto instances = workers_->GetChildrenKeysDirectly("/jobA/instances");
  ASSERT_TRUE(instances.ok() && instances->size() == 1u);
  ASSERT_TRUE(workers_->Persist("/jobA/trigger/" + instances->front(), "").ok());
  rec_.Open();
  for (const auto& id : {*first, *second, *third}) {
    auto end = api->Wait(id, 10s);
    ASSERT_TRUE(end.ok()) << end.status();
    EXPECT_EQ(end->status, "SUCCEEDED") << id << ": " << end->message;
  }
  ASSERT_TRUE(rec_.WaitFor("end A", 4));  // three workflow runs and the operator's
  std::lock_guard<std::mutex> lock(rec_.mu);
  for (const auto& id : {*first, *second, *third}) EXPECT_EQ(rec_.node_runs[id + " A"], 1) << id;
}

TEST_F(WorkflowEngineTest, AJobWithAJavaInstanceFailsTheNodeNamingIt) {
  auto api = OneNodeWorkflow("j");
  // A Java ElasticJob instance writes its instance node and no runtime node.
  auto java = Session();
  ASSERT_TRUE(java->PersistEphemeral("/jobA/instances/10.9.9.9@-@77",
                                     "jobInstanceId: 10.9.9.9@-@77\nserverIp: 10.9.9.9\n")
                  .ok());
  auto end = RunAndWait(*api, "j");
  EXPECT_EQ(end.status, "FAILED");
  EXPECT_NE(end.message.find("Java ElasticJob instances (10.9.9.9@-@77)"), std::string::npos)
      << end.message;
  EXPECT_EQ(rec_.runs["A"], 0);
}

TEST_F(WorkflowEngineTest, ARunnerGoneBeforeItTookItsRequestIsNoticedAndItsRequestWithdrawn) {
  auto api = OneNodeWorkflow("g");
  // A C++ instance (instance and runtime nodes) in a session of its own that never takes
  // its request: a process stopped right after the coordinator wrote it.
  auto ghost = Session();
  const std::string ghost_id = "10.8.8.8@-@88";
  ASSERT_TRUE(ghost->PersistEphemeral("/jobA/instances/" + ghost_id, "").ok());
  ASSERT_TRUE(ghost->PersistEphemeral("/jobA/runtime/" + ghost_id, "{}").ok());
  auto id = api->Run("g");
  ASSERT_TRUE(id.ok());
  const std::string request = "/jobA/workflowRuns/" + ghost_id + "#" + *id + "#A#1";
  ASSERT_TRUE(WaitRegistry("/jobA", [&] { return workers_->GetDirectly(request).ok(); }));
  ghost.reset();  // its session ends: its ephemeral nodes go
  auto end = api->Wait(*id, 10s);
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(end->status, "SUCCEEDED") << end->message;
  // The sharding (average, by id) gave item 0 to the live instance, which ran it: the gone
  // one had nothing to run, so no new attempt runs the node's items again.
  EXPECT_EQ(end->nodes[0].attempt, 1);
  std::lock_guard<std::mutex> lock(rec_.mu);
  EXPECT_EQ(rec_.node_runs[*id + " A"], 1);
  auto left = workers_->GetChildrenKeysDirectly("/jobA/workflowRuns");
  EXPECT_TRUE(!left.ok() || left->empty());
}

TEST_F(WorkflowEngineTest, ACronStartsAnInstanceAtItsFireTimeAndMaxRunTimeEndsIt) {
  AddJob("jobA", std::make_shared<NodeTestJob>("A", rec_, false, /*gated=*/true));
  {
    std::lock_guard<std::mutex> lock(rec_.mu);
    rec_.gate_open = false;
  }
  // 2026-01-01T00:00:05Z: the next fire of "0 * * * * ?" is a minute's start, 55 s on.
  clock_ = std::make_unique<SimulatedClock>(Clock::WallTime(std::chrono::seconds(1767225605)));
  SimulatedClock& clock = *clock_;
  coordinators_.push_back(
      NewWorkflowCoordinator(*workers_, pool_, {.instance_id = "coordinator-1", .clock = &clock}));
  ASSERT_TRUE(coordinators_.back()->Start().ok());
  auto api = NewWorkflowAPI(*workers_);
  auto d = WorkflowFromYaml(
      "name: nightly\ncron: '0 * * * * ?'\ntimeZone: UTC\nmaxRunTimeSeconds: 30\n"
      "nodes:\n  - {id: A, job: jobA}\n");
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_TRUE(api->Add(*d).ok());
  auto history = [&] {
    auto h = api->History("nightly");
    return h.ok() ? *h : std::vector<WorkflowInstanceStatus>{};
  };
  // Leadership taken (the cron armed) before time moves.
  ASSERT_TRUE(coordinators_.back()->WaitLeading("nightly", std::chrono::seconds(5)));
  ASSERT_EQ(coordinators_.back()->Leading(), std::vector<std::string>{"nightly"});
  clock.Advance(std::chrono::seconds(54));
  EXPECT_TRUE(history().empty());
  clock.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(rec_.WaitFor("start A"));
  auto started = history();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].trigger, "cron");
  EXPECT_EQ(started[0].created_ms, (1767225605LL + 55) * 1000);
  // A hangs: 30 s after the fire the instance is TIMEOUT.
  clock.Advance(std::chrono::seconds(30));
  auto end = api->Wait(started[0].id, 10s);
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(end->status, "TIMEOUT") << end->message;
  rec_.Open();
}

TEST_F(WorkflowEngineTest, AnOperatorRetriesAFailedNodeMarksOneSucceededOrStopsAnInstance) {
  for (const char* j : {"A", "B", "C", "D"}) {
    AddJob(std::string("job") + j, std::make_shared<NodeTestJob>(j, rec_));
  }
  Coordinate(*workers_, "coordinator-1");
  auto api = NewWorkflowAPI(*workers_);
  ASSERT_TRUE(api->Add(Diamond()).ok());
  {
    std::lock_guard<std::mutex> lock(rec_.mu);
    rec_.failing = {"B"};
  }
  auto failed = RunAndWait(*api, "diamond");
  ASSERT_EQ(failed.status, "FAILED");
  EXPECT_EQ(api->RetryNode(failed.id, "D").code(), StatusCode::kFailedPrecondition);  // WAITING
  {
    std::lock_guard<std::mutex> lock(rec_.mu);
    rec_.failing.clear();
  }
  // Retry B: it runs again, succeeds, and the instance goes on to its end.
  ASSERT_TRUE(api->RetryNode(failed.id, "B").ok());
  ASSERT_TRUE(rec_.WaitFor("start D"));
  auto retried = api->Wait(failed.id, 10s);
  ASSERT_TRUE(retried.ok());
  EXPECT_EQ(retried->status, "SUCCEEDED") << retried->message;
  EXPECT_EQ(rec_.runs["B"], 2);
  EXPECT_EQ(rec_.runs["D"], 1);

  // Mark C succeeded without running it again.
  {
    std::lock_guard<std::mutex> lock(rec_.mu);
    rec_.failing = {"C"};
  }
  auto second = RunAndWait(*api, "diamond");
  ASSERT_EQ(second.status, "FAILED");
  ASSERT_TRUE(api->MarkNodeSucceeded(second.id, "C").ok());
  auto marked = api->Wait(second.id, 10s);
  ASSERT_TRUE(marked.ok());
  EXPECT_EQ(marked->status, "SUCCEEDED") << marked->message;
  EXPECT_EQ(rec_.runs["C"], 2);  // once per instance, not again
  EXPECT_EQ(rec_.runs["D"], 2);

  // Stop an instance while B runs: D never starts.
  {
    std::lock_guard<std::mutex> lock(rec_.mu);
    rec_.failing.clear();
  }
  boots_[1]->Shutdown();
  AddJob("jobB", std::make_shared<NodeTestJob>("B", rec_, false, /*gated=*/true));
  {
    std::lock_guard<std::mutex> lock(rec_.mu);
    rec_.gate_open = false;
  }
  auto id = api->Run("diamond");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(rec_.WaitFor("start B", 4));  // the 4th run of B: 2 in the first instance
  ASSERT_TRUE(api->Stop(*id).ok());
  auto stopped = api->Wait(*id, 10s);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->status, "STOPPED");
  // B's run is cancelled where it runs (the gate stays shut).
  ASSERT_TRUE(rec_.WaitFor("cancelled B"));
  rec_.Open();
  EXPECT_EQ(rec_.runs["D"], 2);
  EXPECT_EQ(api->Stop(*id).code(), StatusCode::kFailedPrecondition);
}

TEST_F(WorkflowEngineTest, OverlapQueueRunsARequestAfterTheRunningInstance) {
  AddJob("jobA", std::make_shared<NodeTestJob>("A", rec_, false, /*gated=*/true));
  Coordinate(*workers_, "coordinator-1");
  auto api = NewWorkflowAPI(*workers_);
  auto d = WorkflowFromYaml("name: q\noverlap: queue\nnodes:\n  - {id: A, job: jobA}\n");
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(api->Add(*d).ok());
  {
    std::lock_guard<std::mutex> lock(rec_.mu);
    rec_.gate_open = false;
  }
  auto first = api->Run("q");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(rec_.WaitFor("start A"));
  auto second = api->Run("q");
  ASSERT_TRUE(second.ok());
  auto queued = api->Instance(*second);
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(queued->status, "QUEUED");
  rec_.Open();
  auto a = api->Wait(*first, 10s);
  auto b = api->Wait(*second, 10s);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->status, "SUCCEEDED");
  EXPECT_EQ(b->status, "SUCCEEDED");
  EXPECT_EQ(rec_.runs["A"], 2);
  EXPECT_LE(a->ended_ms, b->nodes[0].started_ms);
}

// A MapReduce job whose Reduce hands the sum of its sub-tasks on as the node's result.
class SumNode final : public MapReduceJob {
 public:
  TaskResult Process(TaskContext& ctx) override {
    if (ctx.IsRootTask()) {
      std::vector<Subtask> s;
      for (int i = 1; i <= 10; ++i) s.push_back({std::to_string(i)});
      return {ctx.Map(std::move(s), "N").ok(), ""};
    }
    return {true, ctx.payload()};
  }
  void Reduce(TaskContext& ctx, const SubtaskResults& results) override {
    long sum = 0;
    (void)results.ForEach([&](const SubtaskResult& r) { sum += std::stol(r.data); });
    if (ctx.workflow() != nullptr) ctx.workflow()->SetResult(std::to_string(sum));
  }
};

TEST_F(WorkflowEngineTest, AMapReduceNodesResultIsItsReduceResult) {
  auto config = JobConfiguration::Builder("sumJob", 1).Build();
  ASSERT_TRUE(config.ok());
  BootstrapOptions o;
  o.server_ip = "10.0.0.1";
  boots_.push_back(
      std::make_unique<OneOffJobBootstrap>(*workers_, std::make_shared<SumNode>(), *config, o));
  ASSERT_TRUE(boots_.back()->Start().ok());
  AddJob("jobD", std::make_shared<NodeTestJob>("D", rec_));
  Coordinate(*workers_, "coordinator-1");
  auto api = NewWorkflowAPI(*workers_);
  auto d = WorkflowFromYaml(
      "name: mr\nnodes:\n  - {id: M, job: sumJob}\n  - {id: D, job: jobD}\n"
      "edges:\n  - {from: M, to: D}\n");
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(api->Add(*d).ok());
  auto end = RunAndWait(*api, "mr");
  ASSERT_EQ(end.status, "SUCCEEDED") << end.message;
  EXPECT_EQ(end.nodes[0].result, "55");
  EXPECT_EQ(nlohmann::json::parse(rec_.upstream["D"]), nlohmann::json({{"M", "55"}}));
}

TEST_F(WorkflowEngineTest, TheCoordinatorsLinesGoToTheLoggerItIsGiven) {
  auto logger = std::make_shared<test_support::CapturingLogger>();
  AddJob("jobA", std::make_shared<NodeTestJob>("A", rec_));
  auto api = NewWorkflowAPI(*workers_);
  auto d = WorkflowFromYaml("name: logged\nnodes:\n  - {id: A, job: jobA}\n");
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_TRUE(api->Add(*d).ok());
  coordinators_.push_back(
      NewWorkflowCoordinator(*workers_, pool_, {.instance_id = "c-1", .logger = logger}));
  ASSERT_TRUE(coordinators_.back()->Start().ok());
  ASSERT_TRUE(coordinators_.back()->WaitLeading("logged", std::chrono::seconds(5)));
  auto line = logger->WaitFor([](const auto& l) {
    return l.level == LogLevel::kInfo && l.message == "workflow 'logged': coordinated here (c-1)";
  });
  EXPECT_TRUE(line.has_value());
}

TEST_F(WorkflowEngineTest, AddRefusesUnknownJobsAndCyclesNamingTheNode) {
  AddJob("jobA", std::make_shared<NodeTestJob>("A", rec_));
  auto api = NewWorkflowAPI(*workers_);
  auto unknown = WorkflowFromYaml("name: u\nnodes:\n  - {id: X, job: nosuchJob}\n");
  Status s = api->Add(*unknown);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("node 'X': job 'nosuchJob'"), std::string::npos) << s;
  auto cycle = WorkflowFromYaml(
      "name: c\nnodes:\n  - {id: A, job: jobA}\n  - {id: B, kind: decision, expression: 'true'}\n"
      "edges:\n  - {from: A, to: B}\n  - {from: B, to: A}\n");
  EXPECT_NE(api->Add(*cycle).message().find("a cycle"), std::string::npos);
  auto list = api->List();
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->empty());
}

}  // namespace
}  // namespace elasticjob
