#include <fmt/format.h>

#include <charconv>

#include "elasticjob/config/job_configuration.h"

namespace elasticjob {
namespace {

// Java's String.trim.
std::string_view Trim(std::string_view s) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= 0x20) s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= 0x20) s.remove_suffix(1);
  return s;
}

// Java's String.split(regex) for a one-character literal: trailing empty strings dropped.
std::vector<std::string_view> JavaSplit(std::string_view s, char delim) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(delim, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      break;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
  while (!parts.empty() && parts.back().empty()) parts.pop_back();
  return parts;
}

}  // namespace

Result<std::map<int, std::string>> ParseShardingItemParameters(std::string_view text,
                                                               int sharding_total_count) {
  std::map<int, std::string> result;
  if (text.empty()) return result;
  auto error = [&](const std::string& why) {
    return InvalidArgument(fmt::format(
        "shardingItemParameters: '{}': {} (expected item=value pairs such as 0=Beijing,1=Shanghai)",
        text, why));
  };
  for (std::string_view entry : JavaSplit(text, ',')) {
    std::vector<std::string_view> pair = JavaSplit(Trim(entry), '=');
    if (pair.size() != 2) {
      return error(fmt::format("entry '{}' must have exactly one '='", entry));
    }
    std::string_view key = Trim(pair[0]);
    int item = 0;
    const char* end = key.data() + key.size();
    auto [ptr, ec] = std::from_chars(key.data() + (!key.empty() && key[0] == '+'), end, item);
    if (key.empty() || ec != std::errc() || ptr != end) {
      return error(fmt::format("item '{}' is not an integer", key));
    }
    if (item < 0) return error(fmt::format("item {} is negative", item));
    if (item >= sharding_total_count) {
      return error(
          fmt::format("item {} is not below shardingTotalCount {}", item, sharding_total_count));
    }
    if (!result.emplace(item, std::string(Trim(pair[1]))).second) {
      return error(fmt::format("item {} is given twice", item));
    }
  }
  return result;
}

}  // namespace elasticjob
