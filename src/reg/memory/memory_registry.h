// The memory:// registry: the registry built on the client seam (ComposedRegistry)
// over a MemoryClient of an in-process MemoryServer, so that memory:// has ZooKeeper's
// semantics by construction (docs/registry.md, "In memory"). NewRegistryCenter makes it for
// `memory://name` over MemoryServer::Shared(name); tests make it over a server of their own
// (a SimulatedClock's, or one per test).
//
// Thread safety: the functions are; so is what they return.
#ifndef ELASTICJOB_REG_MEMORY_MEMORY_REGISTRY_H_
#define ELASTICJOB_REG_MEMORY_MEMORY_REGISTRY_H_

#include <memory>
#include <string_view>

#include "reg/composed_registry.h"
#include "reg/memory/memory_client.h"
#include "reg/registry_url.h"

namespace elasticjob::reg {

// A registry (not yet initialised) with one session on `server`; `url` gives the namespace
// and the settings (ParseRegistryUrl's, whose memory:// defaults batch no watch events:
// cacheBatchMs 0).
std::unique_ptr<ComposedRegistry> NewMemoryRegistry(std::shared_ptr<MemoryServer> server,
                                                    RegistryUrl url);
// The same with `memory://name_space`'s settings. REQUIRES: a valid namespace.
std::unique_ptr<ComposedRegistry> NewMemoryRegistry(std::shared_ptr<MemoryServer> server,
                                                    std::string_view name_space);

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_MEMORY_MEMORY_REGISTRY_H_
