// Local servers for the job type and error handler tests, on 127.0.0.1 and free ports, started
// and stopped by the tests: an HTTP(S) server (cpp-httplib) that records what it receives, a
// port that accepts connections and never answers, and a port nobody listens on.
#ifndef ELASTICJOB_TESTS_INTEGRATION_JOBTYPES_TEST_SERVERS_H_
#define ELASTICJOB_TESTS_INTEGRATION_JOBTYPES_TEST_SERVERS_H_

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace elasticjob::test_support {

struct Received {
  std::string method;
  std::string path;
  std::map<std::string, std::string> params;
  std::string body;
  std::string content_type;
  std::string sharding_context;
  std::string fencing_token;  // the `fencingToken` header
};

// An HTTP or HTTPS server answering every request with `reply` (status, body).
class TestHttpServer {
 public:
  using Reply = std::function<std::pair<int, std::string>(const Received&)>;

  explicit TestHttpServer(Reply reply, const std::string& cert = "", const std::string& key = "")
      : reply_(std::move(reply)) {
    if (!cert.empty()) {
      server_ = std::make_unique<httplib::SSLServer>(cert.c_str(), key.c_str());
    } else {
      server_ = std::make_unique<httplib::Server>();
    }
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      Received r{req.method,
                 req.path,
                 {},
                 req.body,
                 req.get_header_value("Content-Type"),
                 req.get_header_value("shardingContext"),
                 req.get_header_value("fencingToken")};
      for (const auto& [k, v] : req.params) r.params[k] = v;
      auto [status, body] = reply_(r);
      {
        std::lock_guard<std::mutex> l(mu_);
        received_.push_back(r);
        cv_.notify_all();
      }
      res.status = status;
      res.set_content(body, "application/json");
    };
    server_->Get(".*", handler);
    server_->Post(".*", handler);
    server_->Put(".*", handler);
    server_->Delete(".*", handler);
    server_->Patch(".*", handler);
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
  }
  ~TestHttpServer() {
    server_->stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::string Url(const std::string& scheme = "http") const {
    return scheme + "://127.0.0.1:" + std::to_string(port_);
  }
  bool WaitRequests(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::seconds(20), [&] { return received_.size() >= n; });
  }
  std::vector<Received> received() {
    std::lock_guard<std::mutex> l(mu_);
    return received_;
  }

 private:
  Reply reply_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Received> received_;
};

// A port whose connections are accepted by the kernel (the listen backlog) and never answered.
class SilentPort {
 public:
  SilentPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(fd_, 16);
    socklen_t len = sizeof(a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~SilentPort() {
    for (int fd : accepted_) ::close(fd);
    ::close(fd_);
  }
  int port() const { return port_; }
  // Waits (at most `bound`) for a connection and takes it; false when none came.
  bool Accept(std::chrono::milliseconds bound) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(bound.count())) != 1) return false;
    const int fd = ::accept(fd_, nullptr, nullptr);
    if (fd < 0) return false;
    accepted_.push_back(fd);
    return true;
  }
  // Whether the client closed the connection Accept took last within `bound` (what it sent
  // meanwhile is read and dropped).
  bool ClosedByClient(std::chrono::milliseconds bound) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    char buf[4096];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{accepted_.back(), POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) != 1) return false;
      const ssize_t n = ::recv(accepted_.back(), buf, sizeof(buf), 0);
      if (n <= 0) return true;  // end of stream, or reset
    }
  }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::vector<int> accepted_;
};

// A port nobody listens on (bound, then closed): connections are refused.
inline int RefusedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// A throwaway self-signed certificate for 127.0.0.1 in `dir` (openssl req): {cert, key}.
inline std::pair<std::string, std::string> ThrowawayCertificate(const std::string& dir) {
  const std::string cert = dir + "/cert.pem", key = dir + "/key.pem";
  const std::string cmd =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
      "-addext subjectAltName=IP:127.0.0.1 -keyout " +
      key + " -out " + cert + " >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) return {"", ""};
  return {cert, key};
}

}  // namespace elasticjob::test_support

#endif  // ELASTICJOB_TESTS_INTEGRATION_JOBTYPES_TEST_SERVERS_H_
