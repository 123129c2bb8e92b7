// The web console's REST API against a real ZooKeeper (one server for this binary), with jobs
// running in this process (ScheduleJobBootstrap) and SQLite tracing: every endpoint, every
// error status, accounts, roles, CSRF, the read-only console, body and path limits, the event
// stream, redaction, TLS.
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "console/auth.h"
#include "elasticjob/api/simple_job.h"
#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/console/console_server.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/tracing/tracer.h"
#include "instance/instance_runtime.h"
#include "reg/coordinator_registry.h"
#include "reg/zk_test_server.h"

namespace elasticjob {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kHtmlDescription = "<script>alert('x')</script> & <b>bold</b>";

class CountingJob : public SimpleJob {
 public:
  void Execute(const ShardingContext& context) override {
    context.log().Log(LogLevel::kInfo, "item " + std::to_string(context.sharding_item) + " ran");
    std::lock_guard lock(mu_);
    ++runs_;
    cv_.notify_all();
  }
  bool WaitForRuns(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 20s, [&] { return runs_ >= n; });
  }
  int runs() {
    std::lock_guard lock(mu_);
    return runs_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int runs_ = 0;
};

struct HttpResult {
  int status = 0;
  json body;
  std::string text;
  httplib::Headers headers;
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// A browser's view of one console: its cookie and CSRF token once logged in.
class Browser {
 public:
  explicit Browser(int port) : client_("127.0.0.1", port) { client_.set_read_timeout(10, 0); }
  HttpResult Do(const std::string& method, const std::string& path, const std::string& body = "",
                bool with_csrf = true) {
    httplib::Headers headers;
    if (!cookie_.empty()) headers.emplace("Cookie", cookie_);
    if (with_csrf && !csrf_.empty()) headers.emplace("X-CSRF-Token", csrf_);
    httplib::Result r = method == "GET"      ? client_.Get(path, headers)
                        : method == "DELETE" ? client_.Delete(path, headers)
                        : method == "PUT"    ? client_.Put(path, headers, body, "application/json")
                                          : client_.Post(path, headers, body, "application/json");
    HttpResult out;
    if (!r) return out;
    out.status = r->status;
    out.text = r->body;
    out.headers = r->headers;
    out.body = json::parse(r->body, nullptr, false);
    return out;
  }
  HttpResult Get(const std::string& path) { return Do("GET", path); }
  HttpResult Post(const std::string& path, const json& body = json::object()) {
    return Do("POST", path, body.dump());
  }
  HttpResult Login(const std::string& user, const std::string& password) {
    HttpResult r = Do("POST", "/api/v1/login", json{{"user", user}, {"password", password}}.dump());
    if (r.status == 200) {
      std::string set = r.Header("Set-Cookie");
      cookie_ = set.substr(0, set.find(';'));
      csrf_ = r.body["csrf"].get<std::string>();
    }
    return r;
  }
  void set_csrf(std::string csrf) { csrf_ = std::move(csrf); }

 private:
  httplib::Client client_;
  std::string cookie_;
  std::string csrf_;
};

// Polls `condition` every 20 ms for up to 10 s.
template <typename F>
bool Eventually(F condition) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return condition();
}

class ConsoleApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    zk_ = new testing::ZkTestServer();
    Status up = zk_->Start();
    ASSERT_TRUE(up.ok()) << up;
    char tmpl[] = "/tmp/console_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = new std::string(tmpl);
    // Users: an admin and a guest.
    auto admin = HashConsolePassword("admin-pass");
    auto guest = HashConsolePassword("guest-pass");
    ASSERT_TRUE(admin.ok() && guest.ok());
    std::ofstream(*dir_ + "/users.yaml")
        << "users:\n"
        << "  - name: alice\n    role: admin\n    passwordHash: '" << *admin << "'\n"
        << "  - name: bob\n    role: guest\n    passwordHash: '" << *guest << "'\n";
    tracing_url_ = new std::string("sqlite://" + *dir_ + "/events.db");
    auto tracer = Tracer::Open({.url = *tracing_url_, .batch_delay = 10ms});
    ASSERT_TRUE(tracer.ok()) << tracer.status();
    tracer_ = new std::shared_ptr<Tracer>(*tracer);
    auto reg = NewRegistryCenter(zk_->Url("console", "connectionTimeoutMs=5000"));
    ASSERT_TRUE(reg.ok());
    reg_ = std::move(reg).value().release();
    ASSERT_TRUE(reg_->Init().ok());
    // Two running jobs that fire once a year: every run is an operator's trigger.
    job_ = new std::shared_ptr<CountingJob>(std::make_shared<CountingJob>());
    BootstrapOptions options;
    options.server_ip = "10.2.0.1";
    options.tracer = *tracer_;
    for (const char* name : {"alpha", "beta"}) {
      auto config = JobConfiguration::Builder(name, 2)
                        .Cron("0 0 0 1 1 ?")
                        .TimeZone("Asia/Shanghai")
                        .Description(std::string(name) == "alpha" ? kHtmlDescription : "plain")
                        .Build();
      ASSERT_TRUE(config.ok());
      boots_.push_back(new ScheduleJobBootstrap(*reg_, *job_, *config, options));
      ASSERT_TRUE(boots_.back()->Schedule().ok());
    }
    // The consoles: with accounts and tracing (its second registry is the same namespace,
    // with a digest the API must never show); and read-only without tracing.
    ConsoleOptions with_users;
    with_users.registry_urls = {
        zk_->Url("console"), zk_->Url("console", "digest=ops:topsecret&connectionTimeoutMs=5000")};
    with_users.tracing_url = *tracing_url_;
    with_users.listen = "127.0.0.1:0";
    with_users.users_file = *dir_ + "/users.yaml";
    with_users.max_event_clients = 2;
    with_users.event_ping_interval = 200ms;
    with_users.tracing_poll_interval = 100ms;
    auto console = StartConsole(with_users);
    ASSERT_TRUE(console.ok()) << console.status();
    console_ = std::move(console).value().release();
    ConsoleOptions read_only;
    read_only.registry_urls = {zk_->Url("console")};
    read_only.listen = "127.0.0.1:0";
    auto ro = StartConsole(read_only);
    ASSERT_TRUE(ro.ok()) << ro.status();
    read_only_ = std::move(ro).value().release();
  }

  static void TearDownTestSuite() {
    delete console_;
    delete read_only_;
    for (auto* boot : boots_) {
      boot->Shutdown();
      delete boot;
    }
    boots_.clear();
    if (reg_ != nullptr) reg_->Close();
    delete reg_;
    delete job_;
    delete tracer_;
    delete zk_;
    if (dir_ != nullptr) std::filesystem::remove_all(*dir_);
    delete dir_;
    delete tracing_url_;
  }

  void SetUp() override { ASSERT_NE(console_, nullptr); }

  static Browser Admin() {
    Browser b(console_->port());
    EXPECT_EQ(b.Login("alice", "admin-pass").status, 200);
    return b;
  }
  static Browser Guest() {
    Browser b(console_->port());
    EXPECT_EQ(b.Login("bob", "guest-pass").status, 200);
    return b;
  }
  static json JobRow(Browser& b, const std::string& name) {
    auto r = b.Get("/api/v1/registries/0/jobs");
    if (r.status != 200) return nullptr;
    for (const auto& row : r.body) {
      if (row["name"] == name) return row;
    }
    return nullptr;
  }

  static testing::ZkTestServer* zk_;
  static std::string* dir_;
  static std::string* tracing_url_;
  static std::shared_ptr<Tracer>* tracer_;
  static RegistryCenter* reg_;
  static std::shared_ptr<CountingJob>* job_;
  static std::vector<ScheduleJobBootstrap*> boots_;
  static Console* console_;
  static Console* read_only_;
};
testing::ZkTestServer* ConsoleApiTest::zk_ = nullptr;
std::string* ConsoleApiTest::dir_ = nullptr;
std::string* ConsoleApiTest::tracing_url_ = nullptr;
std::shared_ptr<Tracer>* ConsoleApiTest::tracer_ = nullptr;
RegistryCenter* ConsoleApiTest::reg_ = nullptr;
std::shared_ptr<CountingJob>* ConsoleApiTest::job_ = nullptr;
std::vector<ScheduleJobBootstrap*> ConsoleApiTest::boots_;
Console* ConsoleApiTest::console_ = nullptr;
Console* ConsoleApiTest::read_only_ = nullptr;

