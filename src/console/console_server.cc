// The console's HTTP server: cpp-httplib (Debian's build, with OpenSSL for --tls-cert), its
// thread pool sized for the bounded event streams plus the other requests; routes in
// ConsoleImpl::Routes (the contract: docs/console-openapi.yaml).
#include "elasticjob/console/console_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <sodium.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "bootstrap/runnable_check.h"
#include "console/api_json.h"
#include "console/auth.h"
#include "console/embedded_assets.h"
#include "console/event_hub.h"
#include "console/execution_traces.h"
#include "console/registry_view.h"
#include "elasticjob/lifecycle/job_configuration_api.h"
#include "elasticjob/lifecycle/job_operate_api.h"
#include "elasticjob/mutex.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/schedule/cron_expression.h"
#include "elasticjob/thread_annotations.h"
#include "elasticjob/tracing/trace_reader.h"
#include "elasticjob/workflow/workflow_api.h"
#include "infra/listen_address.h"
#include "lifecycle/lifecycle_reads.h"
#include "tracing/events/tracing_url.h"
#include "workflow/instance_json.h"

namespace elasticjob {
namespace console {
namespace {

using httplib::Request;
using httplib::Response;
using nlohmann::json;

constexpr size_t kMaxBody = 1 << 20;
constexpr const char* kCookie = "ejsession";

// The URL without its query (digest=user:pass and other parameters) or user info.
std::string RedactRegistryUrl(const std::string& url) {
  std::string out = url.substr(0, url.find('?'));
  size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    size_t host = scheme + 3;
    size_t slash = out.find('/', host);
    size_t at = out.find('@', host);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
      out.erase(host, at + 1 - host);
    }
  }
  return out;
}

std::string NamespaceOf(const std::string& redacted) {
  size_t scheme = redacted.find("://");
  if (scheme == std::string::npos) return "";
  if (redacted.starts_with("memory://")) return redacted.substr(9);
  size_t slash = redacted.find('/', scheme + 3);
  return slash == std::string::npos ? "" : redacted.substr(slash + 1);
}

bool IsLoopback(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return false;
}

// Set on a response by the pre-routing handler when its request accepts gzip; SetBody reads it
// and the post-routing handler removes it, so it never reaches the client.
constexpr const char* kAcceptsGzip = "X-Elasticjob-Accepts-Gzip";

bool AcceptsGzip(const Request& req) {
  const std::string& accepted = req.get_header_value("Accept-Encoding");
  size_t at = 0;
  while (at < accepted.size()) {
    size_t end = accepted.find(',', at);
    if (end == std::string::npos) end = accepted.size();
    std::string token = accepted.substr(at, end - at);
    at = end + 1;
    token.erase(0, token.find_first_not_of(" \t"));
    const size_t semicolon = token.find(';');
    std::string name = token.substr(0, semicolon);
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name != "gzip") continue;
    // "gzip;q=0" (any spelling of a zero weight) refuses it.
    if (semicolon != std::string::npos) {
      std::string weight = token.substr(semicolon + 1);
      weight.erase(std::remove_if(weight.begin(), weight.end(), ::isspace), weight.end());
      if (weight.starts_with("q=") && std::strtod(weight.c_str() + 2, nullptr) <= 0.0) return false;
    }
    return true;
  }
  return false;
}

