// Reading a job's props (JobConfiguration::props, strings as ElasticJob keeps them) into
// typed values, each error naming the prop and the value: `props.http.method: unknown
// method 'FETCH' (known: ...)`.
//
// Thread safety: stateless functions.
#ifndef ELASTICJOB_INFRA_PROPS_H_
#define ELASTICJOB_INFRA_PROPS_H_

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <map>
#include <string>

#include "elasticjob/status.h"

namespace elasticjob::infra {

using Props = std::map<std::string, std::string>;

// The prop's value, or `fallback` when absent.
inline std::string PropOr(const Props& props, const std::string& key, std::string fallback) {
  auto it = props.find(key);
  return it != props.end() ? it->second : std::move(fallback);
}

// The prop's value; INVALID_ARGUMENT when absent or empty.
inline Result<std::string> RequiredProp(const Props& props, const std::string& key) {
  auto it = props.find(key);
  if (it == props.end()) return InvalidArgument(fmt::format("props.{}: missing", key));
  if (it->second.empty()) return InvalidArgument(fmt::format("props.{}: must not be empty", key));
  return it->second;
}

// A positive integer prop; `fallback` when absent.
inline Result<int64_t> PositiveIntProp(const Props& props, const std::string& key,
                                       int64_t fallback) {
  auto it = props.find(key);
  if (it == props.end()) return fallback;
  const std::string& v = it->second;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n <= 0) {
    return InvalidArgument(fmt::format("props.{}: expected a positive integer, got '{}'", key, v));
  }
  return n;
}

inline Result<std::chrono::milliseconds> MillisProp(const Props& props, const std::string& key,
                                                    int64_t fallback) {
  auto n = PositiveIntProp(props, key, fallback);
  if (!n.ok()) return n.status();
  return std::chrono::milliseconds(*n);
}

// true or false, in any case (Java's Boolean.parseBoolean reads anything else as false;
// ours refuses it). `fallback` when absent.
inline Result<bool> BoolProp(const Props& props, const std::string& key, bool fallback) {
  auto it = props.find(key);
  if (it == props.end()) return fallback;
  std::string v = it->second;
  std::transform(v.begin(), v.end(), v.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (v == "true") return true;
  if (v == "false") return false;
  return InvalidArgument(
      fmt::format("props.{}: expected true or false, got '{}'", key, it->second));
}

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_PROPS_H_
