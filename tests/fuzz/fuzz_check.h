// What every fuzz target shares: a property that must hold aborts (libFuzzer then saves
// the input), whatever NDEBUG says.
#ifndef ELASTICJOB_TESTS_FUZZ_FUZZ_CHECK_H_
#define ELASTICJOB_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (false)

#endif  // ELASTICJOB_TESTS_FUZZ_FUZZ_CHECK_H_
