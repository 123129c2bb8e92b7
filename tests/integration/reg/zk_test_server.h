// A real ZooKeeper server for one test: started through scripts/zk-server.sh on a free
// 127.0.0.1 port outside the kernel's ephemeral range (retried on another port if it cannot
// bind; a Restart retries its own port) in a temp directory, stopped by its PID.
// Pause/Resume (SIGSTOP/SIGCONT) and Restart inject the faults the registry must survive.
#ifndef ELASTICJOB_TESTS_INTEGRATION_REG_ZK_TEST_SERVER_H_
#define ELASTICJOB_TESTS_INTEGRATION_REG_ZK_TEST_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "elasticjob/status.h"

namespace elasticjob::testing {

class ZkTestServer {
 public:
  ZkTestServer();
  ~ZkTestServer();  // stops the server and removes its directory
  ZkTestServer(const ZkTestServer&) = delete;
  ZkTestServer& operator=(const ZkTestServer&) = delete;

  Status Start();
  void Stop();
  Status Restart();  // same port, same data
  void Pause();      // SIGSTOP
  void Resume();     // SIGCONT

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // "zookeeper://127.0.0.1:PORT/<name_space>?<params>"
  std::string Url(const std::string& name_space, const std::string& params = "") const;

 private:
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = 0;
};

// Ends the session `session_id` on the server at 127.0.0.1:`port` by connecting with its id
// and password and closing: the owner then sees its session expired (Curator's KillSession).
Status KillSession(int port, int64_t session_id, const std::string& password);

// Runs tests/integration/reg/session_holder (a separate OS process) with `args`; returns its
// pid once it printed "ready". Kill it with kill(pid, SIGKILL).
Result<pid_t> StartHelperProcess(const std::vector<std::string>& args);

// A child process with pipes to its stdin and stdout.
struct ChildProcess {
  pid_t pid = 0;
  int stdin_fd = -1;
  int stdout_fd = -1;
  // Reads stdout until a line equal to `line` arrives or `timeout_ms` passes.
  bool WaitForLine(const std::string& line, int timeout_ms);
  // Whether stdout has anything to read right now.
  bool HasOutput();
  void CloseStdin();
  void Kill();
  ~ChildProcess();
  std::string buffered;
};

Result<std::unique_ptr<ChildProcess>> SpawnWithPipes(const std::vector<std::string>& argv);

}  // namespace elasticjob::testing

#endif  // ELASTICJOB_TESTS_INTEGRATION_REG_ZK_TEST_SERVER_H_
