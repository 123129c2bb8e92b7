// ServerService: `servers/{ip}` = ENABLED or DISABLED, ElasticJob's ServerService.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_INSTANCE_SERVER_SERVICE_H_
#define ELASTICJOB_INSTANCE_SERVER_SERVICE_H_

#include <string>
#include <string_view>

#include "storage/job_node_storage.h"

namespace elasticjob::server {

inline constexpr std::string_view kEnabled = "ENABLED";
inline constexpr std::string_view kDisabled = "DISABLED";

class ServerService {
 public:
  // REQUIRES: `storage` outlives this object.
  ServerService(storage::JobNodeStorage& storage, std::string server_ip)
      : storage_(storage), ip_(std::move(server_ip)) {}

  // Writes this server's state: exactly ENABLED or DISABLED.
  Status PersistOnline(bool enabled);
  // What PersistOnline writes, for a transaction of several registrations.
  storage::NodeFill OnlineNode(bool enabled) const {
    return {"servers/" + ip_, std::string(enabled ? kEnabled : kDisabled)};
  }
  // Whether `ip`'s server node says ENABLED (an absent node is not enabled).
  Result<bool> IsEnableServer(std::string_view ip);
  // Whether `ip` is enabled and has at least one live instance.
  Result<bool> IsAvailableServer(std::string_view ip);
  // Whether any server is available.
  Result<bool> HasAvailableServers();

 private:
  storage::JobNodeStorage& storage_;
  const std::string ip_;
};

}  // namespace elasticjob::server

#endif  // ELASTICJOB_INSTANCE_SERVER_SERVICE_H_
