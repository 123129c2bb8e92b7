// Job types by name, DataflowJob and HTTP jobs through the bootstraps, on a memory registry and
// a SimulatedClock, with real local HTTP(S) servers.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "elasticjob/api/dataflow_job.h"
#include "elasticjob/bootstrap/one_off_job_bootstrap.h"
#include "elasticjob/lifecycle/job_configuration_api.h"
#include "elasticjob/lifecycle/job_operate_api.h"
#include "elasticjob/tracing/trace_reader.h"
#include "elasticjob/tracing/tracer.h"
#include "error_handler/notification_sender.h"
#include "integration/jobtypes/test_servers.h"
#include "unit/bootstrap/runtime_test_support.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;
using test_support::Received;
using test_support::TestHttpServer;

class EchoExecutor final : public JobItemExecutor {
 public:
  explicit EchoExecutor(std::string prefix) : prefix_(std::move(prefix)) {}
  void Process(const JobConfiguration&, const ShardingContext& ctx, JobRunState&) override {
    std::lock_guard<std::mutex> l(mu);
    seen.push_back(prefix_ + std::to_string(ctx.sharding_item));
  }
  std::mutex mu;
  std::vector<std::string> seen;

 private:
  const std::string prefix_;
};

class JobTypesTest : public test_support::RuntimeTest {
 protected:
  JobConfiguration Named(const std::string& name, int items) {
    return *JobConfiguration::Builder(name, items).Cron("* * * * * ?").Build();
  }
  std::vector<ItemRunReport> RunsOf(const std::string& job) {
    std::vector<ItemRunReport> out;
    for (const auto& r : rec_.runs()) {
      if (r.job_name == job) out.push_back(r);
    }
    return out;
  }
  bool WaitRunsOf(const std::string& job, size_t n) {
    return rec_.Wait([&](const auto& runs, const auto&) {
      size_t k = 0;
      for (const auto& r : runs) k += r.job_name == job ? 1 : 0;
      return k >= n;
    });
  }
};

TEST_F(JobTypesTest, AnUnknownTypeFailsScheduleListingTheKnownOnes) {
  auto reg = Session();
  ScheduleJobBootstrap boot(*reg, "NO_SUCH_TYPE", Config(1), Options("10.0.0.1"));
  const std::string message = boot.Schedule().message();
  EXPECT_NE(message.find("unknown job type 'NO_SUCH_TYPE' (known: "), std::string::npos) << message;
  EXPECT_NE(message.find("HTTP"), std::string::npos) << message;
  EXPECT_NE(message.find("SCRIPT"), std::string::npos) << message;
  EXPECT_FALSE(*reg->IsExisted("/job/instances/" + Id("10.0.0.1")));
}

