// ScriptProcesses: runs the processes of SCRIPT items so that none outlives its item or its
// instance, and lets the owner signal every running one at shutdown.
//
// Each run is a process group of its own, led by a watcher: a `/bin/sh` that holds the read
// end of a pipe whose write end only the instance holds, and has every signal but SIGKILL
// blocked. The command joins that group and is the instance's child (its exit status is
// the instance's to read). When the pipe reaches end-of-file because the instance is gone,
// however it died (kill -9, a crash, an exit), the watcher sends SIGKILL to the group,
// grandchildren included, and itself with them; when the command exits, the instance kills
// what it left in the group. So nothing of an item outlives its item or its instance
// (docs/runtime.md, Script processes). A process that leaves the group (setsid, setpgid) is
// no longer the item's. Both processes are spawned (posix_spawn: no copy of the instance's
// memory), so a start costs the same whatever the instance's size.
//
// Thread safety: thread-safe. Run blocks its caller until the command exits; Signal,
// StopStarting and WaitIdle may be called from any thread meanwhile.
#ifndef ELASTICJOB_EXECUTOR_SCRIPT_SCRIPT_PROCESSES_H_
#define ELASTICJOB_EXECUTOR_SCRIPT_SCRIPT_PROCESSES_H_

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/api/cancellation.h"
#include "elasticjob/status.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob::executor {

class ScriptProcesses {
 public:
  ScriptProcesses() = default;
  ScriptProcesses(const ScriptProcesses&) = delete;
  ScriptProcesses& operator=(const ScriptProcesses&) = delete;

  // Runs `argv` (argv[0] looked up in PATH; the process's environment and descriptors but
  // the close-on-exec ones inherited; no signal blocked or ignored) in a process group of
  // its own and waits for it. Returns its wait status (as waitpid reports it); when it
  // exits, what it left running in its group is killed. Fails without running anything with
  // kFailedPrecondition after StopStarting, and with kInternal when the command cannot start
  // ("cannot run 'x': No such file or directory") or no process can be created.
  // REQUIRES: `argv` is not empty.
  //
  // `output`, when given, receives what the command writes to its stdout (stream 1) and
  // stderr (stream 2), in chunks as they come, on the calling thread (else both are the
  // instance's, inherited). What its group writes after the command exited is read until
  // the group is killed.
  //
  // `cancellation`, when given: once requested, the command's group is sent SIGKILL at once
  // (grandchildren included), and a Run after the request starts nothing (kCancelled).
  using Output = std::function<void(int stream, std::string_view data)>;
  Result<int> Run(const std::vector<std::string>& argv, const Output& output = nullptr,
                  Cancellation* cancellation = nullptr);

  // From now on, Run starts nothing. Idempotent.
  void StopStarting();

  // Sends `signal` to the process group of every command running now (after StopStarting,
  // also to any that Run is starting at this moment, as soon as it has started). Returns
  // how many groups it reached now.
  int Signal(int signal);

  // Waits until no Run is going on (every process of their groups has been sent SIGKILL
  // and each command and watcher reaped), or until `deadline`. Returns true when none is.
  bool WaitIdle(std::chrono::steady_clock::time_point deadline);

  // The number of Run calls going on.
  int running();

 private:
  std::mutex mu_;
  std::condition_variable idle_cv_;
  // The groups (their watcher's pid) of the commands running. A group leaves the set before
  // its watcher is reaped, so a signal never reaches a group id the kernel could reuse.
  std::set<pid_t> groups_ ELASTICJOB_GUARDED_BY(mu_);
  int active_ ELASTICJOB_GUARDED_BY(mu_) = 0;     // Run calls going on
  int signalled_ ELASTICJOB_GUARDED_BY(mu_) = 0;  // the last signal sent by Signal, 0 if none
  bool stopped_ ELASTICJOB_GUARDED_BY(mu_) = false;
};

}  // namespace elasticjob::executor

#endif  // ELASTICJOB_EXECUTOR_SCRIPT_SCRIPT_PROCESSES_H_
