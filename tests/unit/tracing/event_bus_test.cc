// The tracing bus and the SQLite storage: rows as ElasticJob's tables hold them, batches,
// retries while the database is unreachable, overflow, idempotent retried batches, flush at
// shutdown. SQLite files in a temporary directory: no server.
#include "tracing/events/event_bus.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "elasticjob/tracing/trace_reader.h"
#include "tracing/events/job_tracing.h"
#include "tracing/tracing_storage.h"
#include "unit/infra/capturing_logger.h"

namespace elasticjob::tracing {
namespace {

using namespace std::chrono_literals;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/ej-tracing-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Rows of a query on the SQLite file, as text ("a|b|c").
std::vector<std::string> Rows(const std::string& file, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::vector<std::string> rows;
  sqlite3_exec(
      db, sql.c_str(),
      [](void* out, int n, char** values, char**) {
        std::string row;
        for (int i = 0; i < n; ++i) {
          if (i > 0) row += '|';
          row += values[i] != nullptr ? values[i] : "NULL";
        }
        static_cast<std::vector<std::string>*>(out)->push_back(row);
        return 0;
      },
      &rows, nullptr);
  sqlite3_close(db);
  return rows;
}

class EventBusTest : public ::testing::Test {
 protected:
  std::string Url() const { return "sqlite://" + file_; }
  std::shared_ptr<EventBus> Open(TracingConfiguration config = {},
                                 EventBus::Opener opener = nullptr) {
    config.url = Url();
    auto url = ParseTracingUrl(config.url);
    EXPECT_TRUE(url.ok());
    if (!opener) opener = [u = *url] { return OpenSink(u); };
    return std::make_shared<EventBus>(config, *url, std::move(opener));
  }
  JobExecutionEvent Execution(int item) {
    JobExecutionEvent e;
    e.id = std::string(UuidText(NewUuid()));
    e.hostname = "host";
    e.ip = "10.0.0.1";
    e.task_id = "job@-@0@-@READY@-@10.0.0.1@-@1";
    e.job_name = "job";
    e.sharding_item = item;
    e.start_time = Clock::System().WallNow();
    return e;
  }

  TempDir dir_;
  std::string file_ = dir_.path() + "/events.db";
};

TEST_F(EventBusTest, CreatesElasticJobsTablesAndIndexInWalMode) {
  auto bus = Open();
  ASSERT_TRUE(bus->Flush(5s).ok());  // nothing posted: the tables come with the first write
  bus->Post(Execution(0));
  ASSERT_TRUE(bus->Flush(5s).ok());
  EXPECT_EQ(Rows(file_, "PRAGMA journal_mode"), std::vector<std::string>{"wal"});
  EXPECT_EQ(Rows(file_, "SELECT name, type FROM pragma_table_info('JOB_EXECUTION_LOG')"),
            (std::vector<std::string>{
                "id|CHARACTER(40)", "job_name|CHARACTER(100)", "task_id|CHARACTER(255)",
                "hostname|CHARACTER(255)", "ip|CHARACTER(50)", "sharding_item|INTEGER",
                "execution_source|CHARACTER(20)", "failure_cause|CHARACTER VARYING(4000)",
                "is_success|INTEGER", "start_time|TIMESTAMP", "complete_time|TIMESTAMP"}));
  EXPECT_EQ(Rows(file_, "SELECT name, type FROM pragma_table_info('JOB_STATUS_TRACE_LOG')"),
            (std::vector<std::string>{
                "id|CHARACTER(40)", "job_name|CHARACTER(100)", "original_task_id|CHARACTER(255)",
                "task_id|CHARACTER(255)", "slave_id|CHARACTER(50)", "execution_type|CHARACTER(20)",
                "sharding_item|CHARACTER(100)", "state|CHARACTER(20)",
                "message|CHARACTER VARYING(4000)", "creation_time|TIMESTAMP"}));
  EXPECT_EQ(Rows(file_, "SELECT name FROM pragma_index_info('TASK_ID_STATE_INDEX')"),
            (std::vector<std::string>{"task_id", "state"}));
}

TEST_F(EventBusTest, AStartInsertsTheRowAndTheEndCompletesIt) {
  auto bus = Open();
  JobExecutionEvent e = Execution(2);
  bus->Post(e);
  JobExecutionEvent end = e;
  end.complete_time = e.start_time + 3s;
  end.success = false;
  end.failure_cause = std::string(5000, 'x');  // cut to the column
  bus->Post(end);
  ASSERT_TRUE(bus->Flush(5s).ok());
  auto reader = TraceReader::Open(Url());
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto runs = (*reader)->Executions({});
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->at(0).id, e.id);
  EXPECT_EQ(runs->at(0).sharding_item, 2);
  EXPECT_FALSE(runs->at(0).success);
  EXPECT_EQ(runs->at(0).failure_cause.size(), 4000u);
  ASSERT_TRUE(runs->at(0).complete_time.has_value());
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(*runs->at(0).complete_time -
                                                             runs->at(0).start_time),
            3s);
  EXPECT_EQ(bus->stats().written, 2u);
  EXPECT_EQ(bus->dropped(), 0u);
}

