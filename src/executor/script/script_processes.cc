#include "executor/script/script_processes.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <limits>

#include "infra/thread_name.h"

extern char** environ;

namespace elasticjob::executor {

ScriptProcesses& ScriptProcesses::Shared() {
  static auto* shared = new ScriptProcesses;
  return *shared;
}

std::shared_ptr<ScriptProcesses> ScriptProcesses::SharedPtr() {
  return std::shared_ptr<ScriptProcesses>(std::shared_ptr<void>(), &Shared());
}

namespace {

// The guardian: one `/bin/sh` per ScriptProcesses, in a process group of its own, reading
// "+ ID" and "- ID" lines (a command's process group starts and ends) from its descriptor 3,
// one end of a socket pair whose other end only the instance holds. At end-of-file (the
// instance is gone, however it died, or destroyed this object) it kills every group it
// still holds, then exits. It starts with every signal a group may be sent but SIGKILL
// blocked (dash keeps the mask it is given).
constexpr const char* kShell = "/bin/sh";
constexpr const char* kGuardianScript =
    "g=' '\n"
    "while read -r op id; do\n"
    "  case $op in\n"
    "    +) g=\"$g$id \" ;;\n"
    "    -) case $g in *\" $id \"*) g=\"${g%% $id *} ${g#* $id }\" ;; esac ;;\n"
    "  esac\n"
    "done <&3\n"
    "for id in $g; do kill -s KILL -- \"-$id\"; done 2>/dev/null\n";
constexpr int kGuardianFd = 3;

// posix_spawn's attributes: a process group (`group`, 0 for a new one led by the child)
// and a signal state (every signal at its default, `blocked` blocked).
class SpawnAttr {
 public:
  SpawnAttr(pid_t group, const sigset_t& blocked) {
    posix_spawnattr_init(&attr_);
    sigset_t all;
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr_, &blocked);
    posix_spawnattr_setsigdefault(&attr_, &all);
    posix_spawnattr_setpgroup(&attr_, group);
    posix_spawnattr_setflags(
        &attr_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  }
  ~SpawnAttr() { posix_spawnattr_destroy(&attr_); }
  SpawnAttr(const SpawnAttr&) = delete;
  SpawnAttr& operator=(const SpawnAttr&) = delete;
  const posix_spawnattr_t* get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_{};
};

// strerror's text, thread-safely (GNU strerror_r).
std::string ErrnoText(int err) {
  char buf[128];
  return strerror_r(err, buf, sizeof buf);
}

// Starts a guardian reading `fd` as its descriptor 3, with /dev/null for its stdin, stdout
// and stderr (it holds none of the instance's: a pipe the instance's output goes to does
// not wait for the guardian's exit). Returns its pid or why it could not start.
Result<pid_t> SpawnGuardian(int fd) {
  sigset_t blocked;
  sigfillset(&blocked);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_adddup2(&files, fd, kGuardianFd);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&files, 2, "/dev/null", O_WRONLY, 0);
  SpawnAttr attr(0, blocked);
  char* argv[] = {const_cast<char*>("sh"), const_cast<char*>("-c"),
                  const_cast<char*>(kGuardianScript), nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, kShell, &files, attr.get(), argv, environ);
  posix_spawn_file_actions_destroy(&files);
  if (rc != 0) return Internal(ErrnoText(rc));
  return pid;
}

void Reap(pid_t pid, int* status) {
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

// The read ends of a command's stdout and stderr, read into `output`.
struct Capture {
  int fds[2] = {-1, -1};     // read ends: stdout, stderr
  int writes[2] = {-1, -1};  // the command's ends (closed once it started)
  ~Capture() {
    for (int fd : {fds[0], fds[1], writes[0], writes[1]}) {
      if (fd >= 0) close(fd);
    }
  }
  // Reads what is there from each open end (all of it when `drain`, else one read each);
  // an end at end-of-file is closed.
  void Read(const ScriptProcesses::Output& output, const short* revents, bool drain) {
    char buf[8192];
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0 || (revents != nullptr && revents[i] == 0)) continue;
      while (true) {
        ssize_t n = read(fds[i], buf, sizeof buf);
        if (n > 0) {
          output(i + 1, std::string_view(buf, static_cast<size_t>(n)));
          if (!drain) break;
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
          close(fds[i]);
          fds[i] = -1;
        }
        break;
      }
    }
  }
};

