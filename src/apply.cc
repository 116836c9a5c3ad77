#include "rnnstate/apply.h"

#include <map>
#include <set>
#include <unordered_map>

#include "rnnstate/error.h"

namespace rnnstate {

namespace {

size_t ElementSize(int32_t elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT: return 4;
    case onnx::TensorProto::DOUBLE: return 8;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: return 2;
    default: throw Error(ExitCode::kUnsupported, "state element type " + std::to_string(elem_type) + " is not a float type");
  }
}

onnx::TensorProto ZeroTensor(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(elem_type);
  size_t count = 1;
  for (auto d : dims) {
    tensor.add_dims(d);
    count *= static_cast<size_t>(d);
  }
  tensor.set_raw_data(std::string(count * ElementSize(elem_type), '\0'));
  return tensor;
}

onnx::ValueInfoProto TensorValueInfo(const std::string& name, int32_t elem_type, const std::vector<Dim>& shape) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  auto* tensor_type = info.mutable_type()->mutable_tensor_type();
  tensor_type->set_elem_type(elem_type);
  auto* proto_shape = tensor_type->mutable_shape();
  for (const auto& d : shape) {
    auto* dim = proto_shape->add_dim();
    if (d.fixed()) dim->set_dim_value(d.value);
    else if (!d.param.empty()) dim->set_dim_param(d.param);
  }
  return info;
}

onnx::NodeProto MakeNode(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_name(outputs.front());
  for (auto& input : inputs) node.add_input(std::move(input));
  for (auto& output : outputs) node.add_output(std::move(output));
  return node;
}

/// A Constant node holding a 1-D int64 tensor.
onnx::NodeProto Int64Constant(const std::string& output, std::vector<int64_t> values, bool scalar = false) {
  onnx::NodeProto node = MakeNode("Constant", {}, {output});
  auto* attribute = node.add_attribute();
  attribute->set_name("value");
  attribute->set_type(onnx::AttributeProto::TENSOR);
  auto* tensor = attribute->mutable_t();
  tensor->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) tensor->add_dims(static_cast<int64_t>(values.size()));
  for (auto v : values) tensor->add_int64_data(v);
  return node;
}

void SetSlot(google::protobuf::RepeatedPtrField<std::string>* slots, int slot, const std::string& value) {
  while (slots->size() <= slot) slots->Add();
  *slots->Mutable(slot) = value;
}

/// Edits of one graph, collected before the node list is rebuilt once.
struct GraphEdits {
  std::map<int, std::vector<onnx::NodeProto>> before, after;
  std::set<std::string> dropped_originals;  ///< values no longer read by their former state slot
};

void AddBroadcastNodes(const BroadcastShapeNames& b, std::vector<onnx::NodeProto>& out) {
  out.push_back(MakeNode("Shape", {b.x}, {b.shape_of_x}));
  out.push_back(Int64Constant(b.batch_index, {b.batch_axis}));
  onnx::NodeProto gather = MakeNode("Gather", {b.shape_of_x, b.batch_index}, {b.batch});
  auto* axis = gather.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  out.push_back(std::move(gather));
  out.push_back(Int64Constant(b.directions, {b.num_directions}));
  out.push_back(Int64Constant(b.hidden, {b.hidden_size}));
  std::vector<std::string> parts = b.batch_position == 0 ? std::vector<std::string>{b.batch, b.directions, b.hidden}
                                                         : std::vector<std::string>{b.directions, b.batch, b.hidden};
  onnx::NodeProto concat = MakeNode("Concat", parts, {b.state_shape});
  auto* concat_axis = concat.add_attribute();
  concat_axis->set_name("axis");
  concat_axis->set_type(onnx::AttributeProto::INT);
  concat_axis->set_i(0);
  out.push_back(std::move(concat));
}

onnx::GraphProto IdentityBranch(const std::string& name, const std::string& from, const std::string& to,
                                const onnx::ValueInfoProto& type) {
  onnx::GraphProto branch;
  branch.set_name(name);
  *branch.add_node() = MakeNode("Identity", {from}, {to});
  onnx::ValueInfoProto output = type;
  output.set_name(to);
  *branch.add_output() = output;
  return branch;
}

void AddSelectNodes(const StateEdit& edit, std::vector<onnx::NodeProto>& out) {
  out.push_back(MakeNode("Size", {edit.input}, {edit.size_value}));
  out.push_back(Int64Constant(edit.zero_value, {0}, /*scalar=*/true));
  out.push_back(MakeNode("Equal", {edit.size_value, edit.zero_value}, {edit.is_empty_value}));
  onnx::NodeProto select = MakeNode("If", {edit.is_empty_value}, {edit.slot_value});
  onnx::ValueInfoProto type = TensorValueInfo(edit.slot_value, edit.elem_type, edit.shape);
  auto* then_branch = select.add_attribute();
  then_branch->set_name("then_branch");
  then_branch->set_type(onnx::AttributeProto::GRAPH);
  *then_branch->mutable_g() = IdentityBranch(edit.then_value, edit.original, edit.then_value, type);
  auto* else_branch = select.add_attribute();
  else_branch->set_name("else_branch");
  else_branch->set_type(onnx::AttributeProto::GRAPH);
  *else_branch->mutable_g() = IdentityBranch(edit.else_value, edit.input, edit.else_value, type);
  out.push_back(std::move(select));
}