TEST_F(JobTypesTest, RegisterJobTypeRefusesBuiltinEmptyAndDuplicateNames) {
  auto factory = [](const JobConfiguration&) -> Result<std::shared_ptr<JobItemExecutor>> {
    return std::shared_ptr<JobItemExecutor>(std::make_shared<EchoExecutor>(""));
  };
  EXPECT_EQ(RegisterJobType("HTTP", factory).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(RegisterJobType("", factory).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RegisterJobType("NULL_FACTORY", nullptr).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(RegisterJobType("TWICE_TYPE", factory).ok());
  EXPECT_EQ(RegisterJobType("TWICE_TYPE", factory).code(), StatusCode::kAlreadyExists);
  auto known = RegisteredJobTypes();
  EXPECT_NE(std::find(known.begin(), known.end(), "TWICE_TYPE"), known.end());
  EXPECT_NE(std::find(known.begin(), known.end(), "SCRIPT"), known.end());
}

TEST_F(JobTypesTest, AProcessWideTypeRunsByNameWithItsPropsCheckedAtStart) {
  auto executor = std::make_shared<EchoExecutor>("item-");
  ASSERT_TRUE(
      RegisterJobType(
          "ECHO_PROCESS",
          [executor](const JobConfiguration& c) -> Result<std::shared_ptr<JobItemExecutor>> {
            if (c.props.count("echo.ok") == 0) {
              return InvalidArgument("props.echo.ok: missing");
            }
            return std::shared_ptr<JobItemExecutor>(executor);
          })
          .ok());
  auto reg = Session();
  {
    ScheduleJobBootstrap bad(*reg, "ECHO_PROCESS", Config(2), Options("10.0.0.1"));
    EXPECT_EQ(bad.Schedule().message(), "job 'job': props.echo.ok: missing");
  }
  JobConfiguration c = Config(2);
  c.props["echo.ok"] = "yes";
  ScheduleJobBootstrap boot(*reg, "ECHO_PROCESS", c, Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  EXPECT_EQ(*reg->GetDirectly("/job"), "ECHO_PROCESS");
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(2));
  std::lock_guard<std::mutex> l(executor->mu);
  std::sort(executor->seen.begin(), executor->seen.end());
  EXPECT_EQ(executor->seen, (std::vector<std::string>{"item-0", "item-1"}));
}

TEST_F(JobTypesTest, ABootstrapsOwnTypeRunsAndCannotReplaceABuiltinOne) {
  auto executor = std::make_shared<EchoExecutor>("own-");
  auto reg = Session();
  BootstrapOptions o = Options("10.0.0.1");
  o.job_types["SCRIPT"] = [](const JobConfiguration&) -> Result<std::shared_ptr<JobItemExecutor>> {
    return InvalidArgument("never");
  };
  {
    ScheduleJobBootstrap bad(*reg, "SCRIPT", Config(1), o);
    EXPECT_NE(bad.Schedule().message().find("'SCRIPT' is a built-in job type"), std::string::npos);
  }
  o.job_types.clear();
  o.job_types["MY_TYPE"] =
      [executor](const JobConfiguration&) -> Result<std::shared_ptr<JobItemExecutor>> {
    return std::shared_ptr<JobItemExecutor>(executor);
  };
  OneOffJobBootstrap boot(*reg, "MY_TYPE", *JobConfiguration::Builder("job", 1).Build(), o);
  ASSERT_TRUE(boot.Execute().ok());
  ASSERT_TRUE(rec_.WaitRuns(1));
  EXPECT_TRUE(rec_.runs()[0].success);
  std::lock_guard<std::mutex> l(executor->mu);
  EXPECT_EQ(executor->seen, (std::vector<std::string>{"own-0"}));
}

TEST_F(JobTypesTest, AConfigChangeRebuildsTheExecutorAndABadOneKeepsTheLastGood) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> built;  // guarded by mu
  auto reg = Session();
  BootstrapOptions o = Options("10.0.0.1");
  o.job_types["PREFIXED"] =
      [&](const JobConfiguration& c) -> Result<std::shared_ptr<JobItemExecutor>> {
    auto it = c.props.find("prefix");
    if (it == c.props.end()) return InvalidArgument("props.prefix: missing");
    std::lock_guard<std::mutex> l(mu);
    built.push_back(it->second);
    cv.notify_all();
    return std::shared_ptr<JobItemExecutor>(std::make_shared<EchoExecutor>(it->second));
  };
  auto wait_built = [&](const std::string& prefix) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(
        l, 20s, [&] { return std::find(built.begin(), built.end(), prefix) != built.end(); });
  };
  JobConfiguration c = Config(1);
  c.props["prefix"] = "a";
  ScheduleJobBootstrap boot(*reg, "PREFIXED", c, o);
  ASSERT_TRUE(boot.Schedule().ok());
  c.props["prefix"] = "b";
  ASSERT_TRUE(reg->Update("/job/config", ConfigToYaml(c)).ok());
  ASSERT_TRUE(wait_built("b"));
  c.props.erase("prefix");  // rejected (logged): the job keeps running with prefix b
  c.description = "no prefix";
  ASSERT_TRUE(reg->Update("/job/config", ConfigToYaml(c)).ok());
  c.props["prefix"] = "c";
  ASSERT_TRUE(reg->Update("/job/config", ConfigToYaml(c)).ok());
  ASSERT_TRUE(wait_built("c"));
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(1));
  EXPECT_TRUE(rec_.runs()[0].success) << rec_.runs()[0].error;
}

// --- Dataflow --------------------------------------------------------------------------

// Serves `batches` fetches per item, then empty ones; can raise the resharding flag.
class Feed final : public DataflowJob<int> {
 public:
  explicit Feed(int batches) : batches_(batches) {}
  std::vector<int> FetchData(const ShardingContext&) override {
    std::lock_guard<std::mutex> l(mu);
    ++fetches;
    if (throw_on_fetch) throw std::runtime_error("fetch failed");
    if (served >= batches_) return {};
    ++served;
    return {served};
  }
  void ProcessData(const ShardingContext&, std::vector<int> data) override {
    std::function<void(size_t)> hook;
    size_t rounds = 0;
    {
      std::lock_guard<std::mutex> l(mu);
      for (int d : data) processed.push_back(d);
      hook = on_process;
      rounds = processed.size();
    }
    if (hook) hook(rounds);
  }
  std::mutex mu;
  int fetches = 0;
  int served = 0;
  bool throw_on_fetch = false;
  std::vector<int> processed;
  std::function<void(size_t rounds)> on_process;  // after each process step

