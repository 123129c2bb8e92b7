// The dump port of a job running on a real ZooKeeper server (docs/dump.md): the dump of the
// running job with its addresses masked, a node where the instance's watch-fed cache
// disagrees with the server, and clients that never send a line or open too many
// connections while the job keeps firing.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "elasticjob/reg/registry_center.h"
#include "reg/coordinator_registry.h"
#include "reg/zk_test_server.h"
#include "snapshot/snapshot_service.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

class CountingJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext&) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++runs_;
    cv_.notify_all();
  }
  int runs() {
    std::lock_guard<std::mutex> lock(mu_);
    return runs_;
  }
  // Whether the job has run more than `n` times within `bound`.
  bool WaitForMoreThan(int n, std::chrono::milliseconds bound) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, bound, [&] { return runs_ > n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int runs_ = 0;
};

// A port free now (bound to port 0, then released).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  return fd;
}

// Whether the server closed `fd` (with nothing sent) within `bound`.
bool ClosedUnansweredWithin(int fd, std::chrono::milliseconds bound) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(bound.count())) <= 0) return false;
  char c;
  return recv(fd, &c, 1, 0) == 0;
}

class DumpPortTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status up = zk_.Start();
    ASSERT_TRUE(up.ok()) << up;
    registry_ = Client();
    ASSERT_NE(registry_, nullptr);
  }
  void TearDown() override {
    bootstrap_.reset();
    if (registry_) registry_->Close();
  }
  std::unique_ptr<RegistryCenter> Client() {
    auto r = NewRegistryCenter(zk_.Url("dump", "sessionTimeoutMs=10000&connectionTimeoutMs=5000"));
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return nullptr;
    Status s = (*r)->Init();
    EXPECT_TRUE(s.ok()) << s;
    return std::move(r).value();
  }
  // Schedules `dumpJob` (every second, 2 items) on the dump port, as host 10.1.2.3, and waits
  // for its first run.
  void Schedule(DumpPortOptions dump) {
    port_ = FreePort();
    auto config = JobConfiguration::Builder("dumpJob", 2)
                      .Cron("* * * * * ?")
                      .MonitorPort(port_)
                      .Description("the dump port's test job")
                      .Build();
    ASSERT_TRUE(config.ok()) << config.status();
    BootstrapOptions options;
    options.server_ip = "10.1.2.3";
    options.on_item_run = [](const ItemRunReport&) {};
    options.dump_port = std::move(dump);
    bootstrap_ = std::make_unique<ScheduleJobBootstrap>(*registry_, job_, *config, options);
    Status s = bootstrap_->Schedule();
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_TRUE(job_->WaitForMoreThan(0, 20s)) << "the job never ran";
  }
  Result<std::string> Dump() { return snapshot::RequestDump("127.0.0.1", port_, "dumpJob", 10s); }

  testing::ZkTestServer zk_;
  std::unique_ptr<RegistryCenter> registry_;
  std::shared_ptr<CountingJob> job_ = std::make_shared<CountingJob>();
  std::unique_ptr<ScheduleJobBootstrap> bootstrap_;
  int port_ = 0;
};

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

TEST_F(DumpPortTest, DumpsTheRunningJobWithItsAddressesMasked) {
  Schedule({});
  auto dump = Dump();
  ASSERT_TRUE(dump.ok()) << dump.status();
  const std::string self = "ip1@-@" + std::to_string(getpid());
  EXPECT_TRUE(Has(*dump, "/dumpJob/servers/ip1 | ENABLED")) << *dump;
  EXPECT_TRUE(Has(*dump, "/dumpJob/instances/" + self + " | jobInstanceId: " + self)) << *dump;
  EXPECT_TRUE(Has(*dump, "/dumpJob/leader/election/instance | " + self)) << *dump;
  EXPECT_TRUE(Has(*dump, "/dumpJob/sharding/0/instance | " + self)) << *dump;
  EXPECT_TRUE(Has(*dump, "/dumpJob/sharding/1/instance | " + self)) << *dump;
  EXPECT_NE(dump->find("\n/dumpJob/config | "), std::string::npos) << *dump;
  EXPECT_NE(dump->find("description: the dump port's test job\n"), std::string::npos) << *dump;
  EXPECT_EQ(dump->find("10.1.2.3"), std::string::npos) << *dump;
  // The cache agrees with the server everywhere: no line has a cached pair.
  EXPECT_EQ(dump->find(" | /dumpJob/"), std::string::npos) << *dump;
}