int FindInitializer(const onnx::GraphProto& graph, const std::string& name) {
  for (int i = 0; i < graph.initializer_size(); ++i) {
    if (graph.initializer(i).name() == name) return i;
  }
  return -1;
}

void RemoveInitializer(onnx::GraphProto& graph, const std::string& name) {
  int i = FindInitializer(graph, name);
  if (i >= 0) graph.mutable_initializer()->DeleteSubrange(i, 1);
}

/// Adds the default of a new input and returns nothing; the input declaration is added by the caller.
void AddDefault(const Plan& plan, const StateEdit& edit, onnx::GraphProto& graph, GraphEdits& edits,
                std::set<int>& broadcasts_done) {
  switch (edit.default_kind) {
    case DefaultKind::kNone: return;
    case DefaultKind::kZeros:
      *graph.add_initializer() = ZeroTensor(edit.input, edit.elem_type, edit.default_dims);
      return;
    case DefaultKind::kBroadcastZeros: {
      *graph.add_initializer() = ZeroTensor(edit.input, edit.elem_type, edit.default_dims);
      auto& before = edits.before[edit.node];
      if (broadcasts_done.insert(edit.broadcast).second) AddBroadcastNodes(plan.broadcasts.at(edit.broadcast), before);
      before.push_back(MakeNode("Expand", {edit.input, plan.broadcasts.at(edit.broadcast).state_shape}, {edit.slot_value}));
      return;
    }
    case DefaultKind::kMoveInitializer: {
      int i = FindInitializer(graph, edit.original);
      if (i < 0) throw Error(ExitCode::kInternal, "plan refers to a missing initializer '" + edit.original + "'");
      graph.mutable_initializer(i)->set_name(edit.input);
      return;
    }
    case DefaultKind::kCopyInitializer: {
      int i = FindInitializer(graph, edit.original);
      if (i < 0) throw Error(ExitCode::kInternal, "plan refers to a missing initializer '" + edit.original + "'");
      onnx::TensorProto* copy = graph.add_initializer();
      *copy = graph.initializer(i);
      copy->set_name(edit.input);
      return;
    }
    case DefaultKind::kSelectOriginal:
      *graph.add_initializer() = ZeroTensor(edit.input, edit.elem_type, edit.default_dims);
      AddSelectNodes(edit, edits.before[edit.node]);
      return;
  }
}

bool HasOutput(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& output : graph.output()) {
    if (output.name() == name) return true;
  }
  return false;
}

void ApplyEdit(const Plan& plan, const StateEdit& edit, onnx::GraphProto& graph, GraphEdits& edits,
               std::set<int>& broadcasts_done) {
  onnx::NodeProto& node = *graph.mutable_node(edit.node);
  switch (edit.input_action) {
    case InputAction::kKeep:
    case InputAction::kReuseInput: break;
    case InputAction::kDropDefault: RemoveInitializer(graph, edit.input); break;
    case InputAction::kNewInput: {
      *graph.add_input() = TensorValueInfo(edit.input, edit.elem_type, edit.shape);
      AddDefault(plan, edit, graph, edits, broadcasts_done);
      SetSlot(node.mutable_input(), edit.slot_in, edit.slot_value);
      // Whatever computed the old value may now be dead; pruning checks that nothing else reads it.
      if (!edit.original.empty() && edit.default_kind != DefaultKind::kSelectOriginal) {
        edits.dropped_originals.insert(edit.original);
      }
      break;
    }
  }
  std::vector<Dim> shape = edit.shape;
  switch (edit.output_action) {
    case OutputAction::kKeep: return;
    case OutputAction::kReuseOutput: break;
    case OutputAction::kNameSlot: SetSlot(node.mutable_output(), edit.slot_out, edit.output); break;
    case OutputAction::kIdentity: edits.after[edit.node].push_back(MakeNode("Identity", {edit.final_value}, {edit.output})); break;
  }
  if (!HasOutput(graph, edit.output)) *graph.add_output() = TensorValueInfo(edit.output, edit.elem_type, shape);
}

/// Rebuilds the node list with the inserted nodes, moving (not copying) the existing NodeProtos.
void InsertNodes(onnx::GraphProto& graph, GraphEdits& edits) {
  if (edits.before.empty() && edits.after.empty()) return;
  auto* nodes = graph.mutable_node();
  std::vector<onnx::NodeProto*> old(nodes->size());
  for (int i = nodes->size() - 1; i >= 0; --i) old[i] = nodes->ReleaseLast();
  for (int i = 0; i < static_cast<int>(old.size()); ++i) {
    for (auto& inserted : edits.before[i]) *nodes->Add() = std::move(inserted);
    nodes->AddAllocated(old[i]);
    for (auto& inserted : edits.after[i]) *nodes->Add() = std::move(inserted);
  }
}

