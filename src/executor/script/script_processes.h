// ScriptProcesses: runs the processes of SCRIPT items so that none outlives its item or its
// instance, and lets the owner signal every running one at shutdown.
//
// Each run is a process group of its own, led by the command (the instance's child: its exit
// status is the instance's to read). One guardian per ScriptProcesses, a `/bin/sh` started
// with the first run, holds one end of a socket pair whose other end only the instance
// holds, and has every signal but SIGKILL blocked; the instance tells it each group as it
// starts and ends. When the socket reaches end-of-file because the instance is gone,
// however it died (kill -9, a crash, an exit), the guardian sends SIGKILL to every group it
// holds, grandchildren included; when a command exits, the instance kills what it left in
// its group before it reaps the command (whose id, the group's, cannot be reused until
// then). So nothing of an item outlives its item or its instance (docs/runtime.md, Script
// processes). A process that leaves the group (setsid, setpgid) is no longer the item's.
// The commands and the guardian are spawned (posix_spawn: no copy of the instance's
// memory), so a start costs the same whatever the instance's size; a run costs one process,
// the guardian one per instance (a watcher `/bin/sh` per run would double the processes,
// which a hundred every-second SCRIPT jobs on two cores cannot afford).
//
// Left open: a kill -9 of the instance in the microseconds between a command's start and
// the instance's line to the guardian leaves that command running.
//
// Thread safety: thread-safe. Run blocks its caller until the command exits; Signal,
// StopStarting and WaitIdle may be called from any thread meanwhile.
#ifndef ELASTICJOB_EXECUTOR_SCRIPT_SCRIPT_PROCESSES_H_
#define ELASTICJOB_EXECUTOR_SCRIPT_SCRIPT_PROCESSES_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "elasticjob/api/cancellation.h"
#include "elasticjob/mutex.h"
#include "elasticjob/status.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob::executor {

class ScriptProcesses {
 public:
  ScriptProcesses() = default;
  // Stops the guardian (it kills any group still running).
  ~ScriptProcesses();
  ScriptProcesses(const ScriptProcesses&) = delete;
  ScriptProcesses& operator=(const ScriptProcesses&) = delete;

  // The process's: the built-in SCRIPT job type runs every script under it, whatever
  // configuration built its ScriptJob (one guardian per instance, however often the
  // registry's configuration changes), and `elasticjob run` and `agent` stop it at shutdown.
  // Never destroyed (its guardian kills what is left when the process ends).
  static ScriptProcesses& Shared();
  // Shared() as the shared_ptr a ScriptJob holds (owning nothing).
  static std::shared_ptr<ScriptProcesses> SharedPtr();

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
  //
  // `env`: NAME=VALUE entries the command gets on top of the instance's environment (an
  // inherited entry of the same name gives way).
  //
  // `start_by`: the command starts only if the monotonic clock has not passed it when the
  // new process is about to exec (checked in that process: a pause of the instance between
  // the caller's check and this call cannot let a late command start); else nothing runs
  // and Run returns kCancelled. The runtime passes the end of the registry session's lease
  // (ShardingContext::start_deadline).
  using Output = std::function<void(int stream, std::string_view data)>;
  Result<int> Run(const std::vector<std::string>& argv, const Output& output = nullptr,
                  Cancellation* cancellation = nullptr, const std::vector<std::string>& env = {},
                  std::chrono::steady_clock::time_point start_by =
                      std::chrono::steady_clock::time_point::max());

  // From now on, Run starts nothing. Idempotent.
  void StopStarting();

  // Sends `signal` to the process group of every command running now (after StopStarting,
  // also to any that Run is starting at this moment, as soon as it has started). Returns
  // how many commands it reaches: the groups running now, and after StopStarting those
  // being started (a start that then fails is counted too).
  int Signal(int signal);

  // Waits until no Run is going on (every process of their groups has been sent SIGKILL
  // and each command reaped), or until `deadline`. Returns true when none is.
  bool WaitIdle(std::chrono::steady_clock::time_point deadline);

  // The number of Run calls going on.
  int running();

  // The guardian's pid, 0 when none runs.
  pid_t guardian_pid_for_testing();
  // Waits until the guardian has been told of at least `n` commands' groups (those running
  // now), or until `deadline`; returns whether it has.
  bool WaitGroupsForTesting(size_t n, std::chrono::steady_clock::time_point deadline);

 private:
  // Starts the guardian unless it runs, and tells it every group.
  Status EnsureGuardianLocked() ELASTICJOB_REQUIRES(mu_);
  // Tells the guardian that `group` starts ('+') or ends ('-'); a guardian found gone is
  // reaped and another started at once (told every group).
  void TellLocked(char op, pid_t group) ELASTICJOB_REQUIRES(mu_);
  // Writes the line for TellLocked. False when the guardian is gone.
  // REQUIRES: the guardian runs (guardian_fd_ >= 0).
  bool SendLocked(char op, pid_t group) ELASTICJOB_REQUIRES(mu_);
  // Closes the guardian's socket and reaps it.
  void StopGuardianLocked() ELASTICJOB_REQUIRES(mu_);
  // A graceful cancellation's SIGTERM was sent to `group`: SIGKILL it at `deadline` if it
  // still runs then (one thread for every group, started on the first).
  void KillAfterGrace(pid_t group, std::chrono::steady_clock::time_point deadline);
  void GraceLoop();

  Mutex mu_;
  CondVar idle_cv_{&mu_};    // active_ reached 0
  CondVar groups_cv_{&mu_};  // a group was added to groups_ (tests)
  // The groups (their command's pid) of the commands running. A group leaves the set before
  // its command is reaped, so a signal never reaches a group id the kernel could reuse.
  std::set<pid_t> groups_ ELASTICJOB_GUARDED_BY(mu_);
  int guardian_fd_ ELASTICJOB_GUARDED_BY(mu_) = -1;  // our end of its socket pair
  pid_t guardian_pid_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  int active_ ELASTICJOB_GUARDED_BY(mu_) = 0;     // Run calls going on
  int starting_ ELASTICJOB_GUARDED_BY(mu_) = 0;   // of those, the ones not yet spawned
  int signalled_ ELASTICJOB_GUARDED_BY(mu_) = 0;  // the last signal sent by Signal, 0 if none
  bool stopped_ ELASTICJOB_GUARDED_BY(mu_) = false;
  // Groups sent SIGTERM by a graceful cancellation, and when they get SIGKILL.
  std::map<pid_t, std::chrono::steady_clock::time_point> kill_at_ ELASTICJOB_GUARDED_BY(mu_);
  CondVar grace_cv_{&mu_};  // kill_at_ changed, or grace_stop_
  bool grace_stop_ ELASTICJOB_GUARDED_BY(mu_) = false;
  std::thread grace_thread_;  // GraceLoop, once a group was given a grace; joined at the end
};

}  // namespace elasticjob::executor

#endif  // ELASTICJOB_EXECUTOR_SCRIPT_SCRIPT_PROCESSES_H_
