#include "loops/chunk_dependence.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "graph/control_flow.h"
#include "graph/proto_access.h"
#include "loops/axis_trace.h"
#include "loops/time_source.h"
#include "ops/op_semantics.h"
#include "values/constant_value.h"

namespace rnnstate {

namespace {

constexpr int kMaxDependenceDepth = 64;

int64_t Normalize(int64_t axis, int rank) { return axis < 0 && rank >= 0 ? axis + rank : axis; }

}  // namespace

ChunkDependence::ChunkDependence(const ModelIndex& index, const GraphPath& graph, int node,
                                 const ChunkedInputs& chunked, bool first_chunk)
    : index_(index), loop_graph_(graph), loop_node_(node), chunked_(chunked), first_chunk_(first_chunk) {}

/// "" when `name` (seen from `path`) is the same in every chunk; else what it depends on.
std::string ChunkDependence::Of(const GraphPath& path, const std::string& name, int depth) {
  if (name.empty()) return "";
  if (depth > kMaxDependenceDepth) return "'" + name + "' (too deep to follow)";
  const ResolvedName resolved = index_.Resolve(path, name);
  const ValueRef key{resolved.graph, name};
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  memo_[key] = "";  // a cycle (a loop's carried value) adds nothing new
  const std::string why = Compute(resolved, name, depth);
  memo_[key] = why;
  return why;
}

/// "" when the length of axis `axis` of `value` is the same in every chunk, else why not.
std::string ChunkDependence::LengthOf(const GraphPath& path, const std::string& value, int64_t axis, int depth) {
  if (const std::optional<InputAxis> traced = TraceAxis(index_, path, value, axis)) {
    auto time = chunked_.time_axes.find(traced->input);
    if (time != chunked_.time_axes.end() && time->second == traced->axis) {
      return "the length of '" + traced->input + "' (axis " + std::to_string(traced->axis) + ", cut into chunks)";
    }
    return "";
  }
  return Of(path, value, depth + 1);  // not followed: as its values, conservatively
}

std::string ChunkDependence::Compute(const ResolvedName& resolved, const std::string& name, int depth) {
  const Producer& producer = resolved.producer;
  const bool input = producer.kind == Producer::Kind::kGraphInput || producer.kind == Producer::Kind::kDefaultedInput;
  if (input && resolved.graph.empty()) {
    if (auto time = chunked_.time_axes.find(name); time != chunked_.time_axes.end()) {
      return "'" + name + "' (cut into chunks along axis " + std::to_string(time->second) + ")";
    }
    return name == chunked_.trip_input ? "'" + name + "' (the trip count, given per call)" : "";
  }
  if (producer.kind == Producer::Kind::kInitializer) return "";
  if (producer.kind != Producer::Kind::kNode) return "'" + name + "' (an input of an enclosing subgraph)";
  const onnx::NodeProto& node = *resolved.node;
  const GraphPath& graph = resolved.graph;
  if (graph == loop_graph_ && producer.index == loop_node_) return "the loop's own output '" + name + "'";
  if (IsOnnxOp(node, {"Constant"})) return "";
  if (first_chunk_ && FirstFrames(graph, node)) return "";
  if (IsOnnxOp(node, {"Shape", "Size"})) return ShapeElements(graph, node, std::nullopt, depth);
  // Elements of a shape: Gather(Shape(v), k) and Slice(Shape(v), b, e) read the lengths of those axes only.
  if (IsOnnxOp(node, {"Gather", "Slice"}) && node.input_size() >= 2) {
    const ResolvedName from = index_.Resolve(graph, node.input(0));
    const onnx::NodeProto* shape = from.node;
    if (shape != nullptr && IsOnnxOp(*shape, {"Shape"})) {
      if (std::optional<std::vector<int64_t>> elements = PickedElements(graph, node)) {
        return ShapeElements(from.graph, *shape, elements, depth);
      }
    }
  }
  // An If's output is its condition and what each branch computes for it (a rewrite's "original when
  // empty" default computes zeros of the batch inside its then branch).
  if (ContainerKindOf(node, index_.onnx_opset()) == ContainerKind::kIf && node.input_size() == 1) {
    if (std::string why = Of(graph, IfCondition(node), depth + 1); !why.empty()) return why;
    const int position = BodyOutputOfNodeOutput(ContainerKind::kIf, producer.slot);
    for (const char* branch : kIfBranches) {
      const onnx::GraphProto* body = GraphAttribute(node, branch);
      if (body == nullptr || position >= body->output_size()) return "the If '" + node.name() + "'";
      GraphPath path = graph;
      path.push_back(GraphStep{producer.index, branch, -1});
      if (std::string why = Of(path, body->output(position).name(), depth + 1); !why.empty()) return why;
    }
    return "";
  }
  for (const auto& in : node.input()) {
    if (std::string why = Of(graph, in, depth + 1); !why.empty()) return why;
  }
  for (const auto& outer : SubgraphReferences(node)) {
    if (std::string why = Of(graph, outer, depth + 1); !why.empty()) return why;
  }
  return "";
}

/// The elements of the shape vector that Gather (constant indices, axis 0) or Slice (constant bounds,
/// step 1) picks, as positions in it; nullopt when not constant.
std::optional<std::vector<int64_t>> ChunkDependence::PickedElements(const GraphPath& graph,
                                                                    const onnx::NodeProto& node) {
  const std::optional<int64_t> length = VectorLength(index_, graph, node.input(0));
  if (IsOnnxOp(node, {"Gather"})) {
    std::optional<std::vector<int64_t>> picked = ConstantIntegers(index_, graph, node.input(1));
    if (!picked || AxisAttribute(node, index_.onnx_opset()) != 0) return std::nullopt;
    for (int64_t& e : *picked) {
      if (e < 0 && !length) return std::nullopt;
      if (e < 0) e += *length;
    }
    return picked;
  }
  const auto starts = ConstantIntegers(index_, graph, node.input(1));
  const auto ends = node.input_size() > 2 ? ConstantIntegers(index_, graph, node.input(2)) : std::nullopt;
  if (!starts || !ends || starts->size() != 1 || ends->size() != 1 || !length) return std::nullopt;
  if (node.input_size() > 4 && !node.input(4).empty()) {
    const auto steps = ConstantIntegers(index_, graph, node.input(4));
    if (!steps || steps->size() != 1 || steps->front() != 1) return std::nullopt;
  }
  auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + *length : v, 0, *length); };
  std::vector<int64_t> picked;
  for (int64_t e = clamp(starts->front()); e < clamp(ends->front()); ++e) picked.push_back(e);
  return picked;
}

