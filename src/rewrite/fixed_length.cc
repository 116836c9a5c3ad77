#include "rewrite/fixed_length.h"

#include <algorithm>
#include <limits>

#include "graph/proto_access.h"
#include "ops/op_semantics.h"
#include "time/time_flow.h"
#include "values/constant_value.h"

namespace rnnstate {

namespace {

/// A Reshape whose constant target holds the length (or a multiple of it: time folded with other axes)
/// where the flow puts time in its output.
void FindShape(const ModelIndex& index, const TimeFlow& flow, const GraphPath& path, const onnx::NodeProto& node,
               int64_t length, FixedLengthEdits& edits) {
  if (!IsOnnxOp(node, {"Reshape"}) || node.input_size() < 2 || !flow.Of(path, node.input(0)).frames()) return;
  const TimeFact& out = flow.Of(path, node.output(0));
  const std::optional<std::vector<int64_t>> target = ConstantIntegers(index, path, node.input(1));
  if (!out.frames() || !target || out.axis >= static_cast<int64_t>(target->size())) return;
  const int64_t value = (*target)[static_cast<size_t>(out.axis)];
  if (value <= 0 || value % length != 0) return;
  const LengthInShape shape{ValueRef{path, node.input(1)}, out.axis};
  if (std::find(edits.shapes.begin(), edits.shapes.end(), shape) == edits.shapes.end()) edits.shapes.push_back(shape);
}

/// A Slice along time from 0 whose constant end is the length (or past it): written as "to the end".
void FindSlice(const ModelIndex& index, const TimeFlow& flow, const GraphPath& path, int n, const onnx::NodeProto& node,
               int64_t length, FixedLengthEdits& edits) {
  if (!IsOnnxOp(node, {"Slice"}) || node.input_size() < 3) return;
  const TimeFact& x = flow.Of(path, node.input(0));
  if (!x.frames()) return;
  const std::optional<std::vector<int64_t>> starts = ConstantIntegers(index, path, node.input(1));
  std::optional<std::vector<int64_t>> ends = ConstantIntegers(index, path, node.input(2));
  if (!starts || !ends || starts->size() != ends->size()) return;
  std::vector<int64_t> axes(starts->size());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  if (node.input_size() > 3 && !node.input(3).empty()) {
    const std::optional<std::vector<int64_t>> given = ConstantIntegers(index, path, node.input(3));
    if (!given || given->size() != axes.size()) return;
    axes = *given;
  }
  const int rank = RankOf(index, path, node.input(0));
  bool changed = false;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (NormalizeAxis(axes[i], rank) != x.axis || (*starts)[i] != 0 || (*ends)[i] < length) continue;
    (*ends)[i] = std::numeric_limits<int64_t>::max();
    changed = true;
  }
  if (changed) edits.slices.push_back(SliceToEnd{path, n, *ends, ""});
}

/// The declared shapes of the main graph's outputs and value_infos that hold the length.
void FindDeclared(const TimeFlow& flow, const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values,
                  bool outputs, int64_t length, FixedLengthEdits& edits) {
  for (const auto& value : values) {
    const TimeFact& fact = flow.Of(GraphPath{}, value.name());
    if (fact.steady() || !value.type().has_tensor_type() || !value.type().tensor_type().has_shape()) continue;
    const auto& shape = value.type().tensor_type().shape();
    for (int a = 0; a < shape.dim_size(); ++a) {
      const auto& dim = shape.dim(a);
      const bool time = fact.frames() && fact.axis == a;
      // Time alone keeps the input's length; folded or resized (a stride) it has another, and a value
      // that is no frames has no time axis to name: such a dimension is left unknown.
      if (time && !fact.folded && dim.dim_value() == length) {
        edits.declared.push_back(DeclaredLength{value.name(), outputs, a, true});
      } else if (dim.has_dim_value() && (time || dim.dim_value() == length)) {
        edits.declared.push_back(DeclaredLength{value.name(), outputs, a, false});
      }
    }
  }
}

}  // namespace

FixedLengthEdits FindFixedLength(const ModelIndex& index, const TimeRef& time, int64_t length) {
  FixedLengthEdits edits;
  const TimeFlow flow(index, {InputAxis{time.input, time.axis}}, {}, length);
  const onnx::GraphProto& main = index.model().graph();
  const bool recurs = std::any_of(flow.recurrences().begin(), flow.recurrences().end(),
                                  [](const RecurrenceTime& r) { return r.way == RecurrenceTime::Way::kOverTime; });
  if (!recurs) {
    edits.refusal = "no recurrent node or loop runs along " + time.Text() + ": it is no time axis to open";
    return edits;
  }
  for (const auto& output : main.output()) {
    const TimeFact& fact = flow.Of(GraphPath{}, output.name());
    if (fact.broken && fact.broken->fixed_length) {
      edits.refusal = "the model holds the whole length " + std::to_string(length) + " in a constant (" +
                      fact.broken->Text() + "): no input's length explains it, so the axis stays fixed";
      return edits;
    }
  }
  for (const auto& [path, graph_index] : index.graphs()) {
    const onnx::GraphProto* graph = ResolveGraph(index.model(), path);
    for (int n = 0; graph != nullptr && n < graph->node_size(); ++n) {
      FindShape(index, flow, path, graph->node(n), length, edits);
      FindSlice(index, flow, path, n, graph->node(n), length, edits);
    }
  }
  FindDeclared(flow, main.output(), /*outputs=*/true, length, edits);
  FindDeclared(flow, main.value_info(), /*outputs=*/false, length, edits);
  return edits;
}

}  // namespace rnnstate