 private:
  const int batches_;
};

TEST_F(JobTypesTest, DataflowWithoutStreamingFetchesOnceAndProcessesWhatCame) {
  auto reg = Session();
  auto feed = std::make_shared<Feed>(5);
  ScheduleJobBootstrap boot(*reg, feed, Config(1), Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  EXPECT_EQ(*reg->GetDirectly("/job"), "CPP_DATAFLOW");
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(1));
  std::lock_guard<std::mutex> l(feed->mu);
  EXPECT_EQ(feed->fetches, 1);
  EXPECT_EQ(feed->processed, (std::vector<int>{1}));
}

TEST_F(JobTypesTest, StreamingDataflowLoopsUntilAFetchComesBackEmpty) {
  auto reg = Session();
  auto feed = std::make_shared<Feed>(4);
  JobConfiguration c = Config(1);
  c.props["streaming.process"] = "TRUE";
  ScheduleJobBootstrap boot(*reg, feed, c, Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(1));
  EXPECT_TRUE(rec_.runs()[0].success);
  std::lock_guard<std::mutex> l(feed->mu);
  EXPECT_EQ(feed->processed, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(feed->fetches, 5);  // the last one came back empty
}

TEST_F(JobTypesTest, StreamingDataflowStopsBetweenRoundsWhenReshardingIsNeeded) {
  auto reg = Session();
  auto feed = std::make_shared<Feed>(100);
  JobConfiguration c = Config(1);
  c.props["streaming.process"] = "true";
  ScheduleJobBootstrap boot(*reg, feed, c, Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*reg, 1, 1));
  // The second round raises the flag (as a new instance joining would): the loop ends there.
  feed->on_process = [&](size_t rounds) {
    if (rounds == 2) {
      (void)reg->Persist("/job/leader/sharding/necessary", "");
    }
  };
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(1));
  std::lock_guard<std::mutex> l(feed->mu);
  EXPECT_EQ(feed->processed, (std::vector<int>{1, 2}));
}

TEST_F(JobTypesTest, StreamingDataflowStopsBetweenRoundsWhenTheJobIsShuttingDown) {
  auto reg = Session();
  auto feed = std::make_shared<Feed>(100);
  JobConfiguration c = Config(1);
  c.props["streaming.process"] = "true";
  ScheduleJobBootstrap boot(*reg, feed, c, Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  feed->on_process = [&](size_t rounds) {
    if (rounds == 2) boot.Stop();  // no waiting: Stop only flags the job
  };
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(1));
  std::lock_guard<std::mutex> l(feed->mu);
  EXPECT_EQ(feed->processed, (std::vector<int>{1, 2}));
}

TEST_F(JobTypesTest, ADataflowExceptionFailsTheItemAndABadStreamingPropFailsSchedule) {
  auto reg = Session();
  {
    JobConfiguration c = Config(1);
    c.props["streaming.process"] = "yes";
    ScheduleJobBootstrap bad(*reg, std::make_shared<Feed>(1), c, Options("10.0.0.1"));
    EXPECT_EQ(bad.Schedule().message(),
              "job 'job': props.streaming.process: expected true or false, got 'yes'");
  }
  auto feed = std::make_shared<Feed>(1);
  feed->throw_on_fetch = true;
  JobConfiguration c = Config(1);
  c.job_error_handler_type = "IGNORE";
  ScheduleJobBootstrap boot(*reg, feed, c, Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(1));
  EXPECT_FALSE(rec_.runs()[0].success);
  EXPECT_EQ(rec_.runs()[0].error, "fetch failed");
}

// --- HTTP ------------------------------------------------------------------------------

JobConfiguration HttpConfig(const std::string& name, const std::string& uri,
                            const std::string& method) {
  auto c = *JobConfiguration::Builder(name, 2)
                .Cron("* * * * * ?")
                .ShardingItemParameters("0=Beijing,1=Shanghai")
                .JobParameter("p=1")
                .Build();
  c.props["http.uri"] = uri;
  c.props["http.method"] = method;
  return c;
}

