#include "reg/zk_test_server.h"

#define THREADED
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <vector>

extern char** environ;

namespace elasticjob::testing {
namespace {

std::string RunScript(const std::string& args, int* rc) {
  std::string cmd = std::string("bash '") + ELASTICJOB_ZK_SCRIPT + "' " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while (p != nullptr && (n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *rc = p == nullptr ? -1 : pclose(p);
  return out;
}

}  // namespace

ZkTestServer::ZkTestServer() {
  char tmpl[] = "/tmp/elasticjob-zk-XXXXXX";
  dir_ = mkdtemp(tmpl);
}

ZkTestServer::~ZkTestServer() {
  Stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Status ZkTestServer::Start() {
  int rc = 0;
  // fmt, not "literal" + std::string&&: GCC 12 warns (-Wrestrict) on the latter in Release.
  std::string args = fmt::format("start '{}'", dir_);
  if (port_ != 0) args += fmt::format(" {}", port_);
  std::string out = RunScript(args, &rc);
  // The script retries on another port when the server cannot bind (scripts/lib/ports.sh)
  // and says so on stderr, which comes first: "PORT PID" is the last line.
  std::istringstream lines(out);
  std::string line;
  int port = 0;
  long pid = 0;
  bool parsed = false;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    int p = 0;
    long q = 0;
    if (in >> p >> q) port = p, pid = q, parsed = true;
  }
  if (rc != 0 || !parsed) {
    return Status(StatusCode::kUnavailable, "zk-server.sh start failed: " + out);
  }
  port_ = port;
  pid_ = static_cast<pid_t>(pid);
  return Status::Ok();
}

void ZkTestServer::Stop() {
  if (pid_ == 0) return;
  int rc = 0;
  RunScript("stop '" + dir_ + "'", &rc);  // kills the PID the script recorded
  pid_ = 0;
}

Status ZkTestServer::Restart() {
  Stop();
  return Start();
}

void ZkTestServer::Pause() {
  if (pid_ != 0) kill(pid_, SIGSTOP);
}

void ZkTestServer::Resume() {
  if (pid_ != 0) kill(pid_, SIGCONT);
}

std::string ZkTestServer::Url(const std::string& name_space, const std::string& params) const {
  return "zookeeper://127.0.0.1:" + std::to_string(port_) + "/" + name_space +
         (params.empty() ? "" : "?" + params);
}

Status KillSession(int port, int64_t session_id, const std::string& password) {
  if (password.size() != 16) return InvalidArgument("session password must be 16 bytes");
  clientid_t id{};
  id.client_id = session_id;
  std::memcpy(id.passwd, password.data(), 16);
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    bool connected = false;
    bool expired = false;
  } state;
  auto watcher = [](zhandle_t*, int type, int zstate, const char*, void* ctx) {
    auto* st = static_cast<State*>(ctx);
    if (type != ZOO_SESSION_EVENT) return;
    std::lock_guard<std::mutex> l(st->mu);
    if (zstate == ZOO_CONNECTED_STATE) st->connected = true;
    if (zstate == ZOO_EXPIRED_SESSION_STATE) st->expired = true;  // already gone
    st->cv.notify_all();
  };
  std::string host = "127.0.0.1:" + std::to_string(port);
  zhandle_t* zh = zookeeper_init(host.c_str(), watcher, 10000, &id, &state, 0);
  if (zh == nullptr) return Internal("zookeeper_init failed");
  bool ok;
  {
    std::unique_lock<std::mutex> l(state.mu);
    ok = state.cv.wait_for(l, std::chrono::seconds(10),
                           [&] { return state.connected || state.expired; });
  }
  zookeeper_close(zh);  // closing the borrowed session ends it for its owner too
  return ok ? Status::Ok() : Status(StatusCode::kTimeout, "could not attach to the session");
}

Result<pid_t> StartHelperProcess(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) return Internal("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<std::string> all = {ELASTICJOB_SESSION_HOLDER};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return Internal("posix_spawn failed");
  }
  std::string out;
  char c;
  while (read(fds[0], &c, 1) == 1) {
    out += c;
    if (out.find("ready\n") != std::string::npos) break;
  }
  close(fds[0]);
  if (out.find("ready\n") == std::string::npos) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return Internal("helper did not get ready: " + out);
  }
  return pid;
}

Result<std::unique_ptr<ChildProcess>> SpawnWithPipes(const std::vector<std::string>& args) {
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) return Internal("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, in[1]);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<std::string> all = args;
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    return Internal("posix_spawn failed: " + args[0]);
  }
  auto child = std::make_unique<ChildProcess>();
  child->pid = pid;
  child->stdin_fd = in[1];
  child->stdout_fd = out[0];
  return child;
}

bool ChildProcess::WaitForLine(const std::string& line, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    size_t nl;
    while ((nl = buffered.find('\n')) != std::string::npos) {
      std::string got = buffered.substr(0, nl);
      buffered.erase(0, nl + 1);
      if (got == line) return true;
    }
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
    if (left <= 0) return false;
    pollfd p{stdout_fd, POLLIN, 0};
    if (poll(&p, 1, left) <= 0) return false;
    char buf[256];
    ssize_t n = read(stdout_fd, buf, sizeof buf);
    if (n <= 0) return false;
    buffered.append(buf, static_cast<size_t>(n));
  }
}

bool ChildProcess::HasOutput() {
  if (!buffered.empty()) return true;
  pollfd p{stdout_fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

void ChildProcess::CloseStdin() {
  if (stdin_fd >= 0) close(stdin_fd);
  stdin_fd = -1;
}

void ChildProcess::Kill() {
  if (pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  pid = 0;
}

ChildProcess::~ChildProcess() {
  CloseStdin();
  if (pid > 0) {
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; ++i) {
      pollfd p{stdout_fd, POLLIN, 100};
      poll(&p, 1, 100);  // bounded wait for a clean exit after stdin closed
    }
    Kill();
  }
  if (stdout_fd >= 0) close(stdout_fd);
}

}  // namespace elasticjob::testing
