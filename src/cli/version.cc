#include "cli/version.h"

#include <google/protobuf/stubs/common.h>

#include <string>

#include "build_info.h"  // generated at build time by cmake/build_info.cmake
#include "rnnstate/json.h"

namespace rnnstate {
namespace {

/// GOOGLE_PROTOBUF_VERSION is 1000000 * major + 1000 * minor + patch.
std::string ProtobufVersion() {
  constexpr int kVersion = GOOGLE_PROTOBUF_VERSION;
  return std::to_string(kVersion / 1000000) + "." + std::to_string(kVersion / 1000 % 1000) + "." +
         std::to_string(kVersion % 1000);
}

}  // namespace

std::string VersionText() {
  return std::string("rnnstate ") + RNNSTATE_BUILD_VERSION + "\nrevision " + RNNSTATE_BUILD_REVISION + "\nonnx " +
         RNNSTATE_BUILD_ONNX_VERSION + "\nprotobuf " + ProtobufVersion();
}

std::string VersionJson() {
  Json version = Json::object();
  version["name"] = "rnnstate";
  version["version"] = RNNSTATE_BUILD_VERSION;
  version["revision"] = RNNSTATE_BUILD_REVISION;
  version["onnx"] = RNNSTATE_BUILD_ONNX_VERSION;
  version["protobuf"] = ProtobufVersion();
  return DumpJson(version);
}

}  // namespace rnnstate
