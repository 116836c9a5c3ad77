#include "validate/changed_nodes.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "graph/proto_access.h"
#include "graph/shape_inference.h"

namespace rnnstate {

namespace {

using NameSet = std::unordered_set<std::string_view>;
using Strings = google::protobuf::RepeatedPtrField<std::string>;

/// How far ahead of the last matched node of the input the rewritten model's next node is looked for: the
/// nodes skipped were removed (a replaced initial state's computation). Beyond it the nodes are taken
/// as changed, which is never wrong, only slower.
constexpr int kLookahead = 64;

bool SameStrings(const Strings& a, const Strings& b) {
  if (a.size() != b.size()) return false;
  for (int i = 0; i < a.size(); ++i) {
    if (a.Get(i) != b.Get(i)) return false;
  }
  return true;
}

/// Equal in everything onnx's checker and shape inference read (not the doc string).
bool SameNode(const onnx::NodeProto& a, const onnx::NodeProto& b) {
  if (a.op_type() != b.op_type() || a.domain() != b.domain() || a.name() != b.name() ||
      !SameStrings(a.output(), b.output()) || !SameStrings(a.input(), b.input()) ||
      a.attribute_size() != b.attribute_size()) {
    return false;
  }
  for (int i = 0; i < a.attribute_size(); ++i) {
    if (!SameMessage(a.attribute(i), b.attribute(i))) return false;
  }
  return true;
}

/// The index of each node of `graph` by its first output; -1 for a first output two nodes give (the empty
/// name of an omitted optional output, say). Nodes without outputs are not in it.
std::unordered_map<std::string_view, int> NodesByFirstOutput(const onnx::GraphProto& graph) {
  std::unordered_map<std::string_view, int> nodes;
  nodes.reserve(static_cast<size_t>(graph.node_size()));
  for (int n = 0; n < graph.node_size(); ++n) {
    if (graph.node(n).output_size() == 0) continue;
    auto [it, inserted] = nodes.emplace(graph.node(n).output(0), n);
    if (!inserted) it->second = -1;
  }
  return nodes;
}

/// The first node of `was` from `next` to `next + kLookahead` with the same outputs as `node`, or -1. Found
/// through `by_first_output` (NodesByFirstOutput of `was`) where `node`'s first output names one node
/// there: then that node is the only candidate. A node the rewrite added, whose outputs the input never
/// had, then costs one look-up instead of a comparison with every node of the window.
int CounterpartInWindow(const onnx::NodeProto& node, const onnx::GraphProto& was, int next,
                        const std::unordered_map<std::string_view, int>& by_first_output) {
  if (node.output_size() > 0) {
    auto found = by_first_output.find(node.output(0));
    if (found == by_first_output.end()) return -1;
    const int at = found->second;
    if (at >= 0) {
      const bool in_window = at >= next && at <= next + kLookahead;
      return in_window && SameStrings(node.output(), was.node(at).output()) ? at : -1;
    }
  }
  const int was_count = was.node_size();
  for (int ahead = 0; ahead <= kLookahead && next + ahead < was_count; ++ahead) {
    if (SameStrings(node.output(), was.node(next + ahead).output())) return next + ahead;
  }
  return -1;
}

/// Whether `tensor` carries values (a StructuralCopy keeps none of a large initializer's).
bool HasPayload(const onnx::TensorProto& tensor) {
  return !tensor.raw_data().empty() || tensor.external_data_size() > 0 || tensor.float_data_size() > 0 ||
         tensor.int32_data_size() > 0 || tensor.string_data_size() > 0 || tensor.int64_data_size() > 0 ||
         tensor.double_data_size() > 0 || tensor.uint64_data_size() > 0;
}

/// `now`, an initializer of the rewritten model, against `was`, the same-named one of the input's
/// StructuralCopy: all of it when the copy keeps it whole (shape inference may read its values), else what
/// the copy keeps (onnx's checker checks every initializer of the rewritten model itself).
bool SameInitializer(const onnx::TensorProto& now, const onnx::TensorProto& was) {
  if (CopiedWhole(now)) return SameMessage(now, was);
  return !HasPayload(was) && now.data_type() == was.data_type() && now.dims_size() == was.dims_size() &&
         std::equal(now.dims().begin(), now.dims().end(), was.dims().begin());
}

bool ReadsAny(const onnx::NodeProto& node, const NameSet& names) {
  for (const auto& input : node.input()) {
    if (names.count(input)) return true;
  }
  return false;
}

bool DefinesAny(const onnx::NodeProto& node, const NameSet& names) {
  for (const auto& output : node.output()) {
    if (names.count(output)) return true;
  }
  return false;
}

/// The items of `now` (graph inputs, initializers or outputs) that `was` has none equal to (`same`) of
/// the same name, in order.
template <typename Message, typename Same>
std::vector<const Message*> Changed(const google::protobuf::RepeatedPtrField<Message>& now,
                                    const google::protobuf::RepeatedPtrField<Message>& was, Same same) {
  const auto was_named = ByName(was);
  std::vector<const Message*> changed;
  for (const auto& item : now) {
    auto it = was_named.find(item.name());
    if (it == was_named.end() || !same(item, *it->second)) changed.push_back(&item);
  }
  return changed;
}

}  // namespace

/// Equal messages serialize to the same bytes (onnx's messages have no maps, whose order could differ).
bool SameMessage(const google::protobuf::MessageLite& a, const google::protobuf::MessageLite& b) {
  const size_t size = a.ByteSizeLong();
  if (size != b.ByteSizeLong()) return false;
  // Both sizes are cached now: serialized into one buffer without computing them again (SerializeAsString
  // would, and would allocate a string for each).
  std::string bytes(2 * size, '\0');
  auto* const first = reinterpret_cast<uint8_t*>(bytes.data());
  a.SerializeWithCachedSizesToArray(first);
  b.SerializeWithCachedSizesToArray(first + size);
  return std::memcmp(first, first + size, size) == 0;
}

bool HasSubgraph(const onnx::NodeProto& node) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.has_g() || attribute.graphs_size() > 0) return true;
  }
  return false;
}

