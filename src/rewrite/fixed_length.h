#pragma once
/// \file
/// Part of `--time-axis` (time_axis.h): what the graph around the loops fixes to the length of a time axis
/// in an export without dynamic axes, found by following the axis through the graph (time/time_flow.h):
///
///   z = Reshape(x, [1, 20, 3, 2])      a target holding the length where time lands   -> [1, -1, 3, 2]
///   y = Slice(x, [0], [20], [1])       a slice to the end written as the length        -> ends INT64_MAX
///   value_info y: [1, 20, 4]           a declared shape                                -> [1, x_time, 4]
///   y = Add(x, pos[20, 6])             a constant of the whole length                  -> refused, named
///
/// Pure analysis: the edits are data, applied with the rest of the `--time-axis` plan.

#include <cstdint>
#include <string>
#include <vector>

#include "graph/model_index.h"
#include "loops/loop_streaming.h"
#include "loops/time_source.h"

namespace rnnstate {

/// A Slice along time whose `ends` operand, a constant, holds the length: the new ends (INT64_MAX there).
struct SliceToEnd {
  GraphPath graph;
  int node = -1;
  std::vector<int64_t> ends;
  std::string ends_name;  ///< the new constant's name (allocated by the plan)
};

/// A declared shape (graph output or value_info of the main graph) with the length on one axis: that axis
/// becomes symbolic (`symbolic`) or unknown (time lands there folded or resized, by a stride, say).
struct DeclaredLength {
  std::string value;
  bool output = false;  ///< a graph output, else a value_info
  int axis = -1;
  bool symbolic = true;
};

/// Everything outside the loops that holds a fixed length.
struct FixedLengthEdits {
  std::vector<LengthInShape> shapes;
  std::vector<SliceToEnd> slices;
  std::vector<DeclaredLength> declared;
  /// Why the axis cannot be opened: a constant of the whole length that no input's length explains
  /// ("" when none).
  std::string refusal;
};

/// The edits that make `time` (of fixed length `length`) any length.
FixedLengthEdits FindFixedLength(const ModelIndex& index, const TimeRef& time, int64_t length);

}  // namespace rnnstate
