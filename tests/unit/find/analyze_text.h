#pragma once
/// \file
/// The analysis of a model written as ONNX text, as `report` and `check` start from: the step most tests of
/// tests/unit/find begin with.

#include <onnx/onnx_pb.h>

#include <string>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "test_names.h"

namespace rnnstate::testing {

/// Parses `text` and analyzes it (the model and its index live only for the call).
inline Analysis AnalyzeText(const std::string& text) {
  onnx::ModelProto model = ParseModel(text);
  ModelIndex index(model);
  return Analyze(index);
}

/// ONNX text: the trip count `trip` of a loop over axis 0 of x, its length, read from LoopZerosOfTheBatch's
/// `shape` and `zero`.
inline constexpr const char* kLengthTrip = "trip = Gather <axis = 0> (shape, zero)";

}  // namespace rnnstate::testing

namespace rnnstate::test_names {

using testing::AnalyzeText;
using testing::kLengthTrip;

}  // namespace rnnstate::test_names