TEST_F(ConsoleApiTest, ServesTheEmbeddedPageWithSecurityHeaders) {
  Browser b(console_->port());
  HttpResult page = b.Get("/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.text.find("<html"), std::string::npos);
  EXPECT_EQ(page.Header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(page.Header("Content-Security-Policy"), "default-src 'self'");
  EXPECT_EQ(page.Header("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(page.Header("X-Frame-Options"), "DENY");
  EXPECT_EQ(page.Header("Referrer-Policy"), "no-referrer");
  EXPECT_EQ(b.Get("/index.html").status, 200);
  // Only embedded files: no traversal, no file system.
  for (const char* path :
       {"/assets/../index.html", "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
        "/assets/%2e%2e/%2e%2e/CMakeLists.txt", "/assets/nope.js"}) {
    HttpResult r = b.Get(path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_TRUE(r.body.contains("error")) << path << ": " << r.text;
  }
  // Error answers carry the headers too.
  HttpResult missing = b.Get("/api/v1/nothing");
  EXPECT_EQ(missing.status, 401);  // every API path needs a session first
  EXPECT_EQ(missing.Header("X-Frame-Options"), "DENY");
  Browser admin = Admin();
  EXPECT_EQ(admin.Get("/api/v1/nothing").status, 404);
}

// Never brotli (Debian's cpp-httplib would compress at quality 11: hundreds of ms per answer);
// gzip for a body of 1 KiB or more when the client accepts it, nothing otherwise.
TEST_F(ConsoleApiTest, GzipsLargeAnswersAndNeverBrotli) {
  httplib::Client raw("127.0.0.1", console_->port());
  raw.set_decompress(false);
  auto page = raw.Get("/assets/job.js", {{"Accept-Encoding", "gzip, deflate, br"}});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Encoding"), "gzip");
  EXPECT_EQ(page->get_header_value("Vary"), "Accept-Encoding");
  EXPECT_FALSE(page->has_header("X-Elasticjob-Accepts-Gzip"));
  ASSERT_GE(page->body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(page->body[0]), 0x1f);  // the gzip magic
  EXPECT_EQ(static_cast<unsigned char>(page->body[1]), 0x8b);
  auto br_only = raw.Get("/assets/job.js", {{"Accept-Encoding", "br"}});
  ASSERT_TRUE(br_only);
  EXPECT_FALSE(br_only->has_header("Content-Encoding"));
  EXPECT_NE(br_only->body.find("export"), std::string::npos);
  auto refused = raw.Get("/assets/job.js", {{"Accept-Encoding", "gzip;q=0, br"}});
  ASSERT_TRUE(refused);
  EXPECT_FALSE(refused->has_header("Content-Encoding"));
  // The decompressing client reads the same bytes as the plain one.
  httplib::Client plain("127.0.0.1", console_->port());
  auto inflated = plain.Get("/assets/job.js", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(inflated);
  EXPECT_EQ(inflated->body, br_only->body);
  // A small answer (an error) is sent as it is.
  auto small = raw.Get("/api/v1/registries", {{"Accept-Encoding", "gzip, br"}});
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 401);
  EXPECT_FALSE(small->has_header("Content-Encoding"));
  EXPECT_NE(small->body.find("error"), std::string::npos);
}

TEST_F(ConsoleApiTest, ListsRegistriesWithoutSecrets) {
  Browser b = Admin();
  HttpResult r = b.Get("/api/v1/registries");
  ASSERT_EQ(r.status, 200) << r.text;
  ASSERT_EQ(r.body.size(), 2u);
  EXPECT_EQ(r.body[0]["id"], 0);
  EXPECT_EQ(r.body[0]["namespace"], "console");
  EXPECT_EQ(r.body[0]["connected"], true);
  EXPECT_EQ(r.body[1]["url"], zk_->Url("console").substr(0, zk_->Url("console").find('?')));
  EXPECT_EQ(r.text.find("topsecret"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("digest"), std::string::npos) << r.text;
  // Nor in the session, nor anywhere a password hash.
  HttpResult s = b.Get("/api/v1/session");
  EXPECT_EQ(s.text.find("argon2"), std::string::npos);
  EXPECT_EQ(b.Get("/api/v1/registries/2/jobs").status, 404);
  EXPECT_EQ(b.Get("/api/v1/registries/x/jobs").status, 404);
}

TEST_F(ConsoleApiTest, NeverShowsATracingPassword) {
  ConsoleOptions options;
  options.registry_urls = {zk_->Url("console")};
  options.listen = "127.0.0.1:0";
  // A database that refuses the connection (port 1): the error must not carry the password.
  options.tracing_url = "postgresql://ops:hunter2secret@127.0.0.1:1/events";
  auto console = StartConsole(options);
  ASSERT_TRUE(console.ok()) << console.status();
  Browser b((*console)->port());
  HttpResult r = b.Get("/api/v1/registries/0/executions");
  EXPECT_EQ(r.status, 503) << r.text;
  EXPECT_NE(r.body["error"].get<std::string>().find("tracing database"), std::string::npos);
  EXPECT_EQ(r.text.find("hunter2secret"), std::string::npos) << r.text;
  EXPECT_EQ(b.Get("/api/v1/registries").text.find("hunter2secret"), std::string::npos);
  options.tracing_url = "postgresql://ops:hunter2secret@127.0.0.1:notaport/events";
  auto bad = StartConsole(options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find("hunter2secret"), std::string::npos) << bad.status();
}

TEST_F(ConsoleApiTest, ListsJobsFromTheWatchedView) {
  Browser b = Admin();
  json alpha;
  ASSERT_TRUE(Eventually([&] {
    alpha = JobRow(b, "alpha");
    return alpha.is_object() && alpha["instanceCount"] == 1 && alpha["status"] == "OK";
  })) << alpha;
  EXPECT_EQ(alpha["cron"], "0 0 0 1 1 ?");
  EXPECT_EQ(alpha["shardingTotalCount"], 2);
  EXPECT_TRUE(alpha["nextFireTime"].is_number());
  // HTML in a description is data: returned as it is, in JSON.
  EXPECT_EQ(alpha["description"], kHtmlDescription);
  HttpResult r = b.Get("/api/v1/registries/0/jobs");
  EXPECT_EQ(r.Header("Content-Type"), "application/json");
  ASSERT_GE(r.body.size(), 2u);
  EXPECT_LT(r.body[0]["name"].get<std::string>(), r.body[1]["name"].get<std::string>());
  // The second registry is the same namespace.
  EXPECT_TRUE(Eventually([&] { return b.Get("/api/v1/registries/1/jobs").body.size() >= 2; }));
}

TEST_F(ConsoleApiTest, ShowsOneJob) {
  Browser b = Admin();
  HttpResult r;
  ASSERT_TRUE(Eventually([&] {
    r = b.Get("/api/v1/registries/0/jobs/alpha");
    return r.status == 200 && r.body["sharding"].size() == 2 && r.body["instances"].size() == 1 &&
           r.body["sharding"][0]["instance"] != "";
  })) << r.text;
  EXPECT_EQ(r.body["status"], "OK");
  EXPECT_EQ(r.body["config"]["cron"], "0 0 0 1 1 ?");
  EXPECT_EQ(r.body["config"]["timeZone"], "Asia/Shanghai");
  EXPECT_EQ(r.body["config"]["description"], kHtmlDescription);
  EXPECT_NE(r.body["yaml"].get<std::string>().find("cron: 0 0 0 1 1 ?"), std::string::npos);
  EXPECT_EQ(r.body["sharding"][0]["status"], "PENDING");
  EXPECT_EQ(r.body["sharding"][0]["serverIp"], "10.2.0.1");
  EXPECT_EQ(r.body["sharding"][1]["failover"], false);
  EXPECT_EQ(r.body["instances"][0]["serverIp"], "10.2.0.1");
  EXPECT_EQ(r.body["instances"][0]["pid"], getpid());
  EXPECT_EQ(r.body["servers"][0]["ip"], "10.2.0.1");
  EXPECT_EQ(r.body["servers"][0]["status"], "ENABLED");
  EXPECT_EQ(r.body["nextFireTimes"].size(), 5u);
  HttpResult missing = b.Get("/api/v1/registries/0/jobs/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body["error"], "job 'nope' not found");
}

TEST_F(ConsoleApiTest, ShowsServersAndOverview) {
  Browser b = Admin();
  HttpResult servers;
  ASSERT_TRUE(Eventually([&] {
    servers = b.Get("/api/v1/registries/0/servers");
    return servers.status == 200 && !servers.body.empty() && servers.body[0]["jobs"].size() >= 2 &&
           servers.body[0]["instances"].size() == 1;
  })) << servers.text;
  EXPECT_EQ(servers.body[0]["ip"], "10.2.0.1");
  HttpResult one = b.Get("/api/v1/registries/0/servers/10.2.0.1");
  ASSERT_EQ(one.status, 200) << one.text;
  EXPECT_GE(one.body["jobs"].size(), 2u);
  EXPECT_EQ(one.body["instances"].size(), 1u);
  EXPECT_EQ(b.Get("/api/v1/registries/0/servers/10.9.9.9").status, 404);
  HttpResult overview = b.Get("/api/v1/registries/0/overview");
  ASSERT_EQ(overview.status, 200);
  EXPECT_GE(overview.body["jobs"]["total"], 2);
  EXPECT_GE(overview.body["servers"], 1);
  EXPECT_GE(overview.body["instances"], 1);
}

TEST_F(ConsoleApiTest, PreviewsCron) {
  Browser b(read_only_->port());
  HttpResult r = b.Get("/api/v1/cron?expr=0%200/5%20*%20*%20*%20%3F&zone=Asia/Shanghai&count=3");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["ok"], true);
  ASSERT_EQ(r.body["nextFireTimes"].size(), 3u);
  EXPECT_EQ(r.body["nextFireTimes"][1].get<int64_t>() - r.body["nextFireTimes"][0].get<int64_t>(),
            300000);
  HttpResult bad = b.Get("/api/v1/cron?expr=0%200%2025%20*%20*%20%3F");
  EXPECT_EQ(bad.body["ok"], false);
  EXPECT_NE(bad.body["error"].get<std::string>().find("hour"), std::string::npos) << bad.text;
  EXPECT_EQ(b.Get("/api/v1/cron?expr=x&count=0").status, 400);
}

TEST_F(ConsoleApiTest, ReadOnlyConsoleRefusesEveryChange) {
  Browser b(read_only_->port());
  HttpResult s = b.Get("/api/v1/session");
  EXPECT_EQ(s.body["authEnabled"], false);
  EXPECT_EQ(s.body["readOnly"], true);
  EXPECT_EQ(s.body["role"], "guest");
  EXPECT_TRUE(s.body["user"].is_null());
  EXPECT_TRUE(Eventually([&] { return b.Get("/api/v1/registries/0/jobs").body.size() >= 2; }));
  HttpResult trigger = b.Post("/api/v1/registries/0/jobs/alpha/trigger");
  EXPECT_EQ(trigger.status, 403);
  EXPECT_NE(trigger.body["error"].get<std::string>().find("read-only"), std::string::npos);
  EXPECT_EQ(b.Do("DELETE", "/api/v1/registries/0/jobs/alpha").status, 403);
  EXPECT_EQ(b.Post("/api/v1/login", {{"user", "alice"}, {"password", "admin-pass"}}).status, 403);
  // Validation writes nothing: allowed.
  HttpResult v =
      b.Post("/api/v1/registries/0/jobs/alpha/validate", {{"config", {{"cron", "bad"}}}});
  EXPECT_EQ(v.status, 200);
  EXPECT_EQ(v.body["ok"], false);
  // No tracing configured there.
  HttpResult e = b.Get("/api/v1/registries/0/executions");
  EXPECT_EQ(e.status, 404);
  EXPECT_EQ(e.body["error"], "tracing is not configured");
}

TEST_F(ConsoleApiTest, NeedsALoginWhenAccountsAreOn) {
  Browser b(console_->port());
  HttpResult s = b.Get("/api/v1/session");
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(s.body["authEnabled"], true);
  EXPECT_TRUE(s.body["user"].is_null());
  for (const char* path : {"/api/v1/registries", "/api/v1/registries/0/jobs", "/api/v1/events",
                           "/api/v1/registries/0/jobs/alpha"}) {
    HttpResult r = b.Get(path);
    EXPECT_EQ(r.status, 401) << path;
    EXPECT_TRUE(r.body.contains("error"));
  }
  EXPECT_EQ(b.Post("/api/v1/registries/0/jobs/alpha/trigger").status, 401);
}

TEST_F(ConsoleApiTest, LogsInAndOut) {
  Browser b(console_->port());
  // A body that is not JSON by its type (what another site's form could send) is refused.
  httplib::Client raw("127.0.0.1", console_->port());
  auto form =
      raw.Post("/api/v1/login", R"({"user":"alice","password":"admin-pass"})", "text/plain");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 400);
  EXPECT_TRUE(form->get_header_value("Set-Cookie").empty());
  HttpResult bad = b.Login("alice", "wrong");
  EXPECT_EQ(bad.status, 401);
  EXPECT_EQ(bad.body["error"], "wrong user or password");
  HttpResult ok = b.Login("alice", "admin-pass");
  ASSERT_EQ(ok.status, 200) << ok.text;
  const std::string cookie = ok.Header("Set-Cookie");
  EXPECT_NE(cookie.find("ejsession="), std::string::npos);
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);
  EXPECT_NE(cookie.find("Max-Age="), std::string::npos);
  EXPECT_EQ(cookie.find("Secure"), std::string::npos);  // not under plain HTTP
  EXPECT_EQ(ok.body["user"], "alice");
  EXPECT_EQ(ok.body["role"], "admin");
  EXPECT_EQ(ok.body["readOnly"], false);
  EXPECT_EQ(ok.body["csrf"].get<std::string>().size(), 64u);
  // The token is in the cookie only.
  EXPECT_EQ(ok.text.find(cookie.substr(10, 64)), std::string::npos);
  HttpResult s = b.Get("/api/v1/session");
  EXPECT_EQ(s.body["user"], "alice");
  EXPECT_EQ(s.body["csrf"], ok.body["csrf"]);
  EXPECT_EQ(b.Get("/api/v1/registries/0/jobs").status, 200);
  EXPECT_EQ(b.Post("/api/v1/logout").status, 204);
  EXPECT_EQ(b.Get("/api/v1/registries/0/jobs").status, 401);
}

TEST_F(ConsoleApiTest, SlowsDownFailedLogins) {
  Browser b(console_->port());
  for (int i = 0; i < console::LoginThrottle::kFreeFailures; ++i) {
    EXPECT_EQ(b.Login("mallory", "guess" + std::to_string(i)).status, 401);
  }
  HttpResult r = b.Login("mallory", "guess");
  EXPECT_EQ(r.status, 429);
  EXPECT_FALSE(r.Header("Retry-After").empty());
  EXPECT_NE(r.body["error"].get<std::string>().find("too many failed logins"), std::string::npos);
  // Per user: another name from the same address is not held up.
  EXPECT_EQ(b.Login("bob", "guest-pass").status, 200);
}

TEST_F(ConsoleApiTest, ChangesNeedTheCsrfToken) {
  Browser b = Admin();
  HttpResult none = b.Do("POST", "/api/v1/registries/0/jobs/alpha/disable", "{}", false);
  EXPECT_EQ(none.status, 403);
  EXPECT_NE(none.body["error"].get<std::string>().find("X-CSRF-Token"), std::string::npos);
  b.set_csrf(std::string(64, '0'));
  EXPECT_EQ(b.Post("/api/v1/registries/0/jobs/alpha/disable").status, 403);
  // Nothing was changed.
  EXPECT_EQ(JobRow(b, "alpha")["status"], "OK");
}

TEST_F(ConsoleApiTest, GuestsReadButCannotOperate) {
  Browser b = Guest();
  EXPECT_EQ(b.Get("/api/v1/session").body["readOnly"], true);
  EXPECT_EQ(b.Get("/api/v1/registries/0/jobs").status, 200);
  HttpResult r = b.Post("/api/v1/registries/0/jobs/alpha/trigger");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.body["error"], "role guest cannot operate");
  EXPECT_EQ(b.Post("/api/v1/registries/0/servers/10.2.0.1/disable").status, 403);
  HttpResult v = b.Post("/api/v1/registries/0/jobs/alpha/validate",
                        {{"config", {{"cron", "0 0/10 * * * ?"}}}});
  EXPECT_EQ(v.status, 200);
  EXPECT_EQ(v.body["ok"], true);
  EXPECT_EQ(v.body["timeZone"], "Asia/Shanghai");
  EXPECT_EQ(v.body["nextFireTimes"].size(), 5u);
}

// The Stop button's request (docs/scheduling.md): guarded like the other operations, the
// item checked, and the request written for the live instances.
TEST_F(ConsoleApiTest, StopsWhatAJobRunsGuardedAndCheckingTheItem) {
  EXPECT_EQ(Guest().Post("/api/v1/registries/0/jobs/alpha/stop").status, 403);
  Browser b = Admin();
  HttpResult bad = b.Post("/api/v1/registries/0/jobs/alpha/stop", {{"item", "one"}});
  EXPECT_EQ(bad.status, 400) << bad.text;
  EXPECT_EQ(bad.body["error"], "item: expected an item number, got \"one\"") << bad.text;
  HttpResult r = b.Post("/api/v1/registries/0/jobs/alpha/stop", {{"item", 1}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["stopped"], 1);
  auto node = reg_->GetDirectly("/alpha/stop");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_NE(node->find(" item=1 before="), std::string::npos) << *node;
  EXPECT_EQ(b.Post("/api/v1/registries/0/jobs/nope/stop").status, 404);
}

TEST_F(ConsoleApiTest, TriggersAJobAndShowsItsExecutions) {
  Browser b = Admin();
  const int before = (*job_)->runs();
  HttpResult r = b.Post("/api/v1/registries/0/jobs/alpha/trigger", {{"parameter", "now"}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["triggered"], 1);
  ASSERT_TRUE((*job_)->WaitForRuns(before + 2));  // both items
  HttpResult runs;
  ASSERT_TRUE(Eventually([&] {
    runs = b.Get("/api/v1/registries/0/executions?job=alpha&limit=10");
    return runs.status == 200 && runs.body["items"].size() >= 2 &&
           !runs.body["items"][0]["completeTime"].is_null();
  })) << runs.text;
  const json& run = runs.body["items"][0];
  EXPECT_EQ(run["jobName"], "alpha");
  EXPECT_EQ(run["success"], true);
  EXPECT_EQ(runs.body["limit"], 10);
  const std::string id = run["id"];
  HttpResult one = b.Get("/api/v1/registries/0/executions/" + id);
  ASSERT_EQ(one.status, 200) << one.text;
  EXPECT_EQ(one.body["id"], id);
  EXPECT_TRUE(one.body["statusTraces"].is_array());
  HttpResult logs = b.Get("/api/v1/registries/0/executions/" + id + "/logs");
  ASSERT_EQ(logs.status, 200) << logs.text;
  ASSERT_FALSE(logs.body["lines"].empty());
  EXPECT_NE(logs.body["lines"][0]["message"].get<std::string>().find("ran"), std::string::npos);
  EXPECT_EQ(logs.body["lines"][0]["level"], "INFO");
  HttpResult traces = b.Get("/api/v1/registries/0/status-traces?job=alpha&limit=5");
  ASSERT_EQ(traces.status, 200) << traces.text;
  EXPECT_FALSE(traces.body["items"].empty());
  HttpResult stats = b.Get("/api/v1/registries/0/stats?job=alpha");
  ASSERT_EQ(stats.status, 200) << stats.text;
  EXPECT_EQ(stats.body["successRate"], 1.0);
  EXPECT_FALSE(stats.body["buckets"].empty());
  EXPECT_EQ(b.Get("/api/v1/registries/0/executions/no-such-id").status, 404);
  EXPECT_EQ(b.Get("/api/v1/registries/0/executions?limit=0").status, 400);
  EXPECT_EQ(b.Get("/api/v1/registries/0/executions?success=maybe").status, 400);
  EXPECT_EQ(b.Get("/api/v1/registries/0/status-traces?state=NOPE").status, 400);
  // A job without a live instance cannot be triggered: 409.
  HttpResult added =
      b.Post("/api/v1/registries/0/jobs", {{"jobType", "SCRIPT"},
                                           {"config",
                                            {{"jobName", "orphan"},
                                             {"cron", "0 0 0 1 1 ?"},
                                             {"shardingTotalCount", 1},
                                             {"props", {{"script.command.line", "true"}}}}}});
  ASSERT_EQ(added.status, 201) << added.text;
  HttpResult orphan = b.Post("/api/v1/registries/0/jobs/orphan/trigger");
  EXPECT_EQ(orphan.status, 409);
  EXPECT_NE(orphan.body["error"].get<std::string>().find("no live instance"), std::string::npos);
  EXPECT_EQ(b.Do("DELETE", "/api/v1/registries/0/jobs/orphan").status, 204);
  EXPECT_EQ(b.Post("/api/v1/registries/0/jobs/nope/trigger").status, 404);
}

TEST_F(ConsoleApiTest, DisablesAndEnablesJobsServersAndItems) {
  Browser b = Admin();
  HttpResult r = b.Post("/api/v1/registries/0/jobs/beta/disable");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["changed"], 1);
  EXPECT_TRUE(Eventually([&] { return JobRow(b, "beta")["status"] == "DISABLED"; }));
  EXPECT_EQ(b.Post("/api/v1/registries/0/jobs/beta/enable").body["changed"], 1);
  EXPECT_TRUE(Eventually([&] { return JobRow(b, "beta")["status"] == "OK"; }));
  // A server, in every job.
  HttpResult s = b.Post("/api/v1/registries/0/servers/10.2.0.1/disable");
  ASSERT_EQ(s.status, 200) << s.text;
  EXPECT_GE(s.body["changed"], 2);
  EXPECT_TRUE(Eventually([&] {
    auto one = b.Get("/api/v1/registries/0/servers/10.2.0.1");
    return one.status == 200 && one.body["jobs"][0]["status"] == "DISABLED";
  }));
  EXPECT_GE(b.Post("/api/v1/registries/0/servers/10.2.0.1/enable").body["changed"], 2);
  EXPECT_TRUE(Eventually([&] { return JobRow(b, "alpha")["status"] == "OK"; }));
  EXPECT_EQ(b.Post("/api/v1/registries/0/servers/10.9.9.9/disable").status, 404);
  EXPECT_EQ(b.Post("/api/v1/registries/0/jobs/beta/disable", {{"server", "10.9.9.9"}}).status, 404);
  // One item.
  EXPECT_EQ(b.Post("/api/v1/registries/0/jobs/beta/items/1/disable").status, 204);
  EXPECT_TRUE(Eventually([&] {
    auto job = b.Get("/api/v1/registries/0/jobs/beta");
    return job.body["sharding"].size() == 2 && job.body["sharding"][1]["status"] == "DISABLED";
  }));
  EXPECT_EQ(b.Post("/api/v1/registries/0/jobs/beta/items/1/enable").status, 204);
  HttpResult bad_item = b.Post("/api/v1/registries/0/jobs/beta/items/7/disable");
  EXPECT_EQ(bad_item.status, 400);
  EXPECT_EQ(b.Post("/api/v1/registries/0/jobs/beta/items/x/disable").status, 400);
}

TEST_F(ConsoleApiTest, AddsUpdatesValidatesAndRemovesJobs) {
  Browser b = Admin();
  const json config = {{"jobName", "gamma"},
                       {"cron", "0 0/5 * * * ?"},
                       {"shardingTotalCount", 3},
                       {"description", "<img src=x onerror=alert(1)>"},
                       {"props", {{"script.command.line", "echo hi"}}}};
  HttpResult added =
      b.Post("/api/v1/registries/0/jobs", {{"jobType", "SCRIPT"}, {"config", config}});
  ASSERT_EQ(added.status, 201) << added.text;
  EXPECT_EQ(added.body["name"], "gamma");
  EXPECT_EQ(added.body["jobType"], "SCRIPT");
  EXPECT_EQ(added.body["config"]["shardingTotalCount"], 3);
  EXPECT_EQ(added.body["config"]["description"], "<img src=x onerror=alert(1)>");
  EXPECT_EQ(added.body["status"], "CRASHED");  // no instance runs it
  HttpResult again =
      b.Post("/api/v1/registries/0/jobs", {{"jobType", "SCRIPT"}, {"config", config}});
  EXPECT_EQ(again.status, 409);
  json bad = config;
  bad["jobName"] = "delta";
  bad["cron"] = "0 0 25 * * ?";
  HttpResult refused =
      b.Post("/api/v1/registries/0/jobs", {{"jobType", "SCRIPT"}, {"config", bad}});
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.body["field"], "cron");
  EXPECT_EQ(b.Post("/api/v1/registries/0/jobs", {{"config", config}}).body["field"], "jobType");
  HttpResult wrong_type =
      b.Post("/api/v1/registries/0/jobs",
             {{"jobType", "SCRIPT"}, {"config", {{"shardingTotalCount", "3"}}}});
  EXPECT_EQ(wrong_type.status, 400);
  EXPECT_EQ(wrong_type.body["field"], "shardingTotalCount");
  EXPECT_EQ(b.Get("/api/v1/registries/0/jobs/delta").status, 404);
  // An update: refused with the field named and nothing written, then accepted.
  HttpResult no = b.Do("PUT", "/api/v1/registries/0/jobs/gamma/config",
                       json{{"config", {{"cron", "0 0 25 * * ?"}}}}.dump());
  EXPECT_EQ(no.status, 400);
  EXPECT_EQ(no.body["field"], "cron");
  EXPECT_NE(no.body["error"].get<std::string>().find("25"), std::string::npos);
  auto stored = reg_->GetDirectly("/gamma/config");
  ASSERT_TRUE(stored.ok());
  EXPECT_NE(stored->find("0 0/5 * * * ?"), std::string::npos);
  // Valid YAML no instance can run: refused naming the field and the known names (issue 31).
  for (const auto& [field, value, known] :
       {std::tuple{"jobShardingStrategyType", "NO_SUCH", "AVG_ALLOCATION"},
        std::tuple{"jobExecutorThreadPoolSizeProviderType", "NO_SUCH", "SINGLE_THREAD"},
        std::tuple{"jobErrorHandlerType", "NO_SUCH", "DINGTALK"}}) {
    HttpResult unknown = b.Do("PUT", "/api/v1/registries/0/jobs/gamma/config",
                              json{{"config", {{field, value}}}}.dump());
    EXPECT_EQ(unknown.status, 400) << unknown.text;
    EXPECT_EQ(unknown.body["field"], field) << unknown.text;
    EXPECT_NE(unknown.body["error"].get<std::string>().find(known), std::string::npos)
        << unknown.text;
    json unknown_job = config;
    unknown_job["jobName"] = "epsilon";
    unknown_job[field] = value;
    HttpResult add_unknown =
        b.Post("/api/v1/registries/0/jobs", {{"jobType", "SCRIPT"}, {"config", unknown_job}});
    EXPECT_EQ(add_unknown.status, 400) << add_unknown.text;
    EXPECT_EQ(add_unknown.body["field"], field) << add_unknown.text;
    HttpResult validated =
        b.Post("/api/v1/registries/0/jobs/gamma/validate", {{"config", {{field, value}}}});
    EXPECT_EQ(validated.body["ok"], false) << validated.text;
  }
  EXPECT_EQ(b.Get("/api/v1/registries/0/jobs/epsilon").status, 404);
  stored = reg_->GetDirectly("/gamma/config");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->find("NO_SUCH"), std::string::npos);
  HttpResult yes = b.Do("PUT", "/api/v1/registries/0/jobs/gamma/config",
                        json{{"config", {{"cron", "0 0/7 * * * ?"}}}}.dump());
  ASSERT_EQ(yes.status, 200) << yes.text;
  EXPECT_EQ(yes.body["config"]["cron"], "0 0/7 * * * ?");
  EXPECT_EQ(yes.body["config"]["shardingTotalCount"], 3);  // fields not given are kept
  HttpResult by_yaml = b.Do("PUT", "/api/v1/registries/0/jobs/gamma/config",
                            json{{"yaml",
                                  "jobName: gamma\ncron: 0 0/9 * * * ?\nshardingTotalCount: 1\n"
                                  "props:\n  script.command.line: echo hi\n"}}
                                .dump());
  ASSERT_EQ(by_yaml.status, 200) << by_yaml.text;
  EXPECT_EQ(by_yaml.body["config"]["shardingTotalCount"], 1);
  HttpResult other =
      b.Do("PUT", "/api/v1/registries/0/jobs/gamma/config",
           json{{"yaml", "jobName: other\ncron: 0 0/9 * * * ?\nshardingTotalCount: 1\n"}}.dump());
  EXPECT_EQ(other.status, 400);
  EXPECT_EQ(other.body["field"], "jobName");
  EXPECT_EQ(b.Do("PUT", "/api/v1/registries/0/jobs/nope/config",
                 json{{"config", {{"cron", "0 0/7 * * * ?"}}}}.dump())
                .status,
            404);
  // Validation as the editor types.
  HttpResult v =
      b.Post("/api/v1/registries/0/jobs/gamma/validate", {{"config", {{"shardingTotalCount", 0}}}});
  ASSERT_EQ(v.status, 200);
  EXPECT_EQ(v.body["ok"], false);
  EXPECT_EQ(v.body["errors"][0]["field"], "shardingTotalCount");
  EXPECT_EQ(b.Post("/api/v1/registries/0/jobs/gamma/validate", {{"yaml", "[unclosed"}}).body["ok"],
            false);
  HttpResult not_json = b.Do("POST", "/api/v1/registries/0/jobs/gamma/validate", "{nope");
  EXPECT_EQ(not_json.status, 400);
  // Removal.
  EXPECT_EQ(b.Do("DELETE", "/api/v1/registries/0/jobs/gamma").status, 204);
  EXPECT_EQ(b.Do("DELETE", "/api/v1/registries/0/jobs/gamma").status, 404);
  EXPECT_TRUE(Eventually([&] { return b.Get("/api/v1/registries/0/jobs/gamma").status == 404; }));
}

TEST_F(ConsoleApiTest, RefusesBodiesOverOneMebibyte) {
  Browser b = Admin();
  const std::string big = json{{"parameter", std::string(1100000, 'x')}}.dump();
  HttpResult r = b.Do("POST", "/api/v1/registries/0/jobs/alpha/trigger", big);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.body["error"], "request body larger than 1 MiB");
}

// Reads an event stream on a thread of its own until `until` is found in it.
class EventReader {
 public:
  EventReader(int port, std::string cookie) : client_("127.0.0.1", port) {
    client_.set_read_timeout(5, 0);
    thread_ = std::thread([this, cookie] {
      httplib::Headers headers = {{"Cookie", cookie}};
      auto r = client_.Get(
          "/api/v1/events", headers,
          [this](const httplib::Response& res) {
            std::lock_guard lock(mu_);
            status_ = res.status;
            cv_.notify_all();
            return true;
          },
          [this](const char* data, size_t n) {
            std::lock_guard lock(mu_);
            text_.append(data, n);
            cv_.notify_all();
            return !stop_;
          });
      std::lock_guard lock(mu_);
      if (r && status_ == 0) status_ = r->status;
      done_ = true;
      cv_.notify_all();
    });
  }
  ~EventReader() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    thread_.join();
  }
  bool WaitFor(const std::string& needle) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return text_.find(needle) != std::string::npos; });
  }
  bool WaitForEnd() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return done_; });
  }
  int WaitForStatus() {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 10s, [&] { return status_ != 0 || done_; });
    return status_;
  }
  std::string text() {
    std::lock_guard lock(mu_);
    return text_;
  }

 private:
  httplib::Client client_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string text_;
  int status_ = 0;
  bool done_ = false;
  bool stop_ = false;
  std::thread thread_;
};

