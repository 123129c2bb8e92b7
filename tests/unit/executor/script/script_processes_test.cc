#include "executor/script/script_processes.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace elasticjob::executor {
namespace {

// No sleeps: a test waits for a script on a FIFO it writes to, and for a process's end on its
// pidfd (readable once it has exited); the timeouts below only bound a failure.
constexpr int kGoneTimeoutMs = 10000;

class ScriptProcessesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A death test's child (re-executed) works in its parent's directory.
    if (const char* parent = std::getenv(kDirVariable)) {
      dir_ = parent;
      fifo_ = dir_ + "/fifo";
      return;
    }
    std::string tmpl = ::testing::TempDir() + "/script_processes_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    fifo_ = dir_ + "/fifo";
    ASSERT_EQ(mkfifo(fifo_.c_str(), 0600), 0);
  }
  void TearDown() override {
    unsetenv(kDirVariable);
    std::remove(fifo_.c_str());
    std::remove((dir_ + "/out").c_str());
    rmdir(dir_.c_str());
  }

  // `sh -c SCRIPT`: $F is the FIFO, $O a file the test reads.
  std::vector<std::string> Sh(const std::string& script) {
    return {"/bin/sh", "-c", "F=" + fifo_ + "; O=" + dir_ + "/out; " + script};
  }
  // The line the script writes to $F (blocks until it does).
  std::string ReadFifo() {
    std::ifstream in(fifo_);
    std::string line;
    std::getline(in, line);
    return line;
  }
  std::string ReadOut() {
    std::ifstream in(dir_ + "/out");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  void ExpectTheScriptDiesWithItsInstance(const std::function<void(ScriptProcesses&)>& meanwhile);

  static constexpr const char* kDirVariable = "SCRIPT_PROCESSES_TEST_DIR";
  std::string dir_;
  std::string fifo_;
};

// True once `pid` has exited (a zombie has), false if it still runs after the bound.
bool Gone(pid_t pid) {
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;
  pollfd p{fd, POLLIN, 0};
  int n = poll(&p, 1, kGoneTimeoutMs);
  close(fd);
  return n == 1;
}

TEST_F(ScriptProcessesTest, ReportsTheExitStatus) {
  ScriptProcesses processes;
  auto ok = processes.Run({"/bin/true"});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(WIFEXITED(*ok) && WEXITSTATUS(*ok) == 0);
  auto three = processes.Run(Sh("exit 3"));
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_TRUE(WIFEXITED(*three) && WEXITSTATUS(*three) == 3);
  auto signalled = processes.Run(Sh("kill -USR1 $$"));
  ASSERT_TRUE(signalled.ok()) << signalled.status();
  ASSERT_TRUE(WIFSIGNALED(*signalled));
  EXPECT_EQ(WTERMSIG(*signalled), SIGUSR1);
  EXPECT_EQ(processes.running(), 0);
}

TEST_F(ScriptProcessesTest, TheCommandGetsTheGivenEnvironmentOnTopOfTheInstancesOwn) {
  ScriptProcesses processes;
  ::setenv("ELASTICJOB_FENCING_TOKEN", "inherited", 1);
  ::setenv("SCRIPT_PROCESSES_TEST_KEPT", "kept", 1);
  std::string out;
  auto output = [&](int stream, std::string_view data) {
    if (stream == 1) out.append(data);
  };
  auto r = processes.Run(Sh("echo \"$ELASTICJOB_FENCING_TOKEN $SCRIPT_PROCESSES_TEST_KEPT\""),
                         output, nullptr, {"ELASTICJOB_FENCING_TOKEN=42"});
  ::unsetenv("ELASTICJOB_FENCING_TOKEN");
  ::unsetenv("SCRIPT_PROCESSES_TEST_KEPT");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(out, "42 kept\n");  // given one wins; the rest of the environment is still there
}

// Issue 31: an instance frozen between its lease check and the spawn must not start the
// command after it resumes; the new process checks the deadline just before its exec.
TEST_F(ScriptProcessesTest, ACommandWhoseStartDeadlineHasPassedRunsNothing) {
  ScriptProcesses processes;
  const std::string mark = dir_ + "/ran";
  auto late = processes.Run(Sh("touch " + mark), nullptr, nullptr, {},
                            std::chrono::steady_clock::now() - std::chrono::milliseconds(1));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), StatusCode::kCancelled) << late.status();
  EXPECT_NE(late.status().message().find("not started"), std::string::npos) << late.status();
  EXPECT_NE(access(mark.c_str(), F_OK), 0) << "the command ran after its deadline";
  EXPECT_EQ(processes.running(), 0);
  auto in_time = processes.Run(Sh("touch " + mark), nullptr, nullptr, {},
                               std::chrono::steady_clock::now() + std::chrono::seconds(30));
  ASSERT_TRUE(in_time.ok()) << in_time.status();
  EXPECT_EQ(access(mark.c_str(), F_OK), 0);
}

