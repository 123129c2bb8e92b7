# Debian packages by CPack (docs/packaging.md), split as Debian splits a library and its tool:
#   elasticjob         the command, systemd units elasticjob-agent and elasticjob-console,
#                      their settings in /etc/elasticjob/, the docs (component `elasticjob`)
#   libelasticjob      libelasticjob.so.0, the whole library as one shared object (`lib`)
#   libelasticjob-dev  headers, static module libraries, find_package(elasticjob) files and
#                      the libelasticjob.so link (`dev`)
# Build with the `package` preset: cmake --preset package && cmake --build --preset package
# && (cd build/package && cpack).
include(GNUInstallDirs)

# The shared library: every module's objects (all built position-independent) in one .so.
# (A target needs a source of its own: an empty one.)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/elasticjob_shared.cc "// libelasticjob.so: the modules' objects\n")
add_library(elasticjob_shared SHARED ${CMAKE_CURRENT_BINARY_DIR}/elasticjob_shared.cc)
set_target_properties(elasticjob_shared PROPERTIES OUTPUT_NAME elasticjob
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR} EXPORT_NAME shared)
# Every module's archive whole (CMake's WHOLE_ARCHIVE feature refuses an archive that also
# comes in as a dependency of another), then the modules again for their own dependencies.
set(ELASTICJOB_WHOLE_ARCHIVES "")
get_property(ELASTICJOB_MODULE_NAMES GLOBAL PROPERTY ELASTICJOB_MODULES)
foreach(module ${ELASTICJOB_MODULE_NAMES})
  string(APPEND ELASTICJOB_WHOLE_ARCHIVES " $<TARGET_FILE:elasticjob_${module}>")
endforeach()
target_link_options(elasticjob_shared PRIVATE
  "SHELL:-Wl,--whole-archive${ELASTICJOB_WHOLE_ARCHIVES} -Wl,--no-whole-archive")
target_link_libraries(elasticjob_shared PRIVATE elasticjob::elasticjob)
target_include_directories(elasticjob_shared INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>)
target_link_options(elasticjob_shared PRIVATE -Wl,--no-undefined)
install(TARGETS elasticjob_shared EXPORT elasticjobTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev)

# The units and their settings, the docs.
install(FILES packaging/systemd/elasticjob-agent.service packaging/systemd/elasticjob-console.service
  DESTINATION lib/systemd/system COMPONENT elasticjob)
install(FILES packaging/etc/agent.env packaging/etc/console.env
  DESTINATION /etc/elasticjob COMPONENT elasticjob)
install(FILES docs/packaging.md docs/metrics.md docs/grafana/elasticjob-dashboard.json
  DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT elasticjob)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME elasticjob)
set(CPACK_PACKAGE_VENDOR "elasticjob-cpp")
set(CPACK_PACKAGE_CONTACT "elasticjob-cpp maintainers <elasticjob-cpp@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL elasticjob lib dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/apache/shardingsphere-elasticjob")

set(CPACK_DEBIAN_ELASTICJOB_PACKAGE_NAME elasticjob)
set(CPACK_DEBIAN_ELASTICJOB_PACKAGE_SECTION admin)
# libcurl and OpenSSL's libcrypto are loaded at their first use (dlopen: src/http/curl_api.h),
# so dpkg-shlibdeps no longer sees them: both packages name them.
set(ELASTICJOB_DLOPEN_DEPENDS "libcurl4 (>= 7.85), libssl3")
set(CPACK_DEBIAN_ELASTICJOB_PACKAGE_DEPENDS "passwd, ${ELASTICJOB_DLOPEN_DEPENDS}")
set(CPACK_DEBIAN_ELASTICJOB_PACKAGE_SUGGESTS "zookeeperd, prometheus")
set(CPACK_COMPONENT_ELASTICJOB_DESCRIPTION
  "distributed job scheduler (ElasticJob-Lite compatible): the command, agent and console\n The elasticjob command runs SCRIPT and HTTP jobs from YAML, operates a namespace, and\n serves the web console; systemd units run the agent and the console as their own user.")
set(CPACK_DEBIAN_ELASTICJOB_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/packaging/debian/postinst ${PROJECT_SOURCE_DIR}/packaging/debian/prerm
  ${PROJECT_SOURCE_DIR}/packaging/debian/postrm ${PROJECT_SOURCE_DIR}/packaging/debian/conffiles)
set(CPACK_DEBIAN_ELASTICJOB_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_LIB_PACKAGE_NAME libelasticjob${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_PACKAGE_PROVIDES libelasticjob)
set(CPACK_DEBIAN_LIB_PACKAGE_DEPENDS "${ELASTICJOB_DLOPEN_DEPENDS}")
set(CPACK_COMPONENT_LIB_DESCRIPTION
  "distributed job scheduler library (ElasticJob-Lite compatible)\n libelasticjob.so: link it into a C++ service to run its jobs across a cluster.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libelasticjob-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DEPENDS lib)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
  "libyaml-cpp-dev, nlohmann-json3-dev, libfmt-dev, libcctz-dev, libzookeeper-mt-dev, libcurl4-openssl-dev, libssl-dev, libgrpc++-dev, libprotobuf-dev, libsqlite3-dev, libpq-dev, libmariadb-dev, libcpp-httplib-dev, libsodium-dev, liblua5.4-dev, zlib1g-dev, pkgconf")
set(CPACK_COMPONENT_DEV_DESCRIPTION
  "distributed job scheduler library: headers and CMake package\n find_package(elasticjob) and target_link_libraries(app elasticjob::elasticjob).")
include(CPack)
