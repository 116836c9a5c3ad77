#include "contract/metadata_bound.h"

#include <exception>
#include <string>

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

std::optional<Json> ReadDocumentBesideStates(const onnx::ModelProto& model, const std::string& key) {
  for (const auto& prop : model.metadata_props()) {
    if (prop.key() != key) continue;
    const size_t most = MostStateEntries(model);
    size_t entries = 0;
    struct TooManyEntries {};
    const JsonElementSink skip = [&](Json&) {
      if (++entries > most) throw TooManyEntries{};
    };
    try {
      Json document = ParseJson(prop.value(), "states", skip);
      if (document.is_object()) return document;
    } catch (const TooManyEntries&) {
    } catch (const std::exception&) {
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace rnnstate