TEST_F(ConsoleApiTest, StreamsJobEventsAfterAnOperation) {
  Browser b(console_->port());
  HttpResult login = b.Login("alice", "admin-pass");
  ASSERT_EQ(login.status, 200);
  const std::string cookie =
      login.Header("Set-Cookie").substr(0, login.Header("Set-Cookie").find(';'));
  EventReader events(console_->port(), cookie);
  ASSERT_EQ(events.WaitForStatus(), 200);
  ASSERT_TRUE(events.WaitFor(": connected"));
  ASSERT_EQ(b.Post("/api/v1/registries/0/jobs/beta/disable").status, 200);
  EXPECT_TRUE(events.WaitFor("event: job\ndata: {\"job\":\"beta\",\"registry\":0}"))
      << events.text();
  EXPECT_TRUE(events.WaitFor(": ping")) << events.text();
  ASSERT_EQ(b.Post("/api/v1/registries/0/jobs/beta/enable").status, 200);
  // A new job: a `jobs` event.
  ASSERT_EQ(b.Post("/api/v1/registries/0/jobs", {{"jobType", "SCRIPT"},
                                                 {"config",
                                                  {{"jobName", "streamed"},
                                                   {"cron", "0 0 0 1 1 ?"},
                                                   {"shardingTotalCount", 1},
                                                   {"props", {{"script.command.line", "true"}}}}}})
                .status,
            201);
  EXPECT_TRUE(events.WaitFor("event: jobs\ndata: {\"registry\":0}")) << events.text();
  EXPECT_EQ(b.Do("DELETE", "/api/v1/registries/0/jobs/streamed").status, 204);
  // Executions, from the tracing database's poll.
  ASSERT_EQ(b.Post("/api/v1/registries/0/jobs/alpha/trigger").status, 200);
  EXPECT_TRUE(events.WaitFor("event: execution\n")) << events.text();
  // Streams are bounded (2 here): the third is refused, the others go on.
  EventReader second(console_->port(), cookie);
  ASSERT_EQ(second.WaitForStatus(), 200);
  EventReader third(console_->port(), cookie);
  EXPECT_EQ(third.WaitForStatus(), 503);
  EXPECT_EQ(b.Get("/api/v1/registries/0/jobs").status, 200);  // requests are not starved
  // A stream ends with its session.
  ASSERT_EQ(b.Post("/api/v1/logout").status, 204);
  EXPECT_TRUE(second.WaitForEnd()) << second.text();
}

