// Helpers for tests on memory:// registries (the registry class over a MemoryClient,
// reg/memory/memory_registry.h): another session's write reaches a registry's caches through
// a watch event, its worker and a read, a moment after the write; these wait for that moment
// instead of sleeping.
#ifndef ELASTICJOB_TESTS_UNIT_REG_MEMORY_REGISTRY_SUPPORT_H_
#define ELASTICJOB_TESTS_UNIT_REG_MEMORY_REGISTRY_SUPPORT_H_

#include <initializer_list>
#include <utility>
#include <vector>

#include "elasticjob/reg/registry_center.h"
#include "reg/memory/memory_registry.h"

namespace elasticjob::test_support {

// The library's registry class behind `r`, or nullptr (an application's own registry, an
// adapter around one).
inline reg::ComposedRegistry* Composed(RegistryCenter& r) {
  return dynamic_cast<reg::ComposedRegistry*>(&r);
}

// Waits until each of `registries` has delivered its events and refreshed its caches
// (ComposedRegistry::WaitIdleForTesting), round after round until one finds nothing
// new anywhere: every write made before the call is then in every cache. Registries that
// cannot tell are skipped. Subscriptions' callbacks run later, on their executors.
inline void WaitIdle(const std::vector<RegistryCenter*>& registries) {
  std::vector<uint64_t> last;
  while (true) {
    std::vector<uint64_t> now;
    for (RegistryCenter* r : registries) {
      reg::ComposedRegistry* z = Composed(*r);
      now.push_back(z != nullptr ? z->WaitIdleForTesting() : 0);
    }
    if (now == last) return;
    last = std::move(now);
  }
}
inline void WaitIdle(std::initializer_list<RegistryCenter*> registries) {
  WaitIdle(std::vector<RegistryCenter*>(registries));
}

// Ends `r`'s session as the server does on a timeout (ComposedRegistry::ExpireSession):
// its ephemeral nodes go at once; LOST, the new session and RECONNECTED follow on its worker.
// Returns false when `r` has no such seam.
inline bool ExpireSession(RegistryCenter& r) {
  reg::ComposedRegistry* z = Composed(r);
  return z != nullptr && z->ExpireSession();
}

}  // namespace elasticjob::test_support

#endif  // ELASTICJOB_TESTS_UNIT_REG_MEMORY_REGISTRY_SUPPORT_H_
