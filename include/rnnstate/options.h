#pragma once
/// \file
/// What a caller asks of a rewrite: how new state inputs behave and how they are named.

#include <optional>
#include <regex>
#include <string>

namespace rnnstate {

/// How new state inputs behave when not fed.
enum class StateInputMode {
  kDefaults,  ///< each state input has a default reproducing the original model (overridable initializer)
  kRequired,  ///< plain required inputs: the caller feeds the initial state (zeros on the first call)
};

/// What the user asked for.
struct PlanOptions {
  StateInputMode mode = StateInputMode::kDefaults;
  std::string input_template = "{node}.{kind}_in";
  std::string output_template = "{node}.{kind}_out";
  /// When set, only states whose owner's name or `graph/name` matches (regex search) are rewritten.
  std::optional<std::regex> node_filter;
  /// States that cannot stream (reverse, bidirectional, sequence_lens) are left as they are: no new
  /// input or output (many published models keep such layers per call by design).
  bool streamable_only = false;
};

}  // namespace rnnstate
