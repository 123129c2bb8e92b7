// A task job through the public bootstrap on one instance (memory:// registry, real gRPC on
// loopback): the run is one execution for listeners and item reports, a failing Reduce fails
// it, and the worker node is registered and removed.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "elasticjob/api/task_job.h"
#include "elasticjob/bootstrap/one_off_job_bootstrap.h"
#include "elasticjob/bootstrap/task_models.h"
#include "elasticjob/tracing/trace_reader.h"
#include "elasticjob/tracing/tracer.h"

namespace elasticjob {
namespace {

class Sum final : public MapReduceJob {
 public:
  bool fail_reduce = false;
  bool flaky = false;  // 7 fails its first attempt, 13 every attempt
  long sum = 0;
  TaskResult Process(TaskContext& ctx) override {
    if (ctx.IsRootTask()) {
      std::vector<Subtask> s;
      for (int i = 1; i <= 100; ++i) s.push_back({std::to_string(i)});
      return {ctx.Map(std::move(s), "N").ok(), ""};
    }
    if (flaky && ctx.payload() == "13") return {false, "13 never works"};
    if (flaky && ctx.payload() == "7" && ctx.attempt() == 1) return {false, "7 fails once"};
    return {true, ctx.payload()};
  }
  void Reduce(TaskContext&, const SubtaskResults& results) override {
    if (fail_reduce) throw std::runtime_error("reduce refused");
    (void)results.ForEach([&](const SubtaskResult& r) {
      if (r.success) sum += std::stol(r.data);
    });
  }
};

class Counter final : public ElasticJobListener {
 public:
  std::mutex mu;
  std::condition_variable cv;
  int before = 0;
  int after = 0;
  std::vector<ItemRunReport> reports;
  void BeforeJobExecuted(const ShardingContexts& c) override {
    std::lock_guard<std::mutex> lock(mu);
    if (!c.sharding_item_parameters.empty()) ++before;
  }
  void AfterJobExecuted(const ShardingContexts& c) override {
    std::lock_guard<std::mutex> lock(mu);
    if (!c.sharding_item_parameters.empty()) ++after;
    cv.notify_all();
  }
  void Report(const ItemRunReport& r) {
    std::lock_guard<std::mutex> lock(mu);
    reports.push_back(r);
  }
  // Waits (bounded) for `n` executions to end.
  bool WaitAfter(int n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(30), [&] { return after >= n; });
  }
};

void RunOnce(const std::string& ns, bool fail_reduce, Sum& job_out, Counter& counter,
             std::shared_ptr<Tracer> tracer = nullptr) {
  auto reg = NewRegistryCenter("memory://" + ns);
  ASSERT_TRUE(reg.ok());
  ASSERT_TRUE((*reg)->Init().ok());
  auto job = std::make_shared<Sum>();
  job->fail_reduce = fail_reduce;
  job->flaky = job_out.flaky;
  auto listener = std::shared_ptr<Counter>(&counter, [](Counter*) {});
  BootstrapOptions options;
  options.listeners.push_back(std::static_pointer_cast<ElasticJobListener>(listener));
  options.on_item_run = [&counter](const ItemRunReport& r) { counter.Report(r); };
  options.tracer = std::move(tracer);
  auto config = JobConfiguration::Builder("sum", 1).Build();
  ASSERT_TRUE(config.ok());
  OneOffJobBootstrap bootstrap(**reg, job, *config, options);
  ASSERT_TRUE(bootstrap.Start().ok());
  auto workers = (*reg)->GetChildrenKeys("/sum/task/workers");
  ASSERT_TRUE(workers.ok());
  EXPECT_EQ(workers->size(), 1u);
  ASSERT_TRUE(bootstrap.Execute().ok());
  ASSERT_TRUE(counter.WaitAfter(1));
  bootstrap.Shutdown();
  EXPECT_EQ((*reg)->GetChildrenKeys("/sum/task/workers").value_or({}).size(), 0u);
  EXPECT_FALSE((*reg)->IsExisted("/sum/task/run").value_or(true));
  job_out.sum = job->sum;
}

TEST(TaskBootstrapTest, ARunIsOneExecutionForListenersAndReports) {
  Sum job;
  Counter counter;
  RunOnce("task_ok", false, job, counter);
  EXPECT_EQ(job.sum, 5050);
  EXPECT_EQ(counter.before, 1);
  EXPECT_EQ(counter.after, 1);
  ASSERT_EQ(counter.reports.size(), 1u);
  EXPECT_TRUE(counter.reports[0].success);
  EXPECT_EQ(counter.reports[0].item, 0);
}

TEST(TaskBootstrapTest, AThrowingReduceFailsTheExecutionWithItsMessage) {
  Sum job;
  Counter counter;
  RunOnce("task_fail", true, job, counter);
  ASSERT_EQ(counter.reports.size(), 1u);
  EXPECT_FALSE(counter.reports[0].success);
  EXPECT_NE(counter.reports[0].error.find("Reduce threw: reduce refused"), std::string::npos)
      << counter.reports[0].error;
}

TEST(TaskBootstrapTest, AJobOfMoreThanOneItemIsRefusedNamingTheField) {
  auto reg = NewRegistryCenter("memory://task_items");
  ASSERT_TRUE((*reg)->Init().ok());
  OneOffJobBootstrap bootstrap(**reg, std::make_shared<Sum>(),
                               *JobConfiguration::Builder("sum", 3).Build());
  Status s = bootstrap.Start();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("shardingTotalCount: a task job has one item (got 3)"),
            std::string::npos)
      << s;
}

