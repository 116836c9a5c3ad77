#pragma once
/// \file
/// The time flow of a graph written as ONNX text, from axis 0 of its input `x`: what the tests of the time
/// rules (time_moves_test, time_data_moves_test) start from.

#include <onnx/onnx_pb.h>

#include <string>

#include "graph/model_index.h"
#include "test_names.h"
#include "time/time_flow.h"

namespace rnnstate::testing {

/// The flow of the graph `body` (ONNX text after the model header, at ai.onnx `opset`) from axis 0 of x.
struct FlowFromX {
  explicit FlowFromX(const std::string& body, int opset = 14)
      : model(ParseModel("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\n" + body)),
        index(model),
        flow(index, {InputAxis{"x", 0}}) {}
  /// What `name` (of the main graph) is along time, as text ("frames on axis 0", "mixed", ...).
  std::string Of(const std::string& name) const { return TimeFactText(flow.Of({}, name)); }
  const TimeFact& Fact(const std::string& name) const { return flow.Of({}, name); }
  onnx::ModelProto model;
  ModelIndex index;
  TimeFlow flow;
};

}  // namespace rnnstate::testing

namespace rnnstate::test_names {

using testing::FlowFromX;

}  // namespace rnnstate::test_names
