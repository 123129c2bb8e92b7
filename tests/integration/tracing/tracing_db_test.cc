// Event tracing into real PostgreSQL and MariaDB servers (scripts/pg-server.sh,
// scripts/mariadb-server.sh: 127.0.0.1, a free port, a temporary directory, stopped by PID):
// ElasticJob's tables for each, and a run of several jobs during which the database is
// restarted: afterwards every item run has exactly one complete row, every trigger its status
// rows, nothing is duplicated and nothing was dropped; failure causes and log lines in order.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "elasticjob/tracing/trace_reader.h"
#include "elasticjob/tracing/tracer.h"
#include "tracing/events/tracing_url.h"
#include "tracing/sql_connection.h"
#include "unit/bootstrap/runtime_test_support.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;

// Runs `command`; returns its stdout (empty on failure).
std::string Run(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[256];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  if (pclose(p) != 0) return "";
  return out;
}

// One throwaway server, stopped (data removed) at the end.
class DbServer {
 public:
  DbServer(std::string script) : script_(std::move(script)) {
    char tmpl[] = "/tmp/ej-tracing-db-XXXXXX";
    dir_ = mkdtemp(tmpl);
    started_ = Start("");
    std::ifstream f(dir_ + "/url");
    std::getline(f, url_);
  }
  ~DbServer() {
    Run("bash " + script_ + " stop " + dir_ + " 2>&1");
    std::filesystem::remove_all(dir_);
  }
  bool Start(const std::string& port) {
    std::string out = Run("bash " + script_ + " start " + dir_ + " " + port);
    if (out.empty()) return false;
    port_ = out.substr(0, out.find(' '));
    return true;
  }
  bool Stop() { return !Run("bash " + script_ + " stop " + dir_ + " --keep && echo ok").empty(); }
  bool Restart() { return Start(port_); }
  bool started() const { return started_; }
  const std::string& url() const { return url_; }

 private:
  std::string script_;
  std::string dir_;
  std::string port_;
  std::string url_;
  bool started_ = false;
};

class FailingJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext& ctx) override {
    for (int i = 1; i <= 5; ++i) ctx.log().Info("line {}", i);
    if (ctx.sharding_item == 1) throw std::runtime_error("item 1 failed: 'quoted' \"text\"");
  }
};

class TracingDbTest : public test_support::RuntimeTest,
                      public ::testing::WithParamInterface<const char*> {
 protected:
  static std::string Script() {
    return std::string(ELASTICJOB_SCRIPTS) + "/" + GetParam() + "-server.sh";
  }
};

TEST_P(TracingDbTest, CreatesElasticJobsTablesAndIndex) {
  DbServer db(Script());
  ASSERT_TRUE(db.started());
  auto tracer = Tracer::Open({.url = db.url()});
  ASSERT_TRUE(tracer.ok()) << tracer.status();
  JobExecutionEvent e;
  e.id = "123e4567-e89b-42d3-a456-426614174000";
  e.job_name = "job";
  e.task_id = "job@-@0@-@READY@-@10.0.0.1@-@1";
  e.start_time = clock_.WallNow();
  (*tracer)->Post(e);
  ASSERT_TRUE((*tracer)->Flush(30s).ok()) << (*tracer)->stats().last_error;
  auto url = tracing::ParseTracingUrl(db.url());
  auto conn = tracing::ConnectSql(*url, false);
  ASSERT_TRUE(conn.ok()) << conn.status();
  const bool pg = std::string(GetParam()) == "pg";
  std::string columns =
      pg ? "SELECT table_name, column_name, data_type, character_maximum_length FROM "
           "information_schema.columns WHERE table_name IN ('job_execution_log', "
           "'job_status_trace_log') ORDER BY table_name, ordinal_position"
         : "SELECT table_name, column_name, column_type, NULL FROM information_schema.columns "
           "WHERE table_schema = DATABASE() AND table_name IN ('JOB_EXECUTION_LOG', "
           "'JOB_STATUS_TRACE_LOG') ORDER BY table_name, ordinal_position";
  auto rows = (*conn)->Query(columns, {});
  ASSERT_TRUE(rows.ok()) << rows.status();
  std::vector<std::string> got;
  for (const auto& r : *rows) {
    std::string text = r[1].value_or("") + " " + r[2].value_or("");
    if (r[3].has_value()) text += "(" + *r[3] + ")";
    got.push_back(text);
  }
  std::vector<std::string> want =
      pg ? std::vector<std::string>{"id character varying(40)",
                                    "job_name character varying(100)",
                                    "task_id character varying(255)",
                                    "hostname character varying(255)",
                                    "ip character varying(50)",
                                    "sharding_item integer",
                                    "execution_source character varying(20)",
                                    "failure_cause character varying(4000)",
                                    "is_success boolean",
                                    "start_time timestamp without time zone",
                                    "complete_time timestamp without time zone",
                                    "id character varying(40)",
                                    "job_name character varying(100)",
                                    "original_task_id character varying(255)",
                                    "task_id character varying(255)",
                                    "slave_id character varying(50)",
                                    "execution_type character varying(20)",
                                    "sharding_item character varying(100)",
                                    "state character varying(20)",
                                    "message character varying(4000)",
                                    "creation_time timestamp without time zone"}
         : std::vector<std::string>{"auto_id int(11)",
                                    "id varchar(40)",
                                    "job_name varchar(100)",
                                    "task_id varchar(255)",
                                    "hostname varchar(255)",
                                    "ip varchar(50)",
                                    "sharding_item int(11)",
                                    "execution_source varchar(20)",
                                    "failure_cause varchar(4000)",
                                    "is_success int(11)",
                                    "start_time timestamp",
                                    "complete_time timestamp",
                                    "auto_id int(11)",
                                    "id varchar(40)",
                                    "job_name varchar(100)",
                                    "original_task_id varchar(255)",
                                    "task_id varchar(255)",
                                    "slave_id varchar(50)",
                                    "execution_type varchar(20)",
                                    "sharding_item varchar(100)",
                                    "state varchar(20)",
                                    "message varchar(4000)",
                                    "creation_time timestamp"};
  EXPECT_EQ(got, want);
  auto index = (*conn)->Query(
      pg ? "SELECT indexname FROM pg_indexes WHERE indexname = 'task_id_state_index'"
         : "SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_schema = "
           "DATABASE() AND index_name = 'TASK_ID_STATE_INDEX'",
      {});
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(index->size(), 1u);
  // A second tracer finds the tables there (created when missing, not twice).
  auto again = Tracer::Open({.url = db.url()});
  ASSERT_TRUE(again.ok());
  (*again)->Post(e);  // the same id: nothing duplicated
  ASSERT_TRUE((*again)->Flush(30s).ok()) << (*again)->stats().last_error;
  auto count = (*conn)->Query("SELECT COUNT(*) FROM JOB_EXECUTION_LOG", {});
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->at(0)[0], "1");
}