TEST_F(JobTypesTest, HttpSendsMethodBodyContentTypeAndTheShardingContextHeader) {
  TestHttpServer server([](const Received&) { return std::make_pair(200, std::string("ok")); });
  auto reg = Session();
  JobConfiguration c = HttpConfig("job", server.Url() + "/orders?x=1", "POST");
  c.props["http.data"] = R"({"sync":true})";
  c.props["http.content.type"] = "application/json";
  ScheduleJobBootstrap boot(*reg, "HTTP", c, Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  EXPECT_EQ(*reg->GetDirectly("/job"), "HTTP");
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(2));
  for (const auto& r : rec_.runs()) EXPECT_TRUE(r.success) << r.error;
  auto got = server.received();
  ASSERT_EQ(got.size(), 2u);
  std::set<int> items;
  for (const auto& r : got) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.path, "/orders");
    EXPECT_EQ(r.params.count("x") != 0 ? r.params.at("x") : "", "1");
    EXPECT_EQ(r.body, R"({"sync":true})");
    EXPECT_EQ(r.content_type, "application/json");
    auto ctx = ShardingContextFromJson(r.sharding_context);
    ASSERT_TRUE(ctx.ok()) << r.sharding_context;
    EXPECT_EQ(ctx->job_name, "job");
    EXPECT_EQ(ctx->sharding_total_count, 2);
    EXPECT_EQ(ctx->job_parameter, "p=1");
    EXPECT_EQ(ctx->sharding_parameter, ctx->sharding_item == 0 ? "Beijing" : "Shanghai");
    EXPECT_EQ(r.sharding_context, ShardingContextToJson(*ctx));  // Gson's bytes exactly
    items.insert(ctx->sharding_item);
    // The run's claim (both items in one transaction) is its fencing token.
    EXPECT_GT(std::stoll(r.fencing_token.empty() ? "0" : r.fencing_token), 0) << r.fencing_token;
    EXPECT_EQ(r.fencing_token, got.front().fencing_token);
  }
  EXPECT_EQ(items, (std::set<int>{0, 1}));
}

// Issue 31: what an operator changes with `elasticjob job config set` or the console (both
// write through JobConfigurationAPI) is what every instance runs at the next fire.
TEST_F(JobTypesTest, AnHttpUrlChangedThroughTheLifecycleApiIsCalledAtTheNextFire) {
  TestHttpServer old_server(
      [](const Received&) { return std::make_pair(200, std::string("old")); });
  TestHttpServer new_server(
      [](const Received&) { return std::make_pair(200, std::string("new")); });
  auto r1 = Session(), r2 = Session();
  JobConfiguration c = HttpConfig("job", old_server.Url() + "/old", "GET");
  ScheduleJobBootstrap a(*r1, "HTTP", c, Options("10.0.0.1"));
  ASSERT_TRUE(a.Schedule().ok());
  ScheduleJobBootstrap b(*r2, "HTTP", c, Options("10.0.0.2"));
  ASSERT_TRUE(b.Schedule().ok());
  ASSERT_TRUE(WaitSettled(*r1, 2, 2)) << DumpTree(*r1, "/job");
  auto api = NewJobConfigurationAPI(*r1);
  auto now = api->GetJobConfiguration("job");
  ASSERT_TRUE(now.ok());
  now->props["http.uri"] = new_server.Url() + "/new";
  ASSERT_TRUE(api->UpdateJobConfiguration(*now).ok());
  // Each instance's strand has applied the update once its operator trigger is reported.
  ASSERT_TRUE(OperatorTrigger(*r1, "10.0.0.1"));
  ASSERT_TRUE(OperatorTrigger(*r2, "10.0.0.2"));
  const size_t before_fire = old_server.received().size();
  const size_t runs = rec_.runs().size();
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(runs + 2));
  EXPECT_EQ(old_server.received().size(), before_fire) << "an instance called the old URL";
  std::set<int> items;
  for (const auto& r : new_server.received()) {
    EXPECT_EQ(r.path, "/new");
    auto ctx = ShardingContextFromJson(r.sharding_context);
    ASSERT_TRUE(ctx.ok());
    items.insert(ctx->sharding_item);
  }
  EXPECT_EQ(items, (std::set<int>{0, 1}));  // both instances' items
}

