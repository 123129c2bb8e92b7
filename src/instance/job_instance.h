// JobInstance: who this process is in the registry. The instance id is `{ip}@-@{pid}`; the
// `instances/{id}` node holds the YAML `jobInstanceId: ...` / `serverIp: ...`.
//
// The IP is chosen as ElasticJob's IpUtils chooses it: the first public (not loopback, not
// site-local) IPv4 address of the host's interfaces, else the last site-local one, else
// 127.0.0.1. ELASTICJOB_PREFERRED_NETWORK_IP or ELASTICJOB_PREFERRED_NETWORK_INTERFACE in the
// environment (the names of ElasticJob's system properties) override it, and so does the
// configuration.
//
// Thread safety: value types and pure functions (DetectIp reads the environment).
#ifndef ELASTICJOB_INSTANCE_JOB_INSTANCE_H_
#define ELASTICJOB_INSTANCE_JOB_INSTANCE_H_

#include <string>
#include <string_view>

#include "elasticjob/status.h"

namespace elasticjob::instance {

inline constexpr std::string_view kDelimiter = "@-@";

struct JobInstance {
  std::string instance_id;  // "{ip}@-@{pid}"
  std::string server_ip;

  static JobInstance For(std::string ip, long pid);
  // The `instances/{id}` node value.
  std::string ToYaml() const;
  // Reads that value (unknown keys ignored). Fails naming what is missing.
  static Result<JobInstance> FromYaml(std::string_view yaml);
  friend bool operator==(const JobInstance&, const JobInstance&) = default;
};

// The address to register, honouring the overrides above; `configured` (non-empty) wins.
// Fails with INVALID_ARGUMENT when an override is not an IPv4 address or names no interface
// with one.
Result<std::string> DetectIp(std::string_view configured = {});

}  // namespace elasticjob::instance

#endif  // ELASTICJOB_INSTANCE_JOB_INSTANCE_H_
