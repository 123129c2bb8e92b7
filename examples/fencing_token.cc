// Fencing tokens (docs/runtime.md, Fencing tokens): a resource that refuses a stale writer.
//
// Every run of an item carries a token (`ShardingContext::fencing_token()`, 0 when
// monitorExecution is off): larger for every later claim of the item, across the cluster. An
// instance paused past its session timeout (a GC-like stall, SIGSTOP, a partition) may wake up
// in the middle of an item that another instance has taken over and run since, with a larger
// token. The runtime stops what it can (docs/runtime.md, Fencing), but a write already on its
// way can only be stopped by the resource: `FencedStore` below keeps, per item, the highest
// token it has accepted and refuses a write that brings a lower one. Equal tokens are one
// claim writing again, and pass.
//
// The store is a directory with one file per item (`item-N`: "TOKEN VALUE"), locked with
// flock, so that several processes on one machine can share it.
//
// Run (after `cmake --build --preset release --target example_fencing_token`), two copies on
// one ZooKeeper and one store, then freeze one of them past its session while it works:
//
//   read -r PORT _ < <(bash scripts/zk-server.sh start /tmp/fencing-zk)
//   R="zookeeper://127.0.0.1:$PORT/fencing-demo?sessionTimeoutMs=3000"
//   build/release/examples/example_fencing_token "$R" /tmp/fencing-store & A=$!
//   build/release/examples/example_fencing_token "$R" /tmp/fencing-store &
//   # wait for A's "working" lines, then:
//   kill -STOP $A; sleep 8; kill -CONT $A
//   kill %1 %2; bash scripts/zk-server.sh stop /tmp/fencing-zk
//
// The other copy takes A's items over while A is frozen and writes them with larger tokens;
// A, resumed, finishes its old items and its writes are refused:
//
//   pid 27664 item 1: working with token 60
//   pid 27664 item 1: REFUSED: item 1: token 60 is stale, the store holds 79
//
// Arguments: REGISTRY_URL (memory://NAME runs alone) STORE_DIR [SECONDS] (default: until
// Ctrl-C). A SCRIPT job does the same with ELASTICJOB_FENCING_TOKEN (docs/runtime.md).
#include <elasticjob/bootstrap/schedule_job_bootstrap.h>
#include <elasticjob/reg/registry_center.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace {

// A file per item, each remembering the highest token it accepted. Thread-safe and
// process-safe: every write holds the item file's flock.
class FencedStore {
 public:
  explicit FencedStore(std::string dir) : dir_(std::move(dir)) {}

  // Writes `value` for `item` if `token` is at least the highest token the item's file has
  // accepted, and records `token` as that highest. Returns FailedPrecondition naming both
  // tokens when `token` is lower (a stale writer), InvalidArgument for token 0 (no token: the
  // job runs without monitorExecution), Internal on an I/O error.
  elasticjob::Status Write(int item, int64_t token, const std::string& value) {
    if (token <= 0) return elasticjob::InvalidArgument("no fencing token (monitorExecution off?)");
    const std::string path = dir_ + "/item-" + std::to_string(item);
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return elasticjob::Internal(path + ": " + std::strerror(errno));
    flock(fd, LOCK_EX);  // released by close
    char buf[64] = {};
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    int64_t highest = n > 0 ? std::strtoll(buf, nullptr, 10) : 0;
    elasticjob::Status result = elasticjob::Status::Ok();
    if (token < highest) {
      result = elasticjob::FailedPrecondition(
          "item " + std::to_string(item) + ": token " + std::to_string(token) +
          " is stale, the store holds " + std::to_string(highest));
    } else {
      const std::string line = std::to_string(token) + " " + value + "\n";
      if (ftruncate(fd, 0) != 0 ||
          pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
        result = elasticjob::Internal(path + ": " + std::strerror(errno));
      }
    }
    close(fd);
    return result;
  }

 private:
  const std::string dir_;
};

// Each item works for two seconds, then writes its result through the store with its run's
// token. It does not look at cancelled() before the write on purpose: that check narrows the
// window of a stale write (a paused thread may pass it just before the pause), only the
// store's check closes it.
class ReportJob : public elasticjob::SimpleJob {
 public:
  explicit ReportJob(FencedStore& store) : store_(store) {}

  void Execute(const elasticjob::ShardingContext& ctx) override {
    const int64_t token = ctx.fencing_token();
    Say(ctx.sharding_item, "working with token " + std::to_string(token));
    std::this_thread::sleep_for(std::chrono::seconds(2));
    auto s = store_.Write(ctx.sharding_item, token, "report of pid " + std::to_string(getpid()));
    Say(ctx.sharding_item,
        s.ok() ? "written with token " + std::to_string(token) : "REFUSED: " + s.message());
  }

 private:
  void Say(int item, const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    std::cout << "pid " << getpid() << " item " << item << ": " << what << std::endl;
  }

  FencedStore& store_;
  std::mutex mu_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: example_fencing_token REGISTRY_URL STORE_DIR [SECONDS]\n";
    return 2;
  }
  const std::string url = argv[1];
  const std::string dir = argv[2];
  const int seconds = argc > 3 ? std::atoi(argv[3]) : 0;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::cerr << dir << ": " << ec.message() << "\n";
    return 1;
  }
  sigset_t signals;  // taken by sigwait below; blocked before the library starts its threads
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto registry = elasticjob::NewRegistryCenter(url);
  if (!registry.ok()) {
    std::cerr << registry.status() << "\n";
    return 2;
  }
  if (auto s = (*registry)->Init(); !s.ok()) {
    std::cerr << url << ": " << s << "\n";
    return 1;
  }
  // monitorExecution is on by default: every run marks its items, and the mark's creation
  // gives the token. Failover on, so a frozen instance's items run elsewhere.
  auto config = elasticjob::JobConfiguration::Builder("fencedReport", 2)
                    .Cron("0/5 * * * * ?")
                    .Failover(true)
                    .Build();
  if (!config.ok()) {
    std::cerr << config.status() << "\n";
    return 2;
  }
  FencedStore store(dir);
  elasticjob::ScheduleJobBootstrap job(**registry, std::make_shared<ReportJob>(store), *config);
  if (auto s = job.Schedule(); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  if (seconds > 0) {
    // sigtimedwait fails with EINTR after a SIGSTOP and SIGCONT (signal(7)): wait on.
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    for (auto left = end - std::chrono::steady_clock::now(); left > left.zero();
         left = end - std::chrono::steady_clock::now()) {
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      timespec limit{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
      if (sigtimedwait(&signals, nullptr, &limit) > 0 || errno != EINTR) break;
    }
  } else {
    int sig = 0;
    sigwait(&signals, &sig);
  }
  job.Shutdown();
  (*registry)->Close();
  return 0;
}
