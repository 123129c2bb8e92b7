// The dump port's loop. A poll() loop on one thread rather than Boost.Asio: the protocol is
// one line in and one reply out per connection, with a handful of connections at most, and
// the loop is short enough to read whole; Asio would add Boost to the build for it.
#include "snapshot/dump_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "infra/log.h"
#include "infra/thread_name.h"
#include "snapshot/snapshot_service.h"

namespace elasticjob::snapshot {
namespace {

using Clock = std::chrono::steady_clock;

struct Listeners {
  struct Entry {
    DumpServer* server;  // identifies the entry its deleter erases
    std::weak_ptr<DumpServer> weak;
  };
  Mutex mu;
  CondVar gone{&mu};  // an entry was erased
  std::map<std::pair<std::string, int>, Entry> by_address ELASTICJOB_GUARDED_BY(mu);
};

// Process-wide listeners by address and port (released with their last job). Never
// destroyed: a job may be shut down during static destruction.
Listeners& TheListeners() {
  static auto* listeners = new Listeners;
  return *listeners;
}

std::string ErrnoText(int err) { return std::strerror(err); }

}  // namespace

struct DumpServer::Conn {
  int fd;
  Clock::time_point deadline;
  std::string in;
  std::string out;  // the reply, once the line is in
  size_t sent = 0;
  bool writing = false;
};

Result<std::shared_ptr<DumpServer>> DumpServer::Acquire(const std::string& address, int port,
                                                        Limits limits) {
  in_addr parsed{};
  if (inet_pton(AF_INET, address.c_str(), &parsed) != 1) {
    return InvalidArgument(fmt::format(
        "dump port address: '{}' is not an IPv4 address (127.0.0.1, 0.0.0.0, ...)", address));
  }
  if (port < 0 || port > 65535) {
    return InvalidArgument(fmt::format("monitorPort: {} is not a TCP port", port));
  }
  Listeners& all = TheListeners();
  MutexLock lock(&all.mu);
  const auto key = std::make_pair(address, port);
  if (port != 0) {
    for (;;) {
      auto it = all.by_address.find(key);
      if (it == all.by_address.end()) break;
      if (auto live = it->second.weak.lock()) return live;
      all.gone.Wait();  // its last job just left: its deleter closes the port first
    }
  }
  std::unique_ptr<DumpServer> fresh(new DumpServer(address, limits));
  if (Status s = fresh->Listen(port); !s.ok()) return s;
  DumpServer* raw = fresh.release();
  std::shared_ptr<DumpServer> server(raw, [](DumpServer* s) {
    Listeners& listeners = TheListeners();
    MutexLock hold(&listeners.mu);
    auto it = listeners.by_address.find({s->address_, s->port_});
    if (it != listeners.by_address.end() && it->second.server == s) {
      listeners.by_address.erase(it);
    }
    delete s;  // under the lock: the port is closed before another Acquire binds it
    listeners.gone.SignalAll();
  });
  if (port != 0) all.by_address[key] = {raw, server};
  return server;
}

Status DumpServer::Listen(int port) {
  auto fail = [&](const char* what, int err) {
    return Status(StatusCode::kUnavailable,
                  fmt::format("dump port {}:{}: {}: {}", address_, port, what, ErrnoText(err)));
  };
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return fail("eventfd", errno);
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return fail("socket", errno);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, address_.c_str(), &addr.sin_addr);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return fail("cannot bind", errno);
  }
  if (listen(listen_fd_, limits_.max_connections + 1) != 0) return fail("cannot listen", errno);
  socklen_t len = sizeof(addr);
  if (getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return fail("getsockname", errno);
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] {
    infra::NameThisThread("ej-dump");
    Loop();
  });
  return Status::Ok();
}

