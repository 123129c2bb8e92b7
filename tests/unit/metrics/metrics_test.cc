#include "elasticjob/metrics/metrics.h"

#include <gtest/gtest.h>

#include <memory>

#include "http/http_client.h"
#include "metrics/metrics_impl.h"

namespace elasticjob {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(MetricsTest, RendersWhatAJobRecordedUnderItsNameOnly) {
  auto metrics = Metrics::Create();
  auto job = metrics::JobMetricsOf(metrics, "order\"Sync");
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(metrics::JobMetricsOf(metrics, "order\"Sync"), job);  // one per name
  job->runs_succeeded.Inc(3);
  job->runs_failed.Inc();
  job->misfires.Inc(2);
  job->skipped_paused.Inc();
  job->running_items.Add(1);
  const std::string text = metrics->Render();
  EXPECT_TRUE(Contains(
      text, "elasticjob_item_runs_total{job_name=\"order\\\"Sync\",outcome=\"success\"} 3\n"));
  EXPECT_TRUE(Contains(
      text, "elasticjob_item_runs_total{job_name=\"order\\\"Sync\",outcome=\"failure\"} 1\n"));
  EXPECT_TRUE(Contains(text, "elasticjob_misfires_total{job_name=\"order\\\"Sync\"} 2\n"));
  EXPECT_TRUE(Contains(
      text, "elasticjob_skipped_runs_total{job_name=\"order\\\"Sync\",reason=\"paused\"} 1\n"));
  EXPECT_TRUE(Contains(text, "elasticjob_running_items{job_name=\"order\\\"Sync\"} 1\n"));
  EXPECT_TRUE(Contains(text, "# TYPE elasticjob_trigger_lateness_seconds histogram\n"));
  EXPECT_FALSE(Contains(text, "item=\""));  // no item label, ever
  EXPECT_FALSE(Contains(text, "instance=\""));
}

TEST(MetricsTest, RegistryCountsAndReadiness) {
  auto metrics = Metrics::Create();
  std::string why;
  EXPECT_FALSE(metrics->Ready(&why));
  EXPECT_EQ(why, "no registry center");
  auto reg = NewRegistryCenter("memory://metricstest");
  ASSERT_TRUE(reg.ok());
  metrics->AddRegistry(**reg, "metricstest");
  EXPECT_FALSE(metrics->Ready(&why));
  EXPECT_EQ(why, "registry metricstest: connecting");
  ASSERT_TRUE((*reg)->Init().ok());
  EXPECT_TRUE(metrics->Ready(&why));
  EXPECT_TRUE(Contains(metrics->Render(),
                       "elasticjob_registry_session_state{registry=\"metricstest\","
                       "state=\"connected\"} 1\n"));
  // A job made but not yet scheduled holds readiness back.
  auto job = metrics::JobMetricsOf(metrics, "j");
  job->starting.fetch_add(1);
  EXPECT_FALSE(metrics->Ready(&why));
  EXPECT_EQ(why, "job 'j': not scheduled yet");
  job->starting.fetch_sub(1);
  EXPECT_TRUE(metrics->Ready(nullptr));
  (*reg)->Close();
  EXPECT_FALSE(metrics->Ready(&why));
  EXPECT_EQ(why, "registry metricstest: closed");
  reg->reset();  // the stats outlive the registry
  EXPECT_TRUE(Contains(metrics->Render(), "state=\"closed\"} 1\n"));
}

TEST(MetricsTest, ServesMetricsHealthAndReadiness) {
  auto metrics = Metrics::Create();
  auto server = ServeMetrics(metrics, {.listen = "127.0.0.1:0"});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string base = (*server)->url();
  auto get = [&](const std::string& path) {
    infra::HttpRequest request;
    request.url = base + path;
    auto r = infra::SendHttp(request);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : infra::HttpResponse{};
  };
  auto m = get("/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_TRUE(Contains(m.body, "# TYPE elasticjob_build_info gauge\n"));
  EXPECT_EQ(get("/healthz").status, 200);
  auto ready = get("/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "not ready: no registry center\n");
  auto reg = NewRegistryCenter("memory://served");
  ASSERT_TRUE(reg.ok() && (*reg)->Init().ok());
  metrics->AddRegistry(**reg);
  EXPECT_EQ(get("/readyz").status, 200);
  EXPECT_EQ(get("/nothing").status, 404);
}

TEST(MetricsTest, BadAddressNamesTheOptionAndValue) {
  auto bad = ServeMetrics(Metrics::Create(), {.listen = "nonsense", .option_name = "--metrics"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "--metrics 'nonsense': expected host:port");
  auto port = ServeMetrics(Metrics::Create(), {.listen = "127.0.0.1:99999"});
  ASSERT_FALSE(port.ok());
  EXPECT_EQ(port.status().message(), "listen '127.0.0.1:99999': expected a port from 0 to 65535");
  // A port in use: UNAVAILABLE, saying so.
  auto first = ServeMetrics(Metrics::Create(), {.listen = "127.0.0.1:0"});
  ASSERT_TRUE(first.ok());
  const std::string taken = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = ServeMetrics(Metrics::Create(), {.listen = taken});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(second.status().message(), "address already in use"))
      << second.status().message();
}

}  // namespace
}  // namespace elasticjob
