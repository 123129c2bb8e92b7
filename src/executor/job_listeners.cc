#include "executor/job_listeners.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <exception>

#include "infra/log.h"

namespace elasticjob::executor {

struct JobListeners::Pass {
  guarantee::Phase phase;
  ShardingContexts contexts;
  std::function<void()> next;
  size_t index = 0;  // the next listener to run
};

namespace {

int OrderOf(const JobListener& l) {
  return std::visit([](const auto& p) { return p->order(); }, l);
}

// One INFO line per hook, to the job's logger.
void LogHook(Logger* logger, std::string_view type, std::string_view phase,
             const ShardingContexts& c) {
  std::string items;
  for (const auto& [item, param] : c.sharding_item_parameters) {
    if (!items.empty()) items += ',';
    items += std::to_string(item);
  }
  infra::LogLine(logger, LogLevel::kInfo, {.job = c.job_name, .item = std::nullopt, .instance = {}},
                 fmt::format("job={} listener={} phase={} task={} items={}", c.job_name, type,
                             phase, c.task_id, items));
}

class LogListener final : public ElasticJobListener {
 public:
  explicit LogListener(std::shared_ptr<Logger> logger) : logger_(std::move(logger)) {}
  void BeforeJobExecuted(const ShardingContexts& c) override {
    LogHook(logger_.get(), "LOG", "before", c);
  }
  void AfterJobExecuted(const ShardingContexts& c) override {
    LogHook(logger_.get(), "LOG", "after", c);
  }

 private:
  const std::shared_ptr<Logger> logger_;  // null: the process default
};

class DistributeOnceLogListener final : public DistributeOnceElasticJobListener {
 public:
  DistributeOnceLogListener(std::chrono::milliseconds started, std::chrono::milliseconds completed,
                            std::shared_ptr<Logger> logger)
      : DistributeOnceElasticJobListener(started, completed), logger_(std::move(logger)) {}
  void DoBeforeJobExecutedAtLastStarted(const ShardingContexts& c) override {
    LogHook(logger_.get(), "DISTRIBUTE_ONCE_LOG", "before_last_started", c);
  }
  void DoAfterJobExecutedAtLastCompleted(const ShardingContexts& c) override {
    LogHook(logger_.get(), "DISTRIBUTE_ONCE_LOG", "after_last_completed", c);
  }

 private:
  const std::shared_ptr<Logger> logger_;  // null: the process default
};

constexpr std::chrono::milliseconds kDefaultGuaranteeTimeout{60000};

Result<std::chrono::milliseconds> TimeoutProp(const JobConfiguration& config,
                                              const std::string& key) {
  auto it = config.props.find(key);
  if (it == config.props.end()) return kDefaultGuaranteeTimeout;
  long long ms = 0;
  const std::string& v = it->second;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), ms);
  if (ec != std::errc() || end != v.data() + v.size() || ms <= 0) {
    return InvalidArgument(
        fmt::format("props.{}: must be a positive number of milliseconds, got '{}'", key, v));
  }
  return std::chrono::milliseconds(ms);
}

}  // namespace

std::map<std::string, JobListenerFactory> BuiltinJobListenerTypes(std::shared_ptr<Logger> logger) {
  std::map<std::string, JobListenerFactory> types;
  types["LOG"] = [logger](const JobConfiguration&) -> Result<JobListener> {
    return JobListener(std::make_shared<LogListener>(logger));
  };
  types["DISTRIBUTE_ONCE_LOG"] = [logger](const JobConfiguration& config) -> Result<JobListener> {
    auto started = TimeoutProp(config, "listener.distribute.once.started.timeout.milliseconds");
    if (!started.ok()) return started.status();
    auto completed = TimeoutProp(config, "listener.distribute.once.completed.timeout.milliseconds");
    if (!completed.ok()) return completed.status();
    return JobListener(std::make_shared<DistributeOnceLogListener>(*started, *completed, logger));
  };
  return types;
}