TEST_F(ConsoleApiTest, RefusesANonLoopbackAddressWithoutUsers) {
  ConsoleOptions options;
  options.registry_urls = {zk_->Url("console")};
  options.listen = "0.0.0.0:0";
  auto console = StartConsole(options);
  ASSERT_FALSE(console.ok());
  EXPECT_EQ(console.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(console.status().message().find("--users"), std::string::npos);
  options.listen = "127.0.0.1";
  EXPECT_EQ(StartConsole(options).status().code(), StatusCode::kInvalidArgument);
  options.listen = "127.0.0.1:0";
  options.tls_cert_file = "/nonexistent.pem";
  EXPECT_EQ(StartConsole(options).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ConsoleApiTest, ReportsABadUsersFileByLineAndField) {
  auto table = console::UserTable::Parse(
      "users:\n  - name: a\n    role: admin\n    passwordHash: '$argon2id$x'\n"
      "  - name: b\n    role: root\n    passwordHash: '$argon2id$y'\n",
      "users.yaml");
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().message(), "users.yaml:6: role: 'root': expected admin or guest");
  auto no_hash = console::UserTable::Parse(
      "users:\n  - name: a\n    role: admin\n    passwordHash: plain\n", "u.yaml");
  ASSERT_FALSE(no_hash.ok());
  EXPECT_NE(no_hash.status().message().find("u.yaml:4: passwordHash"), std::string::npos);
  EXPECT_EQ(no_hash.status().message().find("plain"), std::string::npos);  // never echoed
}

TEST_F(ConsoleApiTest, ServesHttpsWithSecureCookies) {
  const std::string cert = *dir_ + "/cert.pem";
  const std::string key = *dir_ + "/key.pem";
  const std::string cmd =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
      "-keyout " +
      key + " -out " + cert + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  ConsoleOptions options;
  options.registry_urls = {zk_->Url("console")};
  options.listen = "127.0.0.1:0";
  options.users_file = *dir_ + "/users.yaml";
  options.tls_cert_file = cert;
  options.tls_key_file = key;
  auto console = StartConsole(options);
  ASSERT_TRUE(console.ok()) << console.status();
  EXPECT_TRUE((*console)->url().starts_with("https://127.0.0.1:"));
  httplib::SSLClient client("127.0.0.1", (*console)->port());
  client.enable_server_certificate_verification(false);
  auto login = client.Post("/api/v1/login", R"({"user":"alice","password":"admin-pass"})",
                           "application/json");
  ASSERT_TRUE(login);
  EXPECT_EQ(login->status, 200);
  EXPECT_NE(login->get_header_value("Set-Cookie").find("; Secure"), std::string::npos);
  // Plain HTTP to the TLS port gets nothing.
  httplib::Client plain("127.0.0.1", (*console)->port());
  plain.set_read_timeout(2, 0);
  auto r = plain.Get("/api/v1/session");
  EXPECT_TRUE(!r || r->status != 200);
}

TEST_F(ConsoleApiTest, RefusesToStartOnAPortAnotherConsoleListensOn) {
  ConsoleOptions options;
  options.registry_urls = {zk_->Url("console")};
  const std::string taken = "127.0.0.1:" + std::to_string(read_only_->port());
  options.listen = taken;
  auto second = StartConsole(options);
  ASSERT_FALSE(second.ok()) << "a second console listens on " << taken;
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find(taken), std::string::npos) << second.status();
  EXPECT_NE(second.status().message().find("in use"), std::string::npos) << second.status();
  // The first still answers every request (none goes to a second listener).
  Browser b(read_only_->port());
  for (int i = 0; i < 20; ++i) ASSERT_EQ(b.Get("/api/v1/session").status, 200);
}

