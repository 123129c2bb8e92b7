// ServeMetrics: /metrics, /healthz and /readyz over cpp-httplib (Debian's build), on a
// thread of its own; a scrape renders under the Metrics' lock only while it copies the
// list of jobs and registries.
#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "elasticjob/metrics/metrics.h"
#include "infra/listen_address.h"
#include "infra/thread_name.h"

namespace elasticjob {
namespace {

class MetricsServerImpl final : public MetricsServer {
 public:
  explicit MetricsServerImpl(std::shared_ptr<Metrics> metrics) : metrics_(std::move(metrics)) {}
  ~MetricsServerImpl() override {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  Status Start(const MetricsServerOptions& options) {
    auto address = infra::ParseListen(options.listen, options.option_name);
    if (!address.ok()) return address.status();
    server_.new_task_queue = [] { return new httplib::ThreadPool(2); };
    server_.set_socket_options([](socket_t sock) {
      int yes = 1;  // no SO_REUSEPORT: a second server on a port in use must fail
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics_->Render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    server_.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", "text/plain; charset=utf-8");
    });
    server_.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
      std::string why;
      if (metrics_->Ready(&why)) {
        res.set_content("ready\n", "text/plain; charset=utf-8");
      } else {
        res.status = 503;
        res.set_content("not ready: " + why + "\n", "text/plain; charset=utf-8");
      }
    });
    errno = 0;
    if (address->port == 0) {
      port_ = server_.bind_to_any_port(address->host);
      if (port_ < 0) port_ = 0;
    } else {
      port_ = server_.bind_to_port(address->host, address->port) ? address->port : 0;
    }
    if (port_ == 0) {
      const int error = errno;
      return Status(
          StatusCode::kUnavailable,
          fmt::format("{} {}: cannot listen there ({})", options.option_name, options.listen,
                      error == EADDRINUSE ? "address already in use"
                      : error != 0        ? std::strerror(error)
                                          : "not an address of this host"));
    }
    host_ = address->host;
    thread_ = std::thread([this] {
      infra::NameThisThread("ej-metrics");
      server_.listen_after_bind();
      listen_returned_.store(true);
    });
    // stop() does nothing until listen has started: wait for that (microseconds).
    while (!server_.is_running() && !listen_returned_.load()) std::this_thread::yield();
    return Status::Ok();
  }

  int port() const override { return port_; }
  std::string url() const override {
    return fmt::format("http://{}:{}",
                       host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_, port_);
  }

 private:
  const std::shared_ptr<Metrics> metrics_;
  httplib::Server server_;
  std::string host_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> listen_returned_{false};  // atomic: set by thread_, read by Start
};

}  // namespace

Result<std::unique_ptr<MetricsServer>> ServeMetrics(std::shared_ptr<Metrics> metrics,
                                                    MetricsServerOptions options) {
  if (metrics == nullptr) return InvalidArgument("ServeMetrics: metrics is null");
  auto server = std::make_unique<MetricsServerImpl>(std::move(metrics));
  if (Status s = server->Start(options); !s.ok()) return s;
  return std::unique_ptr<MetricsServer>(std::move(server));
}

}  // namespace elasticjob
