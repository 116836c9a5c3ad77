#pragma once
/// \file
/// The problems `rnnstate check` reports (kinds documented in docs/guide.md, "check").

#include <cstddef>
#include <string>

namespace rnnstate {

/// One reason a model fails the check.
struct CheckProblem {
  enum class Kind {
    kNotExposed,       ///< a recurrent state without a recorded pair and not exposed
    kBadMetadata,      ///< the `rnnstate` metadata value is malformed
    kNoSuchNode,       ///< a pair names a node (graph path + name) that is not an RNN/GRU/LSTM
    kNoSuchState,      ///< a pair names a state the node does not have ("c" of a GRU)
    kNotGraphInput,    ///< a pair's input is not a main-graph input
    kNotGraphOutput,   ///< a pair's output is not a main-graph output
    kInputNotWired,    ///< a pair's input does not reach the node's initial-state slot
    kOutputNotWired,   ///< a pair's output is not computed from the node's Y_h / Y_c
    kFlagMismatch,     ///< `optional` or `streamable` says something the graph contradicts
    kDuplicateInput,   ///< two pairs share an input
    kDuplicateOutput,  ///< two pairs share an output
    kDuplicateState,   ///< two pairs for the same state of the same node
    kPackedMismatch,   ///< the "packed" description disagrees with the graph (type, size, members)
  };
  Kind kind;
  std::string message;  ///< one line, without the file path
};

/// Most problems of one kind `check` lists one by one for a model; the rest are counted (a hostile model whose metadata
/// names a million pairs the graph lacks has millions of problems).
inline constexpr size_t kMaxListedProblems = 1000;

/// "not_exposed", "bad_metadata", ... (JSON records).
const char* CheckProblemKindName(CheckProblem::Kind kind);

}  // namespace rnnstate
