#pragma once
/// \file
/// What `rnnstate --version` prints: the release version, the source revision the binary was built
/// from, and the onnx and protobuf versions it was compiled against.

#include <string>

namespace rnnstate {

/// Lines of `NAME VALUE`: `rnnstate 0.1.0`, `revision 0123456789ab` (`git describe` of the build's
/// source tree, `-dirty` when it had uncommitted changes; `unknown` when built outside git),
/// `onnx 1.12.0`, `protobuf 3.21.12`. No trailing newline.
std::string VersionText();

/// The same as one JSON object, keys `name`, `version`, `revision`, `onnx`, `protobuf` (all strings).
/// No trailing newline.
std::string VersionJson();

}  // namespace rnnstate