// Runs one pass of `job` (its `items` items, counted by `counter`) from an operator's trigger
// and returns its newest execution once it and its pass's end are in the database.
json TriggerAndWait(Browser& b, const std::string& job, CountingJob& counter, int items) {
  const std::string executions = "/api/v1/registries/0/executions?limit=500&job=" + job;
  const size_t recorded = b.Get(executions).body["items"].size();
  const int before = counter.runs();
  HttpResult r = b.Post("/api/v1/registries/0/jobs/" + job + "/trigger");
  EXPECT_EQ(r.status, 200) << r.text;
  EXPECT_TRUE(counter.WaitForRuns(before + items));
  json newest;
  EXPECT_TRUE(Eventually([&] {
    HttpResult runs = b.Get(executions);
    // The tracer writes in batches: this pass's rows, all of them finished.
    if (runs.status != 200 || runs.body["items"].size() < recorded + items) return false;
    for (size_t i = 0; i < static_cast<size_t>(items); ++i) {
      if (runs.body["items"][i]["completeTime"].is_null()) return false;
    }
    newest = runs.body["items"][0];
    HttpResult traces = b.Get("/api/v1/registries/0/status-traces?limit=1&taskId=" +
                              newest["taskId"].get<std::string>());
    return traces.status == 200 && !traces.body["items"].empty() &&
           traces.body["items"][0]["state"] == "TASK_FINISHED" &&
           traces.body["items"][0]["creationTime"] >= newest["completeTime"];
  })) << newest;
  return newest;
}