/// Whether the elements `elements` (all: nullopt) of Shape / Size `node` are the same in every chunk.
std::string ChunkDependence::ShapeElements(const GraphPath& graph, const onnx::NodeProto& node,
                                           const std::optional<std::vector<int64_t>>& elements, int depth) {
  const std::string& value = node.input(0);
  const int rank = RankOf(index_, graph, value);
  std::vector<int64_t> axes;
  if (IsOnnxOp(node, {"Size"})) {
    if (rank < 0) return Of(graph, value, depth + 1);
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  } else {
    int64_t start = IntAttribute(node, "start", 0);
    if (start < 0 && rank < 0) return Of(graph, value, depth + 1);
    start = std::max<int64_t>(0, Normalize(start, rank));
    if (elements) {
      for (int64_t e : *elements) axes.push_back(start + e);
    } else {
      if (rank < 0) return Of(graph, value, depth + 1);
      const int64_t end = std::min<int64_t>(rank, Normalize(IntAttribute(node, "end", rank), rank));
      for (int64_t a = start; a < end; ++a) axes.push_back(a);
    }
  }
  for (int64_t a : axes) {
    if (std::string why = LengthOf(graph, value, a, depth); !why.empty()) return why;
  }
  return "";
}

/// True when `node` is `Gather(v, k)` of constant indices k >= 0 along the time axis of a chunked input,
/// v computed from it step by step: the first frames, which the first chunk shares with one run.
bool ChunkDependence::FirstFrames(const GraphPath& graph, const onnx::NodeProto& node) {
  if (!IsOnnxOp(node, {"Gather"}) || node.input_size() != 2) return false;
  const std::optional<std::vector<int64_t>> indices = ConstantIntegers(index_, graph, node.input(1));
  if (!indices || std::any_of(indices->begin(), indices->end(), [](int64_t k) { return k < 0; })) return false;
  const std::optional<TimeRef> traced =
      TraceToInput(index_, graph, node.input(0), AxisAttribute(node, index_.onnx_opset()));
  if (!traced) return false;
  auto time = chunked_.time_axes.find(traced->input);
  return time != chunked_.time_axes.end() && time->second == traced->axis;
}

}  // namespace rnnstate