Result<std::vector<JobListener>> ResolveJobListeners(
    std::vector<JobListener> listeners, const JobConfiguration& config,
    const std::map<std::string, JobListenerFactory>& types) {
  for (size_t i = 0; i < config.job_listener_types.size(); ++i) {
    const std::string& type = config.job_listener_types[i];
    auto it = types.find(type);
    if (it == types.end()) {
      std::string known;
      for (const auto& [name, factory] : types) known += (known.empty() ? "" : ", ") + name;
      return InvalidArgument(fmt::format(
          "jobListenerTypes[{}]: can not find job listener type '{}' (known: {})", i, type, known));
    }
    auto made = it->second(config);
    if (!made.ok()) {
      return made.status().WithContext(fmt::format("jobListenerTypes[{}] '{}'", i, type));
    }
    listeners.push_back(*std::move(made));
  }
  // ElasticJob sorts them by order(); stable, so equal orders keep their given order.
  std::stable_sort(
      listeners.begin(), listeners.end(),
      [](const JobListener& a, const JobListener& b) { return OrderOf(a) < OrderOf(b); });
  return listeners;
}

JobListeners::JobListeners(std::vector<JobListener> listeners,
                           guarantee::GuaranteeService& guarantee, trigger::TimerScheduler& timer,
                           Executor& executor, Clock& clock, std::string job_name,
                           std::shared_ptr<Logger> logger)
    : listeners_(std::move(listeners)),
      guarantee_(guarantee),
      timer_(timer),
      executor_(executor),
      clock_(clock),
      job_name_(std::move(job_name)),
      logger_(std::move(logger)) {}

void JobListeners::Start(guarantee::Phase phase, const ShardingContexts& contexts,
                         std::function<void()> next) {
  if (listeners_.empty()) return next();
  auto pass = std::make_shared<Pass>();
  pass->phase = phase;
  pass->contexts = contexts;
  pass->next = std::move(next);
  Continue(pass);
}

void JobListeners::Continue(const std::shared_ptr<Pass>& pass) {
  const bool before = pass->phase == guarantee::Phase::kStarted;
  while (pass->index < listeners_.size()) {
    const JobListener& listener = listeners_[pass->index++];
    if (const auto* each = std::get_if<std::shared_ptr<ElasticJobListener>>(&listener)) {
      try {
        if (before) {
          (*each)->BeforeJobExecuted(pass->contexts);
        } else {
          (*each)->AfterJobExecuted(pass->contexts);
        }
      } catch (const std::exception& e) {
        Warn(fmt::format("listener threw {}: {}", before ? "before" : "after", e.what()));
      } catch (...) {
        Warn(fmt::format("listener threw {}: unknown exception", before ? "before" : "after"));
      }
      continue;
    }
    const auto& once = std::get<std::shared_ptr<DistributeOnceElasticJobListener>>(listener);
    if (!DistributeOnce(pass, *once)) return;  // resumed by OnPhaseCleared or the timeout
  }
  pass->next();
}

