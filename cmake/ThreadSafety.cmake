# Clang's thread-safety analysis (-Wthread-safety) as an error where the shared state is
# annotated on elasticjob::Mutex (include/elasticjob/mutex.h, thread_annotations.h):
# whole modules, and the files of the runtime module converted so far. The clang build (the
# asan preset, which the test command builds) checks them; GCC ignores the annotations.
set(ELASTICJOB_THREAD_SAFE_MODULES infra api schedule sharding config trace_events tracing)
set(ELASTICJOB_THREAD_SAFE_RUNTIME_SOURCES trigger/timer_scheduler.cc trigger/launch_board.cc
    executor/script/script_processes.cc error_handler/notification_sender.cc)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  foreach(module ${ELASTICJOB_THREAD_SAFE_MODULES})
    target_compile_options(elasticjob_${module} PRIVATE -Wthread-safety -Werror=thread-safety)
  endforeach()
  if(ELASTICJOB_THREAD_SAFE_RUNTIME_SOURCES)
    set_property(SOURCE ${ELASTICJOB_THREAD_SAFE_RUNTIME_SOURCES} APPEND PROPERTY
                 COMPILE_OPTIONS -Wthread-safety -Werror=thread-safety)
  endif()
endif()