// Reads the command's output until it exits (its pidfd becomes readable); without a pidfd,
// until both ends reach end-of-file.
void ReadUntilExit(Capture& capture, pid_t pid, const ScriptProcesses::Output& output) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  while (true) {
    pollfd fds[3];
    int n = 0;
    for (int i = 0; i < 2; ++i) fds[n++] = pollfd{capture.fds[i], POLLIN, 0};
    fds[n++] = pollfd{pidfd, POLLIN, 0};
    if (pidfd < 0 && capture.fds[0] < 0 && capture.fds[1] < 0) break;
    int rc = poll(fds, static_cast<nfds_t>(n), -1);
    if (rc < 0) {
      if (errno == EINTR) continue;
      break;
    }
    short revents[2] = {fds[0].revents, fds[1].revents};
    capture.Read(output, revents, /*drain=*/false);
    if (pidfd >= 0 && fds[2].revents != 0) break;
  }
  if (pidfd >= 0) close(pidfd);
}

// What a command's child tells its parent through the memory they share until the exec.
struct SpawnOutcome {
  volatile int error = 0;      // errno of a failed exec
  volatile bool late = false;  // the start deadline had passed: nothing was run
};

// Starts `argv` (its first word searched in PATH) in a process group of its own, with every
// signal at its default and none blocked, its stdout and stderr to `writes` when given (the
// rest of its descriptors are the instance's, less the close-on-exec ones). The child checks
// `start_by` on the monotonic clock just before its exec and runs nothing once it has passed
// (`late`): an instance frozen between its lease check and this call does not start the
// command after it resumes (docs/runtime.md, "The session lease"). As glibc's posix_spawn,
// vfork: the parent thread waits until the exec (or the exit), every signal blocked, and the
// child calls only async-signal-safe functions before its exec. Returns the child's pid
// (reaped here if it ran nothing) or -1.
pid_t SpawnCommand(char* const argv[], char* const envp[], const int* writes,
                   std::chrono::steady_clock::time_point start_by, SpawnOutcome* outcome) {
  const int64_t start_by_ns =
      start_by == std::chrono::steady_clock::time_point::max()
          ? std::numeric_limits<int64_t>::max()
          : std::chrono::duration_cast<std::chrono::nanoseconds>(start_by.time_since_epoch())
                .count();
  sigset_t all, old, none;
  sigfillset(&all);
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = vfork();
  if (pid == 0) {
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig == SIGKILL || sig == SIGSTOP) continue;
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      sigaction(sig, &dfl, nullptr);
    }
    setpgid(0, 0);
    if (writes != nullptr) {
      dup2(writes[0], 1);
      dup2(writes[1], 2);
    }
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec > start_by_ns) {
      outcome->late = true;
      _exit(127);
    }
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execvpe(argv[0], argv, envp);
    outcome->error = errno;
    _exit(127);
  }
  const int vfork_error = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) {
    outcome->error = vfork_error;
    return -1;
  }
  if (outcome->late || outcome->error != 0) {
    int status = 0;
    Reap(pid, &status);
    return -1;
  }
  return pid;
}

}  // namespace

