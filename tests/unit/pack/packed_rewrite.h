#pragma once
/// \file
/// The rewrite with a packing and a layout, and the packed states it records: the two steps every test of
/// tests/unit/pack starts from; kLstm as the stage receives it, and the name allocators its planners take.

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "graph/naming.h"
#include "graph/node_builder.h"
#include "pipeline_stages.h"
#include "rnnstate/packed_metadata.h"
#include "test_names.h"

namespace rnnstate::testing {

/// Rewrites `model` in place (not strict) with `pack`, `layout` and `mode`.
inline RewriteOutcome Rewrite(onnx::ModelProto& model, PackKind pack, StateLayout layout = StateLayout::kAsNode,
                              StateInputMode mode = StateInputMode::kDefaults) {
  return RewriteModel(model, Packing(pack, layout, mode), /*strict=*/false);
}

/// The packed states recorded in `model`'s metadata; fails the test when there are none or they do not read.
inline PackedStates Packed(const onnx::ModelProto& model) {
  std::string error;
  std::optional<PackedStates> packed = ReadPackedStates(model, RecordedPairs(model).size(), &error);
  EXPECT_EQ(error, "");
  EXPECT_TRUE(packed.has_value());
  return packed.value_or(PackedStates{});
}

/// kLstm with its two states (h, c: [1, batch, 3], batch on axis 1) exposed and recorded in `mode`, neither
/// packed nor transposed: what the layout and packing stage starts from.
inline onnx::ModelProto ExposedLstm(StateInputMode mode = StateInputMode::kDefaults) {
  onnx::ModelProto model = ParseModel(kLstm);
  Rewrite(model, PackKind::kNone, StateLayout::kAsNode, mode);
  return model;
}

/// The allocators of value names, node names and dim_params of `model`, as the stage hands them to its
/// planners.
struct ModelAllocators {
  explicit ModelAllocators(const onnx::ModelProto& model)
      : names(ModelNames(model)), nodes(ModelNodeNames(model)), dims(ModelDimParams(model)) {}
  NameAllocator names, nodes, dims;
};

}  // namespace rnnstate::testing

namespace rnnstate::test_names {

using testing::ExposedLstm;
using testing::ModelAllocators;
using testing::Packed;
using testing::Rewrite;

}  // namespace rnnstate::test_names