/// The interface changes of `now` against `was`, whose first `declared_value_infos` value infos are the
/// input's own; false when an initializer name repeats (the whole model's check names that) or the input's
/// value infos are not all kept.
bool FindInterfaceChanges(const onnx::GraphProto& now, const onnx::GraphProto& was, int declared_value_infos,
                          InterfaceChanges& changes) {
  NameSet initializer_names;
  for (const auto& tensor : now.initializer()) {
    if (!initializer_names.insert(tensor.name()).second) return false;
  }
  auto same_info = [](const onnx::ValueInfoProto& a, const onnx::ValueInfoProto& b) { return SameMessage(a, b); };
  changes.inputs = Changed(now.input(), was.input(), same_info);
  changes.initializers = Changed(now.initializer(), was.initializer(), SameInitializer);
  for (const auto* input : changes.inputs) changes.changed.insert(input->name());
  for (const auto* tensor : changes.initializers) changes.changed.insert(tensor->name());
  // The input's outputs and value infos as inference left them (declared types merged with inferred
  // ones): a declaration equal to that is one inference already agreed with.
  changes.outputs = Changed(now.output(), was.output(), same_info);
  for (const auto* output : changes.outputs) changes.redeclared.insert(output->name());
  // A declaration gone (an output no longer one, say) leaves its value to inference alone, maybe less
  // precise than the input's: its definer is in the region, whose types must match the input's.
  for (const auto* gone : Changed(was.output(), now.output(), same_info)) changes.redeclared.insert(gone->name());
  // The rewrite keeps the value infos it does not touch in their order, and appends new ones; those the
  // input declared come first in `was`, inference's after them.
  if (now.value_info_size() < declared_value_infos) return false;
  for (int i = 0; i < now.value_info_size(); ++i) {
    if (i >= declared_value_infos || !SameMessage(now.value_info(i), was.value_info(i))) {
      changes.redeclared.insert(now.value_info(i).name());
      if (i < declared_value_infos) changes.redeclared.insert(was.value_info(i).name());
    }
  }
  return true;
}

/// The nodes of `now` in the region (changed_region.h), in order; nullopt for an unchanged node with a
/// subgraph (what its subgraphs read and define would have to be checked against every change). A changed
/// one (the If of a computed default) is in the region with its subgraphs. `constants` gets the Constant
/// nodes outside the region by output, for the region to take those it reads. nullopt too past `most` nodes.
std::optional<std::vector<int>> FindRegionNodes(const onnx::GraphProto& now, const onnx::GraphProto& was,
                                                const InterfaceChanges& changes,
                                                std::unordered_map<std::string_view, int>& constants, size_t most) {
  std::vector<int> region;
  const auto by_first_output = NodesByFirstOutput(was);
  int next = 0;  // the input's node expected next: unchanged nodes keep their order
  for (int i = 0; i < now.node_size(); ++i) {
    const onnx::NodeProto& node = now.node(i);
    bool same = false;
    if (const int match = CounterpartInWindow(node, was, next, by_first_output); match >= 0) {
      same = SameNode(node, was.node(match));
      next = match + 1;
    }
    if (!same || ReadsAny(node, changes.changed) || DefinesAny(node, changes.redeclared)) {
      region.push_back(i);
      if (region.size() > most) return std::nullopt;
    } else if (HasSubgraph(node)) {
      return std::nullopt;
    } else if (IsOnnxOp(node, {"Constant"}) && node.output_size() == 1) {
      constants.emplace(node.output(0), i);
    }
  }
  return region;
}

}  // namespace rnnstate