TEST(TaskBootstrapTest, WithTracingTheRunsCountsAreALineOfItsExecutionsLog) {
  char tmpl[] = "/tmp/ej-tasktracing-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string url = "sqlite://" + dir + "/events.db";
  auto tracer = Tracer::Open({.url = url});
  ASSERT_TRUE(tracer.ok()) << tracer.status();
  Sum job;
  job.flaky = true;
  Counter counter;
  RunOnce("task_traced", false, job, counter, *tracer);
  EXPECT_EQ(job.sum, 5050 - 13);
  ASSERT_TRUE((*tracer)->Flush(std::chrono::seconds(10)).ok());
  auto reader = TraceReader::Open(url);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto runs = (*reader)->Executions({});
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);  // the run is one execution: item 0 on the leader
  EXPECT_TRUE(runs->at(0).success);
  auto lines = (*reader)->LogLines(runs->at(0).id);
  ASSERT_TRUE(lines.ok());
  std::vector<std::string> counts;
  for (const auto& l : *lines) {
    if (l.text.find("sub-tasks created=") != std::string::npos) counts.push_back(l.text);
  }
  ASSERT_EQ(counts.size(), 1u);
  // 100 sub-tasks; 7 retried once, 13 retried twice then failed (3 attempts).
  EXPECT_NE(counts[0].find(": done in "), std::string::npos) << counts[0];
  EXPECT_NE(counts[0].find("sub-tasks created=100 succeeded=99 failed=1 retried=3"),
            std::string::npos)
      << counts[0];
  (void)(*tracer)->Shutdown(std::chrono::seconds(5));
  std::filesystem::remove_all(dir);
}

TEST(TaskBootstrapTest, ATaskStoreThatIsNotPostgreSqlIsRefusedNamingIt) {
  auto reg = NewRegistryCenter("memory://task_store_url");
  ASSERT_TRUE((*reg)->Init().ok());
  BootstrapOptions options;
  options.task_store = "mysql://u:secret@127.0.0.1:3306/db";
  OneOffJobBootstrap bootstrap(**reg, std::make_shared<Sum>(),
                               *JobConfiguration::Builder("sum", 1).Build(), options);
  Status s = bootstrap.Start();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("task_store: 'mysql://u:***@127.0.0.1:3306/db' is not a "
                             "postgresql:// URL"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.message().find("secret"), std::string::npos) << s;
}

// A job type given by name, broadcast by the prop: its executor runs once per instance per
// run, with the run id as the sharding context's taskId.
class Recording final : public JobItemExecutor {
 public:
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> task_ids;
  void Process(const JobConfiguration&, const ShardingContext& ctx, JobRunState&) override {
    std::lock_guard<std::mutex> lock(mu);
    task_ids.push_back(ctx.task_id);
    cv.notify_all();
  }
};

// The broadcast runs on the task models' component: without them in the options, the job
// is refused at Schedule() (naming what to set), and nothing is registered.
TEST(TaskBootstrapTest, ABroadcastByPropWithoutTheTaskModelsIsRefusedNamingThem) {
  auto reg = NewRegistryCenter("memory://task_broadcast_without_models");
  ASSERT_TRUE((*reg)->Init().ok());
  auto config = JobConfiguration::Builder("plain", 1)
                    .Cron("0/5 * * * * ?")
                    .SetProperty("task.broadcast", "true")
                    .Build();
  ASSERT_TRUE(config.ok());
  BootstrapOptions options;
  options.job_types["NOOP"] =
      [](const JobConfiguration&) -> Result<std::shared_ptr<JobItemExecutor>> {
    return InvalidArgument("never made");
  };
  ScheduleJobBootstrap bootstrap(**reg, "NOOP", *config, options);
  Status s = bootstrap.Schedule();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("job 'plain': props: task.broadcast 'true' needs the task models"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("BootstrapOptions::task_models"), std::string::npos) << s;
  EXPECT_FALSE((*reg)->IsExisted("/plain/config").value_or(true));
  // Again: the first result, FAILED_PRECONDITION as for every failed Schedule().
  EXPECT_EQ(bootstrap.Schedule().code(), StatusCode::kFailedPrecondition);
}

