// Event tracing's benchmarks (figures in docs/benchmarks.md, "Event tracing"):
//   tracing_bench throughput URL [--events N]
//       events per second sustained into the database at URL: N item runs (a start and an
//       end event each) and a status event per run posted from 4 threads as fast as they
//       can, timed from the first post to the flush that wrote the last. Prints JSON.
//   tracing_bench lateness --tracing URL [--jobs M] [--seconds S] [--rounds R]
//       trigger lateness (item's user code began - cron fire time) of M every-second no-op
//       jobs on the embedded registry, tracing off and on in turn (R rounds of each, S
//       seconds measured per round after 3 of warm-up, the same process): p50 / p99 / max of
//       each mode, all rounds together. --unwritten: the events go to a database that is not
//       there (counted, never written): what the posts cost without the writer. Prints JSON.
//   tracing_bench post [--items N] [--threads T]
//       what tracing adds to an item run on its thread: the start and end events pushed
//       (built ahead, as a prepared trigger does) and the pass's last status event built and
//       pushed; nanoseconds per item, T threads at once, into a database that is not there
//       (the events are counted, never written). Prints JSON.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/tracing/tracer.h"
#include "tracing/events/event_bus.h"
#include "tracing/events/job_tracing.h"

namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

class NoopJob final : public elasticjob::SimpleJob {
 public:
  void Execute(const elasticjob::ShardingContext&) override {}
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1));
  return v[i];
}

int Throughput(const std::string& url, int events) {
  elasticjob::TracingConfiguration config;
  config.url = url;
  config.queue_capacity = static_cast<size_t>(events) * 3 + 10;
  auto tracer = elasticjob::Tracer::Open(config);
  if (!tracer.ok()) {
    std::cerr << tracer.status() << "\n";
    return 1;
  }
  // The tables first, outside the timing.
  (*tracer)->Post(elasticjob::JobLogLine{"00000000-0000-4000-8000-000000000000", 1,
                                         elasticjob::Clock::System().WallNow(),
                                         elasticjob::LogLevel::kInfo, "warm-up"});
  if (auto s = (*tracer)->Flush(60s); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  const auto begin = SteadyClock::now();
  std::vector<std::thread> threads;
  constexpr int kThreads = 4;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < events; i += kThreads) {
        elasticjob::JobExecutionEvent e;
        e.job_name = fmt::format("job{}", i % 100);
        e.task_id = fmt::format("{}@-@0@-@READY@-@10.0.0.1@-@1", e.job_name);
        e.hostname = "bench";
        e.ip = "10.0.0.1";
        e.sharding_item = i;
        e.start_time = elasticjob::Clock::System().WallNow();
        elasticjob::JobExecutionEvent end = e;
        (*tracer)->Post(std::move(e));
        elasticjob::JobStatusTraceEvent s;
        s.job_name = end.job_name;
        s.task_id = end.task_id;
        s.slave_id = "10.0.0.1";
        s.execution_type = "READY";
        s.sharding_items = "[0]";
        s.state = elasticjob::TraceState::kTaskRunning;
        s.creation_time = end.start_time;
        (*tracer)->Post(std::move(s));
        end.complete_time = end.start_time;
        end.success = true;
        (*tracer)->Post(std::move(end));
      }
    });
  }
  for (auto& t : threads) t.join();
  const auto posted = SteadyClock::now();
  if (auto s = (*tracer)->Flush(600s); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  const auto done = SteadyClock::now();
  const double secs = std::chrono::duration<double>(done - begin).count();
  const uint64_t total = static_cast<uint64_t>(events) * 3;
  nlohmann::json out = {
      {"url", (*tracer)->redacted_url()},
      {"events", total},
      {"post_ms", std::chrono::duration<double, std::milli>(posted - begin).count()},
      {"seconds", secs},
      {"events_per_second", static_cast<double>(total) / secs},
      {"dropped", (*tracer)->dropped()}};
  std::cout << out.dump() << "\n";
  return 0;
}

struct Samples {
  std::mutex mu;
  bool recording = false;
  std::vector<double> lateness_ms;
};

