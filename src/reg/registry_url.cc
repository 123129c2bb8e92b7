#include "reg/registry_url.h"

#include <fmt/format.h>

#include <charconv>

namespace elasticjob::reg {
namespace {

bool ValidNamespace(std::string_view ns) {
  if (ns.empty()) return false;
  for (char c : ns) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return false;
    }
  }
  return ns != "." && ns != ".." && ns != "zookeeper";
}

}  // namespace

std::string RedactRegistryUrl(std::string_view url) {
  std::string out(url);
  const size_t query = out.find('?');
  if (query == std::string::npos) return out;
  for (size_t at = query; at < out.size();) {
    const size_t name = at + 1;
    size_t end = out.find('&', name);
    if (end == std::string::npos) end = out.size();
    if (out.compare(name, 7, "digest=") == 0) {
      out.replace(name + 7, end - name - 7, "***");
      end = name + 10;
    }
    at = end;
  }
  return out;
}

Result<RegistryUrl> ParseRegistryUrl(std::string_view url) {
  RegistryUrl r;
  auto bad = [&](const std::string& why) {
    return InvalidArgument(fmt::format("registry '{}': {}", RedactRegistryUrl(url), why));
  };
  std::string_view rest;
  if (url.substr(0, 12) == "zookeeper://") {
    r.scheme = RegistryUrl::Scheme::kZooKeeper;
    rest = url.substr(12);
  } else if (url.substr(0, 9) == "memory://") {
    r.scheme = RegistryUrl::Scheme::kMemory;
    rest = url.substr(9);
    // Watch events are not batched: nothing to save on an in-process server, and a cache
    // follows another session's write as soon as the worker has read it.
    r.cache_batch_ms = 0;
  } else {
    return bad("expected zookeeper://host:port/namespace or memory://namespace");
  }
  std::string_view query;
  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (r.scheme == RegistryUrl::Scheme::kZooKeeper) {
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return bad("missing /namespace after the servers");
    r.servers = std::string(rest.substr(0, slash));
    rest = rest.substr(slash + 1);
    if (r.servers.empty()) return bad("no servers");
    size_t start = 0;
    while (start <= r.servers.size()) {
      size_t comma = r.servers.find(',', start);
      std::string_view hp = std::string_view(r.servers).substr(
          start, comma == std::string::npos ? std::string::npos : comma - start);
      size_t colon = hp.rfind(':');
      int port = 0;
      if (colon == std::string_view::npos || colon == 0 ||
          std::from_chars(hp.data() + colon + 1, hp.data() + hp.size(), port).ec != std::errc() ||
          port <= 0 || port > 65535) {
        return bad(fmt::format("server '{}' is not host:port", hp));
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (!ValidNamespace(rest)) {
    return bad(
        fmt::format("namespace '{}' must be one path segment of letters, digits, '-', "
                    "'_' or '.'",
                    rest));
  }
  r.name_space = std::string(rest);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) return bad(fmt::format("parameter '{}' has no value", kv));
    std::string_view key = kv.substr(0, eq);
    std::string_view value = kv.substr(eq + 1);
    if (key == "digest") {
      if (value.find(':') == std::string_view::npos || value.front() == ':') {
        return bad("digest must be user:password");
      }
      r.digest = std::string(value);
      continue;
    }
    int* target = nullptr;
    if (key == "sessionTimeoutMs") target = &r.session_timeout_ms;
    if (key == "connectionTimeoutMs") target = &r.connection_timeout_ms;
    if (key == "baseSleepMs") target = &r.base_sleep_ms;
    if (key == "maxSleepMs") target = &r.max_sleep_ms;
    if (key == "maxRetries") target = &r.max_retries;
    if (key == "cacheBatchMs") target = &r.cache_batch_ms;
    if (target == nullptr) return bad(fmt::format("unknown parameter '{}'", key));
    int v = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || p != value.data() + value.size() || v < 0) {
      return bad(fmt::format("{} must be a non-negative integer, got '{}'", key, value));
    }
    *target = v;
  }
  return r;
}

}  // namespace elasticjob::reg
