#include "infra/free_memory.h"

#include <cstddef>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define ELASTICJOB_SANITIZED_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ELASTICJOB_SANITIZED_ALLOCATOR 1
#endif

// jemalloc's control interface, when the process links jemalloc (unprefixed, as Debian's
// libjemalloc2 exports it). Weak: the library does not link an allocator; the
// application chooses (CMakeLists.txt, ELASTICJOB_MALLOC).
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace elasticjob::infra {

const char* ReleaseFreeMemory() {
#if defined(ELASTICJOB_SANITIZED_ALLOCATOR)
  return "none";
#else
  if (mallctl != nullptr) {
    // The caller's own cache first, then every arena (4096: MALLCTL_ARENAS_ALL).
    (void)mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
    (void)mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
    return "jemalloc";
  }
#if defined(__GLIBC__)
  (void)malloc_trim(0);
  return "glibc";
#else
  return "none";
#endif
#endif
}

ScopedNoThreadCache::ScopedNoThreadCache() {
#if !defined(ELASTICJOB_SANITIZED_ALLOCATOR)
  if (mallctl == nullptr) return;
  bool was = false;
  size_t len = sizeof(was);
  bool off = false;
  if (mallctl("thread.tcache.enabled", &was, &len, &off, sizeof(off)) == 0) restore_ = was;
#endif
}

ScopedNoThreadCache::~ScopedNoThreadCache() {
#if !defined(ELASTICJOB_SANITIZED_ALLOCATOR)
  if (!restore_) return;
  bool on = true;
  (void)mallctl("thread.tcache.enabled", nullptr, nullptr, &on, sizeof(on));
#endif
}

}  // namespace elasticjob::infra
