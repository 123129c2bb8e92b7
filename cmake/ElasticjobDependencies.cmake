# What elasticjob's libraries link, found the same way by the build and by an installed copy
# (elasticjobConfig.cmake includes this file, installed beside it): CMake packages through
# find_package (find_dependency when found as a dependency), the libraries without a CMake
# package as imported targets named ElasticjobDeps::<name>. The exported targets name only
# targets, never a path of the machine that built them, so an installed prefix can move.
include_guard(GLOBAL)
if(CMAKE_FIND_PACKAGE_NAME STREQUAL "elasticjob")  # from elasticjobConfig.cmake
  include(CMakeFindDependencyMacro)
  macro(_elasticjob_package)
    find_dependency(${ARGV})
  endmacro()
else()
  macro(_elasticjob_package)
    find_package(${ARGV} REQUIRED)
  endmacro()
endif()

_elasticjob_package(Threads)
_elasticjob_package(yaml-cpp)
_elasticjob_package(nlohmann_json)
_elasticjob_package(fmt)
_elasticjob_package(spdlog)  # the built-in Logger (elasticjob/logger.h)
_elasticjob_package(CURL)
_elasticjob_package(OpenSSL)
_elasticjob_package(ZLIB)
_elasticjob_package(Protobuf)
_elasticjob_package(gRPC CONFIG)
_elasticjob_package(SQLite3)
_elasticjob_package(PkgConfig)

# pkg-config modules, one imported target each.
foreach(dep sqlite3:SQLITE3 libpq:PQ libmariadb:MARIADB cpp-httplib:HTTPLIB libsodium:SODIUM
            lua5.4:LUA)
  string(REPLACE ":" ";" dep "${dep}")
  list(GET dep 0 module)
  list(GET dep 1 name)
  if(NOT TARGET ElasticjobDeps::${name})
    pkg_check_modules(ELASTICJOB_DEP_${name} REQUIRED IMPORTED_TARGET GLOBAL ${module})
    add_library(ElasticjobDeps::${name} INTERFACE IMPORTED GLOBAL)
    target_link_libraries(ElasticjobDeps::${name} INTERFACE PkgConfig::ELASTICJOB_DEP_${name})
  endif()
endforeach()

# The ZooKeeper C client and cctz: no pkg-config module in Debian 12.
if(NOT TARGET ElasticjobDeps::ZOOKEEPER)
  find_library(ZOOKEEPER_MT_LIBRARY NAMES zookeeper_mt REQUIRED)
  find_path(ZOOKEEPER_INCLUDE_DIR NAMES zookeeper/zookeeper.h REQUIRED)
  add_library(ElasticjobDeps::ZOOKEEPER UNKNOWN IMPORTED GLOBAL)
  set_target_properties(ElasticjobDeps::ZOOKEEPER PROPERTIES
    IMPORTED_LOCATION "${ZOOKEEPER_MT_LIBRARY}" INTERFACE_INCLUDE_DIRECTORIES "${ZOOKEEPER_INCLUDE_DIR}")
endif()
if(NOT TARGET cctz::cctz)
  find_library(CCTZ_LIBRARY NAMES cctz REQUIRED)
  find_path(CCTZ_INCLUDE_DIR NAMES cctz/time_zone.h REQUIRED)
  add_library(cctz::cctz UNKNOWN IMPORTED GLOBAL)
  set_target_properties(cctz::cctz PROPERTIES IMPORTED_LOCATION "${CCTZ_LIBRARY}"
                                              INTERFACE_INCLUDE_DIRECTORIES "${CCTZ_INCLUDE_DIR}")
endif()
