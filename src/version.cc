#include "version.h"

#include <google/protobuf/stubs/common.h>

#include <cstdio>
#include <string>

#include "build_info.h"  // generated at build time by cmake/build_info.cmake

namespace rnnstate {
namespace {

/// GOOGLE_PROTOBUF_VERSION is 1000000 * major + 1000 * minor + patch.
std::string ProtobufVersion() {
  constexpr int kVersion = GOOGLE_PROTOBUF_VERSION;
  return std::to_string(kVersion / 1000000) + "." + std::to_string(kVersion / 1000 % 1000) + "." +
         std::to_string(kVersion % 1000);
}

/// `text` as a JSON string literal.
std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string VersionText() {
  return std::string("rnnstate ") + RNNSTATE_BUILD_VERSION + "\nrevision " + RNNSTATE_BUILD_REVISION + "\nonnx " +
         RNNSTATE_BUILD_ONNX_VERSION + "\nprotobuf " + ProtobufVersion();
}

std::string VersionJson() {
  return "{\"name\":\"rnnstate\",\"version\":" + JsonString(RNNSTATE_BUILD_VERSION) +
         ",\"revision\":" + JsonString(RNNSTATE_BUILD_REVISION) +
         ",\"onnx\":" + JsonString(RNNSTATE_BUILD_ONNX_VERSION) + ",\"protobuf\":" + JsonString(ProtobufVersion()) +
         "}";
}

}  // namespace rnnstate
