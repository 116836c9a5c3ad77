#pragma once
/// \file
/// A non-fatal finding of a rewrite, as data: which kind of message it is and its text. Each stage writes
/// its own warnings; the pipeline only orders them and drops the kinds a later stage makes moot (packing
/// replaces the state inputs the state inputs' notes are about). Nobody edits another stage's text.

#include <string>
#include <vector>

namespace rnnstate {

struct Warning {
  enum class Kind {
    kTimeAxis,    ///< a `--time-axis` option that changes nothing, and why
    kSkipped,     ///< a state that is not rewritten, and why
    kNote,        ///< something state-like that is no rewritable state (check warns about it too)
    kStateInput,  ///< how a runtime must treat a state input: its first feed, the model's own input, not streamable
    kMetadata,    ///< the model's `rnnstate` metadata is malformed (it is rewritten)
    kValidation,  ///< checks of the result that could not run, or ran without a schema
    kTransform,   ///< the layout and packing stage's own
  };
  Kind kind;
  std::string text;  ///< one line, without the file path

  bool operator==(const Warning& other) const { return kind == other.kind && text == other.text; }
};

/// The texts of `warnings`, in order (what the command line prints, one line each).
inline std::vector<std::string> WarningTexts(const std::vector<Warning>& warnings) {
  std::vector<std::string> texts;
  texts.reserve(warnings.size());
  for (const Warning& warning : warnings) texts.push_back(warning.text);
  return texts;
}

}  // namespace rnnstate
