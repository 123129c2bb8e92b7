#include "instance/instance_runtime.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <type_traits>

#ifndef ELASTICJOB_PROJECT_VERSION
#error "ELASTICJOB_PROJECT_VERSION is set by src/CMakeLists.txt"
#endif

namespace elasticjob::instance {
namespace {

using nlohmann::json;

const int64_t kProcessStart = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();

}  // namespace

std::string_view LibraryVersion() { return ELASTICJOB_PROJECT_VERSION; }

int64_t ProcessStartTime() { return kProcessStart; }

std::string InstanceRuntime::ToJson() const {
  json j = {{"version", version},
            {"hostname", hostname},
            {"pid", pid},
            {"processStartTime", process_start_time},
            {"jobStartTime", job_start_time},
            {"registeredTime", registered_time}};
  if (session_timeout_ms > 0) j["sessionTimeoutMs"] = session_timeout_ms;
  return j.dump();
}

Result<InstanceRuntime> InstanceRuntime::FromJson(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return InvalidArgument("instance runtime: not a JSON object");
  }
  InstanceRuntime r;
  auto read = [&j](const char* key, auto* out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return Status::Ok();
    using T = std::remove_pointer_t<decltype(out)>;
    if constexpr (std::is_same_v<T, std::string>) {
      if (!it->is_string()) {
        return InvalidArgument(std::string("instance runtime: '") + key + "' is not a string");
      }
    } else if (!it->is_number_integer()) {
      return InvalidArgument(std::string("instance runtime: '") + key + "' is not an integer");
    }
    *out = it->template get<T>();
    return Status::Ok();
  };
  for (Status s :
       {read("version", &r.version), read("hostname", &r.hostname), read("pid", &r.pid),
        read("processStartTime", &r.process_start_time), read("jobStartTime", &r.job_start_time),
        read("registeredTime", &r.registered_time),
        read("sessionTimeoutMs", &r.session_timeout_ms)}) {
    if (!s.ok()) return s;
  }
  return r;
}

}  // namespace elasticjob::instance
