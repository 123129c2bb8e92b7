# Clang's thread-safety analysis (-Wthread-safety) as an error for every first-party target
# (they all link elasticjob_warnings): the shared state is annotated on elasticjob::Mutex
# (include/elasticjob/mutex.h, thread_annotations.h). The clang build (the asan preset, which
# the test command builds) checks it; GCC ignores the annotations.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  target_compile_options(elasticjob_warnings INTERFACE -Wthread-safety -Werror=thread-safety)
endif()