TEST_F(ConsoleApiTest, ShowsOnlyTheStatusTracesOfTheExecutionsOwnPass) {
  Browser b = Admin();
  const json first = TriggerAndWait(b, "alpha", **job_, 2);
  const json second = TriggerAndWait(b, "alpha", **job_, 2);
  ASSERT_EQ(first["taskId"], second["taskId"]);  // every pass of these items on this instance
  HttpResult all = b.Get("/api/v1/registries/0/status-traces?limit=500&taskId=" +
                         second["taskId"].get<std::string>());
  ASSERT_GE(all.body["items"].size(), 6u) << all.text;
  for (const json& run : {first, second}) {
    HttpResult one = b.Get("/api/v1/registries/0/executions/" + run["id"].get<std::string>());
    ASSERT_EQ(one.status, 200) << one.text;
    const json& traces = one.body["statusTraces"];
    ASSERT_EQ(traces.size(), 3u) << traces;
    EXPECT_EQ(traces[0]["state"], "TASK_STAGING");
    EXPECT_EQ(traces[1]["state"], "TASK_RUNNING");
    EXPECT_EQ(traces[2]["state"], "TASK_FINISHED");
    EXPECT_LE(traces[0]["creationTime"], run["startTime"]);
    EXPECT_GE(traces[2]["creationTime"], run["completeTime"]);
  }
  // The first pass's rows are all before the second's start.
  HttpResult older = b.Get("/api/v1/registries/0/executions/" + first["id"].get<std::string>());
  EXPECT_LT(older.body["statusTraces"][2]["creationTime"], second["startTime"]);
}

