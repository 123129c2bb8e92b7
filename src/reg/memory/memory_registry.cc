#include "reg/memory/memory_registry.h"

#include <string>
#include <utility>

namespace elasticjob::reg {

std::unique_ptr<ComposedRegistry> NewMemoryRegistry(std::shared_ptr<MemoryServer> server,
                                                    RegistryUrl url) {
  auto client = std::make_unique<MemoryClient>(std::move(server), url);
  return std::make_unique<ComposedRegistry>(std::move(url), std::move(client));
}

std::unique_ptr<ComposedRegistry> NewMemoryRegistry(std::shared_ptr<MemoryServer> server,
                                                    std::string_view name_space) {
  auto url = ParseRegistryUrl("memory://" + std::string(name_space));
  return NewMemoryRegistry(std::move(server), url.ok() ? std::move(url).value() : RegistryUrl{});
}

}  // namespace elasticjob::reg
