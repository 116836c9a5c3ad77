#pragma once
/// \file
/// `rewrite --time-axis INPUT:AXIS`, a stage before the state rewrite with its own plan (data) and apply
/// (the only code here that mutates). An export without dynamic axes (PyTorch's default, keras2onnx with a
/// fixed `input_shape`, tf2onnx's Keras layers as Loops) runs one length only; this makes the axis
/// symbolic and every value that holds its length derive it from the fed input, so chunks of any length
/// run:
///   - a Loop walking the axis with a constant trip count equal to the length, with the same constant as
///     the bound of its condition `t + 1 < T` (tf2onnx): those constants become the fed length
///       before: T = Constant(6)                   Loop(T, Less(0, T'), ...)   T' = Constant(6:int32)
///       after:  T = Identity(Gather(Shape(x), 1))  Loop(T, ...)               T' = Cast(Gather(Shape(x), 1), int32)
///     and a Loop reading, at its counter, the scan output of another such Loop (stacked layers) with it;
///   - Reshape targets that hold the length where time lands get -1 there, Slices along time to the length
///     end at INT64_MAX, and declared shapes (outputs, value_info) name the new dimension (fixed_length.h).
/// A constant of the whole length that no input explains (a positional table added to the frames) is
/// refused, named.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graph/model_index.h"
#include "loops/time_source.h"
#include "rewrite/fixed_length.h"
#include "rnnstate/options.h"

namespace rnnstate {

/// A constant of graph `value.graph` that becomes the input's length, cast to its element type.
struct LengthConstant {
  ValueRef value;
  int32_t elem_type = onnx::TensorProto::INT64;
};

/// A constant Reshape target rewritten with -1 where it held the fixed length.
struct ShapeWithoutLength {
  ValueRef value;
  std::vector<int64_t> values;  ///< the new values
};

/// Everything one `--time-axis` changes.
struct TimeAxisEdit {
  TimeRef time;
  int64_t length = 0;     ///< the static length before
  std::string dim_param;  ///< the symbolic dim it becomes
  std::vector<LengthConstant> constants;
  std::vector<ShapeWithoutLength> shapes;
  std::vector<std::pair<std::string, int>> output_dims;  ///< main-graph outputs and their axis made symbolic
  std::vector<SliceToEnd> slices;                        ///< Slices along time whose end was the length
  std::vector<DeclaredLength> declared;                  ///< declared shapes holding the length
  std::vector<std::string> loops;                        ///< the Loops, described, for messages
  std::string shape, axis, length_value;                 ///< names of Shape(x), the axis constant, the length
};

/// The `--time-axis` stage, as data.
struct TimeAxisPlan {
  std::vector<TimeAxisEdit> edits;
  std::vector<std::string> warnings;  ///< options that change nothing, and why
  std::vector<std::string> refused;   ///< those options, as given ("x:1")

  bool Changes() const { return !edits.empty(); }
  /// One line per edit, for --dry-run.
  std::vector<std::string> Describe() const;
};

/// Plans `axes` on the indexed model. An axis that is already symbolic changes nothing (a rewritten
/// model is rewritten again unchanged); one that no such Loop walks is a warning.
TimeAxisPlan PlanTimeAxes(const ModelIndex& index, const std::vector<TimeAxisOption>& axes);

/// Executes `plan` on the model it was planned on.
void ApplyTimeAxes(const TimeAxisPlan& plan, onnx::ModelProto& model);

}  // namespace rnnstate