class FailingJob : public SimpleJob {
 public:
  void Execute(const ShardingContext&) override {
    runs_.fetch_add(1);
    throw std::runtime_error("the database refused the batch");
  }
  int runs() const { return runs_.load(); }

 private:
  std::atomic<int> runs_{0};
};

TEST_F(ConsoleApiTest, ShowsTheLastRunAndFailingForAJobWhoseRunsFail) {
  auto failing = std::make_shared<FailingJob>();
  BootstrapOptions options;
  options.server_ip = "10.2.0.1";
  options.tracer = *tracer_;
  auto config = JobConfiguration::Builder("failing", 1).Cron("0 0 0 1 1 ?").Build();
  ASSERT_TRUE(config.ok());
  ScheduleJobBootstrap boot(*reg_, failing, *config, options);
  ASSERT_TRUE(boot.Schedule().ok());
  Browser b = Admin();
  ASSERT_TRUE(Eventually([&] { return JobRow(b, "failing")["instanceCount"] == 1; }));
  ASSERT_EQ(b.Post("/api/v1/registries/0/jobs/failing/trigger").status, 200);
  json row;
  EXPECT_TRUE(Eventually([&] {
    row = JobRow(b, "failing");
    return row.is_object() && row["status"] == "FAILING";
  })) << row;
  ASSERT_TRUE(row["lastRun"].is_object()) << row;
  EXPECT_EQ(row["lastRun"]["success"], false);
  EXPECT_EQ(row["lastRun"]["shardingItem"], 0);
  EXPECT_NE(row["lastRun"]["failureCause"].get<std::string>().find("refused the batch"),
            std::string::npos);
  EXPECT_TRUE(row["lastRun"]["startTime"].is_number());
  HttpResult one = b.Get("/api/v1/registries/0/jobs/failing");
  EXPECT_EQ(one.body["status"], "FAILING");
  EXPECT_EQ(one.body["lastRun"]["id"], row["lastRun"]["id"]);
  HttpResult overview = b.Get("/api/v1/registries/0/overview");
  EXPECT_GE(overview.body["jobs"]["FAILING"], 1);
  // A job whose runs succeed stays OK, with its last run.
  TriggerAndWait(b, "alpha", **job_, 2);
  json alpha;
  EXPECT_TRUE(Eventually([&] {
    alpha = JobRow(b, "alpha");
    return alpha["lastRun"].is_object() && alpha["lastRun"]["success"] == true;
  })) << alpha;
  EXPECT_EQ(alpha["status"], "OK");
  boot.Shutdown();
  EXPECT_EQ(b.Do("DELETE", "/api/v1/registries/0/jobs/failing").status, 204);
}

