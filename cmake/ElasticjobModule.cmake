# elasticjob_module(NAME SOURCES ... [DEPS ...] [PRIVATE_DEPS ...])
# Declares elasticjob_<NAME> with alias elasticjob::<NAME>. Public headers come from include/,
# private ones from src/ (includes start at a root: "schedule/cron/java_calendar.h").
function(elasticjob_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(elasticjob_${name} STATIC ${M_SOURCES})
  add_library(elasticjob::${name} ALIAS elasticjob_${name})
  set_target_properties(elasticjob_${name} PROPERTIES EXPORT_NAME ${name} POSITION_INDEPENDENT_CODE ON)
  target_include_directories(elasticjob_${name}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(elasticjob_${name} PUBLIC ${M_DEPS}
                        PRIVATE ${M_PRIVATE_DEPS} $<BUILD_INTERFACE:elasticjob_warnings>)
  install(TARGETS elasticjob_${name} EXPORT elasticjobTargets COMPONENT dev)
  set_property(GLOBAL APPEND PROPERTY ELASTICJOB_MODULES ${name})
endfunction()
