#include "task/task_settings.h"

#include <fmt/format.h>

#include <charconv>

namespace elasticjob::task {

namespace {

Status ReadInt(const std::map<std::string, std::string>& props, const char* key, long min, long max,
               long* out) {
  auto it = props.find(key);
  if (it == props.end()) return Status::Ok();
  const std::string& v = it->second;
  long n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n < min || n > max) {
    return InvalidArgument(
        fmt::format("props: {}: '{}' is not an integer in [{}, {}]", key, v, min, max));
  }
  *out = n;
  return Status::Ok();
}

}  // namespace

Result<TaskSettings> TaskSettings::FromProps(const std::map<std::string, std::string>& props) {
  TaskSettings t;
  long v = t.max_attempts;
  if (Status s = ReadInt(props, "task.max.attempts", 1, 100, &v); !s.ok()) return s;
  t.max_attempts = static_cast<int>(v);
  v = t.batch_size;
  if (Status s = ReadInt(props, "task.batch.size", 1, 100000, &v); !s.ok()) return s;
  t.batch_size = static_cast<int>(v);
  v = t.max_inflight_batches;
  if (Status s = ReadInt(props, "task.max.inflight.batches", 1, 1000, &v); !s.ok()) return s;
  t.max_inflight_batches = static_cast<int>(v);
  v = static_cast<long>(t.max_payload_bytes);
  if (Status s = ReadInt(props, "task.max.payload.bytes", 1, 64L << 20, &v); !s.ok()) return s;
  t.max_payload_bytes = static_cast<size_t>(v);
  if (Status s = ReadInt(props, "task.rpc.deadline.ms", 0, 86400000, &t.rpc_deadline_ms); !s.ok()) {
    return s;
  }
  return t;
}

Status ValidateMap(const std::vector<Subtask>& subtasks, std::string_view name,
                   size_t max_payload_bytes) {
  if (name.empty() || name == TaskContext::kRootTaskName ||
      name == TaskContext::kBroadcastTaskName) {
    return InvalidArgument(fmt::format("Map: name '{}' is reserved or empty", name));
  }
  for (size_t i = 0; i < subtasks.size(); ++i) {
    if (subtasks[i].payload.size() > max_payload_bytes) {
      return InvalidArgument(fmt::format(
          "Map '{}': sub-task {}: payload of {} bytes is over task.max.payload.bytes ({})", name, i,
          subtasks[i].payload.size(), max_payload_bytes));
    }
  }
  return Status::Ok();
}

}  // namespace elasticjob::task
