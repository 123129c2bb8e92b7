// MetricsImpl: the Metrics of elasticjob/metrics/metrics.h. Holds each job's JobMetrics by
// name (made on a bootstrap's construction, kept for the process's life: the series of a
// job stopped and started again go on), the registries' RegistryStats and the tracers;
// renders them at a scrape.
//
// Thread safety: every method may be called from any thread; the lock is taken when a job
// or registry is added and at a scrape, never when a metric is recorded.
#ifndef ELASTICJOB_METRICS_METRICS_IMPL_H_
#define ELASTICJOB_METRICS_METRICS_IMPL_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "elasticjob/metrics/metrics.h"
#include "elasticjob/mutex.h"
#include "infra/job_metrics.h"
#include "reg/registry_stats.h"

namespace elasticjob::metrics {

class MetricsImpl final : public Metrics {
 public:
  void AddRegistry(RegistryCenter& registry, std::string name) override;
  void AddTracer(std::shared_ptr<Tracer> tracer) override;
  std::string Render() override;
  bool Ready(std::string* why) override;

  // Job `name`'s metrics, made on first use.
  std::shared_ptr<JobMetrics> Job(const std::string& name);

 private:
  struct RegistryEntry {
    std::string name;
    std::shared_ptr<reg::RegistryStats> stats;
  };
  Mutex mu_;
  std::map<std::string, std::shared_ptr<JobMetrics>> jobs_ ELASTICJOB_GUARDED_BY(mu_);
  std::vector<RegistryEntry> registries_ ELASTICJOB_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<Tracer>> tracers_ ELASTICJOB_GUARDED_BY(mu_);
};

// `metrics`' JobMetrics for job `name`; null when `metrics` is null or not Metrics::Create's.
std::shared_ptr<JobMetrics> JobMetricsOf(const std::shared_ptr<Metrics>& metrics,
                                         const std::string& name);

}  // namespace elasticjob::metrics

#endif  // ELASTICJOB_METRICS_METRICS_IMPL_H_
