#include "metrics/metrics_impl.h"

#include <fmt/format.h>

#include "metrics/exposition.h"
#include "reg/coordinator_registry.h"

#ifndef ELASTICJOB_PROJECT_VERSION
#define ELASTICJOB_PROJECT_VERSION "0.0.0"
#endif

namespace elasticjob {

std::shared_ptr<Metrics> Metrics::Create() { return std::make_shared<metrics::MetricsImpl>(); }

namespace metrics {

std::shared_ptr<JobMetrics> JobMetricsOf(const std::shared_ptr<Metrics>& metrics,
                                         const std::string& name) {
  auto* impl = dynamic_cast<MetricsImpl*>(metrics.get());
  return impl == nullptr ? nullptr : impl->Job(name);
}

std::shared_ptr<JobMetrics> MetricsImpl::Job(const std::string& name) {
  MutexLock lock(&mu_);
  auto& job = jobs_[name];
  if (job == nullptr) job = std::make_shared<JobMetrics>(name);
  return job;
}

void MetricsImpl::AddRegistry(RegistryCenter& registry, std::string name) {
  const std::shared_ptr<reg::RegistryStats> stats = reg::CoordinatorRef(registry)->stats();
  if (stats == nullptr) return;  // an application's own registry: nothing counted
  MutexLock lock(&mu_);
  for (const auto& r : registries_) {
    if (r.stats == stats) return;
  }
  registries_.push_back({std::move(name), stats});
}

void MetricsImpl::AddTracer(std::shared_ptr<Tracer> tracer) {
  if (tracer == nullptr) return;
  MutexLock lock(&mu_);
  tracers_.push_back(std::move(tracer));
}

bool MetricsImpl::Ready(std::string* why) {
  MutexLock lock(&mu_);
  auto no = [why](std::string reason) {
    if (why != nullptr) *why = std::move(reason);
    return false;
  };
  if (registries_.empty()) return no("no registry center");
  for (const auto& r : registries_) {
    const int state = r.stats->state.load(std::memory_order_relaxed);
    if (state != static_cast<int>(reg::SessionState::kConnected)) {
      return no(fmt::format("registry{}: {}", r.name.empty() ? "" : " " + r.name,
                            reg::kSessionStateNames[static_cast<size_t>(state)]));
    }
  }
  for (const auto& [name, job] : jobs_) {
    if (job->starting.load() > 0) return no(fmt::format("job '{}': not scheduled yet", name));
  }
  return true;
}

std::string MetricsImpl::Render() {
  std::vector<std::shared_ptr<JobMetrics>> jobs;
  std::vector<RegistryEntry> registries;
  std::vector<std::shared_ptr<Tracer>> tracers;
  {
    MutexLock lock(&mu_);
    for (const auto& [name, job] : jobs_) jobs.push_back(job);
    registries = registries_;
    tracers = tracers_;
  }
  ExpositionWriter w;
  w.Family("elasticjob_build_info", "gauge", "The elasticjob version of this process (always 1).");
  w.Sample("elasticjob_build_info", {{"version", ELASTICJOB_PROJECT_VERSION}}, 1);

  // Per job.
  using Get = const infra::Counter& (*)(const JobMetrics&);
  struct Part {
    std::string_view value;  // of the second label
    Get get;
  };
  // A counter per job, or per job and `label` (one series per part).
  auto counter_by = [&](std::string_view name, std::string_view help, std::string_view label,
                        std::initializer_list<Part> parts) {
    w.Family(name, "counter", help);
    for (const auto& j : jobs) {
      for (const Part& p : parts) {
        Labels labels = {{"job_name", j->name}};
        if (!label.empty()) labels.emplace_back(label, p.value);
        w.Sample(name, labels, static_cast<double>(p.get(*j).value()));
      }
    }
  };
  auto counter = [&](std::string_view name, std::string_view help, Get get) {
    counter_by(name, help, "", {{"", get}});
  };
  w.Family("elasticjob_trigger_lateness_seconds", "histogram",
           "From a cron fire time to the start of an item run it fired.");
  for (const auto& j : jobs) {
    w.Histogram("elasticjob_trigger_lateness_seconds", {{"job_name", j->name}},
                j->trigger_lateness.Snapshot());
  }
  counter_by(
      "elasticjob_item_runs_total", "Item runs ended on this instance, by outcome.", "outcome",
      {{"success", [](const JobMetrics& j) -> const infra::Counter& { return j.runs_succeeded; }},
       {"failure", [](const JobMetrics& j) -> const infra::Counter& { return j.runs_failed; }}});
  w.Family("elasticjob_item_duration_seconds", "histogram", "How long item runs took.");
  for (const auto& j : jobs) {
    w.Histogram("elasticjob_item_duration_seconds", {{"job_name", j->name}},
                j->item_duration.Snapshot());
  }
  w.Family("elasticjob_running_items", "gauge", "Items running on this instance now.");
  for (const auto& j : jobs) {
    w.Sample("elasticjob_running_items", {{"job_name", j->name}},
             static_cast<double>(j->running_items.value()));
  }
  counter("elasticjob_misfires_total",
          "Triggers that found the job's items still running (marked misfire).",
          [](const JobMetrics& j) -> const infra::Counter& { return j.misfires; });
  counter("elasticjob_failovers_taken_total",
          "Items of a crashed instance that this instance ran (failover).",
          [](const JobMetrics& j) -> const infra::Counter& { return j.failovers_taken; });
  counter("elasticjob_failovers_given_total",
          "Items of a crashed instance that this instance put up for failover.",
          [](const JobMetrics& j) -> const infra::Counter& { return j.failovers_given; });
  counter("elasticjob_reshardings_total",
          "Shardings of the job's items that this instance made as the job's leader.",
          [](const JobMetrics& j) -> const infra::Counter& { return j.reshardings; });
  counter_by(
      "elasticjob_skipped_runs_total",
      "Fire times skipped: paused (registry connection suspended or session lost) or "
      "overdue (picked up too late: the process was paused or starved).",
      "reason",
      {{"paused", [](const JobMetrics& j) -> const infra::Counter& { return j.skipped_paused; }},
       {"overdue",
        [](const JobMetrics& j) -> const infra::Counter& { return j.skipped_overdue; }}});
  counter("elasticjob_item_timeouts_total",
          "Item attempts ended by the job's execution timeout (timeoutMs).",
          [](const JobMetrics& j) -> const infra::Counter& { return j.timeouts; });
  counter_by(
      "elasticjob_task_subtasks_total",
      "Task-model sub-tasks recorded by this instance as the run's coordinator, by state.", "state",
      {{"succeeded",
        [](const JobMetrics& j) -> const infra::Counter& { return j.subtasks_succeeded; }},
       {"failed", [](const JobMetrics& j) -> const infra::Counter& { return j.subtasks_failed; }},
       {"retried",
        [](const JobMetrics& j) -> const infra::Counter& { return j.subtasks_retried; }}});
  w.Family("elasticjob_job_scheduled", "gauge",
           "Bootstraps of the job scheduled on this instance now (0: stopped or not yet).");
  for (const auto& j : jobs) {
    w.Sample("elasticjob_job_scheduled", {{"job_name", j->name}},
             static_cast<double>(j->scheduled.load()));
  }

  // Per registry.
  w.Family("elasticjob_registry_session_state", "gauge",
           "The registry session's state: 1 for the current one.");
  for (const auto& r : registries) {
    const int now = r.stats->state.load(std::memory_order_relaxed);
    for (size_t s = 0; s < static_cast<size_t>(reg::SessionState::kCount); ++s) {
      w.Sample("elasticjob_registry_session_state",
               {{"registry", r.name}, {"state", reg::kSessionStateNames[s]}},
               static_cast<int>(s) == now ? 1 : 0);
    }
  }
  w.Family("elasticjob_registry_reconnects_total", "counter",
           "Connections to the registry restored after a suspension or a new session.");
  for (const auto& r : registries) {
    w.Sample("elasticjob_registry_reconnects_total", {{"registry", r.name}},
             static_cast<double>(r.stats->reconnects.value()));
  }
  w.Family("elasticjob_registry_session_expiries_total", "counter",
           "Registry sessions lost (expired); a new one follows.");
  for (const auto& r : registries) {
    w.Sample("elasticjob_registry_session_expiries_total", {{"registry", r.name}},
             static_cast<double>(r.stats->expiries.value()));
  }
  w.Family("elasticjob_registry_requests_total", "counter",
           "Requests sent to the registry (ZooKeeper), by operation.");
  for (const auto& r : registries) {
    for (size_t op = 0; op < static_cast<size_t>(reg::RegistryOp::kCount); ++op) {
      w.Sample("elasticjob_registry_requests_total",
               {{"registry", r.name}, {"operation", reg::kRegistryOpNames[op]}},
               static_cast<double>(r.stats->requests[op].value()));
    }
  }
  w.Family("elasticjob_registry_request_duration_seconds", "histogram",
           "Round trips of synchronous registry requests, by operation.");
  for (const auto& r : registries) {
    for (size_t op = 0; op < static_cast<size_t>(reg::RegistryOp::kCount); ++op) {
      w.Histogram("elasticjob_registry_request_duration_seconds",
                  {{"registry", r.name}, {"operation", reg::kRegistryOpNames[op]}},
                  r.stats->request_duration[op].Snapshot());
    }
  }
  w.Family("elasticjob_registry_cache_nodes", "gauge",
           "Registry nodes held by this process's watch-fed caches.");
  for (const auto& r : registries) {
    w.Sample("elasticjob_registry_cache_nodes", {{"registry", r.name}},
             static_cast<double>(r.stats->CacheNodes()));
  }

  // Tracing.
  uint64_t pending = 0;
  uint64_t dropped = 0;
  for (const auto& t : tracers) {
    TracerStats s = t->stats();
    pending += s.pending;
    dropped += s.dropped;
  }
  w.Family("elasticjob_tracing_queue_depth", "gauge",
           "Event tracing: events waiting to be written.");
  w.Sample("elasticjob_tracing_queue_depth", {}, static_cast<double>(pending));
  w.Family("elasticjob_tracing_dropped_events_total", "counter",
           "Event tracing: events dropped (the queue overflowed, or left at shutdown).");
  w.Sample("elasticjob_tracing_dropped_events_total", {}, static_cast<double>(dropped));
  return w.Take();
}

}  // namespace metrics
}  // namespace elasticjob