Result<int> ScriptProcesses::Run(const std::vector<std::string>& words, const Output& output,
                                 Cancellation* cancellation, const std::vector<std::string>& env,
                                 std::chrono::steady_clock::time_point start_by) {
  if (cancellation != nullptr && cancellation->requested()) {
    return Status(StatusCode::kCancelled,
                  fmt::format("'{}' not started: {}", words[0], cancellation->reason()));
  }
  {
    MutexLock lock(&mu_);
    if (stopped_) {
      return FailedPrecondition(
          fmt::format("'{}' not started: the instance is shutting down", words[0]));
    }
    ++active_;
    ++starting_;
  }
  struct Leave {
    ScriptProcesses* self;
    bool starting = true;
    ~Leave() {
      MutexLock lock(&self->mu_);
      if (starting) --self->starting_;
      if (--self->active_ == 0) self->idle_cv_.SignalAll();
    }
  } leave{this};
  // The command leads a process group of its own, with a clean signal state.
  std::vector<char*> argv;
  argv.reserve(words.size() + 1);
  for (const auto& w : words) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  Capture capture;
  if (output) {
    for (int i = 0; i < 2; ++i) {
      int p[2];
      if (pipe2(p, O_CLOEXEC) != 0) {
        return Internal(fmt::format("cannot run '{}': pipe: {}", words[0], ErrnoText(errno)));
      }
      capture.fds[i] = p[0];
      capture.writes[i] = p[1];
    }
  }
  {
    MutexLock lock(&mu_);
    if (Status g = EnsureGuardianLocked(); !g.ok()) {
      return Internal(fmt::format("cannot run '{}': {}: {}", words[0], kShell, g.message()));
    }
  }
  // The environment: the instance's, less what `env` names, then `env`.
  std::vector<char*> envp;
  if (!env.empty()) {
    for (char** e = environ; *e != nullptr; ++e) {
      std::string_view entry(*e);
      const bool replaced = std::any_of(env.begin(), env.end(), [&](const std::string& mine) {
        const size_t eq = mine.find('=');
        return entry.size() > eq &&
               entry.substr(0, eq + 1) == std::string_view(mine).substr(0, eq + 1);
      });
      if (!replaced) envp.push_back(*e);
    }
    for (const auto& mine : env) envp.push_back(const_cast<char*>(mine.c_str()));
    envp.push_back(nullptr);
  }
  SpawnOutcome outcome;
  const pid_t pid = SpawnCommand(argv.data(), env.empty() ? environ : envp.data(),
                                 output ? capture.writes : nullptr, start_by, &outcome);
  const int rc = pid > 0 ? 0 : outcome.error;
  {
    MutexLock lock(&mu_);
    --starting_;
    leave.starting = false;
  }
  if (rc == 0) {
    // A guardian started again since is told this group here, or was told it by its start
    // (EnsureGuardianLocked), whichever comes second.
    MutexLock lock(&mu_);
    groups_.insert(pid);
    groups_cv_.SignalAll();
    TellLocked('+', pid);
    // Signal came while the command was starting: it gets it too.
    if (stopped_ && signalled_ != 0) kill(-pid, signalled_);
  }
  for (int& fd : capture.writes) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  if (outcome.late) {
    return Status(StatusCode::kCancelled,
                  fmt::format("'{}' not started: its start deadline (the registry session's "
                              "lease) passed before the command could start",
                              words[0]));
  }
  if (rc != 0) return Internal(fmt::format("cannot run '{}': {}", words[0], ErrnoText(rc)));
  const pid_t group = pid;
  // A cancellation kills the group at once (now, if it came while the command started). It is
  // unregistered before the command is reaped: the group's id is never reused under it.
  uint64_t cancel_id = 0;
  if (cancellation != nullptr) {
    // A graceful request (a timeout, an operator's stop) gives the group time to end cleanly.
    cancel_id = cancellation->OnRequest([this, group, cancellation] {
      const std::chrono::milliseconds grace = cancellation->grace();
      if (grace.count() <= 0) {
        kill(-group, SIGKILL);
        return;
      }
      kill(-group, SIGTERM);
      KillAfterGrace(group, std::chrono::steady_clock::now() + grace);
    });
  }
  if (output) ReadUntilExit(capture, pid, output);
  // Exited, not reaped: until it is, its id (the group's) cannot be reused, so what it left
  // in its group dies now and reaches no one else.
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  kill(-group, SIGKILL);
  if (cancellation != nullptr) cancellation->Unregister(cancel_id);
  {
    MutexLock lock(&mu_);
    groups_.erase(group);
    kill_at_.erase(group);
    TellLocked('-', group);
  }
  int status = 0;
  Reap(pid, &status);
  if (output) {
    // The group is dead: what it wrote is all there (a process that left the group and
    // still holds an end is not waited for).
    for (int fd : capture.fds) {
      if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    capture.Read(output, nullptr, /*drain=*/true);
  }
  return status;
}

Status ScriptProcesses::EnsureGuardianLocked() {
  if (guardian_fd_ >= 0) return Status::Ok();
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return Internal(fmt::format("socketpair: {}", ErrnoText(errno)));
  }
  auto pid = SpawnGuardian(sv[1]);
  close(sv[1]);
  if (!pid.ok()) {
    close(sv[0]);
    return pid.status();
  }
  guardian_fd_ = sv[0];
  guardian_pid_ = *pid;
  // A guardian started again (the last one died): it is told every group there is.
  for (pid_t group : groups_) {
    if (!SendLocked('+', group)) {
      // Dead already (killed from outside as it started): not started again from here,
      // the next line to it or the next Run tries again.
      StopGuardianLocked();
      return Internal("the guardian died as it started");
    }
  }
  return Status::Ok();
}

