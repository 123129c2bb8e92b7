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
//
// percpu_arena: one arena per CPU, each thread allocating from its CPU's, not jemalloc's
// default of 4 arenas per CPU handed to threads in turn: a thread that allocates little
// (the registry's worker, the ZooKeeper client's, a second trigger worker) otherwise gets
// an arena of its own, with its own part-used slabs of every size it touched (one job:
// about 0.7 MB of RSS; docs/benchmarks.md, "One job's footprint"). Threads on one CPU do not
// run at once, so an arena per CPU keeps allocations as free of contention.
extern "C" {
// NOLINTNEXTLINE(readability-identifier-naming): jemalloc's name
extern const char* malloc_conf;
const char* malloc_conf =
    "background_thread:true,max_background_threads:1,dirty_decay_ms:30000,muzzy_decay_ms:30000,"
    "percpu_arena:percpu";
}
