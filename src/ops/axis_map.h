#pragma once
/// \file
/// Where an axis goes through an operator, forward (an axis of an input to the output's) and backward (an
/// axis of an output to the input's), both read from the one description of the operator table: its row's
/// AxisEffect, its named axis (AxisAttribute, with the default of the model's opset) and its operands.
///
///   Gather(x [B,T,F], i [K], axis=2)    forward: T (1) -> 1; F (2) -> none     backward: 2 -> none, 0 -> 0
///   Unsqueeze(x [T,H], axes=[0])        forward: T (0) -> 1                    backward: 0 -> none (new)
///   Add(x [T,H], b [H])                 forward from b: H (0) -> 1             backward to b: 0 -> none
///
/// MapAxis says where an axis *is*, not whether the operator combines elements along it (the row's
/// AxisMixing) nor whether it changes the axis's length (a Slice's cut axes): those are each caller's
/// question, asked of the same row.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>

#include "graph/model_index.h"
#include "ops/op_semantics.h"

namespace rnnstate {

/// An axis of a value and that value's rank (-1 when unknown).
struct AxisOf {
  int64_t axis = -1;
  int rank = -1;
};

/// Which way MapAxis maps.
enum class AxisDirection {
  kForward,   ///< an axis of input `input` to the axis of the output (of every output of a Split)
  kBackward,  ///< an axis of output `output` to the axis of input `input`
};

/// The ends an axis is mapped between: an input slot and an output slot of the node.
struct AxisPort {
  int input = 0;
  int output = 0;
};

/// Where axis `at` goes through `node` (in the graph at `path`) in `direction`, by its row's AxisEffect:
/// forward `at` is an axis of input `port.input` (its rank as the caller knows it, -1 unknown), the
/// result an axis of the output; backward `at` is an axis of output `port.output`, the result an axis of
/// input `port.input`. nullopt when the axis does not survive (reduced, gathered, contracted, split or
/// merged by a Reshape, an inserted unit axis backward), when what decides it is not known (a rank, a
/// constant operand), or when the operator has no axis effect.
///
/// Per effect: kSame keeps every axis. kBroadcast right-aligns: forward adds the leading axes the other
/// operands' ranks give (a value of unknown rank only when the others are scalars or vectors); backward
/// subtracts them (both ranks known). kNormalize keeps the shape (backward: when the ranks inferred agree).
/// kPermute, kRemoveUnit, kInsertUnit, kReshape: the view's axes (a Reshape's when unit axes alone move around it);
/// kFlatten is not mapped. kReduce: forward the named axes removed (keepdims=0) or kept (an axis reduced
/// has no image; none named reduces all); backward its inverse. kCut, kPad, kScatter: every axis at its
/// place. kGather: the named axis replaced by the indices' axes (the indices' rank known). kConcat,
/// kSplit: every axis but the named one (backward: both ranks inferred and equal). kMatMul: the leading
/// axes of input 0 (forward: input 1 a matrix or a vector; backward: the ranks inferred and equal).
/// kGemm: the rows, unless transA. kWindow: the batch (axis 0 of input 0 and output 0).
std::optional<AxisOf> MapAxis(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, AxisOf at,
                              AxisDirection direction, AxisPort port = {});

}  // namespace rnnstate