void ScriptProcesses::TellLocked(char op, pid_t group) {
  if (guardian_fd_ < 0 || SendLocked(op, group)) return;
  // The guardian is gone (killed from outside): reaped here, as the instance's child, and
  // another one starts at once, told every group (a group already ended is not in
  // `groups_`). Had it to wait for the next Run, the groups running now would be unguarded
  // until then.
  StopGuardianLocked();
  (void)EnsureGuardianLocked();
}

bool ScriptProcesses::SendLocked(char op, pid_t group) {
  const std::string line = fmt::format("{} {}\n", op, group);
  size_t sent = 0;
  while (sent < line.size()) {
    ssize_t n = send(guardian_fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
  return true;
}

void ScriptProcesses::StopGuardianLocked() {
  if (guardian_fd_ < 0) return;
  close(guardian_fd_);  // end-of-file: it kills the groups it holds, then exits
  guardian_fd_ = -1;
  int status = 0;
  Reap(guardian_pid_, &status);
  guardian_pid_ = 0;
}

ScriptProcesses::~ScriptProcesses() {
  {
    MutexLock lock(&mu_);
    grace_stop_ = true;
    grace_cv_.SignalAll();
  }
  if (grace_thread_.joinable()) grace_thread_.join();
  MutexLock lock(&mu_);
  StopGuardianLocked();
}

void ScriptProcesses::KillAfterGrace(pid_t group, std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(&mu_);
  if (groups_.count(group) == 0 || grace_stop_) return;  // reaped already
  kill_at_[group] = deadline;
  if (!grace_thread_.joinable()) {
    grace_thread_ = std::thread([this] {
      infra::NameThisThread("ej-script-grace");
      GraceLoop();
    });
  }
  grace_cv_.SignalAll();
}

void ScriptProcesses::GraceLoop() {
  MutexLock lock(&mu_);
  while (!grace_stop_) {
    if (kill_at_.empty()) {
      grace_cv_.Wait();
      continue;
    }
    auto first = std::min_element(kill_at_.begin(), kill_at_.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
    if (std::chrono::steady_clock::now() < first->second) {
      grace_cv_.WaitUntil(first->second);
      continue;
    }
    // Still in groups_ (a group leaves it before its command is reaped): the id is its own.
    if (groups_.count(first->first) != 0) kill(-first->first, SIGKILL);
    kill_at_.erase(first);
  }
}

void ScriptProcesses::StopStarting() {
  MutexLock lock(&mu_);
  stopped_ = true;
}

int ScriptProcesses::Signal(int signal) {
  MutexLock lock(&mu_);
  signalled_ = signal;
  for (pid_t group : groups_) kill(-group, signal);
  // Those being started get it as soon as they have started (Run, after the spawn).
  return static_cast<int>(groups_.size()) + (stopped_ ? starting_ : 0);
}

bool ScriptProcesses::WaitIdle(std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(&mu_);
  while (active_ != 0 && idle_cv_.WaitUntil(deadline)) {
  }
  return active_ == 0;
}

int ScriptProcesses::running() {
  MutexLock lock(&mu_);
  return active_;
}

pid_t ScriptProcesses::guardian_pid_for_testing() {
  MutexLock lock(&mu_);
  return guardian_pid_;
}

bool ScriptProcesses::WaitGroupsForTesting(size_t n,
                                           std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(&mu_);
  while (groups_.size() < n && groups_cv_.WaitUntil(deadline)) {
  }
  return groups_.size() >= n;
}

}  // namespace elasticjob::executor