bool JobListeners::DistributeOnce(const std::shared_ptr<Pass>& pass,
                                  DistributeOnceElasticJobListener& listener) {
  const ShardingContexts& c = pass->contexts;
  const guarantee::Phase phase = pass->phase;
  const bool before = phase == guarantee::Phase::kStarted;
  if (c.sharding_item_parameters.empty()) return true;  // as ElasticJob: nothing of ours
  std::vector<int> items;
  for (const auto& [item, param] : c.sharding_item_parameters) items.push_back(item);
  // The wait is measured from the registration (what other instances can see).
  const auto timeout = before ? listener.started_timeout() : listener.completed_timeout();
  const Clock::WallTime deadline = clock_.WallNow() + timeout;
  if (Status s = guarantee_.Register(phase, items); !s.ok()) {
    Warn(fmt::format("distribute-once listener: registering {}: {}", guarantee::RootOf(phase),
                     s.ToString()));
    return true;
  }
  // Wait first, check second: a clear that happens between the two wakes this waiter.
  uint64_t token;
  {
    MutexLock lock(&mu_);
    if (cancelled_) return true;
    token = next_token_++;
    waiters_[token] = Waiter{pass, items.front(), 0};
  }
  auto all = guarantee_.IsAll(phase, c.sharding_total_count);
  if (!all.ok()) {
    Warn(fmt::format("distribute-once listener: reading {}: {}", guarantee::RootOf(phase),
                     all.status().ToString()));
    return Take(token, nullptr);  // go on, unless a clear already resumed it
  }
  if (*all) {
    if (!Take(token, nullptr)) return false;
    auto ran = guarantee_.ExecuteInLeaderForLast(phase, c.sharding_total_count, [&] {
      try {
        if (before) {
          listener.DoBeforeJobExecutedAtLastStarted(c);
        } else {
          listener.DoAfterJobExecutedAtLastCompleted(c);
        }
      } catch (const std::exception& e) {
        Warn(fmt::format("distribute-once listener threw: {}", e.what()));
      } catch (...) {
        Warn("distribute-once listener threw: unknown exception");
      }
    });
    if (!ran.ok() && ran.status().code() != StatusCode::kCancelled) {
      Warn(fmt::format("distribute-once listener: {}", ran.status().ToString()));
    }
    return true;
  }
  // Another instance may have completed the set and cleared it since we registered.
  auto mine = guarantee_.IsRegistered(phase, items.front());
  if (!mine.ok() || !*mine) return Take(token, nullptr);
  auto id = timer_.ScheduleAt(deadline, [self = shared_from_this(), token, phase, timeout] {
    Waiter w;
    if (!self->Take(token, &w)) return;
    (void)self->guarantee_.Clear(phase);
    // ElasticJob: "Job timeout. timeout mills is ...", to the job's error handler.
    self->Warn(fmt::format(
        "distribute-once listener: timed out after {} ms waiting for every item to have "
        "{}; cleared {} and going on",
        timeout.count(), phase == guarantee::Phase::kStarted ? "started" : "completed",
        guarantee::RootOf(phase)));
    self->Resume(std::move(w.pass));
  });
  MutexLock lock(&mu_);
  auto it = waiters_.find(token);
  if (it != waiters_.end()) {
    it->second.timer = id;
  } else {
    timer_.Cancel(id);  // resumed meanwhile
  }
  return false;
}

bool JobListeners::Take(uint64_t token, Waiter* waiter) {
  MutexLock lock(&mu_);
  auto it = waiters_.find(token);
  if (it == waiters_.end()) return false;
  if (waiter != nullptr) *waiter = std::move(it->second);
  waiters_.erase(it);
  return true;
}

void JobListeners::Resume(std::shared_ptr<Pass> pass) {
  executor_.Post([self = shared_from_this(), pass = std::move(pass)] { self->Continue(pass); });
}

void JobListeners::OnPhaseCleared(guarantee::Phase phase) {
  std::vector<std::pair<uint64_t, int>> candidates;
  {
    MutexLock lock(&mu_);
    for (const auto& [token, w] : waiters_) {
      if (w.pass->phase == phase) candidates.emplace_back(token, w.probe);
    }
  }
  if (candidates.empty()) return;
  // Off the event strand: the check reads the server.
  executor_.Post([self = shared_from_this(), phase, candidates = std::move(candidates)] {
    for (const auto& [token, probe] : candidates) {
      // A stale event (an earlier execution's clear) must not wake a waiter whose own node
      // is still there.
      auto mine = self->guarantee_.IsRegistered(phase, probe);
      if (mine.ok() && *mine) continue;
      Waiter w;
      if (!self->Take(token, &w)) continue;
      self->timer_.Cancel(w.timer);
      self->Continue(w.pass);
    }
  });
}

void JobListeners::Cancel() {
  std::map<uint64_t, Waiter> waiting;
  {
    MutexLock lock(&mu_);
    cancelled_ = true;
    waiting.swap(waiters_);
  }
  for (auto& [token, w] : waiting) {
    timer_.Cancel(w.timer);
    Resume(std::move(w.pass));
  }
}

void JobListeners::Warn(const std::string& what) {
  infra::LogLine(logger_.get(), "WARN", {.job = job_name_, .item = std::nullopt, .instance = {}},
                 fmt::format("job '{}': {}", job_name_, what));
}

}  // namespace elasticjob::executor
