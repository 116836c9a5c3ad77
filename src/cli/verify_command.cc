// `rnnstate verify`: the helper's checker (cli/node_verify.h) run in Node.js on the arguments.

#include <CLI/CLI.hpp>
#include <filesystem>

#include "cli/command.h"
#include "cli/node_verify.h"
#include "rnnstate/error.h"

namespace rnnstate::cli {

namespace {

constexpr const char* kVerifyExamples = R"(
  rnnstate verify model.onnx stream.onnx      stream.onnx in chunks with its state fed back == model.onnx
                                              on the whole sequence, in ONNX Runtime (Node.js); one frame
                                              per call: the calls, the state fed back)";

/// `verify`'s arguments, passed on unread to the helper's checker (`rnnstate-stream verify`), whose own
/// command line they are: its --help included.
struct VerifyOptions {
  std::vector<std::string> arguments;
};

/// Every argument after the command is the checker's, --help included.
void AddVerifyOptions(CLI::App& command, VerifyOptions& verify) {
  command.prefix_command();
  command.set_help_flag();
  command.fallthrough(false);  // -h and --help too: not the parser's (`rnnstate -q` works before the command)
  command.callback([&command, &verify] { verify.arguments = command.remaining(); });
}

int RunVerify(const VerifyOptions& verify, bool) {
  std::error_code error;
  const std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw Error(ExitCode::kInternal, "cannot tell where this binary is: " + error.message());
  return RunNodeVerify(FindVerifyScript(executable), verify.arguments);
}

}  // namespace

Command VerifyCommand() {
  return {"verify",
          "Prove a rewrite streams: chunked with the state fed back == one whole run, in ONNX Runtime (runs the "
          "rnnstate-stream helper in Node.js; rnnstate verify --help)",
          kVerifyExamples, Declare<VerifyOptions, AddVerifyOptions, RunVerify>};
}

}  // namespace rnnstate::cli
