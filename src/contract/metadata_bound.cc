#include "contract/metadata_bound.h"

namespace rnnstate {

namespace {

/// The input slots of the nodes of `graph` and of every graph nested in it.
size_t InputSlots(const onnx::GraphProto& graph) {
  size_t slots = 0;
  for (const onnx::NodeProto& node : graph.node()) {
    slots += static_cast<size_t>(node.input_size());
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g()) slots += InputSlots(attribute.g());
      for (const onnx::GraphProto& body : attribute.graphs()) slots += InputSlots(body);
    }
  }
  return slots;
}

}  // namespace

size_t MostStateEntries(const onnx::ModelProto& model) {
  return InputSlots(model.graph()) + static_cast<size_t>(model.graph().input_size());
}

}  // namespace rnnstate