TEST_F(JobTypesTest, ACustomTypesPropChangedThroughTheLifecycleApiRunsAtTheNextFire) {
  std::mutex mu;
  std::vector<std::shared_ptr<EchoExecutor>> made;  // guarded by mu
  BootstrapOptions o = Options("10.0.0.1");
  o.job_types["PREFIXED"] =
      [&](const JobConfiguration& c) -> Result<std::shared_ptr<JobItemExecutor>> {
    auto it = c.props.find("prefix");
    if (it == c.props.end()) return InvalidArgument("props.prefix: missing");
    auto e = std::make_shared<EchoExecutor>(it->second);
    std::lock_guard<std::mutex> l(mu);
    made.push_back(e);
    return std::shared_ptr<JobItemExecutor>(e);
  };
  auto reg = Session();
  JobConfiguration c = Config(1);
  c.props["prefix"] = "old-";
  ScheduleJobBootstrap boot(*reg, "PREFIXED", c, o);
  ASSERT_TRUE(boot.Schedule().ok());
  auto api = NewJobConfigurationAPI(*reg);
  c.props["prefix"] = "new-";
  // Another process does not know PREFIXED: its props are the type's own to check.
  ASSERT_TRUE(api->UpdateJobConfiguration(c).ok());
  ASSERT_TRUE(OperatorTrigger(*reg, "10.0.0.1"));
  const size_t runs = rec_.runs().size();
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(runs + 1));
  std::vector<std::string> seen;
  {
    std::lock_guard<std::mutex> l(mu);
    for (const auto& e : made) {
      std::lock_guard<std::mutex> el(e->mu);
      seen.insert(seen.end(), e->seen.begin(), e->seen.end());
    }
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), "old-0"), 0) << "ran the old prop";
  EXPECT_GE(std::count(seen.begin(), seen.end(), "new-0"), 2);  // the operator's and the fire's
}

