# Install rules (`cmake --install build [--prefix P]`) and the Debian package (`cpack -G DEB` in build/).
#   component runtime:     bin/rnnstate, its man page, bash completion and copyright — the Debian package
#   component development: the library, its headers and a CMake package config for find_package(rnnstate)

include(CMakePackageConfigHelpers)

# Debian policy: man pages are installed gzip-compressed (-n: no name or time stamp, reproducible).
set(RNNSTATE_MAN_PAGE ${PROJECT_BINARY_DIR}/man/rnnstate.1)
add_custom_command(OUTPUT ${RNNSTATE_MAN_PAGE}.gz
  COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/share/man/man1/rnnstate.1 ${RNNSTATE_MAN_PAGE}
  COMMAND gzip -9nf ${RNNSTATE_MAN_PAGE}
  DEPENDS ${PROJECT_SOURCE_DIR}/share/man/man1/rnnstate.1
  VERBATIM)
add_custom_target(rnnstate_man_page ALL DEPENDS ${RNNSTATE_MAN_PAGE}.gz)
# Built with the binary (`--target rnnstate`, as tools/demo.sh builds), so that what the package and the
# runtime component install exists once the command does.
add_dependencies(rnnstate rnnstate_man_page)
# `cmake --install` and cpack install what is built, without building every target first: cpack's
# preinstall step would otherwise check (and could relink) the whole build tree, unit tests included,
# under the test suites that run the binary beside the package test.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

install(TARGETS rnnstate RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(FILES ${RNNSTATE_MAN_PAGE}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
install(FILES share/bash-completion/completions/rnnstate
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT runtime)
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME copyright COMPONENT runtime)
# `rnnstate verify` runs the JavaScript helper's checker (cli.mjs) with Node.js: the helper's modules,
# found from bin/ as ../share/rnnstate/rnnstate-stream (src/cli/node_verify.h). Node.js and onnxruntime-node
# are the user's to install (the package suggests nodejs).
install(DIRECTORY tools/js/rnnstate-stream/ DESTINATION ${CMAKE_INSTALL_DATADIR}/rnnstate/rnnstate-stream
        COMPONENT runtime FILES_MATCHING PATTERN "*.mjs" PATTERN "package.json" PATTERN "README.md"
        PATTERN "test" EXCLUDE PATTERN "testing" EXCLUDE)

# The library: target rnnstate::rnnstate, every header below include/.
set_target_properties(rnnstate_lib PROPERTIES OUTPUT_NAME rnnstate EXPORT_NAME rnnstate)
install(TARGETS rnnstate_lib EXPORT rnnstate-targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)
set(RNNSTATE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rnnstate)
install(EXPORT rnnstate-targets NAMESPACE rnnstate:: DESTINATION ${RNNSTATE_CMAKE_DIR} COMPONENT development)

# The package config finds what the library's link interface names. Each imported target it links must
# be in this table (in find order: onnx's targets refer to protobuf's), so a new dependency cannot be
# forgotten here.
set(RNNSTATE_FIND_DEPENDENCIES "")
get_target_property(rnnstate_links rnnstate_lib LINK_LIBRARIES)
foreach(entry "protobuf::libprotobuf=Protobuf" "onnx_proto=ONNX CONFIG" "onnx=ONNX CONFIG" "spdlog::spdlog=spdlog"
              "Threads::Threads=Threads" "nlohmann_json::nlohmann_json=nlohmann_json CONFIG")
  string(REPLACE "=" ";" entry "${entry}")
  list(GET entry 0 target)
  list(GET entry 1 find_arguments)
  if(target IN_LIST rnnstate_links)
    list(REMOVE_ITEM rnnstate_links ${target})
    string(FIND "${RNNSTATE_FIND_DEPENDENCIES}" "(${find_arguments})" found)
    if(found EQUAL -1)
      string(APPEND RNNSTATE_FIND_DEPENDENCIES "find_dependency(${find_arguments})\n")
    endif()
  endif()
endforeach()
# RE2 has no CMake package on Debian 12: the config finds it through pkg-config, as the build does.
if("PkgConfig::RE2" IN_LIST rnnstate_links)
  list(REMOVE_ITEM rnnstate_links PkgConfig::RE2)
  string(APPEND RNNSTATE_FIND_DEPENDENCIES "find_dependency(PkgConfig)\npkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)\n")
endif()
foreach(target IN LISTS rnnstate_links)
  if(TARGET ${target})
    get_target_property(imported ${target} IMPORTED)
    if(imported)
      message(FATAL_ERROR "rnnstate_lib links ${target}: add the find_package call for it to cmake/install.cmake")
    endif()
  endif()
endforeach()
configure_package_config_file(cmake/rnnstate-config.cmake.in ${PROJECT_BINARY_DIR}/rnnstate-config.cmake
                              INSTALL_DESTINATION ${RNNSTATE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rnnstate-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rnnstate-config.cmake ${PROJECT_BINARY_DIR}/rnnstate-config-version.cmake
        DESTINATION ${RNNSTATE_CMAKE_DIR} COMPONENT development)

# Debian package `rnnstate`: the runtime component under /usr. Its Depends are computed by dpkg-shlibdeps
# from the libraries the binary links; its version comes from the build (cmake/cpack_project_config.cmake).
set(RNNSTATE_PACKAGE_MAINTAINER "The rnnstate authors <dev@rnnstate.invalid>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rnnstate)
set(CPACK_PACKAGE_VENDOR "The rnnstate authors")
set(CPACK_PACKAGE_CONTACT "${RNNSTATE_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "expose the hidden state of RNN/GRU/LSTM layers in ONNX models")
set(CPACK_PACKAGE_DESCRIPTION
    "rnnstate rewrites ONNX models so that the initial and final states of their
recurrent nodes (RNN, GRU, LSTM) become graph inputs and outputs, recorded in
the model's metadata: the model can then run in streaming mode, chunk by chunk,
in a stateless runtime such as ONNX Runtime. It also reports the state wiring
of models and checks it, as a CI gate.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nodejs (>= 18)")  # rnnstate verify
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
    WORLD_READ WORLD_EXECUTE)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/cpack_project_config.cmake)
set(CPACK_RNNSTATE_BUILD_INFO ${RNNSTATE_BUILD_INFO_DIR}/build_info.cmake)
include(CPack)
