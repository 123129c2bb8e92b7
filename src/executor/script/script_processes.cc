#include "executor/script/script_processes.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <initializer_list>

extern char** environ;

namespace elasticjob::executor {
namespace {

// What a supervisor reports on its pipe, in this order: kStarted (the command's pid) or
// kSpawnFailed (an errno); then kExited (the command's wait status). Each message is one
// write of 8 bytes, so it arrives whole.
enum : int32_t { kStarted = 1, kSpawnFailed = 2, kExited = 3 };
struct Message {
  int32_t kind;
  int32_t value;
};

// The supervisor is forked from a multithreaded process: until it dies it makes only
// async-signal-safe calls (posix_spawn, glibc's clone and exec, allocates nothing). Without
// sanitizers it is forked by _Fork, which skips the allocators' fork handlers (they take
// every arena lock, stalling the threads that allocate meanwhile); the sanitizers' runtimes
// need their fork interceptors.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
pid_t ForkSupervisor() { return fork(); }
#else
pid_t ForkSupervisor() { return _Fork(); }
#endif

void Wake(int) {}

bool WriteMessage(int fd, Message m) {
  while (write(fd, &m, sizeof m) < 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

// Reads one message; false at end-of-file (the supervisor is gone).
bool ReadMessage(int fd, Message* m) {
  ssize_t n;
  while ((n = read(fd, m, sizeof *m)) < 0 && errno == EINTR) {
  }
  return n == static_cast<ssize_t>(sizeof *m);
}

void CloseRange(int first, int last) {
  if (first > last) return;
  if (close_range(static_cast<unsigned>(first), static_cast<unsigned>(last), 0) == 0) return;
  for (int fd = first; fd <= last && fd < 65536; ++fd) close(fd);
}

// The wait status waitpid would give for what waitid reported.
int WaitStatus(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return (info.si_status & 0xff) << 8;
  return info.si_status | (info.si_code == CLD_DUMPED ? 0x80 : 0);
}

// The supervisor: starts the command as the leader of a new process group, reports, and
// when `life_fd` reaches end-of-file (the instance closed it, or died) kills that group and
// reaps what of it has become its own, then exits.
[[noreturn]] void Supervise(int life_fd, int report_fd, const char* file, char* const* argv,
                            const posix_spawnattr_t* attr) {
  // A group of its own: a signal to the instance's group (kill -9 of a whole host's
  // processes) must leave the supervisor to do its work.
  setpgid(0, 0);
  // The command's orphans (a grandchild whose parent ended) come to the supervisor, which
  // can then wait for them to be gone.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  // Only SIGKILL ends the supervisor; the command is signalled through its own group.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM}) {
    sigaction(s, &ignore, nullptr);
  }
  struct sigaction wake {};
  wake.sa_handler = Wake;
  sigemptyset(&wake.sa_mask);
  sigaction(SIGCHLD, &wake, nullptr);
  sigset_t all, all_but_child;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  all_but_child = all;
  sigdelset(&all_but_child, SIGCHLD);
  // Only the instance may hold the write end of `life_fd`, and the command gets none of the
  // instance's descriptors but its standard ones.
  const int low = life_fd < report_fd ? life_fd : report_fd;
  const int high = life_fd < report_fd ? report_fd : life_fd;
  CloseRange(3, low - 1);
  CloseRange(low + 1, high - 1);
  CloseRange(high + 1, INT_MAX);

  pid_t pid = 0;
  int rc = posix_spawnp(&pid, file, nullptr, attr, argv, environ);
  if (rc != 0) {
    WriteMessage(report_fd, {kSpawnFailed, rc});
    _exit(127);
  }
  WriteMessage(report_fd, {kStarted, pid});
  // The command ends as a zombie the supervisor keeps (WNOWAIT) until the group is killed:
  // its pid, the group's id, cannot be reused meanwhile.
  bool exited = false;
  pollfd life{life_fd, POLLIN, 0};
  for (;;) {
    siginfo_t info{};
    if (!exited && waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      exited = true;
      WriteMessage(report_fd, {kExited, WaitStatus(info)});
    }
    // SIGCHLD is let in only while waiting here: an exit after the check above wakes it.
    if (ppoll(&life, 1, nullptr, &all_but_child) > 0) break;
  }
  kill(-pid, SIGKILL);
  // Every process of the group is the supervisor's child by the time its parent has been
  // reaped, so once none is left to reap, none is left.
  while (waitpid(-pid, nullptr, 0) >= 0 || errno == EINTR) {
  }
  _exit(0);
}

// posix_spawnattr_t for a command in a new process group, with a clean signal state: nothing
// blocked, every signal at its default (the `elasticjob run` command blocks SIGINT and SIGTERM for
// sigwait, and the supervisor ignores a few).
class CleanSignalsAttr {
 public:
  CleanSignalsAttr() {
    posix_spawnattr_init(&attr_);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr_, &none);
    posix_spawnattr_setsigdefault(&attr_, &all);
    posix_spawnattr_setpgroup(&attr_, 0);  // the command leads a new group
    posix_spawnattr_setflags(
        &attr_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  }
  ~CleanSignalsAttr() { posix_spawnattr_destroy(&attr_); }
  CleanSignalsAttr(const CleanSignalsAttr&) = delete;
  CleanSignalsAttr& operator=(const CleanSignalsAttr&) = delete;
  const posix_spawnattr_t* get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

void CloseBoth(const int fds[2]) {
  close(fds[0]);
  close(fds[1]);
}

}  // namespace

Result<int> ScriptProcesses::Run(const std::vector<std::string>& words) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) {
      return FailedPrecondition(
          fmt::format("'{}' not started: the instance is shutting down", words[0]));
    }
    ++active_;
  }
  auto leave = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    if (--active_ == 0) idle_cv_.notify_all();
  };
  // All the supervisor needs is made before the fork.
  std::vector<char*> argv;
  argv.reserve(words.size() + 1);
  for (const auto& w : words) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  CleanSignalsAttr attr;
  int life[2], report[2];
  if (pipe2(life, O_CLOEXEC) != 0) {
    leave();
    return Internal(fmt::format("cannot run '{}': pipe: {}", words[0], std::strerror(errno)));
  }
  if (pipe2(report, O_CLOEXEC) != 0) {
    int err = errno;
    CloseBoth(life);
    leave();
    return Internal(fmt::format("cannot run '{}': pipe: {}", words[0], std::strerror(err)));
  }
  const pid_t supervisor = ForkSupervisor();
  if (supervisor == 0) Supervise(life[0], report[1], argv[0], argv.data(), attr.get());
  if (supervisor < 0) {
    int err = errno;
    CloseBoth(life);
    CloseBoth(report);
    leave();
    return Internal(fmt::format("cannot run '{}': fork: {}", words[0], std::strerror(err)));
  }
  close(life[0]);
  close(report[1]);
  // As the supervisor does: whichever runs first, the group exists once either returns.
  setpgid(supervisor, supervisor);

  Message started{};
  const bool running = ReadMessage(report[0], &started) && started.kind == kStarted;
  const pid_t group = running ? started.value : 0;
  if (running) {
    std::lock_guard<std::mutex> lock(mu_);
    groups_.insert(group);
    // Signal came between the fork and now: the command gets it too.
    if (stopped_ && signalled_ != 0) kill(-group, signalled_);
  }
  Message end{};
  const bool reported = running && ReadMessage(report[0], &end) && end.kind == kExited;
  {
    std::lock_guard<std::mutex> lock(mu_);
    groups_.erase(group);
  }
  // The supervisor died without a word (only SIGKILL ends it): the command's group lives on
  // unsupervised. (Its id could be another's only if the command ended too, init reaped it,
  // and the pid space wrapped around meanwhile.)
  if (running && !reported) kill(-group, SIGKILL);
  close(life[1]);  // the supervisor kills what the command left in its group, and exits
  close(report[0]);
  int supervisor_status = 0;
  while (waitpid(supervisor, &supervisor_status, 0) < 0 && errno == EINTR) {
  }
  leave();
  if (!running) {
    if (started.kind == kSpawnFailed) {
      return Internal(fmt::format("cannot run '{}': {}", words[0], std::strerror(started.value)));
    }
    return Internal(fmt::format("cannot run '{}': its supervisor ended", words[0]));
  }
  return reported ? end.value : supervisor_status;
}

void ScriptProcesses::StopStarting() {
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
}

int ScriptProcesses::Signal(int signal) {
  std::lock_guard<std::mutex> lock(mu_);
  signalled_ = signal;
  for (pid_t group : groups_) kill(-group, signal);
  return static_cast<int>(groups_.size());
}

bool ScriptProcesses::WaitIdle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_cv_.wait_until(lock, deadline, [&] { return active_ == 0; });
}

int ScriptProcesses::running() {
  std::lock_guard<std::mutex> lock(mu_);
  return active_;
}

}  // namespace elasticjob::executor
