#include "elasticjob/api/sharding_context.h"

#include <fmt/format.h>

#include <climits>
#include <nlohmann/json.hpp>

#include "api/gson_writer.h"

namespace elasticjob {

std::string BuildTaskId(std::string_view job_name, const std::vector<int>& items,
                        std::string_view instance_id) {
  return fmt::format("{}@-@{}@-@READY@-@{}", job_name, fmt::join(items, ","), instance_id);
}

std::string ShardingContextToJson(const ShardingContext& c) {
  std::string out = "{\"jobName\":";
  api::AppendGsonString(out, c.job_name);
  out += ",\"taskId\":";
  api::AppendGsonString(out, c.task_id);
  out += fmt::format(",\"shardingTotalCount\":{},\"jobParameter\":", c.sharding_total_count);
  api::AppendGsonString(out, c.job_parameter);
  out += fmt::format(",\"shardingItem\":{}", c.sharding_item);
  if (c.sharding_parameter.has_value()) {
    out += ",\"shardingParameter\":";
    api::AppendGsonString(out, *c.sharding_parameter);
  }
  out += '}';
  return out;
}

Result<ShardingContext> ShardingContextFromJson(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument("shardingContext: not a JSON object");
  }
  ShardingContext c;
  auto str = [&](const char* key, std::string* out, bool required) -> Status {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
      return required ? InvalidArgument(fmt::format("shardingContext: {} is missing", key))
                      : Status::Ok();
    }
    if (!it->is_string()) {
      return InvalidArgument(
          fmt::format("shardingContext: {} must be a string, got {}", key, it->dump()));
    }
    *out = it->get<std::string>();
    return Status::Ok();
  };
  auto num = [&](const char* key, int* out) -> Status {
    auto it = j.find(key);
    // Range-checked before narrowing: get<int>() would wrap 4294967296 round to 0.
    const bool fits =
        it != j.end() &&
        (it->is_number_unsigned() ? it->get<uint64_t>() <= INT_MAX
                                  : it->is_number_integer() && it->get<int64_t>() >= INT_MIN &&
                                        it->get<int64_t>() <= INT_MAX);
    if (!fits) {
      return InvalidArgument(fmt::format("shardingContext: {} must be an integer, got {}", key,
                                         it == j.end() ? "nothing" : it->dump().substr(0, 60)));
    }
    *out = static_cast<int>(it->get<int64_t>());
    return Status::Ok();
  };
  for (Status s :
       {str("jobName", &c.job_name, true), str("taskId", &c.task_id, true),
        num("shardingTotalCount", &c.sharding_total_count),
        str("jobParameter", &c.job_parameter, false), num("shardingItem", &c.sharding_item)}) {
    if (!s.ok()) return s;
  }
  auto it = j.find("shardingParameter");
  if (it != j.end() && !it->is_null()) {
    if (!it->is_string())
      return InvalidArgument("shardingContext: shardingParameter must be a string");
    c.sharding_parameter = it->get<std::string>();
  }
  return c;
}

}  // namespace elasticjob