DumpServer::~DumpServer() {
  stopping_.store(true);
  if (thread_.joinable()) {
    uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));
    thread_.join();
  }
  if (listen_fd_ >= 0) close(listen_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

Result<std::unique_ptr<DumpServer::Registration>> DumpServer::Register(
    std::string job_name, RegistryCenter& registry, std::shared_ptr<Logger> logger) {
  MutexLock lock(&jobs_mu_);
  if (!jobs_.emplace(job_name, Served{&registry, logger}).second) {
    return Status(StatusCode::kAlreadyExists,
                  fmt::format("dump port {}:{}: a job named '{}' is served there already (another "
                              "instance of it in this process, or another namespace's job of "
                              "that name): this one is not dumped there",
                              address_, port_, job_name));
  }
  // One line per job, naming it: several jobs may share the port.
  infra::LogLine(logger.get(), "INFO", {.job = job_name, .item = std::nullopt, .instance = {}},
                 fmt::format("job '{}': dump port listening on {}:{} (elasticjob dump {} "
                             "--instance {}:{})",
                             job_name, address_, port_, job_name, address_, port_));
  // Registration's constructor is private: no make_unique.
  return std::unique_ptr<Registration>(new Registration(shared_from_this(), std::move(job_name)));
}

void DumpServer::Unregister(const std::string& job_name) {
  {
    MutexLock lock(&jobs_mu_);
    jobs_.erase(job_name);
  }
  // A dump that found the job before it left holds dump_mu_ until it ends.
  MutexLock barrier(&dump_mu_);
}

DumpServer::Registration::~Registration() { server_->Unregister(job_name_); }

std::string DumpServer::Reply(const std::string& line) {
  auto job = ParseDumpCommand(line);
  if (!job) return "";
  MutexLock dumping(&dump_mu_);
  RegistryCenter* registry = nullptr;
  std::shared_ptr<Logger> logger;
  {
    MutexLock lock(&jobs_mu_);
    auto it = jobs_.find(*job);
    if (it == jobs_.end()) return "";
    registry = it->second.registry;
    logger = it->second.logger;
  }
  auto dump = DumpJob(*registry, *job);
  if (!dump.ok()) {
    infra::LogLine(logger.get(), "WARN", {.job = *job, .item = std::nullopt, .instance = {}},
                   fmt::format("dump port {}:{}: job '{}': {}", address_, port_, *job,
                               dump.status().ToString()));
    return "";
  }
  return std::move(dump).value();
}

void DumpServer::Loop() {
  std::vector<Conn> conns;
  std::vector<pollfd> fds;
  auto close_conn = [](Conn& c) {
    shutdown(c.fd, SHUT_WR);
    close(c.fd);
    c.fd = -1;
  };
  // Sends what the socket takes now; closes the connection once the reply is out.
  auto send_some = [&](Conn& c) {
    while (c.sent < c.out.size()) {
      ssize_t n =
          send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.sent += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      } else {
        break;
      }
    }
    close_conn(c);
  };
  auto respond = [&](Conn& c, std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // readLine's "\r\n"
    c.out = Reply(line);
    c.in.clear();
    if (c.out.empty()) return close_conn(c);
    c.writing = true;
    c.deadline = Clock::now() + limits_.io_timeout;  // as long again to take the reply
    send_some(c);
  };
  // Reads what is there; answers a complete line (or one ended by the client closing).
  auto read_some = [&](Conn& c) {
    char buf[512];
    for (;;) {
      ssize_t n = recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) {  // closed (or failed): a last line without '\n' still counts, as readLine's
        if (n == 0 && !c.in.empty()) return respond(c, std::move(c.in));
        return close_conn(c);
      }
      c.in.append(buf, static_cast<size_t>(n));
      if (size_t nl = c.in.find('\n'); nl != std::string::npos && nl <= kMaxLine) {
        return respond(c, c.in.substr(0, nl));
      }
      if (c.in.size() > kMaxLine) return close_conn(c);  // no line this long is a request
    }
  };

  // Out of file descriptors (EMFILE): the listener stays readable, so it is left out of
  // the poll for a moment instead of being retried in a busy loop.
  Clock::time_point accept_pause{};
  while (!stopping_.load()) {
    const auto now = Clock::now();
    for (Conn& c : conns) {
      if (c.deadline <= now) close_conn(c);  // too slow to send its line or take the reply
    }
    std::erase_if(conns, [](const Conn& c) { return c.fd < 0; });
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    const bool accepting = accept_pause <= now;
    fds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});  // poll skips a negative fd
    int timeout_ms = -1;
    auto wait_until = [&](Clock::time_point t) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(t - now).count();
      left = std::clamp<int64_t>(left, 0, std::numeric_limits<int>::max());
      if (timeout_ms < 0 || left < timeout_ms) timeout_ms = static_cast<int>(left);
    };
    if (!accepting) wait_until(accept_pause);
    for (const Conn& c : conns) {
      fds.push_back({c.fd, static_cast<short>(c.writing ? POLLOUT : POLLIN), 0});
      wait_until(c.deadline);
    }
    int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      infra::LogLine("ERROR", fmt::format("dump port {}:{}: poll: {} (the port is closed)",
                                          address_, port_, ErrnoText(errno)));
      break;
    }
    if (fds[0].revents != 0) break;  // woken: stopping
    // Connections first (their entries follow the two fixed ones), then new ones.
    for (size_t i = 0; i < conns.size(); ++i) {
      if (fds[i + 2].revents == 0) continue;
      Conn& c = conns[i];
      if (c.writing) {
        send_some(c);
      } else {
        read_some(c);
      }
    }
    if (fds[1].revents != 0) {
      for (;;) {
        int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {  // EAGAIN: none left; or a connection already gone
          if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            accept_pause = Clock::now() + std::chrono::milliseconds(100);
          }
          break;
        }
        size_t open = 0;
        for (const Conn& c : conns) open += c.fd >= 0;
        if (open >= static_cast<size_t>(limits_.max_connections)) {
          rejected_.fetch_add(1);
          close(fd);  // at the limit: closed at once rather than left waiting
          continue;
        }
        conns.push_back(Conn{fd, Clock::now() + limits_.io_timeout, {}, {}, 0, false});
      }
    }
  }
  for (Conn& c : conns) {
    if (c.fd >= 0) close(c.fd);
  }
}

}  // namespace elasticjob::snapshot
