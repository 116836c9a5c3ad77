#pragma once
/// \file
/// `rewrite --time-axis INPUT:AXIS`, a stage before the state rewrite with its own plan (data) and apply
/// (the only code here that mutates). tf2onnx writes a Keras layer it cannot fuse as a Loop whose trip
/// count is a constant equal to the static sequence length, with the same constant as the bound of its
/// condition `t + 1 < T`: such a model runs one fixed length only. For every Loop that walks INPUT's AXIS
/// that way (see loop_streaming.h), the plan makes the axis symbolic and replaces those constants by the
/// fed input's length, so chunks of any length run:
///   before: T = Constant(6)                  Loop(T, Less(0, T'), ...)   T' = Constant(6:int32)
///   after:  T = Identity(Gather(Shape(x), 1)) Loop(T, ...)               T' = Cast(Gather(Shape(x), 1), int32)
/// Reshape targets on the way from the input to the loops that hold the length where the time axis is
/// (tf2onnx writes a batch-1 transpose as `Reshape(x, [60, 1, F])`) get -1 there, and a Loop reading,
/// at its counter, the scan output of another such Loop (stacked layers) is planned with it.
/// Graph outputs whose length along that axis comes from the Loop's scan outputs (through Identity,
/// Transpose, ConcatFromSequence) get the symbolic dim too.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "find/time_source.h"
#include "graph/model_index.h"
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
