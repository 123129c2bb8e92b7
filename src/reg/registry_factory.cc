#include "elasticjob/reg/registry_center.h"
#include "reg/memory/memory_registry_center.h"
#include "reg/registry_url.h"
#include "reg/zookeeper/zookeeper_registry_center.h"

namespace elasticjob {

Result<std::unique_ptr<RegistryCenter>> NewRegistryCenter(std::string_view url) {
  auto parsed = reg::ParseRegistryUrl(url);
  if (!parsed.ok()) return parsed.status();
  if (parsed->scheme == reg::RegistryUrl::Scheme::kMemory) {
    return std::unique_ptr<RegistryCenter>(std::make_unique<reg::MemoryRegistryCenter>(
        reg::MemoryStore::Shared(parsed->name_space), parsed->name_space));
  }
  return std::unique_ptr<RegistryCenter>(std::make_unique<reg::ZooKeeperRegistryCenter>(*parsed));
}

}  // namespace elasticjob
