// Metrics: what a process's jobs and registry centers count, in Prometheus's text format,
// and a small HTTP server for it: `/metrics`, `/healthz` (the process is alive) and
// `/readyz` (every registry connected, every job scheduled). docs/metrics.md lists each
// metric with its type and labels. Labels are bounded: a job's name and a fixed outcome,
// reason, operation or state; never an item or instance id.
//
// A process makes one Metrics, hands it to its jobs (BootstrapOptions::metrics) and its
// registry (AddRegistry), and serves it with one call:
//
//   auto metrics = elasticjob::Metrics::Create();
//   metrics->AddRegistry(**reg);
//   elasticjob::BootstrapOptions options;
//   options.metrics = metrics;
//   elasticjob::ScheduleJobBootstrap job(**reg, std::make_shared<OrderSyncJob>(), *config,
//                                        options);
//   auto server = elasticjob::ServeMetrics(metrics, {.listen = "127.0.0.1:9404"});
//   if (!server.ok()) { std::cerr << server.status() << "\n"; }
//
// Recording costs a few relaxed atomic additions per item run, no lock or allocation.
//
// Thread safety: every method may be called from any thread.
#ifndef ELASTICJOB_METRICS_METRICS_H_
#define ELASTICJOB_METRICS_METRICS_H_

#include <memory>
#include <string>

#include "elasticjob/reg/registry_center.h"
#include "elasticjob/status.h"
#include "elasticjob/tracing/tracer.h"

namespace elasticjob {

class Metrics {
 public:
  static std::shared_ptr<Metrics> Create();
  virtual ~Metrics() = default;

  // Shows `registry`'s session state, reconnects, expiries, requests and cache size,
  // labelled registry=`name` (default: none), and counts it in Ready(). A registry of the
  // library's (NewRegistryCenter) only; another is ignored. The registry may be destroyed
  // first: its series then stay with their last values and state "closed".
  virtual void AddRegistry(RegistryCenter& registry, std::string name = "") = 0;
  // Shows `tracer`'s queue depth and dropped events.
  virtual void AddTracer(std::shared_ptr<Tracer> tracer) = 0;
  // Everything, in the text exposition format 0.0.4.
  virtual std::string Render() = 0;
  // True when every added registry is connected and every job bootstrapped with these
  // metrics is scheduled (none being scheduled or failed); false with the reason in `*why`
  // (may be null) otherwise.
  virtual bool Ready(std::string* why) = 0;
};

struct MetricsServerOptions {
  // host:port (port 0: any free one). Default: loopback only.
  std::string listen = "127.0.0.1:9404";
  // What the errors call the address ("--metrics" for the command line).
  std::string option_name = "listen";
};

// The HTTP server of ServeMetrics; destroying it stops it.
class MetricsServer {
 public:
  virtual ~MetricsServer() = default;
  virtual int port() const = 0;
  // "http://host:port".
  virtual std::string url() const = 0;
};

// Serves `metrics` at options.listen: GET /metrics (text/plain; version=0.0.4), /healthz
// ("ok", 200) and /readyz (200 "ready", or 503 with the reason). INVALID_ARGUMENT naming
// the option and value for a malformed address, UNAVAILABLE when it cannot be bound.
Result<std::unique_ptr<MetricsServer>> ServeMetrics(std::shared_ptr<Metrics> metrics,
                                                    MetricsServerOptions options = {});

}  // namespace elasticjob

#endif  // ELASTICJOB_METRICS_METRICS_H_
