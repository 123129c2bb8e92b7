#include "tracing/events/tracing_url.h"

#include <fmt/format.h>

#include <charconv>

namespace elasticjob::tracing {

namespace {

Result<std::string> PercentDecode(std::string_view s, std::string_view what, std::string_view url) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    int v = 0;
    if (i + 2 >= s.size() ||
        std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16).ptr != s.data() + i + 3) {
      return InvalidArgument(
          fmt::format("tracing URL '{}': bad percent-encoding in the {}", RedactUrl(url), what));
    }
    out += static_cast<char>(v);
    i += 2;
  }
  return out;
}

}  // namespace

std::string RedactUrl(std::string_view url) {
  size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  size_t start = scheme + 3;
  size_t end = url.find('/', start);
  std::string_view authority =
      url.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  size_t colon = authority.find(':');
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  std::string out(url.substr(0, start + colon + 1));
  out += "***";
  out += url.substr(start + at);
  return out;
}

Result<TracingUrl> ParseTracingUrl(std::string_view url) {
  TracingUrl u;
  u.redacted = RedactUrl(url);
  auto bad = [&](std::string_view why) {
    return InvalidArgument(fmt::format("tracing URL '{}': {}", u.redacted, why));
  };
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return bad(
        "expected sqlite:///path, postgresql://user:pass@host:port/db or "
        "mysql://user:pass@host:port/db");
  }
  std::string_view scheme = url.substr(0, scheme_end);
  std::string_view rest = url.substr(scheme_end + 3);
  if (scheme == "sqlite") {
    u.kind = TracingUrl::Kind::kSqlite;
    if (rest.empty()) return bad("no file path (sqlite:///path/events.db)");
    u.path = std::string(rest);
    return u;
  }
  if (scheme == "postgresql" || scheme == "postgres") {
    u.kind = TracingUrl::Kind::kPostgreSql;
  } else if (scheme == "mysql" || scheme == "mariadb") {
    u.kind = TracingUrl::Kind::kMySql;
  } else {
    return bad(fmt::format("unknown scheme '{}' (known: sqlite, postgresql, mysql)", scheme));
  }
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view database = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  if (size_t q = database.find('?'); q != std::string_view::npos) {
    return bad("query parameters are not supported");
  }
  if (database.empty()) return bad("no database name (…/database)");
  size_t at = authority.rfind('@');
  std::string_view hostport = authority;
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    hostport = authority.substr(at + 1);
    size_t colon = userinfo.find(':');
    auto user = PercentDecode(userinfo.substr(0, colon), "user", url);
    if (!user.ok()) return user.status();
    u.user = *user;
    if (colon != std::string_view::npos) {
      auto password = PercentDecode(userinfo.substr(colon + 1), "password", url);
      if (!password.ok()) return password.status();
      u.password = *password;
    }
  }
  size_t colon = hostport.rfind(':');
  if (colon != std::string_view::npos) {
    std::string_view port = hostport.substr(colon + 1);
    int p = 0;
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || ptr != port.data() + port.size() || p <= 0 || p > 65535) {
      return bad(fmt::format("port must be 1 to 65535, got '{}'", port));
    }
    u.port = p;
    hostport = hostport.substr(0, colon);
  }
  if (hostport.empty()) return bad("no host");
  u.host = std::string(hostport);
  u.database = std::string(database);
  return u;
}

}  // namespace elasticjob::tracing