std::optional<std::string> Gzip(std::string_view in) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return std::nullopt;
  std::string out(deflateBound(&zs, in.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

// Every answer's body goes out through here, never Response::set_content: Debian's
// cpp-httplib compresses a body with brotli at quality 11 whenever the client accepts `br`
// (every browser does), 427 ms for the 1,000-job list against 5 ms uncompressed, and 100 ms
// and more for each small asset under load. A body given as a sized content provider is sent
// as it is, so this gzips it itself (zlib level 6, a few ms for that list) when it is 1 KiB or
// more and the request accepts gzip.
void SetBody(Response& res, std::string body, const std::string& content_type) {
  const bool gzip = res.has_header(kAcceptsGzip);
  res.headers.erase(kAcceptsGzip);
  res.headers.erase("Content-Type");
  res.body.clear();
  if (gzip && body.size() >= 1024) {
    if (auto compressed = Gzip(body)) {
      body = std::move(*compressed);
      res.set_header("Content-Encoding", "gzip");
    }
  }
  res.set_header("Vary", "Accept-Encoding");
  if (body.empty()) {
    res.set_content("", content_type);
    return;
  }
  auto shared = std::make_shared<const std::string>(std::move(body));
  res.set_content_provider(shared->size(), content_type,
                           [shared](size_t offset, size_t length, httplib::DataSink& sink) {
                             return sink.write(shared->data() + offset, length);
                           });
}

void Reply(Response& res, int status, const json& body) {
  res.status = status;
  SetBody(res, body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void Error(Response& res, int status, const std::string& message, const std::string& field = "") {
  json body = {{"error", message}};
  if (!field.empty()) body["field"] = field;
  Reply(res, status, body);
}

// A workflow for the console's DAG page: its nodes and edges, the latest instance (with each
// node's state and result) and the history, newest first.
json WorkflowToJson(const WorkflowDefinition& d, const std::vector<WorkflowInstanceStatus>& h) {
  json nodes = json::array();
  for (const WorkflowNode& n : d.nodes) {
    nodes.push_back({{"id", n.id},
                     {"kind", n.kind == WorkflowNodeKind::kJob        ? "job"
                              : n.kind == WorkflowNodeKind::kDecision ? "decision"
                                                                      : "workflow"},
                     {"job", n.job},
                     {"expression", n.expression},
                     {"workflow", n.workflow},
                     {"allowFailure", n.allow_failure},
                     {"disabled", n.disabled}});
  }
  json edges = json::array();
  for (const WorkflowEdge& e : d.edges) {
    edges.push_back({{"from", e.from}, {"to", e.to}, {"when", e.when ? json(*e.when) : json()}});
  }
  json history = json::array();
  for (const auto& s : h) history.push_back(workflow::InstanceStatusJson(s));
  return {{"name", d.name},
          {"cron", d.cron ? json(*d.cron) : json()},
          {"nodes", nodes},
          {"edges", edges},
          {"latest", h.empty() ? json() : workflow::InstanceStatusJson(h.front())},
          {"history", history}};
}

void Fail(Response& res, const Status& status) {
  const int code = HttpStatusOf(status);
  Error(res, code, status.message(), code == 400 ? FieldOf(status.message()) : "");
}

// The value of cookie `name` in the request's Cookie header ("a=1; b=2"), or "". httplib
// 0.11.4 parses no cookies; the console sets one cookie of hex characters only.
std::string CookieOf(const Request& req, const std::string& name) {
  const std::string header = req.get_header_value("Cookie");
  size_t pos = 0;
  while (pos < header.size()) {
    size_t end = header.find(';', pos);
    if (end == std::string::npos) end = header.size();
    std::string part = header.substr(pos, end - pos);
    part.erase(0, part.find_first_not_of(' '));
    if (part.starts_with(name + "=")) return part.substr(name.size() + 1);
    pos = end + 1;
  }
  return "";
}

// The request body as a JSON object ({} when empty).
Result<json> BodyOf(const Request& req) {
  if (req.body.empty()) return json::object();
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded()) return InvalidArgument("body: not valid JSON");
  if (!body.is_object()) return InvalidArgument("body: expected a JSON object");
  return body;
}

Result<std::string> OptionalString(const json& body, const char* field) {
  if (!body.contains(field) || body[field].is_null()) return std::string();
  if (!body[field].is_string()) return InvalidArgument(fmt::format("{}: expected a string", field));
  return body[field].get<std::string>();
}

// Parses an optional query parameter as an integer within [lo, hi].
Result<std::optional<int64_t>> IntParam(const Request& req, const char* name, int64_t lo,
                                        int64_t hi) {
  if (!req.has_param(name)) return std::optional<int64_t>();
  const std::string text = req.get_param_value(name);
  try {
    size_t used = 0;
    int64_t v = std::stoll(text, &used);
    if (used != text.size() || v < lo || v > hi) throw 0;
    return std::optional<int64_t>(v);
  } catch (...) {
    return InvalidArgument(
        fmt::format("{}: '{}': expected an integer from {} to {}", name, text, lo, hi));
  }
}

TimePoint FromMs(int64_t ms) { return TimePoint(std::chrono::milliseconds(ms)); }

// Tracing readers, one per concurrent request (a TraceReader is single-threaded).
class TraceReaders {
 public:
  explicit TraceReaders(std::string url) : url_(std::move(url)) {}
  class Lease {
   public:
    Lease(TraceReaders& owner, std::unique_ptr<TraceReader> reader)
        : owner_(owner), reader_(std::move(reader)) {}
    ~Lease() {
      MutexLock lock(&owner_.mu_);
      if (owner_.idle_.size() < 8) owner_.idle_.push_back(std::move(reader_));
    }
    TraceReader* operator->() { return reader_.get(); }
    TraceReader& operator*() { return *reader_; }

   private:
    TraceReaders& owner_;
    std::unique_ptr<TraceReader> reader_;
  };
  Result<std::unique_ptr<Lease>> Take() {
    {
      MutexLock lock(&mu_);
      if (!idle_.empty()) {
        auto reader = std::move(idle_.back());
        idle_.pop_back();
        return std::make_unique<Lease>(*this, std::move(reader));
      }
    }
    auto opened = TraceReader::Open(url_);
    if (!opened.ok()) {
      return Status(StatusCode::kUnavailable,
                    "tracing database: " + tracing::RedactUrl(opened.status().message()));
    }
    return std::make_unique<Lease>(*this, std::move(opened).value());
  }

 private:
  const std::string url_;
  Mutex mu_;
  std::vector<std::unique_ptr<TraceReader>> idle_ ELASTICJOB_GUARDED_BY(mu_);
};

class ConsoleImpl final : public Console {
 public:
  explicit ConsoleImpl(const ConsoleOptions& options)
      : options_(options),
        sessions_(Clock::System(), options.session_idle_timeout, options.session_max_age),
        throttle_(Clock::System()),
        hub_(EventHub::Options{options.max_event_clients, options.event_debounce,
                               options.event_ping_interval, options.tracing_poll_interval},
             [this](EventHub& hub) { PollTracing(hub); }) {}

  ~ConsoleImpl() override {
    hub_.Stop();  // ends the event streams, so their server threads return
    if (server_ != nullptr) server_->stop();
    if (thread_.joinable()) thread_.join();
    registries_.clear();  // their watches end before the hub and the pool go
  }

  Status Start() {
    if (Status s = InitSodium(); !s.ok()) return s;
    if (options_.registry_urls.empty()) return InvalidArgument("--registry: at least one needed");
    auto address = infra::ParseListen(options_.listen, "--listen");
    if (!address.ok()) return address.status();
    if (!options_.users_file.empty()) {
      auto users = UserTable::Load(options_.users_file);
      if (!users.ok()) return users.status();
      users_ = *std::move(users);
    }
    if (!users_ && !IsLoopback(address->host)) {
      return InvalidArgument(fmt::format(
          "--listen {}: not a loopback address; a console other hosts can reach needs --users "
          "(accounts, docs/console.md)",
          options_.listen));
    }
    if (options_.tls_cert_file.empty() != options_.tls_key_file.empty()) {
      return InvalidArgument("--tls-cert and --tls-key: give both or neither");
    }
    if (!options_.tracing_url.empty()) {
      auto parsed = tracing::ParseTracingUrl(options_.tracing_url);
      if (!parsed.ok()) return parsed.status();
      traces_ = std::make_unique<TraceReaders>(options_.tracing_url);
    }
    // TLS files first: a bad one fails at once, before the registries are connected.
    tls_ = !options_.tls_cert_file.empty();
    if (tls_) {
      auto ssl = std::make_unique<httplib::SSLServer>(options_.tls_cert_file.c_str(),
                                                      options_.tls_key_file.c_str());
      if (!ssl->is_valid()) {
        return InvalidArgument(fmt::format(
            "--tls-cert {} / --tls-key {}: cannot be loaded (PEM certificate and key expected)",
            options_.tls_cert_file, options_.tls_key_file));
      }
      server_ = std::move(ssl);
    } else {
      server_ = std::make_unique<httplib::Server>();
    }
    for (size_t i = 0; i < options_.registry_urls.size(); ++i) {
      const std::string& url = options_.registry_urls[i];
      const std::string redacted = RedactRegistryUrl(url);
      auto reg = NewRegistryCenter(url);
      if (!reg.ok()) {
        return InvalidArgument(fmt::format("--registry {}: {}", redacted, reg.status().message()));
      }
      if (Status s = (*reg)->Init(); !s.ok()) {
        return Status(StatusCode::kUnavailable,
                      fmt::format("registry {}: {}", redacted, s.message()));
      }
      if (options_.metrics != nullptr) options_.metrics->AddRegistry(**reg, NamespaceOf(redacted));
      const int id = static_cast<int>(i);
      auto view =
          std::make_unique<RegistryView>(std::move(reg).value(), watch_pool_,
                                         [this, id](const std::string& job, bool jobs_changed) {
                                           if (jobs_changed) hub_.JobChanged(id, "");
                                           if (!job.empty()) hub_.JobChanged(id, job);
                                         });
      if (Status s = view->Start(); !s.ok()) {
        return Status(s.code(), fmt::format("registry {}: {}", redacted, s.message()));
      }
      registries_.push_back({redacted, NamespaceOf(redacted), std::move(view)});
    }
    // Each open event stream holds a thread: the pool has one per allowed stream, plus the
    // request threads, so streams never starve other requests (more streams get 503).
    const size_t threads = static_cast<size_t>(std::max(1, options_.max_event_clients) +
                                               std::max(1, options_.request_threads));
    server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server_->set_payload_max_length(kMaxBody);
    // Headers and body go out in separate writes: without TCP_NODELAY the body waits for the
    // client's delayed ACK (40 ms per answer on Linux).
    server_->set_tcp_nodelay(true);
    server_->set_default_headers({
        {"Content-Security-Policy", "default-src 'self'"},
        {"X-Content-Type-Options", "nosniff"},
        {"X-Frame-Options", "DENY"},
        {"Referrer-Policy", "no-referrer"},
        {"Cache-Control", "no-store"},
    });
    // httplib's default socket options set SO_REUSEPORT: a second console on a port in use
    // then binds too and the kernel shares the connections between the two. SO_REUSEADDR
    // alone still lets a restart bind over connections in TIME_WAIT, but not over a listener.
    server_->set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    Routes();
    errno = 0;
    if (address->port == 0) {
      port_ = server_->bind_to_any_port(address->host);
      if (port_ < 0) port_ = 0;
    } else {
      port_ = server_->bind_to_port(address->host, address->port) ? address->port : 0;
    }
    if (port_ == 0) {
      // bind's errno survives the close that follows it (httplib reports only a failure).
      const int error = errno;
      return Status(StatusCode::kUnavailable,
                    error == EADDRINUSE
                        ? fmt::format("--listen {}: address already in use (another process "
                                      "listens there)",
                                      options_.listen)
                        : fmt::format("--listen {}: cannot listen there (address in use, or not "
                                      "an address of this host{})",
                                      options_.listen,
                                      error != 0 ? std::string(": ") + std::strerror(error) : ""));
    }
    host_ = address->host;
    thread_ = std::thread([this] {
      server_->listen_after_bind();
      listen_returned_.store(true);
    });
    // httplib's stop() does nothing until listen has started (it sets is_running first
    // thing): wait for that, a matter of microseconds, so a console stopped at once stops.
    while (!server_->is_running() && !listen_returned_.load()) std::this_thread::yield();
    return Status::Ok();
  }

  int port() const override { return port_; }
  std::string url() const override {
    std::string host = host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_;
    return fmt::format("{}://{}:{}", tls_ ? "https" : "http", host, port_);
  }

 private:
  struct Registry {
    std::string redacted_url;
    std::string name_space;
    std::unique_ptr<RegistryView> view;
  };

  // --- auth ---

  std::optional<Session> SessionOf(const Request& req) {
    if (!users_) return std::nullopt;
    return sessions_.Find(CookieOf(req, kCookie));
  }

  json SessionJson(const std::optional<Session>& session) {
    if (!users_) {
      return {{"user", nullptr},
              {"role", "guest"},
              {"readOnly", true},
              {"authEnabled", false},
              {"csrf", nullptr}};
    }
    if (!session) {
      return {{"user", nullptr},
              {"role", nullptr},
              {"readOnly", true},
              {"authEnabled", true},
              {"csrf", nullptr}};
    }
    return {{"user", session->user},
            {"role", RoleName(session->role)},
            {"readOnly", session->role != Role::kAdmin},
            {"authEnabled", true},
            {"csrf", session->csrf}};
  }

  // Checks every API request before its route: session (401), then for changes the CSRF
  // token and the role (403). Returns true when it answered.
  bool Guard(const Request& req, Response& res) {
    const std::string& path = req.path;
    if (!path.starts_with("/api/")) return false;
    const bool reads = req.method == "GET" || req.method == "HEAD";
    const bool open = path == "/api/v1/session" || path == "/api/v1/login";
    // Validation writes nothing: guests and the read-only console may use it, without CSRF.
    const bool validate = req.method == "POST" && path.ends_with("/validate");
    // A body must be JSON by its type too: another site's page can send a form or text/plain
    // without asking, application/json only after a CORS preflight this server never grants
    // (so not even a login can be forged from elsewhere).
    // (Before routing the body is not read yet: its headers tell whether there is one.)
    const bool has_body =
        req.get_header_value<uint64_t>("Content-Length") > 0 || req.has_header("Transfer-Encoding");
    if (!reads && has_body &&
        !req.get_header_value("Content-Type").starts_with("application/json")) {
      Error(res, 400, "Content-Type: expected application/json for a request body");
      return true;
    }
    if (!users_) {
      if (!reads && !validate && path != "/api/v1/login") {
        Error(res, 403, "the console is read-only: start it with --users to operate");
        return true;
      }
      return false;
    }
    if (open) return false;
    auto session = SessionOf(req);
    if (!session) {
      Error(res, 401, "not logged in (or the session expired)");
      return true;
    }
    if (reads || validate) return false;
    const std::string csrf = req.get_header_value("X-CSRF-Token");
    if (csrf.size() != session->csrf.size() ||
        sodium_memcmp(csrf.data(), session->csrf.data(), csrf.size()) != 0) {
      Error(res, 403, "missing or wrong X-CSRF-Token header (GET /api/v1/session gives it)");
      return true;
    }
    if (path != "/api/v1/logout" && session->role != Role::kAdmin) {
      Error(res, 403, fmt::format("role {} cannot operate", RoleName(session->role)));
      return true;
    }
    return false;
  }

  void Login(const Request& req, Response& res) {
    if (!users_) {
      Error(res, 403, "the console has no accounts: it is read-only (start it with --users)");
      return;
    }
    auto body = BodyOf(req);
    if (!body.ok()) return Fail(res, body.status());
    auto user = OptionalString(*body, "user");
    auto password = OptionalString(*body, "password");
    if (!user.ok()) return Fail(res, user.status());
    if (!password.ok()) return Fail(res, password.status());
    auto wait = throttle_.RetryAfter(*user, req.remote_addr);
    if (wait.count() > 0) {
      const auto seconds = (wait.count() + 999) / 1000;
      res.set_header("Retry-After", std::to_string(seconds));
      Error(res, 429, fmt::format("too many failed logins: try again in {} s", seconds));
      return;
    }
    // Each check takes 64 MiB and tens of milliseconds (argon2id): a bounded number at once,
    // so a flood of logins cannot take the memory or every server thread.
    if (checking_.fetch_add(1) >= kMaxPasswordChecks) {
      checking_.fetch_sub(1);
      res.set_header("Retry-After", "1");
      Error(res, 429, "too many logins at once: try again in 1 s");
      return;
    }
    auto found = users_->Check(*user, *password);
    checking_.fetch_sub(1);
    if (!found) {
      throttle_.Failed(*user, req.remote_addr);
      Error(res, 401, "wrong user or password");
      return;
    }
    throttle_.Succeeded(*user, req.remote_addr);
    const std::string token = sessions_.Create(*found);
    res.set_header("Set-Cookie",
                   fmt::format("{}={}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}{}", kCookie,
                               token, options_.session_max_age.count(), tls_ ? "; Secure" : ""));
    Reply(res, 200, SessionJson(sessions_.Find(token)));
  }

  void Logout(const Request& req, Response& res) {
    sessions_.Remove(CookieOf(req, kCookie));
    res.set_header("Set-Cookie", fmt::format("{}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0{}",
                                             kCookie, tls_ ? "; Secure" : ""));
    res.status = 204;
  }

  // --- registries and jobs ---

  RegistryView* ViewOf(const Request& req, Response& res) {
    const std::string text = req.matches[1];
    size_t id = registries_.size();
    try {
      id = std::stoul(text);
    } catch (...) {
    }
    if (id >= registries_.size()) {
      Error(res, 404, fmt::format("registry {} not found", text));
      return nullptr;
    }
    return registries_[id].view.get();
  }

  // The job as the server has it now (after a write), for the answer.
  void ReplyJob(Response& res, int status, RegistryView& view, const std::string& name) {
    auto job = ReadJobNodes(view.registry(), name);
    if (!job.ok()) return Fail(res, job.status());
    Reply(res, status, JobToJson(*job, std::chrono::system_clock::now()));
  }

  // A configuration from a request body {"config": {...}} or {"yaml": "..."}; `base` is what
  // fields not given in "config" keep.
  static Result<JobConfiguration> ConfigOfBody(const json& body, JobConfiguration base) {
    if (body.contains("yaml")) {
      if (!body["yaml"].is_string()) return InvalidArgument("yaml: expected a string");
      return ConfigFromYaml(body["yaml"].get<std::string>());
    }
    if (!body.contains("config")) return InvalidArgument("config: missing (or give yaml)");
    if (Status s = ConfigFromJson(body["config"], &base); !s.ok()) return s;
    return base;
  }

  void Validate(const Request& req, Response& res) {
    RegistryView* view = ViewOf(req, res);
    if (view == nullptr) return;
    const std::string name = req.matches[2];
    auto body = BodyOf(req);
    if (!body.ok()) return Fail(res, body.status());
    JobConfiguration base;
    std::optional<JobConfiguration> current;
    if (auto job = view->Job(name); job && job->config) current = base = *job->config;
    base.job_name = name;
    auto config = ConfigOfBody(*body, base);
    json result = {{"ok", false}, {"errors", json::array()}, {"nextFireTimes", json::array()}};
    Status s = config.ok() ? ValidateJobConfiguration(*config) : config.status();
    if (s.ok()) {  // as the save checks it: names the instances must know
      auto type = view->registry().GetDirectly("/" + name);
      s = config::WriterCheck(*config, type.value_or(""), current);
    }
    if (s.ok() && config->job_name != name) {
      s = InvalidArgument(
          fmt::format("jobName: '{}' is not this job ('{}')", config->job_name, name));
    }
    if (!s.ok()) {
      result["errors"].push_back({{"field", FieldOf(s.message())}, {"message", s.message()}});
    } else {
      result["ok"] = true;
    }
    if (config.ok()) {
      JobNodes nodes;
      nodes.config_yaml = ConfigToYaml(*config);
      nodes.ParseConfig();
      for (TimePoint t : nodes.NextFireTimes(std::chrono::system_clock::now(), 5)) {
        result["nextFireTimes"].push_back(EpochMs(t));
      }
      if (nodes.zone) result["timeZone"] = nodes.zone->id();
    }
    if (!result.contains("timeZone")) result["timeZone"] = TimeZone::SystemDefault().id();
    Reply(res, 200, result);
  }

  void AddJob(const Request& req, Response& res) {
    RegistryView* view = ViewOf(req, res);
    if (view == nullptr) return;
    auto body = BodyOf(req);
    if (!body.ok()) return Fail(res, body.status());
    auto type = OptionalString(*body, "jobType");
    if (!type.ok()) return Fail(res, type.status());
    if (type->empty())
      return Error(res, 400, "jobType: missing (SCRIPT, HTTP or a class name)", "jobType");
    auto config = ConfigOfBody(*body, JobConfiguration{});
    if (!config.ok()) return Fail(res, config.status());
    Status s = NewJobConfigurationAPI(view->registry())->AddJob(*config, *type);
    if (!s.ok()) return Fail(res, s);
    ReplyJob(res, 201, *view, config->job_name);
  }

  void UpdateConfig(const Request& req, Response& res) {
    RegistryView* view = ViewOf(req, res);
    if (view == nullptr) return;
    const std::string name = req.matches[2];
    auto body = BodyOf(req);
    if (!body.ok()) return Fail(res, body.status());
    auto current = NewJobConfigurationAPI(view->registry())->GetJobConfiguration(name);
    if (!current.ok()) return Fail(res, current.status());
    auto config = ConfigOfBody(*body, *current);
    if (!config.ok()) return Fail(res, config.status());
    if (config->job_name != name) {
      return Error(res, 400,
                   fmt::format("jobName: '{}' is not this job ('{}')", config->job_name, name),
                   "jobName");
    }
    Status s = NewJobConfigurationAPI(view->registry())->UpdateJobConfiguration(*config);
    if (!s.ok()) return Fail(res, s);
    ReplyJob(res, 200, *view, name);
  }

  void JobOperation(const Request& req, Response& res) {
    RegistryView* view = ViewOf(req, res);
    if (view == nullptr) return;
    const std::string name = req.matches[2];
    const std::string op = req.matches[3];
    auto body = BodyOf(req);
    if (!body.ok()) return Fail(res, body.status());
    auto server = OptionalString(*body, "server");
    if (!server.ok()) return Fail(res, server.status());
    if (Status s = lifecycle::CheckName("job", name); !s.ok()) return Fail(res, s);
    auto ops = NewJobOperateAPI(view->registry());
    if (op == "trigger") {
      auto parameter = OptionalString(*body, "parameter");
      if (!parameter.ok()) return Fail(res, parameter.status());
      std::optional<std::string> p;
      if (body->contains("parameter") && !(*body)["parameter"].is_null()) p = *parameter;
      auto n = ops->Trigger(name, *server, p);
      if (!n.ok()) return Fail(res, n.status());
      return Reply(res, 200, {{"triggered", *n}});
    }
    if (op == "stop") {
      // Cancels what runs now (docs/scheduling.md): `item` only, on `server` only, if given.
      std::optional<int> item;
      if (body->contains("item") && !(*body)["item"].is_null()) {
        const json& v = (*body)["item"];
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX) {
          return Fail(
              res, InvalidArgument(fmt::format("item: expected an item number, got {}", v.dump())));
        }
        item = v.get<int>();
      }
      auto n = ops->Stop(name, *server, item);
      if (!n.ok()) return Fail(res, n.status());
      return Reply(res, 200, {{"stopped", *n}});
    }
    Result<int> n = op == "disable"    ? ops->Disable(name, *server)
                    : op == "enable"   ? ops->Enable(name, *server)
                    : op == "shutdown" ? ops->Shutdown(name, *server)
                                       : ops->Remove(name, *server);
    if (!n.ok()) return Fail(res, n.status());
    Reply(res, 200, {{"changed", *n}});
  }

  void ServerOperation(const Request& req, Response& res) {
    RegistryView* view = ViewOf(req, res);
    if (view == nullptr) return;
    const std::string ip = req.matches[2];
    const std::string op = req.matches[3];
    auto ops = NewJobOperateAPI(view->registry());
    Result<int> n = op == "disable"  ? ops->Disable("", ip)
                    : op == "enable" ? ops->Enable("", ip)
                                     : ops->Shutdown("", ip);
    if (!n.ok()) return Fail(res, n.status());
    Reply(res, 200, {{"changed", *n}});
  }

  // --- tracing ---

  // The reader, or an answer (404 without tracing, 503 when the database cannot be opened).
  std::unique_ptr<TraceReaders::Lease> ReaderOf(const Request& req, Response& res) {
    if (ViewOf(req, res) == nullptr) return nullptr;
    if (traces_ == nullptr) {
      Error(res, 404, "tracing is not configured");
      return nullptr;
    }
    auto lease = traces_->Take();
    if (!lease.ok()) {
      Fail(res, lease.status());
      return nullptr;
    }
    return std::move(lease).value();
  }

  void Executions(const Request& req, Response& res) {
    auto reader = ReaderOf(req, res);
    if (reader == nullptr) return;
    ExecutionQuery q;
    auto limit = IntParam(req, "limit", 1, 500);
    auto offset = IntParam(req, "offset", 0, 1000000);
    auto item = IntParam(req, "item", 0, 1000000);
    auto since = IntParam(req, "since", 0, INT64_MAX / 1000000);
    auto until = IntParam(req, "until", 0, INT64_MAX / 1000000);
    for (const auto* r : {&limit, &offset, &item, &since, &until}) {
      if (!r->ok()) return Fail(res, r->status());
    }
    q.limit = static_cast<size_t>(limit->value_or(50));
    q.offset = static_cast<size_t>(offset->value_or(0));
    if (req.has_param("job")) q.job_name = req.get_param_value("job");
    if (*item) q.sharding_item = static_cast<int>(**item);
    if (*since) q.since = FromMs(**since);
    if (*until) q.until = FromMs(**until);
    std::optional<bool> success;
    if (req.has_param("success")) {
      const std::string v = req.get_param_value("success");
      if (v != "true" && v != "false") {
        return Error(res, 400, fmt::format("success: '{}': expected true or false", v), "success");
      }
      success = v == "true";
      q.failed_only = v == "false";
    }
    const std::string ip = req.has_param("ip") ? req.get_param_value("ip") : "";
    auto rows = (*reader)->Executions(q);
    if (!rows.ok()) return Fail(res, rows.status());
    json items = json::array();
    for (const auto& e : *rows) {
      // Filters the reader has no column query for apply to the page.
      if (!ip.empty() && e.ip != ip) continue;
      if (success == true && !(e.complete_time && e.success)) continue;
      items.push_back(ExecutionToJson(e));
    }
    Reply(res, 200, {{"items", items}, {"limit", q.limit}, {"offset", q.offset}});
  }

  // The execution `id`, or nullopt with the answer written (404 for an unknown id).
  static std::optional<JobExecutionEvent> ExecutionOf(TraceReader& reader, const std::string& id,
                                                      Response& res) {
    auto e = reader.Execution(id);
    if (e.ok()) return std::move(e).value();
    if (e.status().code() == StatusCode::kNotFound) {
      Error(res, 404, fmt::format("execution '{}' not found", id));
    } else {
      Fail(res, e.status());
    }
    return std::nullopt;
  }

  void Execution(const Request& req, Response& res) {
    auto reader = ReaderOf(req, res);
    if (reader == nullptr) return;
    auto e = ExecutionOf(**reader, req.matches[2], res);
    if (!e) return;
    json result = ExecutionToJson(*e);
    // The task id is shared by every trigger of the same items on one instance: only the
    // rows of this execution's pass (execution_traces.h).
    auto traces = ReadPassTraces(**reader, *e, std::chrono::system_clock::now());
    if (!traces.ok()) return Fail(res, traces.status());
    result["statusTraces"] = json::array();
    for (const auto& t : *traces) result["statusTraces"].push_back(StatusTraceToJson(t));
    Reply(res, 200, result);
  }

  void ExecutionLogs(const Request& req, Response& res) {
    auto reader = ReaderOf(req, res);
    if (reader == nullptr) return;
    auto e = ExecutionOf(**reader, req.matches[2], res);
    if (!e) return;
    auto after = IntParam(req, "after", 0, INT64_MAX);
    if (!after.ok()) return Fail(res, after.status());
    auto lines = (*reader)->LogLines(e->id, after->value_or(0));
    if (!lines.ok()) return Fail(res, lines.status());
    json out = json::array();
    for (const auto& l : *lines) {
      out.push_back({{"seq", l.line_no},
                     {"time", EpochMs(l.time)},
                     {"level", LogLevelName(l.level)},
                     {"message", l.text}});
    }
    Reply(res, 200, {{"lines", out}});
  }

  void StatusTraces(const Request& req, Response& res) {
    auto reader = ReaderOf(req, res);
    if (reader == nullptr) return;
    StatusQuery q;
    auto limit = IntParam(req, "limit", 1, 500);
    auto offset = IntParam(req, "offset", 0, 1000000);
    if (!limit.ok()) return Fail(res, limit.status());
    if (!offset.ok()) return Fail(res, offset.status());
    q.limit = static_cast<size_t>(limit->value_or(50));
    q.offset = static_cast<size_t>(offset->value_or(0));
    if (req.has_param("job")) q.job_name = req.get_param_value("job");
    if (req.has_param("taskId")) q.task_id = req.get_param_value("taskId");
    std::optional<TraceState> state;
    if (req.has_param("state")) {
      auto parsed = ParseTraceState(req.get_param_value("state"));
      if (!parsed.ok()) return Error(res, 400, "state: " + parsed.status().message(), "state");
      state = *parsed;
    }
    auto rows = (*reader)->StatusTraces(q);
    if (!rows.ok()) return Fail(res, rows.status());
    json items = json::array();
    for (const auto& t : *rows) {
      if (state && t.state != *state) continue;
      items.push_back(StatusTraceToJson(t));
    }
    Reply(res, 200, {{"items", items}, {"limit", q.limit}, {"offset", q.offset}});
  }

  void Stats(const Request& req, Response& res) {
    auto reader = ReaderOf(req, res);
    if (reader == nullptr) return;
    const int64_t now = EpochMs(std::chrono::system_clock::now());
    auto since = IntParam(req, "since", 0, now);
    auto bucket = IntParam(req, "bucketMs", 1000, int64_t{31} * 24 * 3600 * 1000);
    if (!since.ok()) return Fail(res, since.status());
    if (!bucket.ok()) return Fail(res, bucket.status());
    const int64_t from = since->value_or(now - 3600 * 1000);
    const int64_t width = bucket->value_or(60000);
    if ((now - from) / width > 2000) {
      return Error(res, 400, "bucketMs: more than 2000 buckets from since to now", "bucketMs");
    }
    ExecutionQuery q;
    if (req.has_param("job")) q.job_name = req.get_param_value("job");
    q.since = FromMs(from);
    q.limit = 20000;
    auto rows = (*reader)->Executions(q);
    if (!rows.ok()) return Fail(res, rows.status());
    Reply(res, 200, ExecutionStatsJson(*rows, from, width, now));
  }

  // The tracing database's newest runs, compared with the last poll's: new ones and ones that
  // finished since become `execution` events. Runs on the hub's thread.
  void PollTracing(EventHub& hub) {
    if (traces_ == nullptr) return;
    auto reader = traces_->Take();
    if (!reader.ok()) return;
    ExecutionQuery q;
    q.limit = 50;
    auto rows = (**reader)->Executions(q);
    if (!rows.ok()) return;
    std::map<std::string, bool> seen;
    for (const auto& e : *rows) {
      const bool done = e.complete_time.has_value();
      seen[e.id] = done;
      auto before = last_seen_.find(e.id);
      if (!first_poll_done_ || (before != last_seen_.end() && (before->second || !done))) {
        continue;  // known, nothing new
      }
      json data = ExecutionToJson(e);
      data["job"] = e.job_name;
      data["registry"] = nullptr;
      for (size_t i = 0; i < registries_.size(); ++i) {
        if (registries_[i].view->Job(e.job_name)) {
          data["registry"] = static_cast<int>(i);
          break;
        }
      }
      hub.Publish("execution", data.dump(-1, ' ', false, json::error_handler_t::replace));
    }
    last_seen_ = std::move(seen);
    first_poll_done_ = true;
  }

  void Events(const Request& req, Response& res) {
    auto stream = hub_.Connect();
    if (stream == nullptr) {
      return Error(
          res, 503,
          fmt::format("too many event streams open (at most {})", options_.max_event_clients));
    }
    res.set_header("X-Accel-Buffering", "no");
    // With accounts, the stream ends with its session (logout, expiry): checked before each
    // write, so within a ping interval.
    const std::string token = users_ ? CookieOf(req, kCookie) : "";
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, stream, token](size_t, httplib::DataSink& sink) {
          auto text = stream->Next();
          if (!text || (users_ && !sessions_.Valid(token))) {
            sink.done();
            return true;
          }
          return sink.write(text->data(), text->size());
        },
        [this, stream](bool) { hub_.Disconnect(stream); });
  }

  // --- the latest runs (jobs list, one job, overview, servers) ---

  // Reads the tracing database's newest executions into last_runs_, at most once per
  // kLastRunsEvery (requests meanwhile use what is there), and again the kept ones that were
  // running. Without tracing, or when the database cannot be read, the list goes without.
  void RefreshLastRuns() {
    if (traces_ == nullptr) return;
    MutexLock refresh(&runs_refresh_mu_);  // one reader at a time
    const auto now = std::chrono::steady_clock::now();
    if (runs_read_ && now - *runs_read_ < kLastRunsEvery) return;
    runs_read_ = now;
    auto reader = traces_->Take();
    if (!reader.ok()) return;
    ExecutionQuery q;
    q.limit = kLastRunsRows;
    auto rows = (**reader)->Executions(q);
    if (!rows.ok()) return;
    std::vector<std::string> unfinished;
    {
      MutexLock lock(&runs_mu_);
      last_runs_.Merge(*rows);
      unfinished = last_runs_.Unfinished();
    }
    std::vector<JobExecutionEvent> again;
    for (size_t i = 0; i < unfinished.size() && i < 20; ++i) {
      if (auto e = (**reader)->Execution(unfinished[i]); e.ok()) again.push_back(*std::move(e));
    }
    MutexLock lock(&runs_mu_);
    last_runs_.Merge(again);
  }

  // Adds `lastRun` (the job's newest execution, null when none is known) to a job's JSON and
  // turns its status OK into FAILING when the latest finished run of one of its items failed.
  void AddLastRun(json* job, const std::string& name, int sharding_total_count) {
    if (traces_ == nullptr) return;
    std::optional<LastRuns::Summary> last;
    {
      MutexLock lock(&runs_mu_);
      last = last_runs_.Of(name, sharding_total_count);
    }
    (*job)["lastRun"] = last ? ExecutionToJson(last->latest) : json(nullptr);
    if (last && last->failing && (*job)["status"] == "OK") (*job)["status"] = "FAILING";
  }

  std::string HostnameOf(const std::string& ip) {
    MutexLock lock(&runs_mu_);
    return last_runs_.HostnameOf(ip);
  }

  // --- routes ---

  void Routes() {
    httplib::Server& s = *server_;
    s.set_pre_routing_handler([this](const Request& req, Response& res) {
      if (AcceptsGzip(req)) res.set_header(kAcceptsGzip, "1");
      return Guard(req, res) ? httplib::Server::HandlerResponse::Handled
                             : httplib::Server::HandlerResponse::Unhandled;
    });
    s.set_post_routing_handler(
        [](const Request&, Response& res) { res.headers.erase(kAcceptsGzip); });
    s.set_error_handler(httplib::Server::HandlerWithResponse([](const Request& req, Response& res) {
      // An answer already written (SetBody gives its body as a sized content provider).
      if (!res.body.empty() || res.content_length_ > 0) {
        return httplib::Server::HandlerResponse::Unhandled;
      }
      std::string message;
      switch (res.status) {
        case 404:
          message = fmt::format("no such resource: {} {}", req.method, req.path);
          break;
        case 413:
          message = "request body larger than 1 MiB";
          break;
        default:
          message = fmt::format("HTTP status {}", res.status);
      }
      Error(res, res.status, message);
      return httplib::Server::HandlerResponse::Handled;
    }));
    s.set_exception_handler([](const Request&, Response& res, std::exception_ptr) {
      Error(res, 500, "internal error");
    });

    const std::string reg = R"(/api/v1/registries/([^/]+))";
    const std::string job = reg + R"(/jobs/([^/]+))";

    s.Get("/api/v1/session", [this](const Request& req, Response& res) {
      Reply(res, 200, SessionJson(SessionOf(req)));
    });
    s.Post("/api/v1/login", [this](const Request& req, Response& res) { Login(req, res); });
    s.Post("/api/v1/logout", [this](const Request& req, Response& res) { Logout(req, res); });
    s.Get("/api/v1/events", [this](const Request& req, Response& res) { Events(req, res); });
    s.Get("/api/v1/registries", [this](const Request&, Response& res) {
      json list = json::array();
      for (size_t i = 0; i < registries_.size(); ++i) {
        list.push_back({{"id", i},
                        {"url", registries_[i].redacted_url},
                        {"namespace", registries_[i].name_space},
                        {"connected", registries_[i].view->connected()}});
      }
      Reply(res, 200, list);
    });
    s.Get("/api/v1/cron", [](const Request& req, Response& res) {
      auto count = IntParam(req, "count", 1, 1000);
      if (!count.ok()) return Fail(res, count.status());
      auto after_ms = IntParam(req, "after", 0, INT64_MAX / 1000000);
      if (!after_ms.ok()) return Fail(res, after_ms.status());
      const std::string expr = req.get_param_value("expr");
      auto cron = CronExpression::Parse(expr);
      auto zone = req.has_param("zone") ? TimeZone::Parse(req.get_param_value("zone"))
                                        : Result<TimeZone>(TimeZone::SystemDefault());
      json result = {{"ok", cron.ok() && zone.ok()}, {"nextFireTimes", json::array()}};
      if (!cron.ok()) {
        result["error"] = cron.status().message();
      } else if (!zone.ok()) {
        result["error"] = "zone: " + zone.status().message();
      } else {
        result["timeZone"] = zone->id();
        TimePoint after =
            after_ms->has_value() ? FromMs(**after_ms) : std::chrono::system_clock::now();
        for (TimePoint next :
             cron->NextFireTimes(after, *zone, static_cast<int>(count->value_or(5)))) {
          result["nextFireTimes"].push_back(EpochMs(next));
        }
      }
      Reply(res, 200, result);
    });

    s.Get(reg + "/overview", [this](const Request& req, Response& res) {
      RegistryView* view = ViewOf(req, res);
      if (view == nullptr) return;
      json jobs = {{"total", 0},   {"OK", 0},       {"FAILING", 0},
                   {"CRASHED", 0}, {"DISABLED", 0}, {"SHARDING_FLAG", 0}};
      auto rows = view->Jobs(std::chrono::system_clock::now());
      jobs["total"] = rows.size();
      RefreshLastRuns();
      for (const auto& row : rows) {
        json one = JobRowToJson(row);
        AddLastRun(&one, row.brief.job_name, row.brief.sharding_total_count);
        auto& n = jobs[one["status"].get<std::string>()];
        n = n.get<int>() + 1;
      }
      size_t instances = 0;
      auto servers = view->Servers();
      for (const auto& server : servers) instances += server.instances.size();
      Reply(res, 200, {{"jobs", jobs}, {"servers", servers.size()}, {"instances", instances}});
    });
    s.Get(reg + "/jobs", [this](const Request& req, Response& res) {
      RegistryView* view = ViewOf(req, res);
      if (view == nullptr) return;
      json list = json::array();
      RefreshLastRuns();
      for (const JobRow& row : view->Jobs(std::chrono::system_clock::now())) {
        list.push_back(JobRowToJson(row));
        AddLastRun(&list.back(), row.brief.job_name, row.brief.sharding_total_count);
      }
      Reply(res, 200, list);
    });
    s.Post(reg + "/jobs", [this](const Request& req, Response& res) { AddJob(req, res); });
    s.Get(job, [this](const Request& req, Response& res) {
      RegistryView* view = ViewOf(req, res);
      if (view == nullptr) return;
      const std::string name = req.matches[2];
      auto found = view->Job(name);
      if (!found) return Error(res, 404, fmt::format("job '{}' not found", name));
      ReadRunning(view->registry(), &*found);
      json one = JobToJson(*found, std::chrono::system_clock::now());
      if (found->config) {
        RefreshLastRuns();
        AddLastRun(&one, name, found->config->sharding_total_count);
      }
      Reply(res, 200, one);
    });
    s.Delete(job, [this](const Request& req, Response& res) {
      RegistryView* view = ViewOf(req, res);
      if (view == nullptr) return;
      Status st =
          NewJobConfigurationAPI(view->registry())->RemoveJobConfiguration(req.matches[2].str());
      if (!st.ok()) return Fail(res, st);
      res.status = 204;
    });
    s.Put(job + "/config", [this](const Request& req, Response& res) { UpdateConfig(req, res); });
    s.Post(job + "/validate", [this](const Request& req, Response& res) { Validate(req, res); });
    s.Post(job + "/(trigger|stop|disable|enable|shutdown|remove)",
           [this](const Request& req, Response& res) { JobOperation(req, res); });
    s.Post(job + R"(/items/([^/]+)/(disable|enable))", [this](const Request& req, Response& res) {
      RegistryView* view = ViewOf(req, res);
      if (view == nullptr) return;
      const std::string text = req.matches[3];
      int item = -1;
      try {
        size_t used = 0;
        item = std::stoi(text, &used);
        if (used != text.size()) item = -1;
      } catch (...) {
      }
      if (item < 0) {
        return Error(res, 400, fmt::format("item '{}': expected a sharding item number", text),
                     "item");
      }
      auto ops = NewShardingOperateAPI(view->registry());
      Status st = std::string(req.matches[4]) == "disable"
                      ? ops->Disable(req.matches[2].str(), item)
                      : ops->Enable(req.matches[2].str(), item);
      if (!st.ok()) return Fail(res, st);
      res.status = 204;
    });
    // Workflows (docs/workflows.md): the list, one workflow's DAG with its latest instance
    // and history, and a run.
    const std::string workflow = reg + R"(/workflows/([^/]+))";
    s.Get(reg + "/workflows", [this](const Request& req, Response& res) {
      RegistryView* view = ViewOf(req, res);
      if (view == nullptr) return;
      auto list = NewWorkflowAPI(view->registry())->List();
      if (!list.ok()) return Fail(res, list.status());
      json out = json::array();
      for (const WorkflowBrief& b : *list) {
        out.push_back({{"name", b.name},
                       {"cron", b.cron ? json(*b.cron) : json()},
                       {"nodes", b.nodes},
                       {"coordinator", b.coordinator},
                       {"lastInstance", b.last_instance},
                       {"lastStatus", b.last_status}});
      }
      Reply(res, 200, out);
    });
    s.Get(workflow, [this](const Request& req, Response& res) {
      RegistryView* view = ViewOf(req, res);
      if (view == nullptr) return;
      auto api = NewWorkflowAPI(view->registry());
      const std::string name = req.matches[2];
      auto def = api->Get(name);
      if (!def.ok()) return Fail(res, def.status());
      auto history = api->History(name, 20);
      if (!history.ok()) return Fail(res, history.status());
      Reply(res, 200, WorkflowToJson(*def, *history));
    });
    s.Post(workflow + "/run", [this](const Request& req, Response& res) {
      RegistryView* view = ViewOf(req, res);
      if (view == nullptr) return;
      std::string parameter;
      if (!req.body.empty()) {
        json body = json::parse(req.body, nullptr, false);
        if (body.is_object() && body.contains("parameter") && body["parameter"].is_string()) {
          parameter = body["parameter"].get<std::string>();
        }
      }
      auto id = NewWorkflowAPI(view->registry())->Run(req.matches[2].str(), parameter);
      if (!id.ok()) return Fail(res, id.status());
      Reply(res, 200, {{"instance", *id}});
    });
    s.Get(reg + "/servers", [this](const Request& req, Response& res) {
      RegistryView* view = ViewOf(req, res);
      if (view == nullptr) return;
      json list = json::array();
      RefreshLastRuns();
      const auto by_instance = view->JobsByInstance();
      const auto runtimes = view->RuntimeByInstance();
      const TimePoint now = std::chrono::system_clock::now();
      for (const auto& server : view->Servers()) {
        list.push_back(ServerToJson(server, by_instance, HostnameOf(server.server_ip), runtimes,
                                    now, view->connected()));
      }
      Reply(res, 200, list);
    });
    s.Get(reg + "/servers/([^/]+)", [this](const Request& req, Response& res) {
      RegistryView* view = ViewOf(req, res);
      if (view == nullptr) return;
      const std::string ip = req.matches[2];
      RefreshLastRuns();
      json result = {{"ip", ip},
                     {"hostname", nullptr},
                     {"instances", json::array()},
                     {"instanceDetails", json::array()}};
      for (const auto& server : view->Servers()) {
        if (server.server_ip == ip) {
          result = ServerToJson(server, view->JobsByInstance(), HostnameOf(ip),
                                view->RuntimeByInstance(), std::chrono::system_clock::now(),
                                view->connected());
        }
      }
      json jobs = json::array();
      for (const auto& info : view->JobsOnServer(ip)) {
        jobs.push_back({{"name", info.job_name},
                        {"status", JobStatusName(info.status)},
                        {"instanceCount", info.instance_count}});
      }
      if (jobs.empty()) return Error(res, 404, fmt::format("server '{}' not found", ip));
      result["jobs"] = jobs;
      result.erase("disabledJobs");
      Reply(res, 200, result);
    });
    s.Post(reg + "/servers/([^/]+)/(disable|enable|shutdown)",
           [this](const Request& req, Response& res) { ServerOperation(req, res); });

    s.Get(reg + "/executions", [this](const Request& req, Response& res) { Executions(req, res); });
    s.Get(reg + "/executions/([^/]+)",
          [this](const Request& req, Response& res) { Execution(req, res); });
    s.Get(reg + "/executions/([^/]+)/logs",
          [this](const Request& req, Response& res) { ExecutionLogs(req, res); });
    s.Get(reg + "/status-traces",
          [this](const Request& req, Response& res) { StatusTraces(req, res); });
    s.Get(reg + "/stats", [this](const Request& req, Response& res) { Stats(req, res); });

    // The UI: only embedded files, looked up by exact path (no file system, no "..").
    s.Get("/(.*)", [](const Request& req, Response& res) {
      std::string path = req.matches[1];
      if (path.empty()) path = "index.html";
      const EmbeddedAsset* asset = path.starts_with("api/") ? nullptr : FindAsset(path);
      if (asset == nullptr) {
        return Error(res, 404, fmt::format("no such resource: GET {}", req.path));
      }
      SetBody(res, std::string(reinterpret_cast<const char*>(asset->data), asset->size),
              ContentTypeFor(asset->path));
    });
  }

  const ConsoleOptions options_;
  std::optional<UserTable> users_;
  SessionStore sessions_;
  LoginThrottle throttle_;
  // Registry watch deliveries (each view has its own serial executor on it).
  ThreadPool watch_pool_{2};
  EventHub hub_;
  std::unique_ptr<TraceReaders> traces_;
  std::vector<Registry> registries_;
  // The latest runs (RefreshLastRuns).
  static constexpr std::chrono::milliseconds kLastRunsEvery{1000};
  static constexpr size_t kLastRunsRows = 2000;
  Mutex runs_refresh_mu_;
  std::optional<std::chrono::steady_clock::time_point> runs_read_
      ELASTICJOB_GUARDED_BY(runs_refresh_mu_);
  Mutex runs_mu_;
  LastRuns last_runs_ ELASTICJOB_GUARDED_BY(runs_mu_);
  // Used by PollTracing only (the hub's thread).
  std::map<std::string, bool> last_seen_;
  bool first_poll_done_ = false;
  std::unique_ptr<httplib::Server> server_;
  std::string host_;
  int port_ = 0;
  bool tls_ = false;
  std::thread thread_;
  std::atomic<bool> listen_returned_{false};  // atomic: set by thread_, read by Start
  // Password checks running now (Login); atomic: server threads share it.
  std::atomic<int> checking_{0};
  static constexpr int kMaxPasswordChecks = 2;
};

}  // namespace
}  // namespace console

Result<std::unique_ptr<Console>> StartConsole(const ConsoleOptions& options) {
  auto console = std::make_unique<console::ConsoleImpl>(options);
  if (Status s = console->Start(); !s.ok()) return s;
  return std::unique_ptr<Console>(std::move(console));
}

}  // namespace elasticjob
