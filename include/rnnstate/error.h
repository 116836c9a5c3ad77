#pragma once
/// \file
/// The one error type of rnnstate, with the exit code that the CLI returns for it.

#include <stdexcept>
#include <string>

namespace rnnstate {

/// Process exit codes. Stable: scripts depend on them (documented in docs/files.md).
enum class ExitCode : int {
  kOk = 0,           ///< success, including "nothing to do"
  kCheckFailed = 1,  ///< `check`: a model has unexposed state or stale metadata
  kUsage = 2,        ///< bad command line
  kBadInput = 3,     ///< input missing, unreadable, not ONNX, truncated or too large
  kUnsupported = 4,  ///< valid ONNX that rnnstate cannot rewrite safely
  kCannotWrite = 5,  ///< output could not be written
  kInternal = 6,     ///< the rewritten model failed validation (a bug in rnnstate)
};

/// An error that stops the processing of one model. `what()` is one line naming the problem;
/// context (file, graph path, node) is prepended on the way up with AppendContext.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code), message_(message) {}

  /// The exit code the CLI returns for this error.
  ExitCode code() const { return code_; }

  /// Prefixes `context: ` to the message (e.g. the file path), keeping the code.
  void AppendContext(const std::string& context) { message_ = context + ": " + message_; }

  const char* what() const noexcept override { return message_.c_str(); }

 private:
  ExitCode code_;
  std::string message_;
};

}  // namespace rnnstate