TEST_P(TracingDbTest, ARestartDuringARunOfSeveralJobsLosesAndDuplicatesNothing) {
  DbServer db(Script());
  ASSERT_TRUE(db.started());
  TracingConfiguration config;
  config.url = db.url();
  config.max_backoff = 300ms;
  auto tracer = Tracer::Open(config);
  ASSERT_TRUE(tracer.ok()) << tracer.status();
  auto reg = Session();
  constexpr int kJobs = 3;
  constexpr int kItems = 2;
  std::vector<std::unique_ptr<ScheduleJobBootstrap>> boots;
  for (int j = 0; j < kJobs; ++j) {
    auto c =
        *JobConfiguration::Builder("job" + std::to_string(j), kItems).Cron("* * * * * ?").Build();
    BootstrapOptions o = Options("10.0.0.1");
    o.tracer = *tracer;
    boots.push_back(
        std::make_unique<ScheduleJobBootstrap>(*reg, std::make_shared<FailingJob>(), c, o));
    ASSERT_TRUE(boots.back()->Schedule().ok());
  }
  size_t runs = 0;
  int triggers = 0;
  auto tick = [&] {
    clock_.Advance(1s);
    runs += kJobs * kItems;
    ++triggers;
    return rec_.WaitRuns(runs);
  };
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(tick());
  ASSERT_TRUE(db.Stop());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(tick());
  // The events wait: a Flush cannot complete while the database is down. (stats().pending
  // is the writer's count at its last pass: 0 until it wakes to take these posts.)
  EXPECT_EQ((*tracer)->Flush(300ms).code(), StatusCode::kTimeout);
  ASSERT_TRUE(db.Restart());
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(tick());
  // Every trigger has ended (its last status event is posted before its report).
  ASSERT_TRUE(rec_.Wait([&](const auto&, const auto& t) {
    return t.size() >= static_cast<size_t>(kJobs * triggers);
  }));
  for (auto& b : boots) b->Shutdown();
  ASSERT_TRUE((*tracer)->Flush(60s).ok()) << (*tracer)->stats().last_error;
  EXPECT_EQ((*tracer)->dropped(), 0u);
  EXPECT_GT((*tracer)->stats().retries, 0u);

  auto reader = TraceReader::Open(db.url());
  ASSERT_TRUE(reader.ok()) << reader.status();
  ExecutionQuery all;
  all.limit = 10000;
  auto executions = (*reader)->Executions(all);
  ASSERT_TRUE(executions.ok()) << executions.status();
  EXPECT_EQ(executions->size(), runs);
  std::set<std::string> ids;
  std::map<std::pair<std::string, int>, int> per_item;
  for (const auto& e : *executions) {
    EXPECT_TRUE(ids.insert(e.id).second) << "duplicated " << e.id;
    EXPECT_TRUE(e.complete_time.has_value()) << e.id;
    EXPECT_EQ(e.success, e.sharding_item != 1);
    if (e.sharding_item == 1) {
      EXPECT_EQ(e.failure_cause, "item 1 failed: 'quoted' \"text\"");
    }
    ++per_item[{e.job_name, e.sharding_item}];
  }
  for (const auto& [key, n] : per_item) EXPECT_EQ(n, triggers) << key.first << " " << key.second;
  StatusQuery steps_query;
  steps_query.limit = 10000;
  auto steps = (*reader)->StatusTraces(steps_query);
  ASSERT_TRUE(steps.ok()) << steps.status();
  std::map<TraceState, int> states;
  std::set<std::string> step_ids;
  for (const auto& s : *steps) {
    ++states[s.state];
    EXPECT_TRUE(step_ids.insert(s.id).second) << "duplicated " << s.id;
  }
  EXPECT_EQ(states[TraceState::kTaskStaging], kJobs * triggers);
  EXPECT_EQ(states[TraceState::kTaskRunning], kJobs * triggers);
  EXPECT_EQ(states[TraceState::kTaskError], kJobs * triggers);  // item 1 fails every time
  // Log lines in order, each once.
  for (const auto& e : *executions) {
    auto lines = (*reader)->LogLines(e.id);
    ASSERT_TRUE(lines.ok()) << lines.status();
    ASSERT_EQ(lines->size(), 5u) << e.id;
    for (int i = 0; i < 5; ++i) EXPECT_EQ(lines->at(i).text, "line " + std::to_string(i + 1));
  }
}

INSTANTIATE_TEST_SUITE_P(Databases, TracingDbTest, ::testing::Values("pg", "mariadb"),
                         [](const auto& p) { return std::string(p.param); });

}  // namespace
}  // namespace elasticjob
