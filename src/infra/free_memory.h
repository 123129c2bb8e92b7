// Hands the memory a bulk operation freed back to the kernel.
//
// A start-up of thousands of jobs (ScheduleAll) allocates and frees far more than the jobs
// keep: the registrations' threads and round trips, the caches' loads. The allocator keeps
// what was freed for reuse (jemalloc for its decay time, 30 s in our executables; glibc
// until a trim), so the process's RSS right after a start-up is that peak, not what the jobs
// hold. ReleaseFreeMemory returns it: with jemalloc linked (the executables of this
// project, or an application's), every arena's unused dirty pages are purged
// (`arena.<all>.purge`); with glibc's allocator, malloc_trim(0). Under a sanitizer, which
// brings its own allocator, it does nothing. It takes a few milliseconds; call it after a
// bulk operation, never on the fire path.
#ifndef ELASTICJOB_INFRA_FREE_MEMORY_H_
#define ELASTICJOB_INFRA_FREE_MEMORY_H_

namespace elasticjob::infra {

// Which allocator ReleaseFreeMemory found: "jemalloc", "glibc" or "none".
const char* ReleaseFreeMemory();

// While it lives, the calling thread allocates without jemalloc's thread cache (no effect
// with another allocator). For threads that only wait on round trips and allocate what
// other threads keep (ScheduleAll's registrations): each thread's cache takes its objects
// from slabs of its own, so that what the jobs keep ends up spread thinly over many pages;
// 1,000 jobs registered by 256 such threads held 62 MB after start-up with the caches and
// 40 MB without (docs/benchmarks.md).
class ScopedNoThreadCache {
 public:
  ScopedNoThreadCache();
  ~ScopedNoThreadCache();
  ScopedNoThreadCache(const ScopedNoThreadCache&) = delete;
  ScopedNoThreadCache& operator=(const ScopedNoThreadCache&) = delete;

 private:
  bool restore_ = false;  // the cache was on, and is to be turned on again
};

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_FREE_MEMORY_H_