TEST_F(EventBusTest, WhileTheDatabaseIsUnreachableEventsWaitAndNothingIsLost) {
  std::atomic<bool> down{true};
  std::atomic<int> attempts{0};
  TracingConfiguration config;
  config.max_backoff = 50ms;
  auto url = ParseTracingUrl(Url());
  auto bus = Open(config, [&]() -> Result<std::unique_ptr<EventSink>> {
    ++attempts;
    if (down) return Status(StatusCode::kUnavailable, "connection refused");
    return OpenSink(*url);
  });
  for (int i = 0; i < 100; ++i) bus->Post(Execution(i));
  EXPECT_FALSE(bus->Flush(300ms).ok());  // TIMEOUT: the database is down
  EXPECT_GE(attempts.load(), 2);
  EXPECT_EQ(bus->stats().last_error, "connection refused");
  EXPECT_EQ(bus->stats().pending, 100u);
  down = false;
  ASSERT_TRUE(bus->Flush(10s).ok());
  EXPECT_EQ(Rows(file_, "SELECT COUNT(*), COUNT(DISTINCT id) FROM JOB_EXECUTION_LOG"),
            std::vector<std::string>{"100|100"});
  EXPECT_EQ(bus->dropped(), 0u);
}

TEST_F(EventBusTest, ItsOwnLinesGoToTheConfiguredLogger) {
  std::atomic<bool> down{true};
  auto logger = std::make_shared<test_support::CapturingLogger>();
  TracingConfiguration config;
  config.max_backoff = 50ms;
  config.logger = logger;
  auto url = ParseTracingUrl(Url());
  auto bus = Open(config, [&]() -> Result<std::unique_ptr<EventSink>> {
    if (down) return Status(StatusCode::kUnavailable, "connection refused");
    return OpenSink(*url);
  });
  ::testing::internal::CaptureStderr();
  bus->Post(Execution(0));
  auto retrying = logger->WaitFor([](const auto& l) {
    return l.level == LogLevel::kWarn &&
           l.message.find("connection refused; retrying") != std::string::npos;
  });
  down = false;
  auto again = logger->WaitFor([](const auto& l) {
    return l.level == LogLevel::kInfo && l.message.find("writing again") != std::string::npos;
  });
  EXPECT_TRUE(bus->Flush(10s).ok());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_TRUE(retrying.has_value());
  EXPECT_TRUE(again.has_value());
}

