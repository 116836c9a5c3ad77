#include "find/axis_chain.h"

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "graph/proto_access.h"
#include "loops/axis_trace.h"
#include "ops/op_semantics.h"
#include "states/recurrent_ops.h"

namespace rnnstate {

namespace {

/// True when output `slot` of `node` has, on the axis SourceAxis maps, exactly the length of that input
/// axis: a recurrent operator's batch, and the first output of an operator whose output shape is its
/// input's (up to unit axes and order). Operators that may cut, pad, join or broadcast an axis are not
/// followed, nor the other outputs of a normalization (BatchNormalization's running statistics).
bool KeepsLength(const onnx::NodeProto& node, int slot, int64_t opset) {
  if (FindRecurrentOp(node) != nullptr) return true;
  if (!IsOnnxDomain(node.domain()) || slot != 0) return false;
  switch (EffectOf(node, opset)) {
    case AxisEffect::kSame:
    case AxisEffect::kNormalize:
    case AxisEffect::kPermute:
    case AxisEffect::kRemoveUnit:
    case AxisEffect::kInsertUnit:
      return true;
    default:
      return false;
  }
}

}  // namespace

size_t AxisChainRoots::ChainAxisHash::operator()(const ChainAxis& key) const {
  const size_t name = std::hash<std::string>()(key.value);
  return HashCombine(HashCombine(name, std::hash<const GraphIndex*>()(key.graph)), static_cast<size_t>(key.axis));
}

AxisRoot AxisChainRoots::Find(const GraphPath& path, const std::string& value, int64_t axis) {
  const ResolvedName start = index_.Resolve(path, value);
  const GraphIndex* graph = start.index;  // the chain never leaves the graph that defines `value`
  Producer producer = start.producer;
  const onnx::NodeProto* node = start.node;
  ChainAxis here{graph, value, axis};
  std::vector<ChainAxis> passed;  // the values walked, all with the root found at the end
  while (true) {
    if (auto it = roots_.find(here); it != roots_.end()) {
      here = it->second;
      break;
    }
    passed.push_back(here);
    if (node == nullptr || !KeepsLength(*node, producer.slot, index_.onnx_opset())) break;
    const std::optional<std::pair<int, int64_t>> source =
        SourceAxis(index_, graph->path, *node, producer.slot, here.axis);
    if (!source || source->first >= node->input_size() || node->input(source->first).empty()) break;
    const std::string& input = node->input(source->first);
    producer = graph->ProducerOf(input);
    // Defined in an enclosing graph: the chain stays in one graph, the root is read where the value is.
    if (producer.kind == Producer::Kind::kOuterScope) break;
    node = producer.kind == Producer::Kind::kNode ? &graph->proto->node(producer.index) : nullptr;
    here = ChainAxis{graph, input, source->second};
  }
  for (auto& key : passed) roots_.emplace(std::move(key), here);
  return AxisRoot{here.graph->path, here.value, here.axis};
}

}  // namespace rnnstate
