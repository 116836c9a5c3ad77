#pragma once
/// \file
/// `rnnstate verify`: the numerical proof that a rewrite streams runs in ONNX Runtime, which the C++
/// tool does not link. It is the JavaScript helper's checker (tools/js/rnnstate-stream/cli.mjs, the
/// `rnnstate-stream verify` command), run with Node.js.

#include <filesystem>
#include <string>
#include <vector>

namespace rnnstate {

/// Where the helper's cli.mjs can be for the binary `executable`, in the order they are tried: beside
/// it in a build tree (`rnnstate-stream/`, CMake's link to tools/js/rnnstate-stream), then where
/// `cmake --install` and the Debian package put it (`../share/rnnstate/rnnstate-stream/`).
std::vector<std::filesystem::path> VerifyScriptCandidates(const std::filesystem::path& executable);

/// The first of VerifyScriptCandidates(`executable`) that exists; throws Error (kBadInput) naming
/// where it looked when none does.
std::filesystem::path FindVerifyScript(const std::filesystem::path& executable);

/// Runs `node SCRIPT verify ARGUMENTS...` on this process's standard streams and returns its exit
/// code. Throws Error (kBadInput) when Node.js is not on PATH, and (kInternal) when node ends on a
/// signal.
int RunNodeVerify(const std::filesystem::path& script, const std::vector<std::string>& arguments);

}  // namespace rnnstate
