#include "find/axis_chain.h"

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

AxisRoot AxisChainRoots::Find(const GraphPath& path, const std::string& value, int64_t axis) {
  ResolvedName at = index_.Resolve(path, value);
  AxisRoot here{at.graph, value, axis};
  std::vector<std::string> passed;  // the keys of the values walked, all with the root found at the end
  while (true) {
    // The same form of key as the traces' memo: a value is named by its defining graph and name.
    std::string key = AxisTraceMemo::Key(AxisTraceMemo::Kind::kAxis, here.graph, here.value, here.axis);
    if (auto it = roots_.find(key); it != roots_.end()) {
      here = it->second;
      break;
    }
    passed.push_back(std::move(key));
    const onnx::NodeProto* node = at.node;
    if (node == nullptr || !KeepsLength(*node, at.producer.slot, index_.onnx_opset())) break;
    const std::optional<std::pair<int, int64_t>> source =
        SourceAxis(index_, at.graph, *node, at.producer.slot, here.axis);
    if (!source || source->first >= node->input_size() || node->input(source->first).empty()) break;
    ResolvedName next = index_.Resolve(at.graph, node->input(source->first));
    if (next.graph != at.graph) break;  // the chain stays in one graph: the root is read where the value is
    here = AxisRoot{next.graph, node->input(source->first), source->second};
    at = std::move(next);
  }
  for (auto& key : passed) roots_.emplace(std::move(key), here);
  return here;
}

}  // namespace rnnstate