// One round: M jobs scheduled on a registry of their own, warm-up, S seconds recorded, shut
// down (rounds on one registry slow down as its dead jobs pile up).
void Round(int jobs, int seconds, std::shared_ptr<elasticjob::Tracer> tracer, int round,
           Samples& samples) {
  auto registry = elasticjob::NewRegistryCenter(fmt::format("memory://tracing-bench-{}", round));
  if (!registry.ok() || !(*registry)->Init().ok()) return;
  elasticjob::RegistryCenter& reg = **registry;
  elasticjob::BootstrapOptions options;
  options.server_ip = "10.0.0.1";
  options.tracer = tracer;
  Samples* sink = &samples;
  options.on_item_run = [sink](const elasticjob::ItemRunReport& r) {
    if (!r.fire_time) return;
    double ms = std::chrono::duration<double, std::milli>(r.started - *r.fire_time).count();
    std::lock_guard<std::mutex> lock(sink->mu);
    if (sink->recording) sink->lateness_ms.push_back(ms);
  };
  std::vector<std::unique_ptr<elasticjob::ScheduleJobBootstrap>> boots;
  std::vector<elasticjob::ScheduleJobBootstrap*> ptrs;
  for (int j = 0; j < jobs; ++j) {
    auto config = elasticjob::JobConfiguration::Builder(fmt::format("r{}j{}", round, j), 1)
                      .Cron("* * * * * ?")
                      .Build();
    boots.push_back(std::make_unique<elasticjob::ScheduleJobBootstrap>(
        reg, std::make_shared<NoopJob>(), *config, options));
    ptrs.push_back(boots.back().get());
  }
  for (const auto& s : elasticjob::ScheduleJobBootstrap::ScheduleAll(ptrs)) {
    if (!s.ok()) std::cerr << s << "\n";
  }
  std::this_thread::sleep_for(3s);  // warm-up: sharding, plans, prepared triggers
  {
    std::lock_guard<std::mutex> lock(samples.mu);
    samples.recording = true;
  }
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  {
    std::lock_guard<std::mutex> lock(samples.mu);
    samples.recording = false;
  }
  elasticjob::ScheduleJobBootstrap::ShutdownAll(ptrs);
  boots.clear();
  reg.Close();
}

// A bus whose database is never there: its events are posted and counted, never written
// (the posts' cost alone, without the writer's).
std::shared_ptr<elasticjob::Tracer> UnwrittenBus(size_t capacity) {
  elasticjob::TracingConfiguration config;
  config.url = "postgresql://bench:x@127.0.0.1:1/none";
  config.queue_capacity = capacity;
  auto url = elasticjob::tracing::ParseTracingUrl(config.url);
  return std::make_shared<elasticjob::tracing::EventBus>(config, *url, [] {
    return elasticjob::Result<std::unique_ptr<elasticjob::tracing::EventSink>>(
        elasticjob::Status(elasticjob::StatusCode::kUnavailable, "not there"));
  });
}

int Lateness(const std::string& url, int jobs, int seconds, int rounds, bool unwritten) {
  auto tracer = unwritten ? elasticjob::Result<std::shared_ptr<elasticjob::Tracer>>(
                                UnwrittenBus(static_cast<size_t>(jobs) * 16))
                          : elasticjob::Tracer::Open({.url = url});
  if (!tracer.ok()) {
    std::cerr << tracer.status() << "\n";
    return 1;
  }
  Samples off;
  Samples on;
  // Each round's p99 too: on a shared machine one round's bad second dominates the pooled
  // p99, the median of the rounds' p99s less so.
  std::vector<double> off_p99;
  std::vector<double> on_p99;
  for (int r = 0; r < rounds; ++r) {
    for (bool traced : {false, true}) {
      Samples round;
      Round(jobs, seconds, traced ? *tracer : nullptr, 2 * r + (traced ? 1 : 0), round);
      (traced ? on_p99 : off_p99).push_back(Percentile(round.lateness_ms, 0.99));
      Samples& all = traced ? on : off;
      all.lateness_ms.insert(all.lateness_ms.end(), round.lateness_ms.begin(),
                             round.lateness_ms.end());
    }
  }
  (void)(*tracer)->Flush(60s);
  auto summary = [](const std::vector<double>& v) {
    return nlohmann::json{{"runs", v.size()},
                          {"min", v.empty() ? 0 : *std::min_element(v.begin(), v.end())},
                          {"p10", Percentile(v, 0.1)},
                          {"p50", Percentile(v, 0.5)},
                          {"p90", Percentile(v, 0.9)},
                          {"p99", Percentile(v, 0.99)},
                          {"max", v.empty() ? 0 : *std::max_element(v.begin(), v.end())}};
  };
  nlohmann::json out = {{"jobs", jobs},
                        {"seconds_per_round", seconds},
                        {"rounds", rounds},
                        {"tracing", (*tracer)->redacted_url()},
                        {"lateness_ms_off", summary(off.lateness_ms)},
                        {"lateness_ms_on", summary(on.lateness_ms)},
                        {"round_p99_ms_off", off_p99},
                        {"round_p99_ms_on", on_p99},
                        {"median_round_p99_ms_off", Percentile(off_p99, 0.5)},
                        {"median_round_p99_ms_on", Percentile(on_p99, 0.5)},
                        {"events_written", (*tracer)->stats().written},
                        {"events_dropped", (*tracer)->dropped()}};
  std::cout << out.dump() << "\n";
  return 0;
}

