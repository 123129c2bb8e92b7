// DumpServer: the dump port (ElasticJob's SnapshotService listener; docs/dump.md). A TCP
// listener that answers a line `dump@<jobName>` with the dump of that job (SnapshotService's
// DumpJob) when the job is registered on it, and any other line with an empty reply.
//
// One listener per address and port in the process: every job configured with the same
// monitorPort shares it (ElasticJob 2 opened one per job, so a second job on the same port
// failed to bind), and it closes with the last job. Port 0 is never shared: each Acquire
// binds a free port of its own.
//
// Bounded against slow or hostile clients: one thread runs a poll() loop over the listener
// and at most `max_connections` connections (one more is accepted and closed at once); a
// connection gets `io_timeout` to send its line and again to take the reply, and a line
// longer than kMaxLine bytes closes it. Dumps are worked out one at a time on that thread
// (registry reads); the jobs themselves never wait for it.
//
// Thread safety: Acquire and Register may be called from any thread; a Registration may be
// destroyed on any thread but the server's own.
#ifndef ELASTICJOB_SNAPSHOT_DUMP_SERVER_H_
#define ELASTICJOB_SNAPSHOT_DUMP_SERVER_H_

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "elasticjob/logger.h"
#include "elasticjob/mutex.h"
#include "elasticjob/reg/registry_center.h"
#include "elasticjob/status.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob::snapshot {

class DumpServer : public std::enable_shared_from_this<DumpServer> {
 public:
  struct Limits {
    std::chrono::milliseconds io_timeout{std::chrono::seconds(5)};
    int max_connections = 8;
  };
  // The longest request line read (a job name is far shorter).
  static constexpr size_t kMaxLine = 1024;

  // Keeps one job on the server until destroyed; destruction waits for a dump of that job in
  // progress, so the job's registry is never read after it.
  class Registration {
   public:
    ~Registration();
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    int port() const { return server_->port(); }

   private:
    friend class DumpServer;
    Registration(std::shared_ptr<DumpServer> server, std::string job_name)
        : server_(std::move(server)), job_name_(std::move(job_name)) {}
    std::shared_ptr<DumpServer> server_;
    std::string job_name_;
  };

  // The process's listener at `address`:`port`, started (bound, listening, its thread
  // running) if there is none; `limits` apply when it is started here. UNAVAILABLE naming the
  // address, the port and the reason when it cannot listen (port taken, address not local);
  // INVALID_ARGUMENT for an address that is not an IPv4 literal.
  static Result<std::shared_ptr<DumpServer>> Acquire(const std::string& address, int port,
                                                     Limits limits);
  // Serves `job_name` from `registry` (which must outlive the result). ALREADY_EXISTS when
  // a job of that name is served there already (another instance of it in this process, or
  // another namespace's job of the same name).
  // `logger`: the job's (its lines about the port; null: the process default).
  Result<std::unique_ptr<Registration>> Register(std::string job_name, RegistryCenter& registry,
                                                 std::shared_ptr<Logger> logger = nullptr);

  ~DumpServer();  // stops the thread and closes every socket
  DumpServer(const DumpServer&) = delete;
  DumpServer& operator=(const DumpServer&) = delete;

  const std::string& address() const { return address_; }
  int port() const { return port_; }
  // Connections accepted and closed at once because max_connections were open (tests).
  uint64_t rejected() const { return rejected_.load(); }

 private:
  struct Conn;
  DumpServer(std::string address, Limits limits) : address_(std::move(address)), limits_(limits) {}
  Status Listen(int port);
  void Loop();
  // The reply to one request line ("" for anything but a dump of a registered job).
  std::string Reply(const std::string& line);
  void Unregister(const std::string& job_name);

  const std::string address_;
  const Limits limits_;
  int port_ = 0;        // set by Listen
  int listen_fd_ = -1;  // set by Listen
  int wake_fd_ = -1;    // eventfd: written to stop the loop
  std::thread thread_;

  // Held while a dump runs (taken before jobs_mu_), so a job unregistering can wait for a
  // dump that found it to end; registering never waits for a dump.
  Mutex dump_mu_;
  Mutex jobs_mu_;
  struct Served {
    RegistryCenter* registry;
    std::shared_ptr<Logger> logger;
  };
  std::map<std::string, Served> jobs_ ELASTICJOB_GUARDED_BY(jobs_mu_);

  std::atomic<bool> stopping_{false};  // atomic: set by the destructor, read by the loop
  std::atomic<uint64_t> rejected_{0};  // atomic: read by tests while the loop runs
};

}  // namespace elasticjob::snapshot

#endif  // ELASTICJOB_SNAPSHOT_DUMP_SERVER_H_
