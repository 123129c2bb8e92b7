// InstanceRuntime: what `/{job}/runtime/{instanceId}` holds, a layout extension Java
// ElasticJob ignores (docs/runtime.md, "Layout extensions"): the elasticjob-cpp version,
// host name, pid and start times of the process behind an `instances/{id}` node, which
// cannot carry them (Java reads that node with SnakeYAML's loadAs, which fails on an
// unknown key). The value is one JSON object:
//   {"version":"0.1.0","hostname":"h","pid":42,"processStartTime":ms,"jobStartTime":ms,
//    "registeredTime":ms,"sessionTimeoutMs":ms}
// (times in epoch milliseconds of the instance's own clock; sessionTimeoutMs left out when
// the registry has no session, as memory:// has none).
//
// Thread safety: a value type and pure functions (ProcessStartTime is set once, at static
// initialisation).
#ifndef ELASTICJOB_INSTANCE_INSTANCE_RUNTIME_H_
#define ELASTICJOB_INSTANCE_INSTANCE_RUNTIME_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "elasticjob/status.h"

namespace elasticjob::instance {

struct InstanceRuntime {
  std::string version;   // the elasticjob-cpp version (CMake's PROJECT_VERSION)
  std::string hostname;  // gethostname
  long pid = 0;
  int64_t process_start_time = 0;  // when the process started
  int64_t job_start_time = 0;      // when this job started in it
  // When the node was last written: at start-up, and again at every re-registration (after
  // a reconnection or a new session).
  int64_t registered_time = 0;
  int64_t session_timeout_ms = 0;  // the registry session's timeout; 0 when none

  std::string ToJson() const;
  // Reads a value ToJson wrote (unknown keys ignored: a newer version may add some). Fails
  // on a value that is not a JSON object, or whose known keys have the wrong type.
  static Result<InstanceRuntime> FromJson(std::string_view json);
  friend bool operator==(const InstanceRuntime&, const InstanceRuntime&) = default;
};

// The elasticjob-cpp version this library was built as ("0.1.0").
std::string_view LibraryVersion();
// When this process started, epoch milliseconds: the time the library's static objects were
// initialised (before main for a program linked with it).
int64_t ProcessStartTime();

}  // namespace elasticjob::instance

#endif  // ELASTICJOB_INSTANCE_INSTANCE_RUNTIME_H_