void CollectFreeNames(const onnx::GraphProto& graph, std::set<std::string>& out);

/// Names a node reads, including outer-scope references of its subgraphs.
std::vector<std::string> NodeReads(const onnx::NodeProto& node) {
  std::vector<std::string> reads(node.input().begin(), node.input().end());
  std::set<std::string> free;
  for (const auto& attribute : node.attribute()) {
    if (attribute.has_g()) CollectFreeNames(attribute.g(), free);
    for (const auto& sub : attribute.graphs()) CollectFreeNames(sub, free);
  }
  reads.insert(reads.end(), free.begin(), free.end());
  return reads;
}

void CollectFreeNames(const onnx::GraphProto& graph, std::set<std::string>& out) {
  std::set<std::string> defined;
  for (const auto& v : graph.input()) defined.insert(v.name());
  for (const auto& t : graph.initializer()) defined.insert(t.name());
  for (const auto& n : graph.node()) defined.insert(n.output().begin(), n.output().end());
  for (const auto& n : graph.node()) {
    for (const auto& name : NodeReads(n)) {
      if (!name.empty() && !defined.count(name)) out.insert(name);
    }
  }
  for (const auto& v : graph.output()) {
    if (!defined.count(v.name())) out.insert(v.name());
  }
}

/// Removes the nodes (and initializers) that computed a replaced initial state and are now unused.
/// Starts only from the replaced values, so dead code the model already had is left alone.
void PruneDropped(onnx::GraphProto& graph, const std::set<std::string>& dropped) {
  if (dropped.empty()) return;
  std::unordered_map<std::string, int> uses;
  std::unordered_map<std::string, int> producer;
  for (int n = 0; n < graph.node_size(); ++n) {
    for (const auto& name : NodeReads(graph.node(n))) ++uses[name];
    for (const auto& out : graph.node(n).output()) producer[out] = n;
  }
  for (const auto& v : graph.output()) ++uses[v.name()];
  std::set<std::string> inputs;
  for (const auto& v : graph.input()) inputs.insert(v.name());

  std::vector<std::string> work(dropped.begin(), dropped.end());
  std::set<int> removed;
  std::set<std::string> unused_initializers;
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    if (uses[name] > 0) continue;
    auto it = producer.find(name);
    if (it == producer.end()) {
      if (!inputs.count(name)) unused_initializers.insert(name);
      continue;
    }
    int n = it->second;
    const onnx::NodeProto& node = graph.node(n);
    bool all_unused = true;
    for (const auto& out : node.output()) all_unused &= out.empty() || uses[out] == 0;
    if (!all_unused || !removed.insert(n).second) continue;
    for (const auto& read : NodeReads(node)) {
      if (read.empty()) continue;
      --uses[read];
      work.push_back(read);
    }
  }
  auto* nodes = graph.mutable_node();
  for (auto it = removed.rbegin(); it != removed.rend(); ++it) nodes->DeleteSubrange(*it, 1);
  for (const auto& name : unused_initializers) {
    if (uses[name] == 0) RemoveInitializer(graph, name);
  }
}

}  // namespace

void ApplyPlan(const Plan& plan, onnx::ModelProto& model) {
  for (const auto& [where, name] : plan.node_names) {
    onnx::GraphProto* graph = ResolveGraph(model, where.first);
    if (graph == nullptr || where.second >= graph->node_size()) throw Error(ExitCode::kInternal, "plan does not fit the model");
    graph->mutable_node(where.second)->set_name(name);
  }
  std::map<GraphPath, GraphEdits> per_graph;
  std::set<int> broadcasts_done;
  for (const auto& edit : plan.edits) {
    onnx::GraphProto* graph = ResolveGraph(model, edit.graph);
    if (graph == nullptr || edit.node >= graph->node_size()) throw Error(ExitCode::kInternal, "plan does not fit the model");
    ApplyEdit(plan, edit, *graph, per_graph[edit.graph], broadcasts_done);
  }
  // Resolve every graph before changing any node list: paths are indices into the original model.
  std::vector<std::pair<onnx::GraphProto*, GraphEdits*>> targets;
  for (auto& [path, edits] : per_graph) targets.push_back({ResolveGraph(model, path), &edits});
  // Innermost graphs first, so that pruning a parent never frees a subgraph still to be edited.
  for (auto it = targets.rbegin(); it != targets.rend(); ++it) {
    auto& [graph, edits] = *it;
    InsertNodes(*graph, *edits);
    PruneDropped(*graph, edits->dropped_originals);
  }
  if (plan.metadata_changes) WriteStatePairs(model, plan.pairs);
}

}  // namespace rnnstate
