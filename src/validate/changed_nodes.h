#pragma once
/// \file
/// Which parts of a rewritten model differ from the model it was rewritten from: its interface (graph
/// inputs, initializers, outputs, value infos) and its main graph's nodes, matched in order. What
/// changed_region.h cuts out as a model of its own.

#include <google/protobuf/message_lite.h>
#include <google/protobuf/repeated_field.h>
#include <onnx/onnx_pb.h>

#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace rnnstate {

/// How the rewritten model's interface differs from the input's.
struct InterfaceChanges {
  /// Graph inputs and initializers new or different: their readers are in the region.
  std::unordered_set<std::string_view> changed;
  /// Graph outputs and value infos new or different: their definers are in the region.
  std::unordered_set<std::string_view> redeclared;
  std::vector<const onnx::ValueInfoProto*> inputs;     ///< the changed graph inputs
  std::vector<const onnx::TensorProto*> initializers;  ///< the changed initializers
  std::vector<const onnx::ValueInfoProto*> outputs;    ///< the changed graph outputs
};

/// The interface changes of `now` against `was`, whose first `declared_value_infos` value infos are the
/// input's own; false when an initializer name repeats (the whole model's check names that) or the input's
/// value infos are not all kept.
bool FindInterfaceChanges(const onnx::GraphProto& now, const onnx::GraphProto& was, int declared_value_infos,
                          InterfaceChanges& changes);

/// The nodes of `now` in the region (changed_region.h), in order; nullopt for an unchanged node with a
/// subgraph (what its subgraphs read and define would have to be checked against every change). A changed
/// one (the If of a computed default) is in the region with its subgraphs. `constants` gets the Constant
/// nodes outside the region by output, for the region to take those it reads. nullopt too as soon as the
/// region holds more than `most` nodes (the caller then checks the whole model: no need to finish).
std::optional<std::vector<int>> FindRegionNodes(const onnx::GraphProto& now, const onnx::GraphProto& was,
                                                const InterfaceChanges& changes,
                                                std::unordered_map<std::string_view, int>& constants,
                                                size_t most = std::numeric_limits<size_t>::max());

/// Equal messages serialize to the same bytes (onnx's messages have no maps, whose order could differ).
bool SameMessage(const google::protobuf::MessageLite& a, const google::protobuf::MessageLite& b);

/// True when an attribute of `node` holds a graph (If, Loop, Scan).
bool HasSubgraph(const onnx::NodeProto& node);

/// The items of `list` by name (views into it).
template <typename Message>
std::unordered_map<std::string_view, const Message*> ByName(const google::protobuf::RepeatedPtrField<Message>& list) {
  std::unordered_map<std::string_view, const Message*> named;
  named.reserve(static_cast<size_t>(list.size()));
  for (const auto& item : list) named.emplace(item.name(), &item);
  return named;
}

}  // namespace rnnstate
