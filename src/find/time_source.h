#pragma once
/// \file
/// Part of stage 3: what decides how many steps a Loop runs and which input axis it walks — the trip
/// count (an input's length `Gather(Shape(x), axis)` with casts and through Transposes, a constant, a
/// graph input, or something else), whether the loop's condition can end it earlier, and how a value
/// seen inside a body traces back to an axis of a main-graph input. Read by loop_streaming (the verdict)
/// and time_axis (what `--time-axis` changes).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "find/carried_variables.h"
#include "graph/model_index.h"
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
/// always true, or tf2onnx's `t + 1 < bound` in the body (and `start < bound` before the loop) with a
/// counter t started at 0 stepping by 1 and a bound that is the trip count's length again. A bound that
/// is a constant (the trip count being that constant) is added to `constants`.
bool CondEndsWithTrip(const ModelIndex& index, const LoopAnatomy& loop, const Trip& trip,
                      std::vector<ValueRef>* constants);

/// Follows `name` (seen from the graph at `path`) along `axis` back to a main-graph input, through
/// operators that keep the steps of that axis apart (Identity, Cast, Transpose, elementwise unary ops,
/// arithmetic with a scalar constant); nullopt when it leads elsewhere.
std::optional<TimeRef> TraceToInput(const ModelIndex& index, const GraphPath& path, const std::string& name,
                                    int64_t axis);

/// The declared length of `time` (a fixed dim of the main-graph input), or -1.
int64_t StaticLength(const ModelIndex& index, const TimeRef& time);

}  // namespace rnnstate
