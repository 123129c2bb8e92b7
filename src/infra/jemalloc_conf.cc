// The jemalloc options of the executables that link it (CMakeLists.txt, ELASTICJOB_MALLOC;
// compiled into each of them, never into the library, which leaves the allocator to the
// application). jemalloc reads this symbol once, at its start-up, before the MALLOC_CONF
// environment variable, which still overrides any of these.
//
// background_thread: jemalloc returns freed memory to the kernel from a thread of its own.
// By default it does so inline, in whichever thread allocates or frees when a decay tick
// comes due: madvise calls in the trigger's and the items' threads, at the fire times, when
// a thousand jobs allocate and free together. Longer decay times (30 s, not 10 s): the
// memory a fire frees is soon needed by the next one. Measured with tracing on, where each
// fire allocates its events ahead (docs/benchmarks.md, "Event tracing"). One background
// thread, not jemalloc's default (4 on the 2-core machine): the purging is light, and each
// thread more is one more in every count of the process's threads.
extern "C" {
// NOLINTNEXTLINE(readability-identifier-naming): jemalloc's name
extern const char* malloc_conf;
const char* malloc_conf =
    "background_thread:true,max_background_threads:1,dirty_decay_ms:30000,muzzy_decay_ms:30000";
}
