// The dump port as a job's lifecycle opens and closes it (JobRuntime::OpenDumpPort), on the
// memory registry: served from Schedule() to Shutdown(), shared by the jobs of one port, and
// a port that cannot be opened leaves the job running without it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "elasticjob/bootstrap/schedule_job_bootstrap.h"
#include "snapshot/snapshot_service.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;

class NoopJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext&) override {}
};

// A socket listening on a free 127.0.0.1 port (closed by the destructor).
struct Listener {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int port = 0;
  Listener() {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(fd, 1), 0);
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  ~Listener() { close(fd); }
};

// A port free now: bound, then released.
int FreePort() { return Listener().port; }

class DumpPortLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = NewRegistryCenter("memory://dump-port-lifecycle");
    ASSERT_TRUE(r.ok());
    registry_ = std::move(r).value();
    ASSERT_TRUE(registry_->Init().ok());
    options_.server_ip = "10.0.0.9";
    options_.on_item_run = [](const ItemRunReport&) {};
  }
  void TearDown() override { registry_->Close(); }
  std::unique_ptr<ScheduleJobBootstrap> Job(const std::string& name, int port) {
    // Never fires: the tests look at the registration only.
    auto config =
        JobConfiguration::Builder(name, 1).Cron("0 0 0 1 1 ? 2099").MonitorPort(port).Build();
    EXPECT_TRUE(config.ok()) << config.status();
    return std::make_unique<ScheduleJobBootstrap>(*registry_, std::make_shared<NoopJob>(), *config,
                                                  options_);
  }
  Result<std::string> Dump(int port, const std::string& job) {
    return snapshot::RequestDump("127.0.0.1", port, job, 5s);
  }
  std::unique_ptr<RegistryCenter> registry_;
  BootstrapOptions options_;
};

TEST_F(DumpPortLifecycleTest, AJobIsServedFromScheduleToShutdown) {
  const int port = FreePort();
  auto job = Job("dumpLife", port);
  EXPECT_EQ(Dump(port, "dumpLife").status().code(), StatusCode::kUnavailable);  // not yet
  ASSERT_TRUE(job->Schedule().ok());
  auto dump = Dump(port, "dumpLife");
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_NE(dump->find("\n/dumpLife/servers/ip1 | ENABLED\n"), std::string::npos) << *dump;
  EXPECT_EQ(dump->find("10.0.0.9"), std::string::npos) << *dump;
  job->Shutdown();
  EXPECT_EQ(Dump(port, "dumpLife").status().code(), StatusCode::kUnavailable);  // closed
}

TEST_F(DumpPortLifecycleTest, JobsOfOnePortShareItUntilTheLastLeaves) {
  const int port = FreePort();
  auto a = Job("dumpA", port);
  auto b = Job("dumpB", port);
  ASSERT_TRUE(a->Schedule().ok());
  ASSERT_TRUE(b->Schedule().ok());  // no bind failure: the listener is shared
  EXPECT_NE(Dump(port, "dumpA")->find("/dumpA/config | "), std::string::npos);
  EXPECT_NE(Dump(port, "dumpB")->find("/dumpB/config | "), std::string::npos);
  a->Shutdown();
  EXPECT_EQ(*Dump(port, "dumpA"), "");  // left the port, which still serves dumpB
  EXPECT_NE(Dump(port, "dumpB")->find("/dumpB/config | "), std::string::npos);
  b->Shutdown();
  EXPECT_EQ(Dump(port, "dumpB").status().code(), StatusCode::kUnavailable);
}

TEST_F(DumpPortLifecycleTest, APortThatCannotBeOpenedLeavesTheJobRunningWithoutIt) {
  Listener taken;  // another process's, as far as the job knows
  auto job = Job("dumpTaken", taken.port);
  EXPECT_TRUE(job->Schedule().ok());
  auto instances = registry_->GetChildrenKeys("/dumpTaken/instances");
  ASSERT_TRUE(instances.ok());
  EXPECT_EQ(instances->size(), 1u);  // registered and running
  job->Shutdown();
}

TEST_F(DumpPortLifecycleTest, AnAddressThatIsNotLocalLeavesTheJobRunningWithoutIt) {
  options_.dump_port.address = "192.0.2.1";  // TEST-NET-1: no interface has it
  auto job = Job("dumpNowhere", FreePort());
  EXPECT_TRUE(job->Schedule().ok());
  job->Shutdown();
}

}  // namespace
}  // namespace elasticjob
