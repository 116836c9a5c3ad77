#include "rewrite/context_apply.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>

#include "graph/graph_edit.h"
#include "graph/graph_path.h"
#include "graph/overloaded.h"
#include "graph/proto_access.h"
#include "rewrite/context_fill.h"
#include "rnnstate/error.h"

namespace rnnstate {

namespace {

onnx::GraphProto& GraphOf(onnx::ModelProto& model, const ContextEdit& edit) {
  onnx::GraphProto* graph = ResolveGraph(model, edit.graph);
  // A context input is a main-graph input: a value of a subgraph would need it threaded in.
  if (graph == nullptr || !edit.graph.empty()) {
    throw Error(ExitCode::kInternal, "the plan carries a context of '" + edit.value + "' outside the main graph");
  }
  return *graph;
}

/// Shape(value) * keep + unit: the value's shape with 1 on the context's axis (keep: 1s with 0 there;
/// unit: 0s with 1 there), what Expand broadcasts the [1, N] zeros (or a fed context) to; below opset 8,
/// Tile (ContextZerosDefault::repeats).
void AddZerosDefault(const ContextEdit& edit, const ContextZerosDefault& zeros, onnx::GraphProto& graph,
                     std::vector<onnx::NodeProto>& nodes) {
  if (zeros.initializer) *graph.add_initializer() = ZeroTensor(edit.input, edit.elem_type, zeros.dims);
  std::vector<int64_t> keep(edit.shape.size(), 1), unit(edit.shape.size(), 0);
  keep[edit.axis] = 0;
  unit[edit.axis] = 1;
  nodes.push_back(MakeNode("Shape", {edit.value}, {zeros.shape_of_value}));
  nodes.push_back(Int64ConstantNode(zeros.keep, keep));
  nodes.push_back(MakeNode("Mul", {zeros.shape_of_value, zeros.keep}, {zeros.kept}));
  nodes.push_back(Int64ConstantNode(zeros.unit, unit));
  if (zeros.repeats.empty()) {
    nodes.push_back(MakeNode("Add", {zeros.kept, zeros.unit}, {zeros.target}));
    nodes.push_back(MakeNode("Expand", {edit.input, zeros.target}, {zeros.expanded}));
    return;
  }
  // Tile where Expand does not exist yet. Each dimension of the context is 1 or the value's, so the
  // repeats value - context + 1 are value / context (1 on the time axis, where keep is 0), without a
  // division (ONNX Runtime refuses a constant divisor holding 0: an empty fed context folded).
  nodes.push_back(MakeNode("Shape", {edit.input}, {zeros.shape_of_context}));
  nodes.push_back(MakeNode("Mul", {zeros.shape_of_context, zeros.keep}, {zeros.context_kept}));
  nodes.push_back(MakeNode("Sub", {zeros.kept, zeros.context_kept}, {zeros.target}));
  nodes.push_back(Int64ConstantNode(zeros.ones, std::vector<int64_t>(edit.shape.size(), 1)));
  nodes.push_back(MakeNode("Add", {zeros.target, zeros.ones}, {zeros.repeats}));
  nodes.push_back(MakeNode("Tile", {edit.input, zeros.repeats}, {zeros.expanded}));
}

/// Slice(with_context, starts [-N], ends [INT64_MAX], axes [axis]) ──> output: the last N frames.
void AddLastFrames(const ContextEdit& edit, const NewContext& added, int64_t opset,
                   std::vector<onnx::NodeProto>& nodes) {
  const std::vector<int64_t> starts{-edit.frames}, ends{std::numeric_limits<int64_t>::max()}, axes{edit.axis};
  if (opset < kSliceInputsOpset) {
    onnx::NodeProto slice = MakeNode("Slice", {added.with_context}, {edit.output});
    SetIntsAttribute(slice, "starts", starts);
    SetIntsAttribute(slice, "ends", ends);
    SetIntsAttribute(slice, "axes", axes);
    nodes.push_back(std::move(slice));
    return;
  }
  nodes.push_back(Int64ConstantNode(added.starts, starts));
  nodes.push_back(Int64ConstantNode(added.ends, ends));
  nodes.push_back(Int64ConstantNode(added.axes, axes));
  nodes.push_back(MakeNode("Slice", {added.with_context, added.starts, added.ends, added.axes}, {edit.output}));
}

/// The input, its default, the nodes and the output of one new context.
void AddContext(const ContextEdit& edit, const NewContext& added, int64_t opset, onnx::GraphProto& graph,
                std::vector<onnx::NodeProto>& nodes) {
  SetTensorInfo(*graph.add_input(), edit.input, edit.elem_type, edit.shape);
  std::string front = edit.input;
  if (const auto* zeros = std::get_if<ContextZerosDefault>(&added.default_value)) {
    AddZerosDefault(edit, *zeros, graph, nodes);
    front = zeros->expanded;
  }
  AddContextFillNodes(edit, front, nodes);
  onnx::NodeProto concat = MakeNode("Concat", {front, edit.value}, {added.with_context});
  SetIntAttribute(concat, "axis", edit.axis);
  nodes.push_back(std::move(concat));
  AddLastFrames(edit, added, opset, nodes);
  SetTensorInfo(*graph.add_output(), edit.output, edit.elem_type, edit.shape);
}

/// Sets the values of `node`'s INTS attribute `name`, adding it where the node left it to its default (a
/// ConvTranspose that crops nothing).
void SetIntsAttributeValues(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* found = nullptr;
  for (auto& attribute : *node.mutable_attribute()) {
    if (attribute.name() == name) found = &attribute;
  }
  if (found == nullptr) {
    found = node.add_attribute();
    found->set_name(name);
    found->set_type(onnx::AttributeProto::INTS);
  }
  found->clear_ints();
  for (int64_t v : values) found->add_ints(v);
}

/// Removes `node`'s `auto_pad` (SAME_UPPER / SAME_LOWER: the explicit `pads` just written replace it; the two
/// exclude each other).
void DropAutoPad(onnx::NodeProto& node) {
  auto* attributes = node.mutable_attribute();
  for (int i = 0; i < attributes->size(); ++i) {
    if (attributes->Get(i).name() == "auto_pad") {
      attributes->DeleteSubrange(i, 1);
      return;
    }
  }
}

/// One operand a window's context changes (context_plan.h).
void ApplyOperandEdit(const OperandEdit& edit, onnx::GraphProto& graph) {
  if (edit.node < 0 || edit.node >= graph.node_size()) {
    throw Error(ExitCode::kInternal, "the plan's edit of '" + edit.attribute + "' does not fit the model");
  }
  onnx::NodeProto& node = *graph.mutable_node(edit.node);
  if (edit.computed) {
    if (node.input_size() <= edit.slot) {
      throw Error(ExitCode::kInternal, "the plan's " + node.op_type() + " has no input '" + edit.attribute + "'");
    }
    node.set_input(edit.slot, edit.initializer);
    return;
  }
  if (edit.initializer.empty()) {
    SetIntsAttributeValues(node, edit.attribute, edit.values);
    if (edit.attribute == "pads") DropAutoPad(node);
    return;
  }
  if (node.input_size() <= edit.slot) {
    throw Error(ExitCode::kInternal, "the plan's " + node.op_type() + " has no input '" + edit.attribute + "'");
  }
  *graph.add_initializer() = Int64Tensor(edit.initializer, edit.values);
  node.set_input(edit.slot, edit.initializer);
}

/// The index of the first node of `graph` that reads `name`, or the node count.
int FirstReader(const onnx::GraphProto& graph, const std::string& name) {
  for (int n = 0; n < graph.node_size(); ++n) {
    const auto& inputs = graph.node(n).input();
    if (std::find(inputs.begin(), inputs.end(), name) != inputs.end()) return n;
  }
  return graph.node_size();
}

}  // namespace

void RedirectContextReaders(const std::vector<ContextEdit>& contexts, onnx::ModelProto& model) {
  for (const ContextEdit& edit : contexts) {
    const auto* added = std::get_if<NewContext>(&edit.change);
    if (added == nullptr) continue;
    onnx::GraphProto& graph = GraphOf(model, edit);
    // Resolved before any is renamed: the indices are the planned model's.
    std::vector<onnx::NodeProto*> readers;
    for (const ContextReader& reader : added->readers) {
      if (reader.graph != edit.graph || reader.node < 0 || reader.node >= graph.node_size()) {
        throw Error(ExitCode::kInternal, "the plan's readers of '" + edit.value + "' do not fit the model");
      }
      readers.push_back(graph.mutable_node(reader.node));
    }
    for (onnx::NodeProto* reader : readers) RenameNodeReads(*reader, edit.value, added->with_context);
    for (const OperandEdit& operand : edit.operands) ApplyOperandEdit(operand, graph);
  }
}

void AddContextStates(const std::vector<ContextEdit>& contexts, onnx::ModelProto& model) {
  const int64_t opset = OnnxOpset(model);
  std::vector<onnx::NodeProto> nodes;  // of data inputs' contexts: in the main graph, in front of every node
  // Of values computed inside the graph (a window's input): right in front of the window that reads them.
  std::map<int, std::vector<onnx::NodeProto>> before_reader;
  for (const ContextEdit& edit : contexts) {
    onnx::GraphProto& graph = GraphOf(model, edit);
    std::visit(Overloaded{
                   [](const KeepContext&) {},
                   [&](const DropContextDefault&) { RemoveInitializer(graph, edit.input); },
                   [&](const NewContext& added) {
                     // A data input's context has no operand to change (nor has a valid window's, inside).
                     if (edit.operands.empty() && !edit.valid) return AddContext(edit, added, opset, graph, nodes);
                     std::vector<onnx::NodeProto> own;
                     AddContext(edit, added, opset, graph, own);
                     auto& at = before_reader[FirstReader(graph, added.with_context)];
                     std::move(own.begin(), own.end(), std::back_inserter(at));
                   },
               },
               edit.change);
  }
  InsertNodesBefore(*model.mutable_graph(), std::move(before_reader));
  SurroundNodes(*model.mutable_graph(), std::move(nodes), {});
}

}  // namespace rnnstate