TEST_F(ScriptProcessesTest, ACommandThatCannotStartIsAnError) {
  ScriptProcesses processes;
  auto missing = processes.Run({"/nonexistent/command", "arg"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInternal);
  EXPECT_EQ(missing.status().message(),
            "cannot run '/nonexistent/command': No such file or directory");
  EXPECT_EQ(processes.running(), 0);
}

TEST_F(ScriptProcessesTest, RunsInAGroupOfItsOwnWithACleanSignalState) {
  // SIGTERM blocked, as `elasticjob run` blocks it.
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &old);
  ScriptProcesses processes;
  auto status = processes.Run(
      Sh("echo $$ $(cut -d' ' -f4,5 /proc/$$/stat) $(grep SigBlk /proc/$$/status | cut -f2) "
         "$(grep SigIgn /proc/$$/status | cut -f2) > $O"));
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(status.ok()) << status.status();
  std::istringstream out(ReadOut());
  pid_t pid = 0, ppid = 0, pgid = 0;
  std::string blocked, ignored;
  out >> pid >> ppid >> pgid >> blocked >> ignored;
  EXPECT_NE(pgid, getpgrp()) << "in the instance's group";
  EXPECT_EQ(pgid, pid) << "the command leads its group";
  EXPECT_EQ(ppid, getpid()) << "the instance is the command's parent";
  EXPECT_EQ(blocked, "0000000000000000");
  // Signals 1-31 (glibc reserves 32 and 33 and leaves them as they are).
  EXPECT_EQ(std::stoull(ignored, nullptr, 16) & 0x7fffffffULL, 0U) << ignored;
}

// A run costs one process, the command; one guardian serves every run (it was a watcher
// per run, twice the processes a hundred every-second jobs start).
TEST_F(ScriptProcessesTest, ARunCostsOneProcessAndOneGuardianServesThemAll) {
  ScriptProcesses processes;
  std::vector<std::string> others;
  for (int i = 0; i < 2; ++i) {
    // The instance's other children while the command runs.
    auto status = processes.Run(Sh("ps -o pid= --ppid $PPID | tr -d ' ' | grep -vx $$ > $O"));
    ASSERT_TRUE(status.ok()) << status.status();
    others.push_back(ReadOut());
  }
  EXPECT_FALSE(others[0].empty()) << "no guardian";
  EXPECT_EQ(std::count(others[0].begin(), others[0].end(), '\n'), 1) << others[0];
  EXPECT_EQ(others[1], others[0]) << "a guardian per run";
}

TEST_F(ScriptProcessesTest, WhatTheCommandLeavesRunningIsKilledWhenItExits) {
  ScriptProcesses processes;
  auto status = processes.Run(Sh("sleep 300 & echo $! > $O"));
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  pid_t sleeper = std::atoi(ReadOut().c_str());
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(Gone(sleeper)) << "sleep " << sleeper << " outlived its item";
}

