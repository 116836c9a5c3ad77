#pragma once
/// \file
/// What a caller asks of a rewrite: how new state inputs behave and how they are named.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace re2 {
class RE2;
}

namespace rnnstate {

/// A compiled `--nodes` pattern, in RE2 syntax (https://github.com/google/re2/wiki/Syntax): matched in
/// time linear in the name's length and without recursion, since node names are untrusted input (a
/// 100,000-character name crashed std::regex; `(a|aa)*c` took exponential time). No backreferences or
/// lookaround. Copies share the compiled pattern.
class NodePattern {
 public:
  /// Compiles `pattern`. Throws Error(kUsage) naming what RE2 rejects in it.
  explicit NodePattern(const std::string& pattern);
  /// True when the pattern matches anywhere in `name` (a search, not a full match).
  bool Search(const std::string& name) const;

 private:
  std::shared_ptr<const re2::RE2> compiled_;
};

/// How new state inputs behave when not fed.
enum class StateInputMode {
  kDefaults,  ///< each state input has a default reproducing the original model (overridable initializer)
  kRequired,  ///< plain required inputs: the caller feeds the initial state (zeros on the first call)
};

/// How exposed states reach the caller (see docs/serving.md).
enum class PackKind {
  kNone,      ///< one graph input and output per state
  kSequence,  ///< one Sequence<Tensor> input and output per element type
  kTensor,    ///< one tensor [batch, N] input and output per element type
};

/// The layout of state inputs and outputs.
enum class StateLayout {
  kAsNode,      ///< as the node takes the state ([D, B, H] for layout 0)
  kBatchFirst,  ///< the batch on axis 0 ([B, D, H])
};

/// `--time-axis INPUT:AXIS`: an axis of a main-graph input that a Loop walks with a constant trip count
/// equal to its static length (tf2onnx); the rewrite makes it symbolic and derives the count from it.
struct TimeAxisOption {
  std::string input;
  int64_t axis = 0;
};

/// `--input-context INPUT:AXIS:N`: the last N frames along AXIS of data input INPUT become a context state
/// (see ContextSpec in metadata.h): each call's INPUT is seen with the previous call's last N frames in
/// front of it (Silero VAD's authors prepend 64 samples of the previous call's input by hand).
struct InputContextOption {
  std::string input;
  int64_t axis = 0;
  int64_t frames = 0;
  /// "INPUT:AXIS:N", as given.
  std::string Text() const;
};

/// What the user asked for.
struct PlanOptions {
  StateInputMode mode = StateInputMode::kDefaults;
  std::string input_template = "{node}.{kind}_in";
  std::string output_template = "{node}.{kind}_out";
  /// When set, only states whose owner's name or `graph/name` matches (a search) are rewritten.
  std::optional<NodePattern> node_filter;
  /// States that cannot stream (reverse, bidirectional, sequence_lens) are left as they are: no new
  /// input or output (many published models keep such layers per call by design).
  bool streamable_only = false;

  /// Packing and layout, a stage after the state rewrite (see state_transform.h).
  PackKind pack = PackKind::kNone;
  StateLayout layout = StateLayout::kAsNode;
  std::string packed_input = "state_in";    ///< name of the packed input (per element type: a suffix)
  std::string packed_output = "state_out";  ///< name of the packed output
  /// Each packed name was asked for (--packed-input / --packed-output): one the model uses already is a
  /// usage error, where a default name is made unique (a `_2` suffix).
  bool packed_input_given = false;
  bool packed_output_given = false;

  /// True when a stage after the state rewrite is asked for.
  bool Transforms() const { return pack != PackKind::kNone || layout != StateLayout::kAsNode; }

  /// `--time-axis`, in the order given.
  std::vector<TimeAxisOption> time_axes;

  /// `--input-context`, in the order given.
  std::vector<InputContextOption> input_contexts;

  /// Causal windows over time (Conv and pooling whose only time padding is their span of zeros in front)
  /// get their context as a state, so that they stream; `--no-conv-context` leaves them as they are.
  bool conv_context = true;
  /// `--lookahead`: carry the windows over time that look ahead too (a "same" convolution) with their
  /// context; the outputs then lag the original's by the model's lookahead (recorded as the stream's
  /// "delay"). Opt in: it changes what one call returns.
  bool lookahead = false;
};

/// Whether the façade checks that the values stored in the model's tensors fit their dims and data type
/// (docs/validation.md), or its caller did when it read the model.
enum class InlineTensors {
  kCheck,  ///< checked with the model's other rules: a model built or parsed by the caller (the default)
  /// Checked by rnnstate's own OpenModel (src/io/model_io.h), which judged the payloads it left in the file
  /// by their length there, a check a model in memory cannot repeat: not checked again. The CLI's commands
  /// pass it for the model they opened; a caller claiming it for another model gets that model unchecked.
  kCheckedWhenOpened,
};

/// Parses "INPUT:AXIS" (the input name may itself contain ':'; AXIS is a non-negative integer). Throws
/// Error(kUsage) when it is malformed.
TimeAxisOption ParseTimeAxis(const std::string& text);

/// Parses "INPUT:AXIS:N" (the input name may itself contain ':'; AXIS a non-negative integer, N a positive
/// one). Throws Error(kUsage) when it is malformed.
InputContextOption ParseInputContext(const std::string& text);

}  // namespace rnnstate
