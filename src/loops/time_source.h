#pragma once
/// \file
/// What decides how many steps a Loop runs and which input axis it walks — the trip
/// count (an input's length `Gather(Shape(x), axis)` with casts and through Transposes, a constant, a
/// graph input, or something else), whether the loop's condition can end it earlier, and how a value
/// seen inside a body traces back to an axis of a main-graph input. Read by loop_streaming (the verdict)
/// and time_axis (what `--time-axis` changes).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/model_index.h"
#include "loops/carried_variables.h"
#include "states/wiring.h"

namespace rnnstate {

/// An axis of a main-graph input.
struct TimeRef {
  std::string input;
  int64_t axis = -1;
  bool operator==(const TimeRef& o) const { return input == o.input && axis == o.axis; }
  bool operator!=(const TimeRef& o) const { return !(*this == o); }
  /// "x:1", as `--time-axis` takes it.
  std::string Text() const { return input + ":" + std::to_string(axis); }
};

/// What decides the number of iterations of a Loop.
struct Trip {
  enum class Kind {
    kAbsent,    ///< no trip count: the condition ends the loop
    kLength,    ///< the length of an input axis
    kConstant,  ///< an integer constant
    kInput,     ///< a main-graph input (autoregressive: the caller says how many steps)
    kOther,     ///< computed otherwise
  };
  Kind kind = Kind::kAbsent;
  TimeRef time;          ///< kLength
  int64_t constant = 0;  ///< kConstant
  ValueRef defined;      ///< kConstant: the constant, where it is defined; kInput: the graph input
  std::string producer;  ///< kOther: what computes it, for messages
};

/// Reads the trip count `name` of a Loop in the graph at `path`.
Trip ReadTrip(const ModelIndex& index, const GraphPath& path, const std::string& name);

/// True when the condition of the Loop `loop` never ends it before its trip count `trip` does: absent or
/// always true, or conjuncts (`And`) each true, the condition input, or `i < bound` in the body where i
/// counts iterations (the iteration number, or a counter started at 0 stepping by 1, before or after its
/// step; through casts: tf2onnx compares floats) and the bound is the trip count's length again; before
/// the loop, conjuncts true or `0 < bound`. Bounds that are constants (the trip count being that
/// constant) are added to `constants`; the body's comparison nodes to `comparisons` when given.
bool CondEndsWithTrip(const ModelIndex& index, const LoopAnatomy& loop, const Trip& trip,
                      std::vector<ValueRef>* constants, std::vector<int>* comparisons = nullptr);

/// A Reshape the time axis passes through on its way to an input: its node (in the graph `graph`) and the
/// time axis's position in its output (where a target written with the fixed length holds it).
struct ViewOnTime {
  GraphPath graph;
  int node = -1;
  int64_t axis = -1;
};

/// Follows `name` (seen from the graph at `path`) along `axis` back to a main-graph input, through
/// operators that keep the steps of that axis apart (elementwise unary ops, the views of op_semantics.h
/// that keep the axis whole, arithmetic with a scalar constant) and through the scan outputs (axis 0) of
/// Loops that read one input axis at their iteration index (stacked layers); nullopt when it leads
/// elsewhere. The Reshapes passed are appended to `views` when given.
std::optional<TimeRef> TraceToInput(const ModelIndex& index, const GraphPath& path, const std::string& name,
                                    int64_t axis, std::vector<ViewOnTime>* views = nullptr);

/// The declared length of `time` (a fixed dim of the main-graph input), or -1.
int64_t StaticLength(const ModelIndex& index, const TimeRef& time);

}  // namespace rnnstate
