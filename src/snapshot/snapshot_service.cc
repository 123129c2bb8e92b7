#include "snapshot/snapshot_service.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <regex>

#include "reg/coordinator_registry.h"

namespace elasticjob::snapshot {
namespace {

// IpUtils.IP_REGEX of ElasticJob 3.0.5. ECMAScript alternation is ordered and '\d' is ASCII,
// as in java.util.regex, so the same text matches the same way.
const std::regex& IpPattern() {
  static const std::regex kIp(
      R"(((\d|[1-9]\d|1\d{2}|2[0-4]\d|25[0-5])(\.(1\d{2}|2[0-4]\d|25[0-5]|[1-9]\d|\d)){3}))",
      std::regex::ECMAScript | std::regex::optimize);
  return kIp;
}

// Java's String.replace(CharSequence, CharSequence): every occurrence, left to right.
void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
}

Status DumpBelow(reg::CoordinatorRegistry& registry, const std::string& path,
                 std::vector<std::string>& lines) {
  auto children = registry.GetChildrenKeysDirectly(path);
  if (!children.ok()) {
    return children.status().code() == StatusCode::kNotFound ? Status::Ok() : children.status();
  }
  for (const std::string& child : *children) {
    const std::string node = path + "/" + child;
    std::string value;
    if (auto v = registry.GetDirectly(node); v.ok()) {
      value = std::move(v).value();
    } else if (v.status().code() != StatusCode::kNotFound) {
      return v.status();
    }
    // A node the cache does not cover cannot disagree with the server: reads of it go there.
    const reg::CachedRead cached = registry.GetCached(node);
    const std::string cached_path = !cached.covered || cached.value ? node : "";
    const std::string cached_value = cached.covered ? cached.value.value_or("") : value;
    if (cached_path == node && cached_value == value) {
      lines.push_back(node + " | " + value);
    } else {
      lines.push_back(node + " | " + value + " | " + cached_path + " | " + cached_value);
    }
    if (Status s = DumpBelow(registry, node, lines); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

std::optional<std::string> ParseDumpCommand(std::string_view line) {
  if (!line.starts_with(kDumpCommand)) return std::nullopt;
  std::string_view name = line.substr(kDumpCommand.size());
  while (!name.empty() && name.back() == '@') name.remove_suffix(1);  // split drops them
  if (name.empty() || name.find('@') != std::string_view::npos) return std::nullopt;
  return std::string(name);
}

std::vector<std::string> FilterSensitiveIps(const std::vector<std::string>& lines) {
  std::map<std::string, std::string> fake;
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (const std::string& line : lines) {
    std::string result = line;
    for (std::sregex_iterator it(line.begin(), line.end(), IpPattern()), end; it != end; ++it) {
      const std::string real = it->str();
      auto [entry, added] = fake.try_emplace(real);
      if (added) entry->second = "ip" + std::to_string(fake.size());
      ReplaceAll(result, real, entry->second);
    }
    out.push_back(std::move(result));
  }
  return out;
}

Result<std::string> DumpJob(RegistryCenter& registry, std::string_view job_name) {
  std::vector<std::string> lines;
  reg::CoordinatorRef coordinator(registry);
  if (Status s = DumpBelow(*coordinator, "/" + std::string(job_name), lines); !s.ok()) return s;
  std::string text;
  for (const std::string& line : FilterSensitiveIps(lines)) {
    text += line;
    text += '\n';
  }
  return text.empty() ? std::string("\n") : text;
}

namespace {

// A socket closed when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

int MillisLeft(std::chrono::steady_clock::time_point deadline) {
  auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

}  // namespace

Result<std::string> RequestDump(const std::string& host, int port, std::string_view job_name,
                                std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string where = fmt::format("dump port {}:{}", host, port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    return Status(StatusCode::kUnavailable,
                  fmt::format("{}: cannot resolve '{}': {}", where, host, gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, &freeaddrinfo);
  Fd sock;
  std::string last_error = "no address";
  for (addrinfo* a = found; a != nullptr && sock.fd < 0; a = a->ai_next) {
    Fd s{socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol)};
    if (s.fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    if (connect(s.fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last_error = std::strerror(errno);
      continue;
    }
    pollfd p{s.fd, POLLOUT, 0};
    int ready = poll(&p, 1, MillisLeft(deadline));
    int err = 0;
    socklen_t len = sizeof(err);
    if (ready <= 0) {
      last_error = ready == 0 ? "connection timed out" : std::strerror(errno);
      continue;
    }
    getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      last_error = std::strerror(err);
      continue;
    }
    std::swap(sock.fd, s.fd);
  }
  if (sock.fd < 0) {
    return Status(StatusCode::kUnavailable,
                  fmt::format("{}: cannot connect: {}", where, last_error));
  }
  const std::string request = std::string(kDumpCommand) + std::string(job_name) + "\n";
  size_t sent = 0;
  std::string reply;
  char buf[4096];
  for (;;) {
    pollfd p{sock.fd, static_cast<short>(sent < request.size() ? POLLOUT | POLLIN : POLLIN), 0};
    int ready = poll(&p, 1, MillisLeft(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      return Status(StatusCode::kTimeout,
                    fmt::format("{}: no complete reply within {} ms ({} bytes received)", where,
                                timeout.count(), reply.size()));
    }
    if (ready < 0) return Status(StatusCode::kUnavailable, where + ": " + std::strerror(errno));
    if (sent < request.size() && (p.revents & POLLOUT) != 0) {
      ssize_t n = send(sock.fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return Status(StatusCode::kUnavailable, where + ": " + std::strerror(errno));
      }
      if (n > 0) sent += static_cast<size_t>(n);
    }
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      ssize_t n = recv(sock.fd, buf, sizeof(buf), 0);
      if (n == 0) return reply;  // the port closed the connection: the reply is complete
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return Status(StatusCode::kUnavailable, where + ": " + std::strerror(errno));
      }
      if (n > 0) reply.append(buf, static_cast<size_t>(n));
    }
  }
}

}  // namespace elasticjob::snapshot