TEST_F(ScriptProcessesTest, SignalReachesTheWholeGroupAndStopStartingRefusesNewRuns) {
  ScriptProcesses processes;
  Result<int> status = Internal("not run");
  std::thread item([&] { status = processes.Run(Sh("sleep 300 & echo $$ $! > $F; wait")); });
  std::istringstream ready(ReadFifo());
  pid_t script = 0, sleeper = 0;
  ready >> script >> sleeper;
  EXPECT_EQ(processes.running(), 1);
  // After StopStarting a signal also reaches a run still registering its group.
  processes.StopStarting();
  processes.Signal(SIGTERM);
  item.join();
  ASSERT_TRUE(status.ok()) << status.status();
  ASSERT_TRUE(WIFSIGNALED(*status));
  EXPECT_EQ(WTERMSIG(*status), SIGTERM);
  EXPECT_TRUE(Gone(sleeper));
  EXPECT_TRUE(processes.WaitIdle(std::chrono::steady_clock::now()));
  auto refused = processes.Run({"/bin/true"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(ScriptProcessesTest, SigkillEndsACommandThatIgnoresSigterm) {
  ScriptProcesses processes;
  Result<int> status = Internal("not run");
  std::thread item(
      [&] { status = processes.Run(Sh("trap '' TERM; sleep 300 & echo $! > $F; wait")); });
  pid_t sleeper = std::atoi(ReadFifo().c_str());
  processes.StopStarting();
  // The command may be running before Run has registered its group: after StopStarting,
  // the last signal reaches it then (how many groups Signal reached is not the point).
  processes.Signal(SIGTERM);
  processes.Signal(SIGKILL);
  item.join();
  ASSERT_TRUE(status.ok()) << status.status();
  ASSERT_TRUE(WIFSIGNALED(*status));
  EXPECT_EQ(WTERMSIG(*status), SIGKILL);
  EXPECT_TRUE(Gone(sleeper));
  EXPECT_EQ(processes.running(), 0);
}

TEST_F(ScriptProcessesTest, ACancellationKillsTheGroupAtOnceAndStartsNothingAfter) {
  // Fencing: the instance's session expired while the item ran (others may run it now).
  ScriptProcesses processes;
  Cancellation cancel;
  Result<int> status = Internal("not run");
  std::thread item([&] {
    status = processes.Run(Sh("trap '' TERM; sleep 300 & echo $! > $F; wait"), nullptr, &cancel);
  });
  pid_t sleeper = std::atoi(ReadFifo().c_str());
  ASSERT_GT(sleeper, 0);
  cancel.Request("the session expired");
  item.join();
  ASSERT_TRUE(status.ok()) << status.status();
  ASSERT_TRUE(WIFSIGNALED(*status));
  EXPECT_EQ(WTERMSIG(*status), SIGKILL);
  EXPECT_TRUE(Gone(sleeper)) << "the grandchild outlived its cancelled item";
  EXPECT_EQ(processes.running(), 0);
  auto refused = processes.Run({"/bin/true"}, nullptr, &cancel);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kCancelled);
  EXPECT_NE(refused.status().message().find("the session expired"), std::string::npos);
}

// In a death-test child: marks every descriptor but 0-2 close-on-exec, so that scripts keep
// none of the death test's pipes, whose end-of-file the test waits for (a survivor holding
// one would delay the checks after the child's death until it ends, and pass them).
void KeepDescriptorsFromScripts() {
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(e.path().filename().string());
    if (fd > 2) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
}

// The instance is a death-test child (re-executed, so it may start threads) that runs a
// script with a grandchild, does `meanwhile` while it runs, then dies of SIGKILL mid-run;
// both the script and its child must end with it.
void ScriptProcessesTest::ExpectTheScriptDiesWithItsInstance(
    const std::function<void(ScriptProcesses&)>& meanwhile) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string out = dir_ + "/out";
  setenv(kDirVariable, dir_.c_str(), 1);
  EXPECT_EXIT(
      {
        ScriptProcesses processes;
        KeepDescriptorsFromScripts();
        std::thread([&] {
          (void)processes.Run(Sh("exec > /dev/null 2>&1; sleep 300 & echo $$ $! > $F; wait"));
        }).detach();
        std::string line = ReadFifo();
        // The script writes its line as it starts; the instance tells the guardian of its
        // group just after the spawn returns, on the thread that started it. The test is of
        // what happens once the guardian knows: wait for that (bounded, in the child).
        if (!processes.WaitGroupsForTesting(
                1, std::chrono::steady_clock::now() + std::chrono::seconds(10))) {
          _exit(5);
        }
        meanwhile(processes);
        std::ofstream(out) << line << "\n" << std::flush;
        raise(SIGKILL);
      },
      ::testing::KilledBySignal(SIGKILL), "");
  std::istringstream recorded(ReadOut());
  pid_t script = 0, sleeper = 0;
  recorded >> script >> sleeper;
  ASSERT_GT(script, 0);
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(Gone(script)) << "the script outlived its instance";
  EXPECT_TRUE(Gone(sleeper)) << "the script's child outlived its instance";
}

TEST_F(ScriptProcessesTest, TheGroupDiesWithItsInstance) {
  ExpectTheScriptDiesWithItsInstance([](ScriptProcesses&) {});
}

// The guardian killed from outside while a script runs: the next line the instance sends it
// (here, another run's start) finds it gone, and a new one starts at once, told of the
// script still running, which then dies with its instance. (A new guardian used to wait for
// the next Run: the script ran unguarded until then.)
TEST_F(ScriptProcessesTest, AGuardianKilledFromOutsideIsReplacedAtOnce) {
  ExpectTheScriptDiesWithItsInstance([](ScriptProcesses& processes) {
    const pid_t guardian = processes.guardian_pid_for_testing();
    if (guardian <= 0) _exit(3);
    kill(guardian, SIGKILL);
    // Exited, left unreaped (the instance reaps it when it finds it gone).
    siginfo_t info{};
    while (waitid(P_PID, static_cast<id_t>(guardian), &info, WEXITED | WNOWAIT) < 0 &&
           errno == EINTR) {
    }
    if (!processes.Run({"/bin/true"}).ok()) _exit(4);
  });
}

}  // namespace
}  // namespace elasticjob::executor