TEST_F(EventBusTest, AnOverflowingQueueDropsTheOldestAndCountsThem) {
  // The database is down until every event is posted: the writer's first attempt waits for
  // the posts (it may have taken some of them, or all) and fails; the next one, after the
  // rest is taken and the queue trimmed, succeeds.
  std::mutex mu;
  std::condition_variable cv;
  bool posted_all = false;
  int attempts = 0;
  TracingConfiguration config;
  config.queue_capacity = 10;
  config.max_backoff = 20ms;
  auto url = ParseTracingUrl(Url());
  auto bus = Open(config, [&]() -> Result<std::unique_ptr<EventSink>> {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return posted_all; });
    if (attempts++ == 0) return Status(StatusCode::kUnavailable, "down");
    return OpenSink(*url);
  });
  std::vector<JobExecutionEvent> posted;
  for (int i = 0; i < 25; ++i) {
    posted.push_back(Execution(i));
    bus->Post(posted.back());
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    posted_all = true;
  }
  cv.notify_all();
  ASSERT_TRUE(bus->Flush(10s).ok());
  EXPECT_EQ(bus->dropped(), 15u);
  // The newest ten are kept.
  EXPECT_EQ(Rows(file_, "SELECT MIN(sharding_item), COUNT(*) FROM JOB_EXECUTION_LOG"),
            std::vector<std::string>{"15|10"});
}

TEST_F(EventBusTest, APairGoesInAsOnePushOlderFirst) {
  // Room for one event while the database is down: of a pair, the older is dropped first.
  std::atomic<bool> down{true};
  TracingConfiguration config;
  config.queue_capacity = 1;
  config.max_backoff = 20ms;
  auto url = ParseTracingUrl(Url());
  auto bus = Open(config, [&]() -> Result<std::unique_ptr<EventSink>> {
    if (down) return Status(StatusCode::kUnavailable, "down");
    return OpenSink(*url);
  });
  JobTracing tracing(bus, "host", "10.0.0.1", Clock::System());
  auto run = tracing.RunInfoOf("job", "job@-@0@-@READY@-@10.0.0.1@-@1");
  bus->Push(tracing.StatusEvent(run, TraceState::kTaskStaging, "first"),
            tracing.StatusEvent(run, TraceState::kTaskRunning, "second"));
  down = false;
  ASSERT_TRUE(bus->Flush(10s).ok());
  EXPECT_EQ(bus->dropped(), 1u);
  EXPECT_EQ(Rows(file_, "SELECT state, message FROM JOB_STATUS_TRACE_LOG"),
            std::vector<std::string>{"TASK_RUNNING|second"});
}

TEST_F(EventBusTest, ARetriedBatchWritesNothingTwice) {
  auto url = ParseTracingUrl(Url());
  auto storage = TracingStorage::Open(*url, true);
  ASSERT_TRUE(storage.ok()) << storage.status();
  JobTracing tracing(nullptr, "host", "10.0.0.1", Clock::System());
  auto info = tracing.RunInfoOf("job", "job@-@0,1@-@READY@-@10.0.0.1@-@1");
  std::vector<std::unique_ptr<Event>> events;
  auto start = std::make_unique<Event>();
  start->kind = Event::Kind::kExecutionStart;
  start->id = NewUuid();
  start->run = info;
  auto end = std::make_unique<Event>(*start);
  end->kind = Event::Kind::kExecutionEnd;
  end->success = true;
  events.push_back(std::move(start));
  events.push_back(std::move(end));
  events.push_back(tracing.StatusEvent(info, TraceState::kTaskStaging, "Job 'job' execute begin."));
  auto line = std::make_unique<Event>();
  line->kind = Event::Kind::kLogLine;
  line->id = events[0]->id;
  line->line_no = 1;
  line->text = "hello";
  events.push_back(std::move(line));
  std::vector<Event*> batch;
  for (auto& e : events) batch.push_back(e.get());
  // The first commit's answer lost: the bus writes the same batch again.
  ASSERT_TRUE((*storage)->Write(batch).status.ok());
  ASSERT_TRUE((*storage)->Write(batch).status.ok());
  EXPECT_EQ(Rows(file_, "SELECT COUNT(*), is_success FROM JOB_EXECUTION_LOG"),
            std::vector<std::string>{"1|1"});
  EXPECT_EQ(Rows(file_, "SELECT COUNT(*), sharding_item, state FROM JOB_STATUS_TRACE_LOG"),
            std::vector<std::string>{"1|[0, 1]|TASK_STAGING"});
  EXPECT_EQ(Rows(file_, "SELECT COUNT(*) FROM JOB_EXECUTION_LOG_LINE"),
            std::vector<std::string>{"1"});
}