TEST_F(JobTypesTest, AnHttpJobsStatusAndResponseBodyGoToItsExecutionsLog) {
  TestHttpServer server([](const Received& r) {
    return r.path == "/bad" ? std::make_pair(503, std::string("busy\nretry later"))
                            : std::make_pair(200, std::string("line one\r\nline two\n"));
  });
  std::string dir = std::filesystem::temp_directory_path() / "ej-http-trace-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string url = "sqlite://" + dir + "/events.db";
  auto tracer = Tracer::Open({.url = url});
  ASSERT_TRUE(tracer.ok()) << tracer.status();
  auto reg = Session();
  BootstrapOptions options = Options("10.0.0.1");
  options.tracer = *tracer;
  JobConfiguration good = HttpConfig("good", server.Url() + "/ok", "GET");
  good.sharding_total_count = 1;
  good.sharding_item_parameters.clear();
  JobConfiguration bad = HttpConfig("bad", server.Url() + "/bad", "GET");
  bad.sharding_total_count = 1;
  bad.sharding_item_parameters.clear();
  bad.job_error_handler_type = "IGNORE";
  ScheduleJobBootstrap good_boot(*reg, "HTTP", good, options);
  ScheduleJobBootstrap bad_boot(*reg, "HTTP", bad, options);
  ASSERT_TRUE(good_boot.Schedule().ok());
  ASSERT_TRUE(bad_boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(WaitRunsOf("good", 1));
  ASSERT_TRUE(WaitRunsOf("bad", 1));
  good_boot.Shutdown();
  bad_boot.Shutdown();
  ASSERT_TRUE((*tracer)->Flush(10s).ok());
  auto reader = TraceReader::Open(url);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto lines_of = [&](const std::string& job) {
    std::vector<std::pair<LogLevel, std::string>> out;
    ExecutionQuery q;
    q.job_name = job;
    auto runs = (*reader)->Executions(q);
    EXPECT_TRUE(runs.ok() && !runs->empty());
    if (!runs.ok() || runs->empty()) return out;
    auto lines = (*reader)->LogLines(runs->front().id);
    EXPECT_TRUE(lines.ok());
    if (lines.ok()) {
      for (const auto& l : *lines) out.emplace_back(l.level, l.text);
    }
    return out;
  };
  using Lines = std::vector<std::pair<LogLevel, std::string>>;
  EXPECT_EQ(lines_of("good"), (Lines{{LogLevel::kInfo, "GET " + server.Url() + "/ok -> status 200"},
                                     {LogLevel::kInfo, "line one"},
                                     {LogLevel::kInfo, "line two"}}));
  EXPECT_EQ(lines_of("bad"), (Lines{{LogLevel::kWarn, "GET " + server.Url() + "/bad -> status 503"},
                                    {LogLevel::kWarn, "busy"},
                                    {LogLevel::kWarn, "retry later"}}));
  (void)(*tracer)->Shutdown(5s);
  std::filesystem::remove_all(dir);
}

TEST_F(JobTypesTest, HttpStatusFrom400FailsTheItemUnlessFailOnErrorStatusIsFalse) {
  TestHttpServer server(
      [](const Received&) { return std::make_pair(500, std::string("{\"error\":\"boom\"}")); });
  auto reg = Session();
  JobConfiguration failing = HttpConfig("failing", server.Url() + "/x", "GET");
  failing.job_error_handler_type = "IGNORE";
  JobConfiguration lenient = HttpConfig("lenient", server.Url() + "/y", "DELETE");
  lenient.props["http.fail.on.error.status"] = "false";
  ScheduleJobBootstrap a(*reg, "HTTP", failing, Options("10.0.0.1"));
  ScheduleJobBootstrap b(*reg, "HTTP", lenient, Options("10.0.0.1"));
  ASSERT_TRUE(a.Schedule().ok());
  ASSERT_TRUE(b.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(WaitRunsOf("failing", 2));
  ASSERT_TRUE(WaitRunsOf("lenient", 2));
  for (const auto& r : RunsOf("failing")) {
    EXPECT_FALSE(r.success);
    EXPECT_NE(r.error.find("status 500"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("boom"), std::string::npos) << r.error;
  }
  for (const auto& r : RunsOf("lenient")) EXPECT_TRUE(r.success) << r.error;
}

TEST_F(JobTypesTest, HttpsWorksWithAThrowawayCertificate) {
  const std::string dir = ::testing::TempDir() + "/ej_https_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  auto [cert, key] = test_support::ThrowawayCertificate(dir);
  ASSERT_FALSE(cert.empty()) << "openssl req failed";
  TestHttpServer server([](const Received&) { return std::make_pair(200, std::string("ok")); },
                        cert, key);
  auto reg = Session();
  JobConfiguration trusted = HttpConfig("trusted", server.Url("https") + "/t", "PUT");
  trusted.props["http.ssl.ca.file"] = cert;
  JobConfiguration untrusted = HttpConfig("untrusted", server.Url("https") + "/u", "GET");
  untrusted.job_error_handler_type = "IGNORE";
  ScheduleJobBootstrap a(*reg, "HTTP", trusted, Options("10.0.0.1"));
  ScheduleJobBootstrap b(*reg, "HTTP", untrusted, Options("10.0.0.1"));
  ASSERT_TRUE(a.Schedule().ok());
  ASSERT_TRUE(b.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(WaitRunsOf("trusted", 2));
  ASSERT_TRUE(WaitRunsOf("untrusted", 2));
  for (const auto& r : RunsOf("trusted")) EXPECT_TRUE(r.success) << r.error;
  for (const auto& r : RunsOf("untrusted")) EXPECT_FALSE(r.success);  // not the system's CA
  std::filesystem::remove_all(dir);
}

TEST_F(JobTypesTest, HttpPropsAreCheckedAtStartNamingThePropAndValue) {
  auto reg = Session();
  auto error = [&](std::map<std::string, std::string> props) {
    JobConfiguration c = Config(1);
    c.props = std::move(props);
    ScheduleJobBootstrap boot(*reg, "HTTP", c, Options("10.0.0.1"));
    return boot.Schedule().message();
  };
  EXPECT_EQ(error({{"http.method", "GET"}}), "job 'job': props.http.uri: missing");
  EXPECT_EQ(error({{"http.uri", "http://127.0.0.1:1/"}}), "job 'job': props.http.method: missing");
  EXPECT_EQ(error({{"http.uri", "ftp://127.0.0.1/x"}, {"http.method", "GET"}}),
            "job 'job': props.http.uri: expected an http:// or https:// URL, got "
            "'ftp://127.0.0.1/x'");
  EXPECT_EQ(error({{"http.uri", "http://127.0.0.1:1/"}, {"http.method", "FETCH"}}),
            "job 'job': props.http.method: unknown method 'FETCH' (known: GET, POST, PUT, "
            "DELETE, PATCH, HEAD)");
  EXPECT_EQ(error({{"http.uri", "http://127.0.0.1:1/"},
                   {"http.method", "GET"},
                   {"http.read.timeout.milliseconds", "soon"}}),
            "job 'job': props.http.read.timeout.milliseconds: expected a positive integer, got "
            "'soon'");
  EXPECT_EQ(error({{"http.uri", "http://127.0.0.1:1/"},
                   {"http.method", "GET"},
                   {"http.fail.on.error.status", "maybe"}}),
            "job 'job': props.http.fail.on.error.status: expected true or false, got 'maybe'");
}

// A dead or silent endpoint fails its items within the timeouts, while the triggers of every
// job (its own included) go on firing.
TEST_F(JobTypesTest, DeadAndSilentEndpointsFailWithinTheTimeoutAndTriggersKeepFiring) {
  test_support::SilentPort silent;
  auto reg = Session();
  JobConfiguration hanging =
      HttpConfig("hanging", "http://127.0.0.1:" + std::to_string(silent.port()) + "/", "GET");
  hanging.sharding_total_count = 1;
  hanging.sharding_item_parameters = "";
  hanging.props["http.connect.timeout.milliseconds"] = "500";
  hanging.props["http.read.timeout.milliseconds"] = "1500";
  hanging.misfire = false;  // its skipped trigger does not queue a second 2 s wait
  hanging.job_error_handler_type = "IGNORE";
  JobConfiguration refused = HttpConfig(
      "refused", "http://127.0.0.1:" + std::to_string(test_support::RefusedPort()) + "/", "GET");
  refused.job_error_handler_type = "IGNORE";
  auto other = std::make_shared<test_support::GateJob>();
  ScheduleJobBootstrap a(*reg, "HTTP", hanging, Options("10.0.0.1"));
  ScheduleJobBootstrap b(*reg, "HTTP", refused, Options("10.0.0.1"));
  ScheduleJobBootstrap c(*reg, other, Named("other", 1), Options("10.0.0.1"));
  ASSERT_TRUE(a.Schedule().ok());
  ASSERT_TRUE(b.Schedule().ok());
  ASSERT_TRUE(c.Schedule().ok());
  const auto start = std::chrono::steady_clock::now();
  clock_.Advance(1s);
  ASSERT_TRUE(WaitRunsOf("refused", 2));
  for (const auto& r : RunsOf("refused")) {
    EXPECT_FALSE(r.success);
    EXPECT_NE(r.error.find("127.0.0.1"), std::string::npos) << r.error;
  }
  ASSERT_TRUE(WaitRunsOf("other", 1));
  // The silent endpoint still holds its item: the next second's triggers fire all the same.
  EXPECT_TRUE(RunsOf("hanging").empty());
  clock_.Advance(1s);
  ASSERT_TRUE(WaitRunsOf("other", 2));
  ASSERT_TRUE(WaitRunsOf("refused", 4));
  ASSERT_TRUE(rec_.Wait([](const auto&, const auto& triggers) {
    int n = 0;
    for (const auto& t : triggers) n += t.job_name == "hanging" ? 1 : 0;
    return n >= 1;  // its second trigger was handled (a misfire) while the first hangs
  }));
  ASSERT_TRUE(WaitRunsOf("hanging", 1));
  const auto waited = std::chrono::steady_clock::now() - start;
  auto hung = RunsOf("hanging")[0];
  EXPECT_FALSE(hung.success);
  EXPECT_NE(hung.error.find("imed out"), std::string::npos) << hung.error;
  // Connect 0.5 s + read 1.5 s bound the request (docs/job-types.md).
  EXPECT_GE(hung.duration, 1900ms);
  EXPECT_LT(waited, 2s + 3s);
}

// An HTTP item's request is aborted when its attempt times out (or is stopped): the
// endpoint sees the connection closed then, not at the read timeout a minute later.
class HttpAbortTest : public JobTypesTest {
 protected:
  // A one-item HTTP job on a silent endpoint, a minute of read timeout, triggered once: true
  // when its request reached the endpoint.
  bool Hang(JobConfiguration::Builder builder) {
    JobConfiguration c = *builder.Cron("0 0 0 1 1 ? 2099").Build();
    c.props["http.uri"] = "http://127.0.0.1:" + std::to_string(silent_.port()) + "/";
    c.props["http.method"] = "GET";
    c.props["http.read.timeout.milliseconds"] = "60000";
    c.job_error_handler_type = "IGNORE";
    boot_ = std::make_unique<ScheduleJobBootstrap>(*reg_, "HTTP", c, Options("10.0.0.1"));
    if (!boot_->Schedule().ok()) return false;
    if (!reg_->Persist("/job/trigger/" + Id("10.0.0.1"), "").ok()) return false;
    return silent_.Accept(20s);
  }
  test_support::SilentPort silent_;
  test_support::SessionPtr reg_ = Session();
  std::unique_ptr<ScheduleJobBootstrap> boot_;
};

TEST_F(HttpAbortTest, TheRequestIsAbortedAtTheItemsTimeout) {
  ASSERT_TRUE(Hang(JobConfiguration::Builder("job", 1).TimeoutMs(300)));
  clock_.Advance(300ms);
  ASSERT_TRUE(WaitRunsOf("job", 1));
  EXPECT_EQ(RunsOf("job")[0].error, "timeout after 300 ms");
  EXPECT_TRUE(silent_.ClosedByClient(20s));
  boot_->Shutdown();
}

TEST_F(HttpAbortTest, TheRequestIsAbortedByAStop) {
  ASSERT_TRUE(Hang(JobConfiguration::Builder("job", 1)));
  ASSERT_TRUE(NewJobOperateAPI(*reg_)->Stop("job", "", std::nullopt).ok());
  EXPECT_TRUE(silent_.ClosedByClient(20s));
  ASSERT_TRUE(WaitRunsOf("job", 1));
  EXPECT_EQ(RunsOf("job")[0].error.rfind("cancelled: stopped by an operator", 0), 0u)
      << RunsOf("job")[0].error;
  boot_->Shutdown();
}

// A `/config` node as ElasticJob 3.0.5 (SnakeYAML) writes it for an HTTP job with the
// DINGTALK handler and a SINGLE_THREAD pool: the registry's configuration wins over the local
// one (overwrite false), so the job runs with its props and notifies with its handler.
TEST_F(JobTypesTest, AJavaWrittenConfigNodeLoadsAndRunsTheSame) {
  TestHttpServer server([](const Received& r) {
    if (r.path == "/robot/send") {
      return std::make_pair(200, std::string(R"({"errcode":0,"errmsg":"ok"})"));
    }
    return std::make_pair(503, std::string("maintenance"));
  });
  const std::string java_yaml =
      "cron: 0/5 * * * * ?\n"
      "description: ''\n"
      "disabled: false\n"
      "failover: false\n"
      "jobErrorHandlerType: DINGTALK\n"
      "jobExecutorThreadPoolSizeProviderType: SINGLE_THREAD\n"
      "jobName: javaJob\n"
      "jobParameter: ''\n"
      "maxTimeDiffSeconds: -1\n"
      "misfire: true\n"
      "monitorExecution: true\n"
      "overwrite: false\n"
      "props:\n"
      "  dingtalk.connectTimeoutMilliseconds: '1000'\n"
      "  dingtalk.readTimeoutMilliseconds: '2000'\n"
      "  dingtalk.webhook: " +
      server.Url() +
      "/robot/send?access_token=T\n"
      "  http.data: source=Java\n"
      "  http.method: POST\n"
      "  http.uri: " +
      server.Url() +
      "/java\n"
      "reconcileIntervalMinutes: 10\n"
      "shardingItemParameters: ''\n"
      "shardingTotalCount: 2\n"
      "staticSharding: false\n";
  auto parsed = ConfigFromYaml(java_yaml);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->job_error_handler_type, "DINGTALK");
  EXPECT_EQ(parsed->job_executor_thread_pool_size_provider_type, "SINGLE_THREAD");
  auto reg = Session();
  ASSERT_TRUE(reg->Persist("/javaJob", "HTTP").ok());
  ASSERT_TRUE(reg->Persist("/javaJob/config", java_yaml).ok());
  // The local configuration points elsewhere: the registry's wins.
  JobConfiguration local = HttpConfig("javaJob", "http://127.0.0.1:1/unused", "GET");
  local.cron = "* * * * * ?";
  auto& sender = error_handler::NotificationSender::Shared();
  const size_t sent = sender.sent();
  ScheduleJobBootstrap boot(*reg, "HTTP", local, Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(5s);
  ASSERT_TRUE(WaitRunsOf("javaJob", 2));
  for (const auto& r : RunsOf("javaJob")) {
    EXPECT_FALSE(r.success);
    EXPECT_NE(r.error.find("status 503"), std::string::npos) << r.error;
  }
  ASSERT_TRUE(server.WaitRequests(4));  // two items, two robot messages
  sender.WaitIdle();
  EXPECT_EQ(sender.sent(), sent + 2);
  int java = 0;
  for (const auto& r : server.received()) {
    if (r.path != "/java") continue;
    ++java;
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.body, "source=Java");
  }
  EXPECT_EQ(java, 2);
}

}  // namespace
}  // namespace elasticjob