TEST(TaskBootstrapTest, AJobTypeGivenByNameBroadcastsByTheProp) {
  auto reg = NewRegistryCenter("memory://task_type_broadcast");
  ASSERT_TRUE((*reg)->Init().ok());
  auto recording = std::make_shared<Recording>();
  BootstrapOptions options;
  options.task_models = GrpcTaskModels();
  options.job_types["RECORDING"] =
      [recording](const JobConfiguration&) -> Result<std::shared_ptr<JobItemExecutor>> {
    return std::shared_ptr<JobItemExecutor>(recording);
  };
  auto config = JobConfiguration::Builder("typed", 1).SetProperty("task.broadcast", "true").Build();
  ASSERT_TRUE(config.ok());
  OneOffJobBootstrap bootstrap(**reg, "RECORDING", *config, options);
  ASSERT_TRUE(bootstrap.Start().ok());
  // A task job's worker node: the broadcast runs through the task runtime.
  EXPECT_EQ((*reg)->GetChildrenKeys("/typed/task/workers").value_or({}).size(), 1u);
  ASSERT_TRUE(bootstrap.Execute().ok());
  {
    std::unique_lock<std::mutex> lock(recording->mu);
    ASSERT_TRUE(recording->cv.wait_for(lock, std::chrono::seconds(30),
                                       [&] { return !recording->task_ids.empty(); }));
  }
  bootstrap.Shutdown();
  ASSERT_EQ(recording->task_ids.size(), 1u);
  // The run id (typed@{instance}@{ms}), not ElasticJob's task id (typed@-@0@-@READY@-@...).
  EXPECT_EQ(recording->task_ids[0].rfind("typed@", 0), 0u) << recording->task_ids[0];
  EXPECT_EQ(recording->task_ids[0].find("READY"), std::string::npos) << recording->task_ids[0];
  EXPECT_EQ((*reg)->GetDirectly("/typed").value_or(""), "RECORDING");
}

// Issue 31: a broadcast job by type name runs what the registry's configuration says, as
// one that is not broadcast does (a prop changed with `job config set` or the console).
TEST(TaskBootstrapTest, ABroadcastJobByTypeNameRunsTheRegistrysPropsNotTheOnesGiven) {
  auto reg = NewRegistryCenter("memory://task_type_broadcast_follows");
  ASSERT_TRUE((*reg)->Init().ok());
  auto recording = std::make_shared<Recording>();
  std::mutex mu;
  std::vector<std::string> made;  // guarded by mu: the prefix of each executor made
  BootstrapOptions options;
  options.task_models = GrpcTaskModels();
  options.job_types["PREFIXED"] =
      [&](const JobConfiguration& c) -> Result<std::shared_ptr<JobItemExecutor>> {
    std::lock_guard<std::mutex> lock(mu);
    made.push_back(c.props.count("prefix") != 0 ? c.props.at("prefix") : "");
    return std::shared_ptr<JobItemExecutor>(recording);
  };
  auto config = JobConfiguration::Builder("follows", 1)
                    .SetProperty("task.broadcast", "true")
                    .SetProperty("prefix", "old")
                    .Build();
  ASSERT_TRUE(config.ok());
  OneOffJobBootstrap bootstrap(**reg, "PREFIXED", *config, options);
  ASSERT_TRUE(bootstrap.Start().ok());
  JobConfiguration changed = *config;
  changed.props["prefix"] = "new";
  ASSERT_TRUE((*reg)->Update("/follows/config", ConfigToYaml(changed)).ok());
  ASSERT_TRUE(bootstrap.Execute().ok());
  {
    std::unique_lock<std::mutex> lock(recording->mu);
    ASSERT_TRUE(recording->cv.wait_for(lock, std::chrono::seconds(30),
                                       [&] { return !recording->task_ids.empty(); }));
  }
  bootstrap.Shutdown();
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_FALSE(made.empty());
  EXPECT_EQ(made.back(), "new") << "the run used the executor of the configuration given";
}

}  // namespace
}  // namespace elasticjob
