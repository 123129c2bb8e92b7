#include "elasticjob/workflow/workflow_definition.h"

#include <gtest/gtest.h>

#include "workflow/decision.h"

namespace elasticjob {
namespace {

constexpr const char* kDiamond = R"(
name: diamond
cron: "0 0 2 * * ?"
timeZone: Asia/Shanghai
maxRunTimeSeconds: 600
overlap: queue
retention: 5
nodes:
  - id: A
    job: extractJob
    param: "day=1"
  - id: B
    job: transformJob
    allowFailure: true
    retries: 2
    retryIntervalSeconds: 3
  - id: C
    job: loadJob
    disabled: true
  - id: D
    job: reportJob
edges:
  - {from: A, to: B}
  - {from: A, to: C}
  - {from: B, to: D}
  - {from: C, to: D}
)";

TEST(WorkflowDefinitionTest, ReadsEveryKeyAndWritesItBack) {
  auto d = WorkflowFromYaml(kDiamond);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->name, "diamond");
  EXPECT_EQ(d->cron, "0 0 2 * * ?");
  EXPECT_EQ(d->time_zone, "Asia/Shanghai");
  EXPECT_EQ(d->max_run_time_seconds, 600);
  EXPECT_EQ(d->overlap, WorkflowOverlap::kQueue);
  EXPECT_EQ(d->retention, 5);
  ASSERT_EQ(d->nodes.size(), 4u);
  EXPECT_EQ(d->nodes[0].param, "day=1");
  EXPECT_TRUE(d->nodes[1].allow_failure);
  EXPECT_EQ(d->nodes[1].retries, 2);
  EXPECT_EQ(d->nodes[1].retry_interval_seconds, 3);
  EXPECT_TRUE(d->nodes[2].disabled);
  ASSERT_EQ(d->edges.size(), 4u);
  EXPECT_TRUE(ValidateWorkflow(*d).ok());
  auto again = WorkflowFromYaml(WorkflowToYaml(*d));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *d);
}

TEST(WorkflowDefinitionTest, BadValuesNameTheKey) {
  auto kind = WorkflowFromYaml("name: w\nnodes:\n  - id: A\n    kind: lambda\n");
  EXPECT_NE(kind.status().message().find("node 'A': kind"), std::string::npos) << kind.status();
  auto retries = WorkflowFromYaml("name: w\nnodes:\n  - id: A\n    job: j\n    retries: -1\n");
  EXPECT_NE(retries.status().message().find("retries"), std::string::npos);
  auto overlap = WorkflowFromYaml("name: w\noverlap: sometimes\nnodes: []\n");
  EXPECT_NE(overlap.status().message().find("overlap"), std::string::npos);
  EXPECT_FALSE(WorkflowFromYaml("name: [").ok());
}

WorkflowDefinition Chain(std::vector<std::pair<std::string, std::string>> edges) {
  WorkflowDefinition d;
  d.name = "w";
  for (const char* id : {"A", "B", "C", "D"}) {
    WorkflowNode n;
    n.id = id;
    n.job = std::string("job") + id;
    d.nodes.push_back(n);
  }
  for (auto& [from, to] : edges) d.edges.push_back({from, to, std::nullopt});
  return d;
}

