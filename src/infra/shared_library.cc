#include "infra/shared_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace elasticjob::infra {

Result<void*> LoadSharedLibrary(const char* soname, const char* purpose) {
  // RTLD_LOCAL: its symbols stay out of the global scope (nothing of ours resolves against
  // them); RTLD_NOW: a missing symbol of its own dependencies fails here, not mid-request.
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return FailedPrecondition(fmt::format("{} cannot be loaded (it is needed for {}): {}", soname,
                                          purpose, why != nullptr ? why : "unknown reason"));
  }
  return handle;
}

Result<void*> SharedLibrarySymbol(void* handle, const char* soname, const char* symbol) {
  dlerror();  // clears an earlier error
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    const char* why = dlerror();
    return FailedPrecondition(fmt::format("{} has no {} (a version too old?): {}", soname, symbol,
                                          why != nullptr ? why : "null symbol"));
  }
  return address;
}

}  // namespace elasticjob::infra
