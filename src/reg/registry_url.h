// Parsing of registry center URLs (see include/elasticjob/reg/registry_center.h).
#ifndef ELASTICJOB_REG_REGISTRY_URL_H_
#define ELASTICJOB_REG_REGISTRY_URL_H_

#include <string>
#include <string_view>

#include "elasticjob/status.h"

namespace elasticjob::reg {

struct RegistryUrl {
  enum class Scheme { kZooKeeper, kMemory };
  Scheme scheme = Scheme::kMemory;
  std::string servers;     // "host:port,host:port" (ZooKeeper)
  std::string name_space;  // without slashes
  std::string digest;      // "user:password" or empty
  // ElasticJob's ZookeeperConfiguration defaults (memory:// keeps them too: its sessions time
  // out as ZooKeeper's would, which sizes the session lease).
  int session_timeout_ms = 60000;
  int connection_timeout_ms = 15000;
  int base_sleep_ms = 1000;
  int max_sleep_ms = 3000;
  int max_retries = 3;
  // How long watch events gather before the cache reads them again in one batch (ours, not
  // ElasticJob's): a run's running marks come and go within it at the cost of one read.
  // memory:// defaults to 0 (ParseRegistryUrl): no batching.
  int cache_batch_ms = 10;
};

// Parses `zookeeper://hosts/namespace?...` or `memory://namespace`. Errors name the part.
Result<RegistryUrl> ParseRegistryUrl(std::string_view url);

// `url` with the value of its `digest=` parameter replaced by "***", for messages and logs:
// a digest is a password and is never printed.
std::string RedactRegistryUrl(std::string_view url);

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_REGISTRY_URL_H_
