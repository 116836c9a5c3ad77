#pragma once
/// \file
/// Context states as plan entries: which value's last frames are carried from one call to the next, along
/// which axis, how many, which readers see the concatenation, and what a call that does not feed the
/// context sees (its default). `--input-context` plans one per option (context_planner.h), and one per
/// causal window over time whose padding the context replaces (time/causal_windows.h). context_apply.h
/// executes them.
///
///   before: value ──> readers
///   after:  ctx_in ──[Expand(shape of value, 1 at axis)]──> Concat(axis)(ctx, value) ──> with_context ──> readers
///                                                                                    └──Slice(last N on axis)──>
///                                                                                    ctx_out

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "graph/dim.h"
#include "graph/graph_path.h"

namespace rnnstate {

/// The opset from which Slice takes its bounds as inputs (attributes before).
inline constexpr int64_t kSliceInputsOpset = 10;

/// A node that reads the value and sees the concatenation instead: its inputs naming the value, and its
/// subgraphs' reads of it, are renamed.
struct ContextReader {
  GraphPath graph;  ///< the graph holding the node (the value's own graph)
  int node = -1;
};

/// No default: the context input is required (the caller feeds zeros first).
struct ContextNoDefault {};

/// Zeros: an initializer of the context's shape with 1 for each symbolic dimension, broadcast to the
/// value's other dimensions by an Expand to the value's shape with 1 at the context's axis:
///   Shape(value) ──Mul(keep)──Add(unit)──> target;  Expand(ctx_in, target) ──> expanded
struct ContextZerosDefault {
  std::vector<int64_t> dims;  ///< the initializer's
  /// False in required mode, for a window's context: no initializer, but the broadcast stays, so that a
  /// first feed of zeros may hold one element along the dimensions no data feed gives (the batch and the
  /// other sizes of a value computed inside the model).
  bool initializer = true;
  std::string shape_of_value, keep, kept, unit, target, expanded;  ///< names of the Expand's helper values
  /// Below ai.onnx opset 8 (no Expand) the zeros are tiled instead: Shape(ctx_in) ──Mul(keep)──>
  /// context_kept; Sub(kept, context_kept) ──> target; Add(target, ones) ──> repeats (value / context: each
  /// context dimension is 1 or the value's); Tile(ctx_in, repeats) ──> expanded (names set only then).
  std::string shape_of_context, context_kept, ones, repeats;
};

using ContextDefault = std::variant<ContextNoDefault, ContextZerosDefault>;

/// A new context state: its input and output, the Concat and the Slice.
struct NewContext {
  ContextDefault default_value;
  std::string with_context;  ///< the Concat's output (and node name): what the readers read
  std::string starts, ends, axes;  ///< the Slice's bounds (opset 10 on: constant inputs)
  std::vector<ContextReader> readers;
};

/// Recorded, and its wiring holds: nothing changes.
struct KeepContext {};

/// Recorded with a zero default; required mode removes the initializer (the Expand stays: it broadcasts a
/// fed context to itself).
struct DropContextDefault {};

using ContextChange = std::variant<NewContext, KeepContext, DropContextDefault>;

/// An integer operand of a node that a causal window's context changes (time/causal_windows.h): the
/// window's (or its Pad's) `pads` without the time padding the context replaces, the `ends` of a Slice that
/// cut the padding after time made "to the end". Attribute `attribute` before the opset that made it an
/// input; from then on a new initializer `initializer` as input `slot` (not an edit of the old constant:
/// exporters share one between nodes).
struct OperandEdit {
  int node = -1;  ///< main-graph index (of the planned model)
  std::string attribute;
  int slot = -1;
  std::vector<int64_t> values;
  std::string initializer;  ///< "" when the node takes the operand as an attribute
  /// Input `slot` becomes the value `initializer` the context computes (ContextFill::amounts): no tensor.
  bool computed = false;
};

/// A window whose Pad fills in another way than zeros (time/pad_fill.h): the context's default is empty,
/// and the Pad pads the concatenation by its original amounts less the frames the context was fed:
///   Shape(front) ──Mul(unit)──> fed_time;  Concat(fed_time, zeros) ──> fed_pads;  Sub(pads, fed_pads) ──> amounts
/// (front: the context as the Concat takes it; unit: 1 at the time axis, 0 elsewhere).
struct ContextFill {
  std::string mode;            ///< "constant", "edge" or "reflect"
  std::vector<int64_t> pads;   ///< the Pad's amounts as written ([begin_0, ..., end_0, ...])
  std::string fed_shape, unit, fed_time, zeros, fed_pads, original, amounts;  ///< names of the nodes' values
};

/// Every edit for one context state. Its pair is in Plan::pairs, as every state's.
struct ContextEdit {
  GraphPath graph;  ///< the graph of the value (the main graph for a data input)
  std::string value;
  int64_t axis = 0;
  int64_t frames = 0;
  int32_t elem_type = 0;
  std::vector<Dim> shape;  ///< declared shape of the context input and output
  std::string input, output;
  /// A causal window's context: the window's name (for messages and the metadata), and the operands that
  /// lose the padding the context replaces (a new context only).
  std::string window;
  /// A window that looked ahead (rewrite --lookahead): the frames it looked ahead. Its context's time
  /// axis is then named rather than fixed: the default holds `frames - lookahead` frames (the padding
  /// before time), every later call `frames`.
  int64_t lookahead = 0;
  /// A window whose Pad fills in another mode or with another value: how its amounts are computed.
  std::optional<ContextFill> fill;
  /// A window without padding on time ("valid"): its context's time axis is named, the default holds no
  /// frames (the first call emits `frames` frames fewer, as one run does), and no operand changes.
  bool valid = false;
  std::vector<OperandEdit> operands;
  ContextChange change;

  /// True when applying this edit changes the model.
  bool Changes() const { return !std::holds_alternative<KeepContext>(change); }
  /// One line for --dry-run: what the rewrite does to this context.
  std::string Describe() const;
};

}  // namespace rnnstate
