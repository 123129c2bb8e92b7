// Real jobs (memory registry, SimulatedClock) with tracing into SQLite: what ElasticJob's
// event tracing records for item runs and triggers, the sources of misfire and failover
// runs, failure causes, and the jobs' log lines (C++ and SCRIPT).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <stdexcept>

#include "elasticjob/tracing/trace_reader.h"
#include "elasticjob/tracing/tracer.h"
#include "unit/bootstrap/runtime_test_support.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;
using test_support::GateJob;

class LoggingJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext& ctx) override {
    for (int i = 1; i <= 3; ++i) ctx.log().Info("item {} step {}", ctx.sharding_item, i);
    if (ctx.sharding_item == 1) {
      ctx.log().Error("giving up");
      throw std::runtime_error("boom on item 1");
    }
  }
};

class JobTracingTest : public test_support::RuntimeTest {
 protected:
  JobTracingTest() {
    char tmpl[] = "/tmp/ej-jobtracing-XXXXXX";
    dir_ = mkdtemp(tmpl);
    url_ = "sqlite://" + dir_ + "/events.db";
    auto t = Tracer::Open({.url = url_});
    EXPECT_TRUE(t.ok()) << t.status();
    tracer_ = *t;
  }
  ~JobTracingTest() override {
    (void)tracer_->Shutdown(5s);
    std::filesystem::remove_all(dir_);
  }
  BootstrapOptions Traced(const std::string& ip) {
    BootstrapOptions o = Options(ip);
    o.tracer = tracer_;
    return o;
  }
  std::unique_ptr<TraceReader> Reader() {
    EXPECT_TRUE(tracer_->Flush(10s).ok());
    auto r = TraceReader::Open(url_);
    EXPECT_TRUE(r.ok()) << r.status();
    return std::move(r).value();
  }
  bool WaitTriggers(size_t n) {
    return rec_.Wait([n](const auto&, const auto& triggers) { return triggers.size() >= n; });
  }

  std::string dir_;
  std::string url_;
  std::shared_ptr<Tracer> tracer_;
};

TEST_F(JobTracingTest, ItemRunsTriggerStepsAndLogLinesAreRecorded) {
  auto reg = Session();
  ScheduleJobBootstrap boot(*reg, std::make_shared<LoggingJob>(), Config(3), Traced("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(3));
  ASSERT_TRUE(WaitTriggers(1));
  auto reader = Reader();
  auto runs = reader->Executions({});
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 3u);
  std::map<int, JobExecutionEvent> by_item;
  for (const auto& r : *runs) by_item[r.sharding_item] = r;
  ASSERT_EQ(by_item.size(), 3u);
  for (const auto& [item, r] : by_item) {
    EXPECT_EQ(r.job_name, "job");
    EXPECT_EQ(r.ip, "10.0.0.1");
    EXPECT_FALSE(r.hostname.empty());
    EXPECT_EQ(r.source, ExecutionSource::kNormalTrigger);
    EXPECT_EQ(r.task_id.rfind("job@-@0,1,2@-@READY@-@10.0.0.1@-@", 0), 0u) << r.task_id;
    EXPECT_TRUE(r.complete_time.has_value());
    EXPECT_EQ(r.success, item != 1);
  }
  EXPECT_EQ(by_item[1].failure_cause, "boom on item 1");
  ExecutionQuery failed;
  failed.failed_only = true;
  auto failures = reader->Executions(failed);
  ASSERT_TRUE(failures.ok());
  ASSERT_EQ(failures->size(), 1u);
  EXPECT_EQ(failures->at(0).sharding_item, 1);

  auto steps = reader->StatusTraces({});
  ASSERT_TRUE(steps.ok()) << steps.status();
  std::map<TraceState, JobStatusTraceEvent> by_state;
  for (const auto& s : *steps) EXPECT_TRUE(by_state.emplace(s.state, s).second) << s.message;
  ASSERT_EQ(by_state.size(), 3u);
  EXPECT_EQ(by_state[TraceState::kTaskStaging].message, "Job 'job' execute begin.");
  EXPECT_EQ(by_state[TraceState::kTaskRunning].message, "");
  EXPECT_EQ(by_state[TraceState::kTaskError].message, "{1=boom on item 1}");
  for (const auto& [state, s] : by_state) {
    EXPECT_EQ(s.task_id, by_item[0].task_id);
    EXPECT_EQ(s.sharding_items, "[0, 1, 2]");
    EXPECT_EQ(s.slave_id, "10.0.0.1");
    EXPECT_EQ(s.execution_type, "READY");
    EXPECT_EQ(s.original_task_id, "");
  }

  auto lines = reader->LogLines(by_item[1].id);
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(lines->at(i).line_no, i + 1);
    EXPECT_EQ(lines->at(i).text, "item 1 step " + std::to_string(i + 1));
    EXPECT_EQ(lines->at(i).level, LogLevel::kInfo);
  }
  EXPECT_EQ(lines->at(3).level, LogLevel::kError);
  EXPECT_EQ(tracer_->dropped(), 0u);
}

