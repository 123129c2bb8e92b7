// One process of the runtime benchmarks: M no-op SimpleJobs of N items each on a registry
// (the embedded one, or a ZooKeeper the harness started), measured over a window. Prints
// one JSON object:
//   startup_ms           from main() to the last Schedule() returned (ScheduleAll,
//                        --parallel registrations in flight at once)
//   first_run_ms         from the first Schedule() call to the first item run
//   lateness_ms          min / p10 / p50 / p90 / p99 / max of (item's user code began - cron
//                        fire time) over
//                        the window's item runs answering a cron fire, all jobs together
//   per_fire_ms          runs / p50 / p99 / max of the lateness of each fire time of the window
//   pickup_ms            min / p50 / p99 of (trigger's handling began - cron fire time): the
//                        part of the lateness spent waiting for a trigger thread (0 for a
//                        trigger prepared before its fire time: TriggerReport::started)
//   samples_dropped      lateness samples past the harness's room (0 unless the cron fires
//                        more than once a second)
//   requests             (ZooKeeper) requests this process sent in the window, by kind
//   startup_requests     (ZooKeeper) requests sent until the last Schedule() returned
//   triggers, item_runs  counted in the window
//   cpu_us_per_item      process CPU time (user + system) in the window / item runs
// Without --control the window opens at steady state: once every item of every job has
// answered one fire time within 100 ms, and (unless --reap-wait 0) once the registry server
// has reaped the latch containers the start-up's elections left empty (ZooKeeper does that
// in the background for minutes after thousands of jobs start; see main()).
//   settle_ms            from the last Schedule() returned to that steady state
//   lateness_after_start_ms  as lateness_ms, over the --seconds right after settling (while
//                        the server may still be reaping)
//   reaped_ms            from settling to the last latch container gone (-1: not within
//                        --reap-wait seconds; the window opened anyway)
//   idle, load           threads and RSS after scheduling and at the end of the window
//   reshard_ms           (--reshard-watch) from Schedule() returned to the first
//                        `sharding/{i}/instance` naming this instance, seen by a watch
// The window is --seconds long, or with --control it is opened and closed by the lines
// "start" and "stop" on stdin (after "ready" on stderr), so that a harness can read the
// server's counters around the same window in every process.
// Usage: runtime_bench [--registry URL] [--jobs M] [--items N] [--cron EXPR] [--failover]
//                      [--seconds S | --control] [--ip IP] [--prefix NAME] [--reshard-watch]
//                      [--parallel P] [--reap-wait S]
// The harness (bench/cluster_bench.sh) runs several of these against one ZooKeeper.
#include <fmt/format.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/executor.h"
#include "elasticjob/metrics/metrics.h"
#include "elasticjob/reg/registry_center.h"
#include "reg/composed_registry.h"

namespace {

using RequestCounts = std::map<std::string, uint64_t>;

using Clock = std::chrono::steady_clock;

class NoopJob final : public elasticjob::SimpleJob {
 public:
  void Execute(const elasticjob::ShardingContext&) override {}
};

long ProcStatusKb(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(key.size() + 1));
  }
  return -1;
}