TEST_F(ConsoleApiTest, ShowsEachServersHostNameAndTheJobsOfEachInstance) {
  Browser b = Admin();
  const json run = TriggerAndWait(b, "alpha", **job_, 2);
  HttpResult servers;
  ASSERT_TRUE(Eventually([&] {
    servers = b.Get("/api/v1/registries/0/servers");
    return servers.status == 200 && !servers.body.empty() &&
           servers.body[0]["hostname"].is_string() &&
           servers.body[0]["instanceDetails"].size() == 1 &&
           servers.body[0]["instanceDetails"][0]["jobs"] == json::array({"alpha", "beta"});
  })) << servers.text;
  const json& server = servers.body[0];
  EXPECT_EQ(server["hostname"], run["hostname"]);
  ASSERT_EQ(server["instanceDetails"].size(), 1u) << server;
  const json& instance = server["instanceDetails"][0];
  EXPECT_EQ(instance["id"], server["instances"][0]);
  EXPECT_EQ(instance["pid"], getpid());
  EXPECT_EQ(instance["jobs"], json::array({"alpha", "beta"}));
  HttpResult one = b.Get("/api/v1/registries/0/servers/10.2.0.1");
  ASSERT_EQ(one.status, 200) << one.text;
  EXPECT_EQ(one.body["hostname"], run["hostname"]);
  EXPECT_EQ(one.body["instanceDetails"][0]["jobs"], json::array({"alpha", "beta"}));
}

// Version, uptime and heartbeat come from each instance's `runtime/{id}` node (this
// process's jobs write one); a Java instance has none and shows nulls.
TEST_F(ConsoleApiTest, ShowsEachInstancesVersionUptimeAndHeartbeatAndNullsForAJavaOne) {
  Browser b = Admin();
  HttpResult servers;
  auto ours = [&]() -> json {
    for (const json& s : servers.body) {
      if (s["ip"] == "10.2.0.1" && s["instanceDetails"].size() == 1) {
        return s["instanceDetails"][0];
      }
    }
    return nullptr;
  };
  ASSERT_TRUE(Eventually([&] {
    servers = b.Get("/api/v1/registries/0/servers");
    return servers.status == 200 && ours().is_object() && ours()["version"].is_string();
  })) << servers.text;
  const json instance = ours();
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  EXPECT_EQ(instance["version"], std::string(instance::LibraryVersion())) << instance;
  EXPECT_EQ(instance["hostname"], std::string(host));
  EXPECT_EQ(instance["startTime"], instance::ProcessStartTime());
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  EXPECT_GE(instance["uptimeMs"].get<int64_t>(), 0);
  EXPECT_LE(instance["uptimeMs"].get<int64_t>(), now_ms - instance::ProcessStartTime());
  EXPECT_GE(instance["registeredTime"].get<int64_t>(), instance::ProcessStartTime());
  EXPECT_EQ(instance["heartbeatWithinMs"], reg::CoordinatorRef(*reg_)->session_timeout().count());
  EXPECT_GT(instance["heartbeatWithinMs"].get<int64_t>(), 0);

  // A Java instance: the instance node only.
  const std::string java = "10.9.9.9@-@77";
  ASSERT_TRUE(reg_->Persist("/javaonly/config", *reg_->GetDirectly("/beta/config")).ok());
  ASSERT_TRUE(reg_->Persist("/javaonly/servers/10.9.9.9", "ENABLED").ok());
  ASSERT_TRUE(reg_->PersistEphemeral("/javaonly/instances/" + java,
                                     "jobInstanceId: " + java + "\nserverIp: 10.9.9.9\n")
                  .ok());
  HttpResult one;
  ASSERT_TRUE(Eventually([&] {
    one = b.Get("/api/v1/registries/0/servers/10.9.9.9");
    return one.status == 200 && one.body["instanceDetails"].size() == 1;
  })) << one.text;
  const json& j = one.body["instanceDetails"][0];
  EXPECT_EQ(j["id"], java);
  EXPECT_EQ(j["pid"], 77);
  for (const char* key :
       {"version", "hostname", "startTime", "uptimeMs", "registeredTime", "heartbeatWithinMs"}) {
    EXPECT_TRUE(j.contains(key) && j[key].is_null()) << key << ": " << j;
  }
  EXPECT_EQ(b.Do("DELETE", "/api/v1/registries/0/jobs/javaonly").status, 204);
  (void)reg_->Remove("/javaonly");  // whatever DELETE left
}

// Last: pauses the suite's ZooKeeper for a few seconds.
TEST_F(ConsoleApiTest, AnswersUnavailableWhileTheRegistryIsUnreachable) {
  ConsoleOptions options;
  // A short session and no retries: the registry's loss shows within ~3 s.
  options.registry_urls = {zk_->Url("console", "sessionTimeoutMs=4000&maxRetries=0")};
  options.listen = "127.0.0.1:0";
  options.users_file = *dir_ + "/users.yaml";
  auto console = StartConsole(options);
  ASSERT_TRUE(console.ok()) << console.status();
  Browser b((*console)->port());
  ASSERT_EQ(b.Login("alice", "admin-pass").status, 200);
  ASSERT_EQ(b.Get("/api/v1/registries").body[0]["connected"], true);
  zk_->Pause();
  HttpResult r = b.Post("/api/v1/registries/0/jobs/alpha/trigger");
  const bool disconnected =
      Eventually([&] { return b.Get("/api/v1/registries").body[0]["connected"] == false; });
  // The list is still served, from the console's copy.
  HttpResult list = b.Get("/api/v1/registries/0/jobs");
  zk_->Resume();
  EXPECT_EQ(r.status, 503) << r.text;
  EXPECT_TRUE(r.body.contains("error"));
  EXPECT_TRUE(disconnected);
  EXPECT_EQ(list.status, 200);
  EXPECT_GE(list.body.size(), 2u);
  EXPECT_TRUE(Eventually([&] { return b.Get("/api/v1/registries").body[0]["connected"] == true; }));
}

}  // namespace
}  // namespace elasticjob