TEST_F(JobTracingTest, ATriggerWhileTheRunGoesOnAndItsMisfireRerunAreRecorded) {
  auto reg = Session();
  auto job = std::make_shared<GateJob>(/*block=*/true);
  struct ReleaseOnExit {
    std::shared_ptr<GateJob> job;
    ~ReleaseOnExit() { job->Release(); }
  } release{job};
  ScheduleJobBootstrap boot(*reg, job, Config(1), Traced("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(job->WaitStarted(1));
  clock_.Advance(1s);  // found running: a misfire
  ASSERT_TRUE(rec_.Wait([](const auto&, const auto& triggers) {
    for (const auto& t : triggers) {
      if (t.outcome == TriggerReport::Outcome::kMisfire) return true;
    }
    return false;
  }));
  job->Release();
  ASSERT_TRUE(rec_.WaitRuns(2));
  ASSERT_TRUE(WaitTriggers(2));
  auto reader = Reader();
  auto runs = reader->Executions({});
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  std::multiset<ExecutionSource> sources;
  for (const auto& r : *runs) sources.insert(r.source);
  EXPECT_EQ(sources, (std::multiset<ExecutionSource>{ExecutionSource::kNormalTrigger,
                                                     ExecutionSource::kMisfire}));
  auto steps = reader->StatusTraces({});
  ASSERT_TRUE(steps.ok());
  std::multiset<TraceState> states;
  bool misfire_message = false;
  for (const auto& s : *steps) {
    states.insert(s.state);
    misfire_message |= s.message ==
                       "Previous job 'job' - shardingItems '[0]' is still running, misfired job "
                       "will start after previous job completed.";
  }
  EXPECT_TRUE(misfire_message);
  // The run (staging, running, finished), the skipped trigger (staging, finished), the
  // re-run (running, finished).
  EXPECT_EQ(states.count(TraceState::kTaskStaging), 2u);
  EXPECT_EQ(states.count(TraceState::kTaskRunning), 2u);
  EXPECT_EQ(states.count(TraceState::kTaskFinished), 3u);
}

TEST_F(JobTracingTest, AFailoverRunIsRecordedAsFailover) {
  auto r1 = Session(), r2 = Session();
  auto stuck = std::make_shared<GateJob>(/*block=*/true);
  ScheduleJobBootstrap b(*r2, std::make_shared<GateJob>(), Config(2, true), Traced("10.0.0.2"));
  ASSERT_TRUE(b.Schedule().ok());
  auto a = std::make_unique<ScheduleJobBootstrap>(*r1, stuck, Config(2, true), Options("10.0.0.1"));
  struct ReleaseOnExit {
    std::shared_ptr<GateJob> job;
    ~ReleaseOnExit() { job->Release(); }
  } release_on_exit{stuck};
  ASSERT_TRUE(a->Schedule().ok());
  ASSERT_TRUE(WaitSettled(*r2, 2, 2)) << DumpTree(*r2, "/job");
  clock_.Advance(1s);
  ASSERT_TRUE(stuck->WaitStarted(1)) << rec_.Dump();
  ASSERT_TRUE(rec_.WaitRuns(1)) << rec_.Dump();
  int a_item = rec_.runs()[0].item == 0 ? 1 : 0;
  ASSERT_TRUE(WaitRegistry(*r2, [&] {
    return r2->GetDirectly("/job/sharding/" + std::to_string(a_item) + "/running").value_or("") ==
           Id("10.0.0.1");
  }));
  r1->Close();  // A crashes
  ASSERT_TRUE(rec_.Wait([&](const auto& runs, const auto&) {
    for (const auto& r : runs) {
      if (r.item == a_item && r.failover) return true;
    }
    return false;
  })) << rec_.Dump();
  auto reader = Reader();
  ExecutionQuery q;
  q.sharding_item = a_item;
  auto runs = reader->Executions(q);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);  // A ran it untraced; B's takeover is recorded
  EXPECT_EQ(runs->at(0).source, ExecutionSource::kFailover);
  EXPECT_EQ(runs->at(0).ip, "10.0.0.2");
  stuck->Release();
  a.reset();
}

TEST_F(JobTracingTest, AScriptsStdoutAndStderrGoToItsExecutionsLog) {
  auto reg = Session();
  JobConfiguration c = Config(1);
  c.props["script.command.line"] =
      "/bin/sh -c 'echo one; echo two; echo oops >&2; printf last; exit 3'";
  ScheduleJobBootstrap boot(*reg, "SCRIPT", c, Traced("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(1));
  auto reader = Reader();
  auto runs = reader->Executions({});
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_FALSE(runs->at(0).success);
  EXPECT_NE(runs->at(0).failure_cause.find("exited with 3"), std::string::npos);
  auto lines = reader->LogLines(runs->at(0).id);
  ASSERT_TRUE(lines.ok());
  std::vector<std::string> out;
  std::vector<std::string> err;
  for (const auto& l : *lines) (l.level == LogLevel::kWarn ? err : out).push_back(l.text);
  EXPECT_EQ(out, (std::vector<std::string>{"one", "two", "last"}));
  EXPECT_EQ(err, (std::vector<std::string>{"oops"}));
}

TEST_F(JobTracingTest, WithoutATracerAJobsLogGoesToTheProcessLog) {
  ShardingContext ctx;
  ctx.job_name = "orders";
  ctx.sharding_item = 4;
  ::testing::internal::CaptureStderr();
  ctx.log().Warn("{} rows late", 7);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "elasticjob WARN job=orders item=4: 7 rows late\n");
}

}  // namespace
}  // namespace elasticjob
