// Clang thread-safety annotations (as leveldb's port/thread_annotations.h): checked under
// clang with -Wthread-safety, no-ops elsewhere. Shared fields carry
// ELASTICJOB_GUARDED_BY(mu_).
#ifndef ELASTICJOB_THREAD_ANNOTATIONS_H_
#define ELASTICJOB_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define ELASTICJOB_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define ELASTICJOB_THREAD_ANNOTATION(x)
#endif

#define ELASTICJOB_GUARDED_BY(x) ELASTICJOB_THREAD_ANNOTATION(guarded_by(x))
#define ELASTICJOB_PT_GUARDED_BY(x) ELASTICJOB_THREAD_ANNOTATION(pt_guarded_by(x))
#define ELASTICJOB_REQUIRES(...) ELASTICJOB_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ELASTICJOB_EXCLUDES(...) ELASTICJOB_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

#endif  // ELASTICJOB_THREAD_ANNOTATIONS_H_
