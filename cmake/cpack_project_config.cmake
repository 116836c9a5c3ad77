# Read by cpack when it packages: the package version is the one of the binary being packaged, from the
# build_info.cmake its last build wrote (see cmake/build_info.cmake), not from configure time.
if(NOT EXISTS "${CPACK_RNNSTATE_BUILD_INFO}")
  message(FATAL_ERROR "${CPACK_RNNSTATE_BUILD_INFO} is missing: build rnnstate before packaging it")
endif()
include("${CPACK_RNNSTATE_BUILD_INFO}")
set(CPACK_PACKAGE_VERSION "${RNNSTATE_DEB_VERSION}")
set(CPACK_DEBIAN_PACKAGE_VERSION "${RNNSTATE_DEB_VERSION}")
