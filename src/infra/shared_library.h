// Optional shared libraries loaded at their first use (dlopen), so that a process that never
// sends an HTTP request or signs a DingTalk message does not map, relocate and initialise
// libcurl and the TLS stack under it (about 4 MB of RSS and their start-up; docs/runtime.md,
// "What a process loads"). A library loaded stays loaded for the life of the process.
//
// Thread safety: both functions may be called from any thread (dlopen and dlsym are).
#ifndef ELASTICJOB_INFRA_SHARED_LIBRARY_H_
#define ELASTICJOB_INFRA_SHARED_LIBRARY_H_

#include "elasticjob/status.h"

namespace elasticjob::infra {

// The handle of `soname` (e.g. "libcurl.so.4"), loaded now if it was not yet.
// FAILED_PRECONDITION naming the library, what needs it (`purpose`) and the loader's
// reason when it cannot be loaded (not installed, a missing dependency).
Result<void*> LoadSharedLibrary(const char* soname, const char* purpose);

// The address of `symbol` in the library `handle` (from LoadSharedLibrary of `soname`).
// FAILED_PRECONDITION naming both when the library does not export it (too old a version).
Result<void*> SharedLibrarySymbol(void* handle, const char* soname, const char* symbol);

// SharedLibrarySymbol's address, stored in `function` as the function it is (the caller's
// declaration from the library's header gives its type); its error otherwise.
template <typename Function>
Status ResolveFunction(void* handle, const char* soname, const char* symbol, Function*& function) {
  auto address = SharedLibrarySymbol(handle, soname, symbol);
  if (!address.ok()) return address.status();
  function = reinterpret_cast<Function*>(*address);
  return Status::Ok();
}

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_SHARED_LIBRARY_H_
