#pragma once
/// \file
/// The rewrite with a packing and a layout, and the packed states it records: the two steps every test of
/// tests/unit/pack starts from.

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

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

}  // namespace rnnstate::testing

namespace rnnstate::test_names {

using testing::Packed;
using testing::Rewrite;

}  // namespace rnnstate::test_names