TEST_F(DumpPortTest, ShowsWhereTheCacheDisagreesWithTheServer) {
  Schedule({});
  auto other = Client();  // another client: its writes reach this instance only by watches
  ASSERT_NE(other, nullptr);
  // A server node has no children watch (the layout gives it none): a child made by
  // someone else never reaches the cache.
  ASSERT_TRUE(other->Persist("/dumpJob/servers/10.1.2.3/extra", "x").ok());
  // A trigger node has no value watch: the cache sees it come, not change.
  ASSERT_TRUE(other->Persist("/dumpJob/trigger/someone", "a").ok());
  for (auto until = SteadyClock::now() + 10s;
       reg::CoordinatorRef(*registry_)->GetCached("/dumpJob/trigger/someone").value != "a" &&
       SteadyClock::now() < until;) {
    std::this_thread::sleep_for(10ms);  // polls the cache for a condition, bounded
  }
  ASSERT_EQ(reg::CoordinatorRef(*registry_)->GetCached("/dumpJob/trigger/someone").value, "a");
  ASSERT_TRUE(other->Update("/dumpJob/trigger/someone", "b").ok());
  auto dump = Dump();
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_TRUE(Has(*dump, "/dumpJob/servers/ip1/extra | x |  | ")) << *dump;
  EXPECT_TRUE(Has(*dump, "/dumpJob/trigger/someone | b | /dumpJob/trigger/someone | a")) << *dump;
  EXPECT_TRUE(Has(*dump, "/dumpJob/servers/ip1 | ENABLED")) << *dump;
  other->Close();
}

TEST_F(DumpPortTest, AClientThatNeverSendsANewlineStallsNeitherTheJobNorThePort) {
  Schedule({"127.0.0.1", 3s, 8});
  const int runs_before = job_->runs();
  const auto start = SteadyClock::now();
  int silent = Connect(port_);
  ASSERT_EQ(send(silent, "dump@dumpJob", 12, MSG_NOSIGNAL), 12);  // no newline, ever
  // Others are answered meanwhile.
  auto dump = Dump();
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_TRUE(Has(*dump, "/dumpJob/servers/ip1 | ENABLED")) << *dump;
  EXPECT_TRUE(ClosedUnansweredWithin(silent, 20s));
  EXPECT_GE(SteadyClock::now() - start, 3s);
  close(silent);
  EXPECT_GT(job_->runs(), runs_before) << "the job did not fire while the client stalled";
}

TEST_F(DumpPortTest, TooManyConnectionsAreClosedWhileTheJobKeepsFiring) {
  Schedule({"127.0.0.1", 30s, 2});
  int idle1 = Connect(port_);
  int idle2 = Connect(port_);
  int extra = Connect(port_);
  EXPECT_TRUE(ClosedUnansweredWithin(extra, 10s));
  const int runs = job_->runs();
  EXPECT_TRUE(job_->WaitForMoreThan(runs, 20s));
  close(extra);
  close(idle1);
  close(idle2);
  std::string again;
  for (auto until = SteadyClock::now() + 10s; again.empty() && SteadyClock::now() < until;) {
    if (auto r = Dump(); r.ok()) again = *r;
  }
  EXPECT_TRUE(Has(again, "/dumpJob/servers/ip1 | ENABLED")) << again;
}

}  // namespace
}  // namespace elasticjob