int Post(int items, int threads) {
  auto bus = std::static_pointer_cast<elasticjob::tracing::EventBus>(
      UnwrittenBus(static_cast<size_t>(items) * 4));
  elasticjob::tracing::JobTracing tracing(bus, "bench", "10.0.0.1", elasticjob::Clock::System());
  auto info = tracing.RunInfoOf("job", "job@-@0@-@READY@-@10.0.0.1@-@1");
  const int per_thread = items / threads;
  std::vector<std::vector<elasticjob::tracing::JobTracing::ItemEvents>> starts(threads);
  for (auto& s : starts) {
    for (int i = 0; i < per_thread; ++i) {
      s.push_back(tracing.MakeItemEvents(info, i, elasticjob::ExecutionSource::kNormalTrigger));
    }
  }
  std::atomic<int> ready{0};
  std::vector<double> ns(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ++ready;
      while (ready.load() < threads) {
      }
      const auto begin = SteadyClock::now();
      for (int i = 0; i < per_thread; ++i) {
        const auto started = elasticjob::Clock::System().WallNow();
        tracing.PushStart(std::move(starts[t][i].start), started);
        tracing.PushEnd(std::move(starts[t][i].end), started, true, "");
        tracing.PostStatus(info, elasticjob::TraceState::kTaskFinished, "");
      }
      ns[t] =
          std::chrono::duration<double, std::nano>(SteadyClock::now() - begin).count() / per_thread;
    });
  }
  for (auto& t : pool) t.join();
  nlohmann::json out = {{"items", per_thread * threads},
                        {"threads", threads},
                        {"ns_per_item", *std::max_element(ns.begin(), ns.end())}};
  std::cout << out.dump() << "\n";
  (void)bus->Shutdown(std::chrono::milliseconds(1));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"event tracing benchmarks"};
  app.require_subcommand(1);
  std::string url;
  int events = 100000;
  int jobs = 1000;
  int seconds = 10;
  int rounds = 2;
  CLI::App* tp = app.add_subcommand("throughput", "events per second into a database");
  tp->add_option("url", url)->required();
  tp->add_option("--events", events);
  CLI::App* lt = app.add_subcommand("lateness", "trigger lateness, tracing off and on");
  lt->add_option("--tracing", url)->required();
  lt->add_option("--jobs", jobs);
  lt->add_option("--seconds", seconds);
  lt->add_option("--rounds", rounds);
  bool unwritten = false;
  lt->add_flag("--unwritten", unwritten,
               "posted events are never written (a database that is not there): the posts' "
               "cost without the writer's");
  int items = 1000000;
  int threads = 1;
  CLI::App* post = app.add_subcommand("post", "what tracing adds to an item run");
  post->add_option("--items", items);
  post->add_option("--threads", threads);
  CLI11_PARSE(app, argc, argv);
  if (tp->parsed()) return Throughput(url, events);
  if (post->parsed()) return Post(items, threads);
  return Lateness(url, jobs, seconds, rounds, unwritten);
}