TEST(WorkflowDefinitionTest, ACycleIsRefusedNamingItsNodes) {
  Status s = ValidateWorkflow(Chain({{"A", "B"}, {"B", "C"}, {"C", "A"}, {"C", "D"}}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("a cycle: A -> B -> C -> A"), std::string::npos) << s;
}

TEST(WorkflowDefinitionTest, ADanglingEdgeNamesTheMissingNode) {
  Status s = ValidateWorkflow(Chain({{"A", "X"}}));
  EXPECT_NE(s.message().find("to 'X'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("no such node"), std::string::npos) << s;
}

TEST(WorkflowDefinitionTest, UnknownAndDisabledJobsAreRefusedNamingTheNode) {
  auto check = [](std::string_view job) -> Status {
    if (job == "jobB") return NotFound("no such job in the namespace");
    if (job == "jobC") return FailedPrecondition("the job is disabled");
    return Status::Ok();
  };
  WorkflowDefinition d = Chain({{"A", "B"}});
  Status s = ValidateWorkflow(d, check);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("node 'B': job 'jobB'"), std::string::npos) << s;
  d.nodes[1].disabled = true;  // a disabled node's job is not asked for
  s = ValidateWorkflow(d, check);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("node 'C'"), std::string::npos) << s;
}

TEST(WorkflowDefinitionTest, TwoNodesThatMayRunAtOnceMayShareAJob) {
  // Each node's run is a request of its own (workflowRuns/): they queue, none replaces another.
  WorkflowDefinition d = Chain({{"A", "B"}, {"A", "C"}});
  d.nodes[2].job = "jobB";
  EXPECT_TRUE(ValidateWorkflow(d).ok());
}

TEST(WorkflowDefinitionTest, OverlapParallelTakesAnOptionalBound) {
  auto d = WorkflowFromYaml(
      "name: w\noverlap: parallel\nmaxConcurrent: 7\nnodes:\n"
      "  - {id: A, job: j}\n");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->overlap, WorkflowOverlap::kParallel);
  EXPECT_EQ(d->max_concurrent, 7);
  auto again = WorkflowFromYaml(WorkflowToYaml(*d));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *d);
  auto unbounded = WorkflowFromYaml("name: w\noverlap: parallel\nnodes: []\n");
  ASSERT_TRUE(unbounded.ok());
  EXPECT_EQ(unbounded->max_concurrent, 0);
  auto without = WorkflowFromYaml("name: w\nmaxConcurrent: 3\nnodes: []\n");
  EXPECT_NE(without.status().message().find("maxConcurrent: 3 needs overlap: parallel"),
            std::string::npos)
      << without.status();
  auto negative = WorkflowFromYaml("name: w\noverlap: parallel\nmaxConcurrent: -1\n");
  EXPECT_NE(negative.status().message().find("maxConcurrent"), std::string::npos);
}

TEST(WorkflowDefinitionTest, DuplicateIdsAndEmptyWorkflowsAreRefused) {
  WorkflowDefinition d = Chain({});
  d.nodes[1].id = "A";
  EXPECT_NE(ValidateWorkflow(d).message().find("node 'A': declared twice"), std::string::npos);
  WorkflowDefinition empty;
  empty.name = "w";
  EXPECT_FALSE(ValidateWorkflow(empty).ok());
}

TEST(DecisionTest, EvaluatesOverTheContext) {
  auto yes = workflow::EvaluateDecision("ctx.rows > 0", R"({"rows": 3})");
  ASSERT_TRUE(yes.ok()) << yes.status();
  EXPECT_EQ(*yes, "true");
  EXPECT_EQ(*workflow::EvaluateDecision("ctx.rows > 0", R"({"rows": 0})"), "false");
  EXPECT_EQ(*workflow::EvaluateDecision("ctx.kind == 'full' and 'B' or 'C'", R"({"kind":"x"})"),
            "C");
  EXPECT_EQ(*workflow::EvaluateDecision("#ctx.list", R"({"list":[1,2,3]})"), "3");
}

TEST(DecisionTest, TheSandboxHasNoIoAndBoundsTheWork) {
  for (const char* escape : {"io.open('/etc/passwd')", "os.execute('true')", "load('return 1')()",
                             "require('os')", "dofile('/etc/passwd')"}) {
    auto r = workflow::EvaluateDecision(escape, "{}");
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << escape;
  }
  auto loop = workflow::EvaluateDecision("(function() while true do end end)()", "{}");
  EXPECT_NE(loop.status().message().find("instructions"), std::string::npos) << loop.status();
  auto memory = workflow::EvaluateDecision("string.rep('x', 1 << 30)", "{}");
  EXPECT_FALSE(memory.ok());
  EXPECT_FALSE(workflow::EvaluateDecision("ctx.", "{}").ok());
}

}  // namespace
}  // namespace elasticjob
