#include "elasticjob/reg/registry_center.h"
#include "reg/composed_registry.h"
#include "reg/memory/memory_registry.h"
#include "reg/registry_url.h"

namespace elasticjob {

Result<std::unique_ptr<RegistryCenter>> NewRegistryCenter(std::string_view url) {
  auto parsed = reg::ParseRegistryUrl(url);
  if (!parsed.ok()) return parsed.status();
  if (parsed->scheme == reg::RegistryUrl::Scheme::kMemory) {
    // One registry class for both schemes: memory:// is it over an in-process server.
    auto server = reg::MemoryServer::Shared(parsed->name_space);
    return std::unique_ptr<RegistryCenter>(
        reg::NewMemoryRegistry(std::move(server), std::move(parsed).value()));
  }
  return std::unique_ptr<RegistryCenter>(std::make_unique<reg::ComposedRegistry>(*parsed));
}

}  // namespace elasticjob