double CpuMs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto ms = [](const timeval& t) { return t.tv_sec * 1000.0 + t.tv_usec / 1000.0; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

nlohmann::json Footprint() {
  return {{"threads", ProcStatusKb("Threads:")}, {"rss_kb", ProcStatusKb("VmRSS:")}};
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// min / p10 / p50 / p90 / p99 / max of `v`; null when empty.
nlohmann::json Spread(const std::vector<double>& v) {
  if (v.empty()) return nullptr;
  return {{"min", Percentile(v, 0.0)},  {"p10", Percentile(v, 0.10)},
          {"p50", Percentile(v, 0.50)}, {"p90", Percentile(v, 0.90)},
          {"p99", Percentile(v, 0.99)}, {"max", *std::max_element(v.begin(), v.end())}};
}

}  // namespace

int main(int argc, char** argv) {
  const auto t0 = Clock::now();  // "launch"
  CLI::App app{"runtime benchmark process"};
  std::string url = "memory://bench";
  int jobs = 1, items = 1, seconds = 5;
  std::string cron = "* * * * * ?", ip = "10.9.0.1", prefix = "bench";
  bool failover = false, control = false, reshard_watch = false;
  int parallel = elasticjob::ScheduleJobBootstrap::kDefaultParallelism;
  app.add_option("--registry", url, "registry URL");
  app.add_option("--jobs", jobs, "jobs in this process")->check(CLI::Range(1, 100000));
  app.add_option("--items", items, "sharding items per job")->check(CLI::Range(1, 1000));
  app.add_option("--cron", cron, "every job's cron");
  app.add_option("--seconds", seconds, "measuring window")->check(CLI::Range(1, 3600));
  app.add_option("--ip", ip, "this instance's server IP");
  app.add_option("--prefix", prefix, "job name prefix");
  app.add_flag("--failover", failover, "failover on");
  bool with_metrics = false;
  app.add_flag("--metrics", with_metrics,
               "record Prometheus metrics (BootstrapOptions::metrics; docs/metrics.md)");
  app.add_option("--parallel", parallel, "Schedule() calls in flight at once (ScheduleAll)")
      ->check(CLI::Range(1, 1024));
  app.add_flag("--control", control, "window opened and closed by start/stop lines on stdin");
  app.add_flag("--reshard-watch", reshard_watch, "measure the resharding that takes us in");
  int reap_wait = 300;
  app.add_option("--reap-wait", reap_wait,
                 "seconds to wait at most for the server to reap the start-up's latch "
                 "containers before the window (0: no wait, no first window)")
      ->check(CLI::Range(0, 3600));
  CLI11_PARSE(app, argc, argv);

  auto reg = elasticjob::NewRegistryCenter(url);
  if (!reg.ok()) {
    std::cerr << reg.status() << "\n";
    return 2;
  }
  if (auto s = (*reg)->Init(); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  // Read by every item run and written only around the window: a cache line of their own,
  // which the harness's writes (its lock, its counts) never share.
  struct alignas(64) Hot {
    std::atomic<bool> measuring{false};
    std::atomic<bool> ran{false};  // the first item run has been seen
  } hot;
  alignas(64) std::atomic<long> first_run_ns{0};
  // Wall clock; no fire time is in the window until it opens (the first window's triggers
  // are not the window's).
  std::atomic<elasticjob::Clock::WallTime::rep> window_start{
      std::numeric_limits<elasticjob::Clock::WallTime::rep>::max()};
  alignas(64) std::mutex mu;  // off the lines the item runs read
  std::condition_variable warm_cv;
  // The window's lateness samples, written without a lock (a lock here would make the jobs'
  // item starts contend on the harness: the measure would move what it measures). A slot is
  // taken with an atomic index; its fire time, stored last, marks it written. Sized for every
  // item of every job answering every second of the window (a cron fires at most once a
  // second); samples past that are counted, not kept.
  struct Sample {
    std::atomic<int64_t> fire{0};
    double late_ms = 0;
  };
  // Per reporting thread: its runs and its block of slots, so that the threads that start
  // the items share no counter either (one shared count per kSlotBlock samples).
  constexpr size_t kSlotBlock = 256;
  const bool two_windows = !control && !reshard_watch && reap_wait > 0;
  std::vector<Sample> samples(static_cast<size_t>(jobs) * items *
                                  ((two_windows ? 2 : 1) * static_cast<size_t>(seconds) + 4) +
                              64 * kSlotBlock);     // + the blocks threads leave part-used
  alignas(64) std::atomic<size_t> sample_count{0};  // slots handed out, kSlotBlock at a time
  struct alignas(64) Tally {
    std::atomic<long> runs{0};
    std::atomic<long> dropped{0};
    size_t next = 0;
    size_t end = 0;
  };
  std::mutex tallies_mu;
  std::vector<std::unique_ptr<Tally>> tallies;  // guarded by tallies_mu
  auto tally = [&]() -> Tally& {
    thread_local Tally* mine = nullptr;
    if (mine == nullptr) {
      std::lock_guard<std::mutex> lock(tallies_mu);
      mine = tallies.emplace_back(std::make_unique<Tally>()).get();
    }
    return *mine;
  };
  long triggers = 0;              // guarded by mu
  std::map<int, long> outcomes;   // guarded by mu: the window's cron triggers, by outcome
  std::vector<double> pickup_ms;  // guarded by mu
  // Guarded by mu: per cron fire time (epoch seconds), the item runs that answered it
  // within 100 ms. Steady state is a fire time that every item of every job answered so.
  std::map<int64_t, long> on_time;
  bool settled = false;  // guarded by mu
  elasticjob::BootstrapOptions options;
  options.server_ip = ip;
  if (with_metrics) options.metrics = elasticjob::Metrics::Create();
  // The listeners are copied into every job: each copy captures one pointer to the one
  // listener below, so that the copies are small enough to hold it in place, and every
  // job's item runs call code and read state that stay in the cache (a copy of a closure of
  // many references would be one more object of each job's to fetch at each start).
  auto on_item_run = [&](const elasticjob::ItemRunReport& r) {
    if (!hot.ran.load(std::memory_order_relaxed) && !hot.ran.exchange(true)) {
      first_run_ns = (Clock::now() - t0).count();
    }
    if (!hot.measuring.load(std::memory_order_relaxed)) {
      if (!r.fire_time || r.started - *r.fire_time > std::chrono::milliseconds(100)) return;
      std::lock_guard<std::mutex> lock(mu);
      const int64_t second =
          std::chrono::duration_cast<std::chrono::seconds>(r.fire_time->time_since_epoch()).count();
      if (++on_time[second] >= static_cast<long>(jobs) * items && !settled) {
        settled = true;
        warm_cv.notify_all();
      }
      return;
    }
    Tally& mine = tally();
    mine.runs.fetch_add(1, std::memory_order_relaxed);
    if (!r.fire_time) return;  // not a cron fire's own run
    // Lateness as the job sees it: its code began this long after the fire time.
    if (mine.next == mine.end) {
      mine.next = sample_count.fetch_add(kSlotBlock, std::memory_order_relaxed);
      mine.end = mine.next + kSlotBlock;
    }
    const size_t slot = mine.next++;
    if (slot >= samples.size()) {
      mine.dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    samples[slot].late_ms =
        std::chrono::duration<double, std::milli>(r.started - *r.fire_time).count();
    samples[slot].fire.store(r.fire_time->time_since_epoch().count(), std::memory_order_release);
  };
  options.on_item_run = [f = &on_item_run](const elasticjob::ItemRunReport& r) { (*f)(r); };
  auto on_trigger = [&](const elasticjob::TriggerReport& t) {
    // Reported when the run ends: only the fire times of the window, like the item runs.
    if (!hot.measuring || t.source != elasticjob::TriggerReport::Source::kCron ||
        t.scheduled.time_since_epoch().count() < window_start.load())
      return;
    std::lock_guard<std::mutex> lock(mu);
    ++triggers;
    ++outcomes[static_cast<int>(t.outcome)];
    pickup_ms.push_back(std::chrono::duration<double, std::milli>(t.started - t.scheduled).count());
  };
  options.on_trigger = [f = &on_trigger](const elasticjob::TriggerReport& t) { (*f)(t); };
  auto* zk = dynamic_cast<elasticjob::reg::ComposedRegistry*>(reg->get());
  const auto requests_at_start = zk != nullptr ? zk->request_counts() : RequestCounts{};
  std::vector<std::unique_ptr<elasticjob::ScheduleJobBootstrap>> all;
  for (int i = 0; i < jobs; ++i) {
    auto config = elasticjob::JobConfiguration::Builder(prefix + std::to_string(i), items)
                      .Cron(cron)
                      .Failover(failover)
                      .Build();
    if (!config.ok()) {
      std::cerr << config.status() << "\n";
      return 2;
    }
    all.push_back(std::make_unique<elasticjob::ScheduleJobBootstrap>(
        **reg, std::make_shared<NoopJob>(), *config, options));
  }
  std::vector<elasticjob::ScheduleJobBootstrap*> boots;
  for (auto& b : all) boots.push_back(b.get());
  for (const auto& s : elasticjob::ScheduleJobBootstrap::ScheduleAll(boots, parallel)) {
    if (!s.ok()) {
      std::cerr << s << "\n";
      return 1;
    }
  }
  const auto scheduled = Clock::now();
  const double startup_ms = std::chrono::duration<double, std::milli>(scheduled - t0).count();
  nlohmann::json idle = Footprint();
  nlohmann::json startup_requests = nlohmann::json::object();
  if (zk != nullptr) {
    for (const auto& [kind, n] : zk->request_counts())
      startup_requests[kind] = n - requests_at_start.at(kind);
  }
  double reshard_ms = -1;
  if (reshard_watch) {
    // Woken by the registry (a Watch on the first job), bounded by 60 s.
    std::mutex wmu;
    std::condition_variable wcv;
    elasticjob::ThreadPool events(1);
    const std::string job = "/" + prefix + "0";
    auto owned = [&] {
      for (int i = 0; i < items; ++i) {
        auto owner = (*reg)->Get(job + "/sharding/" + std::to_string(i) + "/instance");
        if (owner.ok() && owner->rfind(ip + "@-@", 0) == 0) return true;
      }
      return false;
    };
    auto sub = (*reg)->Watch(job, events, [&](const elasticjob::TreeEvent&) {
      std::lock_guard<std::mutex> l(wmu);
      wcv.notify_all();
    });
    std::unique_lock<std::mutex> l(wmu);
    if (wcv.wait_for(l, std::chrono::seconds(60), owned)) {
      reshard_ms = std::chrono::duration<double, std::milli>(Clock::now() - scheduled).count();
    }
  }
  // Steady state only: the window opens once one fire time has been answered on time (within
  // 100 ms) by every item of every job, or after a minute. Until then start-up work (each
  // job's first sharding, fires that waited behind it) is still going. An instance that owns
  // no item never runs, so with --control (or --reshard-watch) the harness decides instead.
  double settle_ms = -1;
  if (!control && !reshard_watch) {
    std::unique_lock<std::mutex> lock(mu);
    if (warm_cv.wait_for(lock, std::chrono::seconds(60), [&] { return settled; })) {
      settle_ms = std::chrono::duration<double, std::milli>(Clock::now() - scheduled).count();
    }
  }
  // The server's own work after a start-up: each job's election leaves its latch container
  // (`leader/election/latch`) empty, and the server reaps empty containers at its own pace:
  // a scan every znode.container.checkIntervalMs (60 s by default) deleting at most
  // znode.container.maxPerMinute (10,000 a minute). For 10,000 jobs that is a minute or two
  // of deletes, each a write the server syncs, on the cores it shares here with the process
  // measured, where it would count as the process's lateness. So two windows: the first
  // `seconds` after steady state (lateness_after_start_ms: the server may be reaping), then,
  // once every latch container is gone (read from the registry's cache, which its watches
  // keep current; at most --reap-wait seconds), the window proper.
  std::vector<double> first_window_ms;  // lateness of the first window
  double reaped_ms = -1;                // from steady state to the last latch container gone
  std::atomic<elasticjob::Clock::WallTime::rep> first_start{0};
  if (two_windows) {
    const auto steady = Clock::now();
    first_start = elasticjob::Clock::System().WallNow().time_since_epoch().count();
    hot.measuring = true;
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    hot.measuring = false;
    std::vector<std::string> latches;
    for (int i = 0; i < jobs; ++i)
      latches.push_back("/" + prefix + std::to_string(i) + "/leader/election/latch");
    const auto deadline = steady + std::chrono::seconds(reap_wait);
    while (true) {
      std::erase_if(latches, [&](const std::string& key) {
        auto there = (*reg)->IsExisted(key);
        return there.ok() && !*there;
      });
      if (latches.empty()) {
        reaped_ms = std::chrono::duration<double, std::milli>(Clock::now() - steady).count();
        break;
      }
      if (Clock::now() >= deadline) break;
      // A look at the cache once a second: the server's scan runs once a minute.
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  // The window: a benchmark's measuring sleep, or the harness's start/stop lines.
  std::string line;
  if (control) {
    std::cerr << "ready" << std::endl;
    while (std::getline(std::cin, line) && line != "start") {
    }
  }
  const auto requests_before = zk != nullptr ? zk->request_counts() : RequestCounts{};
  const double cpu_before = CpuMs();
  long runs_before = 0;
  {
    std::lock_guard<std::mutex> tallies_lock(tallies_mu);
    for (const auto& t : tallies) runs_before += t->runs.load();
  }
  window_start = elasticjob::Clock::System().WallNow().time_since_epoch().count();
  hot.measuring = true;
  if (control) {
    while (std::getline(std::cin, line) && line != "stop") {
    }
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
  }
  hot.measuring = false;
  const double cpu_ms = CpuMs() - cpu_before;
  nlohmann::json requests = nlohmann::json::object();
  if (zk != nullptr) {
    for (const auto& [kind, n] : zk->request_counts())
      requests[kind] = n - requests_before.at(kind);
  }
  nlohmann::json load = Footprint();

  std::unique_lock<std::mutex> lock(mu);
  long runs = -runs_before;  // the window's
  long dropped = 0;
  {
    std::lock_guard<std::mutex> tallies_lock(tallies_mu);
    for (const auto& t : tallies) {
      runs += t->runs.load();
      dropped += t->dropped.load();
    }
  }
  std::vector<double> lateness_ms;
  std::map<int64_t, std::vector<double>> late_by_fire;  // the same, by fire time
  for (size_t i = 0; i < std::min(sample_count.load(), samples.size()); ++i) {
    const int64_t fire = samples[i].fire.load(std::memory_order_acquire);
    if (fire == 0) continue;  // a run still reporting as the window closed
    if (fire < window_start.load()) {
      if (fire >= first_start.load()) first_window_ms.push_back(samples[i].late_ms);
      continue;  // the first window's (or a run reporting as it closed)
    }
    lateness_ms.push_back(samples[i].late_ms);
    late_by_fire[fire].push_back(samples[i].late_ms);
  }
  nlohmann::json out = {
      {"registry", url.substr(0, url.find(':'))},
      {"jobs", jobs},
      {"items", items},
      {"cron", cron},
      {"failover", failover},
      {"seconds", seconds},
      {"startup_ms", startup_ms},
      {"first_run_ms", first_run_ns.load() / 1e6},
      {"settle_ms", settle_ms},
      {"triggers", triggers},
      {"trigger_outcomes",
       {{"ran", outcomes[0]},
        {"no_items", outcomes[1]},
        {"misfire", outcomes[2]},
        {"failed", outcomes[3]}}},
      {"item_runs", runs},
      // Lateness samples past the harness's room (none unless the cron fires more than once
      // a second per item).
      {"samples_dropped", dropped},
      // null when no run of the window answered its own fire time (all misfire re-runs).
      {"lateness_ms", Spread(lateness_ms)},
      {"lateness_after_start_ms", Spread(first_window_ms)},
      {"reaped_ms", reaped_ms},
      {"cpu_ms", cpu_ms},
      // The lateness of each fire time of the window, in order: where a tail comes from.
      {"per_fire_ms",
       [&] {
         auto fires = nlohmann::json::array();
         for (const auto& [fire, late] : late_by_fire) {
           fires.push_back({{"runs", late.size()},
                            {"p50", Percentile(late, 0.50)},
                            {"p99", Percentile(late, 0.99)},
                            {"max", *std::max_element(late.begin(), late.end())}});
         }
         return fires;
       }()},
      // The part of the lateness spent before the trigger was picked up (TriggerReport::started).
      {"pickup_ms", pickup_ms.empty() ? nlohmann::json(nullptr)
                                      : nlohmann::json{{"min", Percentile(pickup_ms, 0.0)},
                                                       {"p50", Percentile(pickup_ms, 0.50)},
                                                       {"p99", Percentile(pickup_ms, 0.99)}}},
      {"reshard_ms", reshard_ms},
      {"cpu_us_per_item", runs > 0 ? cpu_ms * 1000.0 / static_cast<double>(runs) : 0.0},
      {"idle", idle},
      {"load", load},
      {"requests", requests},
      {"startup_requests", startup_requests},
  };
  lock.unlock();  // the jobs' last reports take it
  std::cout << out.dump() << std::endl;
  // The figures are out. The session ends first, so that the jobs' shutdown does not queue
  // thousands of node removals behind the others' runs (the session's end removes its
  // ephemeral nodes at once).
  (*reg)->Close();
  for (auto& b : all) b->Shutdown();
  return 0;  // an instance may own no item (2 instances, 1 item): a figure, not a failure
}