TEST_F(EventBusTest, ShutdownFlushesWhatWasPostedAndLaterPostsAreDropped) {
  auto bus = Open();
  for (int i = 0; i < 500; ++i) bus->Post(Execution(i));
  ASSERT_TRUE(bus->Shutdown(10s).ok());
  EXPECT_EQ(Rows(file_, "SELECT COUNT(*) FROM JOB_EXECUTION_LOG"), std::vector<std::string>{"500"});
  bus->Post(Execution(0));
  EXPECT_EQ(bus->dropped(), 1u);
}

TEST_F(EventBusTest, ManyPostersLoseNothing) {
  auto bus = Open();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) bus->Post(Execution(t * 1000 + i));
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(bus->Flush(20s).ok());
  EXPECT_EQ(Rows(file_, "SELECT COUNT(DISTINCT sharding_item) FROM JOB_EXECUTION_LOG"),
            std::vector<std::string>{"4000"});
}

// A Flush returns once what its thread posted before it is written, whatever the shard:
// a log line goes to the shard of its execution, the flush marker to the thread's. With
// several threads flushing, a marker may first be seen by the writer's second pass over
// the shards, after that pass went by the line's shard (the line was pushed just after):
// the writer passes again until a pass finds no new marker.
TEST_F(EventBusTest, AFlushWaitsForWhatItsThreadPostedOnAnyShard) {
  auto bus = Open();
  constexpr int kThreads = 4;
  constexpr int kRounds = 150;
  std::atomic<int> missing{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      std::unique_ptr<TraceReader> reader;  // once the file exists
      for (int i = 0; i < kRounds; ++i) {
        Uuid id = NewUuid();
        JobLogLine line;
        line.execution_id.assign(reinterpret_cast<const char*>(id.data()), id.size());
        line.line_no = 1;
        line.text = "posted before the flush";
        bus->Post(std::move(line));
        if (!bus->Flush(20s).ok()) {
          ++missing;
          continue;
        }
        if (reader == nullptr) {
          auto opened = TraceReader::Open(Url());
          if (!opened.ok()) {
            ++missing;
            continue;
          }
          reader = std::move(opened).value();
        }
        auto lines = reader->LogLines(std::string(UuidText(id)));
        if (!lines.ok() || lines->size() != 1) ++missing;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(missing.load(), 0);
  EXPECT_EQ(bus->dropped(), 0u);
}

TEST_F(EventBusTest, AnExecutionsLogIsNumberedInOrderAndCutAtItsLimit) {
  TracingConfiguration config;
  config.log_line_limit = 5;
  auto bus = Open(config);
  Uuid id = NewUuid();
  ExecutionLog log(bus, id, Clock::System());
  for (int i = 1; i <= 8; ++i) log.Append(LogLevel::kInfo, "line " + std::to_string(i));
  ASSERT_TRUE(bus->Flush(5s).ok());
  auto reader = TraceReader::Open(Url());
  ASSERT_TRUE(reader.ok());
  auto lines = (*reader)->LogLines(std::string(UuidText(id)));
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 5u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(lines->at(i).line_no, i + 1);
    EXPECT_EQ(lines->at(i).text, "line " + std::to_string(i + 1));
  }
  EXPECT_EQ(lines->at(4).level, LogLevel::kWarn);
  EXPECT_NE(lines->at(4).text.find("log cut"), std::string::npos) << lines->at(4).text;
  auto after = (*reader)->LogLines(std::string(UuidText(id)), 3);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->size(), 2u);
}

TEST_F(EventBusTest, AReaderOfAMissingFileFailsWithTheReason) {
  auto reader = TraceReader::Open("sqlite://" + dir_.path() + "/none.db");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(reader.status().message().find("none.db"), std::string::npos);
}

}  // namespace
}  // namespace elasticjob::tracing
