// Clang thread-safety annotations (as leveldb's port/thread_annotations.h): checked under
// clang with -Wthread-safety, no-ops elsewhere. Shared fields carry
// ELASTICJOB_GUARDED_BY(mu_), where mu_ is a Mutex (elasticjob/mutex.h: the lockable
// type the analysis knows; std::mutex is not annotated). The clang builds check every
// first-party target with -Werror=thread-safety (cmake/ThreadSafety.cmake).
#ifndef ELASTICJOB_THREAD_ANNOTATIONS_H_
#define ELASTICJOB_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define ELASTICJOB_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define ELASTICJOB_THREAD_ANNOTATION(x)
#endif

#define ELASTICJOB_CAPABILITY(x) ELASTICJOB_THREAD_ANNOTATION(capability(x))
#define ELASTICJOB_SCOPED_CAPABILITY ELASTICJOB_THREAD_ANNOTATION(scoped_lockable)
#define ELASTICJOB_GUARDED_BY(x) ELASTICJOB_THREAD_ANNOTATION(guarded_by(x))
#define ELASTICJOB_PT_GUARDED_BY(x) ELASTICJOB_THREAD_ANNOTATION(pt_guarded_by(x))
#define ELASTICJOB_REQUIRES(...) ELASTICJOB_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ELASTICJOB_EXCLUDES(...) ELASTICJOB_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ELASTICJOB_ACQUIRE(...) ELASTICJOB_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ELASTICJOB_RELEASE(...) ELASTICJOB_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define ELASTICJOB_REQUIRES_SHARED(...) \
  ELASTICJOB_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define ELASTICJOB_ACQUIRE_SHARED(...) \
  ELASTICJOB_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define ELASTICJOB_RELEASE_SHARED(...) \
  ELASTICJOB_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define ELASTICJOB_TRY_ACQUIRE(...) \
  ELASTICJOB_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define ELASTICJOB_ASSERT_CAPABILITY(x) ELASTICJOB_THREAD_ANNOTATION(assert_capability(x))
#define ELASTICJOB_RETURN_CAPABILITY(x) ELASTICJOB_THREAD_ANNOTATION(lock_returned(x))
// For a function the analysis cannot follow (say, a lock handed between functions); say why
// where it is used.
#define ELASTICJOB_NO_THREAD_SAFETY_ANALYSIS ELASTICJOB_THREAD_ANNOTATION(no_thread_safety_analysis)

#endif  // ELASTICJOB_THREAD_ANNOTATIONS_H_
