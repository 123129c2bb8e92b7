// Names the calling thread (pthread_setname_np): what /proc/PID/task/*/comm, top -H, gdb and
// perf show, so that a process's thread list says which thread is which (docs/runtime.md,
// "Threads"). Linux keeps the first 15 characters; a longer name is cut to them.
//
// Thread safety: each thread names itself; any thread may call it.
#ifndef ELASTICJOB_INFRA_THREAD_NAME_H_
#define ELASTICJOB_INFRA_THREAD_NAME_H_

#include <string>
#include <string_view>

namespace elasticjob::infra {

void NameThisThread(std::string_view name);

// The calling thread's name (as NameThisThread set it, or the one it inherited).
std::string ThisThreadName();

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_THREAD_NAME_H_
