// The web console (docs/console.md): an HTTP(S) server with a REST API over one or more
// registries (jobs, servers, operations through the lifecycle API), the tracing database's
// executions when one is configured, a Server-Sent Events stream of changes fed by registry
// watches, and the single-page UI embedded in the binary. `elasticjob console` and
// `elasticjob run FILE --console ADDR` start one; an application embedding the library
// starts one with StartConsole.
//
// Security: the server listens on loopback unless users are configured (StartConsole refuses
// any other address without them). Without users the console is read-only: every change is
// refused (403). With users, sessions live in HttpOnly SameSite=Strict cookies that expire,
// each change needs the session's CSRF token and the admin role, failed logins are slowed
// down per user and client address, and no secret (registry digest, tracing password,
// password hash, session token) is ever returned, logged or put in a page.
//
// Thread safety: StartConsole may be called from any thread; a Console's methods too. The
// server runs on threads of its own; destroying the Console stops it (open event streams are
// ended) and waits for those threads.
//
// clang-format off
//   elasticjob::ConsoleOptions options;
//   options.registry_urls = {"zookeeper://127.0.0.1:2181/demo"};
//   options.tracing_url = "sqlite:///var/lib/elasticjob/events.db";  // optional
//   options.listen = "127.0.0.1:8899";
//   auto console = elasticjob::StartConsole(options);
//   if (!console.ok()) { std::cerr << console.status() << "\n"; return 1; }
//   std::cout << "console at " << (*console)->url() << "\n";
//   ...                       // serve until the application ends
//   console->reset();         // stops the server
// clang-format on
#ifndef ELASTICJOB_CONSOLE_CONSOLE_SERVER_H_
#define ELASTICJOB_CONSOLE_CONSOLE_SERVER_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "elasticjob/metrics/metrics.h"
#include "elasticjob/status.h"

namespace elasticjob {

struct ConsoleOptions {
  // The registries shown, in this order (their index is the `{id}` of the API's paths):
  // zookeeper://... or memory://... URLs (include/elasticjob/reg/registry_center.h). The
  // console opens its own session to each. At least one.
  std::vector<std::string> registry_urls;
  // The tracing database read for executions, status traces and logs
  // (include/elasticjob/tracing/trace_reader.h); empty: no tracing endpoints (404).
  std::string tracing_url;
  // "host:port" to listen on; port 0 picks a free one (Console::port). Must be a loopback
  // address (127.0.0.0/8, ::1, localhost) unless `users_file` is set.
  std::string listen = "127.0.0.1:8899";
  // The users file (YAML, docs/console.md); empty: no accounts, read-only console.
  std::string users_file;
  // PEM certificate chain and private key: both set serves HTTPS (cookies get Secure).
  std::string tls_cert_file;
  std::string tls_key_file;
  // Open event streams at most; one more is refused with 503. Each holds a server thread,
  // and the pool has this many threads plus `request_threads` for everything else.
  int max_event_clients = 16;
  int request_threads = 8;
  // A session ends after this long without a request, and this long after login anyway.
  std::chrono::seconds session_idle_timeout{std::chrono::minutes(30)};
  std::chrono::seconds session_max_age{std::chrono::hours(12)};
  // How often a ": ping" comment goes to each open event stream.
  std::chrono::milliseconds event_ping_interval{std::chrono::seconds(15)};
  // How long changes of one job are gathered into one `job` event.
  std::chrono::milliseconds event_debounce{100};
  // How often the tracing database's newest execution is looked up for `execution` events,
  // only while an event stream is open.
  std::chrono::milliseconds tracing_poll_interval{std::chrono::seconds(2)};
  // Prometheus metrics (elasticjob/metrics/metrics.h): the console's registry sessions are
  // added to it (labelled with their namespace). Null: none.
  std::shared_ptr<Metrics> metrics;
};

class Console {
 public:
  virtual ~Console() = default;  // stops the server and waits for its threads
  // The port listened on (the chosen one when `listen` asked for port 0).
  virtual int port() const = 0;
  // "http://127.0.0.1:8899" ("https://..." under TLS).
  virtual std::string url() const = 0;
};

// Validates `options`, loads the users file, connects to every registry (UNAVAILABLE naming
// the redacted URL when one cannot be reached), opens the tracing database and starts
// listening. INVALID_ARGUMENT naming the option (or the users file's line and field) for bad
// options, a non-loopback `listen` without users included; UNAVAILABLE when the address
// cannot be bound.
Result<std::unique_ptr<Console>> StartConsole(const ConsoleOptions& options);

// An argon2id hash of `password` for the users file (libsodium's crypto_pwhash_str, its
// interactive limits). INTERNAL when libsodium cannot (out of memory).
Result<std::string> HashConsolePassword(const std::string& password);

}  // namespace elasticjob

#endif  // ELASTICJOB_CONSOLE_CONSOLE_SERVER_H_
