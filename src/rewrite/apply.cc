#include "rewrite/apply.h"

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "graph/control_flow.h"
#include "graph/graph_edit.h"
#include "graph/overloaded.h"
#include "graph/proto_access.h"
#include "rewrite/context_apply.h"
#include "rewrite/prune_dropped.h"
#include "rnnstate/error.h"

namespace rnnstate {

namespace {

/// A zero default of the plan: the planner keeps these under kMaxZeroDefaultBytes.
onnx::TensorProto ZeroDefault(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims) {
  const std::optional<uint64_t> bytes = DenseTensorBytes(elem_type, dims);
  if (bytes && *bytes > kMaxZeroDefaultBytes) {
    throw Error(ExitCode::kInternal, "the plan asks for a zero initializer '" + name + "' over the size limit");
  }
  return ZeroTensor(name, elem_type, dims);
}

void SetSlot(google::protobuf::RepeatedPtrField<std::string>* slots, int slot, const std::string& value) {
  while (slots->size() <= slot) slots->Add();
  *slots->Mutable(slot) = value;
}

/// Nodes to insert into one graph, keyed by the node they go before or after, plus the values whose
/// former producers may now be dead. Keyed by pointer: NodeProtos keep their address while the
/// node list is rebuilt, unlike indices.
struct GraphEdits {
  std::map<const onnx::NodeProto*, std::vector<onnx::NodeProto>> before, after;
  std::set<std::string> dropped_originals;
};

/// Per broadcast of the plan, the list of nodes its shape computation goes into (null once added).
using BroadcastPlaces = std::vector<std::vector<onnx::NodeProto>*>;

void AddBroadcastNodes(const BroadcastShapeNames& b, std::vector<onnx::NodeProto>& out) {
  out.push_back(MakeNode("Shape", {b.x}, {b.shape_of_x}));
  out.push_back(Int64ConstantNode(b.batch_index, {b.batch_axis}));
  onnx::NodeProto gather = MakeNode("Gather", {b.shape_of_x, b.batch_index}, {b.batch});
  SetIntAttribute(gather, "axis", 0);
  out.push_back(std::move(gather));
  std::vector<std::string> parts;
  for (const auto& [value, name] : b.fixed_dims) {
    out.push_back(Int64ConstantNode(name, {value}));
    parts.push_back(name);
  }
  parts.insert(parts.begin() + b.batch_position, b.batch);
  onnx::NodeProto concat = MakeNode("Concat", parts, {b.state_shape});
  SetIntAttribute(concat, "axis", 0);
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

/// Size(input) == 0 ? original : input  ──> selected.
void AddSelectNodes(const StateEdit& edit, const std::string& original, const SelectOriginalDefault& d,
                    const std::string& selected, std::vector<onnx::NodeProto>& out) {
  out.push_back(MakeNode("Size", {edit.input}, {d.size_value}));
  out.push_back(Int64ConstantNode(d.zero_value, {0}, /*scalar=*/true));
  out.push_back(MakeNode("Equal", {d.size_value, d.zero_value}, {d.is_empty_value}));
  onnx::NodeProto select = MakeNode("If", {d.is_empty_value}, {selected});
  onnx::ValueInfoProto type = TensorInfo(selected, edit.elem_type, edit.shape);
  SetIfBranches(select, IdentityBranch(d.then_value, original, d.then_value, type),
                IdentityBranch(d.else_value, edit.input, d.else_value, type));
  out.push_back(std::move(select));
}

onnx::GraphProto* Subgraph(onnx::NodeProto* node, const std::string& attribute) {
  if (onnx::GraphProto* graph = GraphAttribute(*node, attribute)) return graph;
  throw Error(ExitCode::kInternal, "plan refers to a missing subgraph '" + attribute + "'");
}

onnx::NodeProto* NodeIn(onnx::ModelProto& model, const GraphPath& path, int node) {
  onnx::GraphProto* graph = ResolveGraph(model, path);
  if (graph == nullptr || node < 0 || node >= graph->node_size()) {
    throw Error(ExitCode::kInternal, "plan does not fit the model");
  }
  return graph->mutable_node(node);
}

/// One threading step with its protos resolved.
struct ResolvedStep {
  const ThreadStep* step;
  ContainerKind kind;
  onnx::NodeProto* container;
  onnx::GraphProto* inner;  ///< the subgraph the state comes out of
  onnx::GraphProto* other;  ///< If: the other branch
};

/// An edit with every proto it touches resolved, before any node list changes.
struct ResolvedEdit {
  const StateEdit* edit;
  onnx::GraphProto* site_graph;
  onnx::NodeProto* site;
  onnx::GraphProto* default_graph;  ///< where the default's nodes go (NewInput only)
  onnx::NodeProto* default_anchor;  ///< ... right before this node (the site, or its container there)
  std::vector<ResolvedStep> steps;
};

/// The main graph's declared inputs by name and its output names, kept up to date as the edits add
/// to them: a pass over those lists for each edit would cost states x inputs.
class MainInterface {
 public:
  explicit MainInterface(onnx::GraphProto& main) : main_(main) {
    for (auto& input : *main.mutable_input()) inputs_[input.name()].push_back(&input);
    for (const auto& output : main.output()) outputs_.insert(output.name());
  }
  /// The inputs named `name`, in order (one in a valid model; none for a new name).
  const std::vector<onnx::ValueInfoProto*>& Inputs(const std::string& name) { return inputs_[name]; }
  /// Adds the input TensorInfo(name, elem_type, shape).
  void AddInput(const std::string& name, int32_t elem_type, const std::vector<Dim>& shape) {
    onnx::ValueInfoProto* added = main_.add_input();
    SetTensorInfo(*added, name, elem_type, shape);
    inputs_[name].push_back(added);
  }
  /// Adds the output TensorInfo(name, elem_type, shape) unless the graph has an output of its name.
  void AddOutputOnce(const std::string& name, int32_t elem_type, const std::vector<Dim>& shape) {
    if (outputs_.insert(name).second) SetTensorInfo(*main_.add_output(), name, elem_type, shape);
  }

 private:
  onnx::GraphProto& main_;
  std::unordered_map<std::string, std::vector<onnx::ValueInfoProto*>> inputs_;
  std::unordered_set<std::string> outputs_;
};

ResolvedEdit Resolve(onnx::ModelProto& model, int64_t onnx_opset, const StateEdit& edit) {
  const GraphPath& site_path = edit.site.graph;
  ResolvedEdit resolved{&edit, ResolveGraph(model, site_path), NodeIn(model, site_path, edit.site.node), nullptr,
                        nullptr, {}};
  if (const auto* input = std::get_if<NewInput>(&edit.input_edit)) {
    const GraphPath& at = input->default_graph;
    if (!Encloses(at, site_path)) throw Error(ExitCode::kInternal, "default placed outside the site's scope");
    const int anchor = at.size() == site_path.size() ? edit.site.node : site_path[at.size()].node;
    resolved.default_graph = ResolveGraph(model, at);
    resolved.default_anchor = NodeIn(model, at, anchor);
  }
  if (const auto* threaded = std::get_if<ThreadedOutput>(&edit.output_edit)) {
    for (const auto& step : threaded->steps) {
      onnx::NodeProto* container = NodeIn(model, step.level.graph, step.level.node);
      onnx::GraphProto* other = step.other_attribute.empty() ? nullptr : Subgraph(container, step.other_attribute);
      resolved.steps.push_back({&step, ContainerKindOf(*container, onnx_opset), container,
                                Subgraph(container, step.level.attribute), other});
    }
  }
  return resolved;
}

/// Adds the default of a new input: initializers go to the main graph, computations before the site.
void AddDefault(const Plan& plan, const StateEdit& edit, const NewInput& input, onnx::ModelProto& model,
                onnx::GraphProto& main, std::vector<onnx::NodeProto>& before_site, BroadcastPlaces& broadcasts) {
  std::visit(
      Overloaded{
          [](const NoDefault&) {},
          [&](const ZerosDefault& d) { *main.add_initializer() = ZeroDefault(edit.input, edit.elem_type, d.dims); },
          [&](const BroadcastZerosDefault& d) {
            *main.add_initializer() = ZeroDefault(edit.input, edit.elem_type, d.dims);
            const BroadcastShapeNames& b = plan.broadcasts.at(d.broadcast);
            // Once, with the first state that reads them, before the first of their readers' places.
            if (std::vector<onnx::NodeProto>* place = std::exchange(broadcasts.at(d.broadcast), nullptr)) {
              AddBroadcastNodes(b, *place);
            }
            before_site.push_back(MakeNode("Expand", {edit.input, b.state_shape}, {input.slot_value}));
          },
          [&](const InitializerDefault& d) {
            onnx::GraphProto* source = d.move ? &main : ResolveGraph(model, d.source);
            onnx::TensorProto* tensor = source ? FindInitializer(*source, edit.original) : nullptr;
            if (tensor == nullptr) {
              throw Error(ExitCode::kInternal, "plan refers to a missing initializer '" + edit.original + "'");
            }
            if (d.move) {
              tensor->set_name(edit.input);
              return;
            }
            onnx::TensorProto copy = *tensor;
            copy.set_name(edit.input);
            *main.add_initializer() = std::move(copy);
          },
          [&](const SelectOriginalDefault& d) {
            if (d.empty_default) *main.add_initializer() = ZeroDefault(edit.input, edit.elem_type, d.dims);
            AddSelectNodes(edit, edit.original, d, input.slot_value, before_site);
          },
      },
      input.default_value);
}

/// Threads the site's final state out to the main graph, one container at a time. Where a container
/// does not run the owner (an If's other branch, a Loop with zero iterations) the state passes
/// through: the effective initial state where it is visible, else the state input itself.
void ThreadOut(const ResolvedEdit& r, const ThreadedOutput& threaded) {
  const StateEdit& edit = *r.edit;
  // The planner threads only states it gives a new input: the effective state passes through where the
  // owner does not run.
  const auto* input = std::get_if<NewInput>(&edit.input_edit);
  if (input == nullptr) throw Error(ExitCode::kInternal, "the plan threads out a state without a new input");
  const onnx::ValueInfoProto type = TensorInfo("", edit.elem_type, edit.shape);
  std::string value = threaded.site_value;
  for (const auto& s : r.steps) {
    const ThreadStep& step = *s.step;
    const std::string& incoming = Encloses(input->default_graph, step.level.graph) ? input->slot_value : edit.input;
    ThreadedValue names{incoming, step.inner_value, step.carried_input, step.other_value, step.outer_value};
    AddThreadedValue(s.kind, *s.container, *s.inner, s.other, value, names, type);
    value = step.outer_value;
  }
}

/// The input's non-zero default moves to a new name; an If selects it when the fed tensor is empty, and
/// what read the input reads the selection. The selection goes first in the main graph: it reads only the
/// input and the default.
void PutDefaultBehindSelect(const StateEdit& edit, const DefaultBehindSelect& d, onnx::GraphProto& main,
                            MainInterface& interface, GraphEdits& main_edits) {
  onnx::TensorProto* tensor = FindInitializer(main, edit.input);
  if (tensor == nullptr || main.node_size() == 0) {
    throw Error(ExitCode::kInternal, "plan refers to a missing default '" + edit.input + "'");
  }
  RenameReads(main, edit.input, d.selected);
  tensor->set_name(d.default_name);
  if (d.keep_empty_default) *main.add_initializer() = ZeroDefault(edit.input, edit.elem_type, d.select.dims);
  for (onnx::ValueInfoProto* input : interface.Inputs(edit.input)) {
    SetTensorInfo(*input, edit.input, edit.elem_type, edit.shape);
  }
  AddSelectNodes(edit, d.default_name, d.select, d.selected, main_edits.before[main.mutable_node(0)]);
}

void ApplyEdit(const Plan& plan, const ResolvedEdit& r, onnx::ModelProto& model, MainInterface& interface,
               std::map<onnx::GraphProto*, GraphEdits>& per_graph, BroadcastPlaces& broadcasts) {
  const StateEdit& edit = *r.edit;
  onnx::GraphProto& main = *model.mutable_graph();
  GraphEdits& site_edits = per_graph[r.site_graph];
  std::visit(
      Overloaded{
          [](const KeepInput&) {},
          [](const ReuseInput&) {},
          [&](const DropDefault& drop) {
            RemoveInitializer(main, edit.input);
            for (onnx::ValueInfoProto* declared : interface.Inputs(edit.input)) {
              if (drop.redeclare) SetTensorInfo(*declared, edit.input, edit.elem_type, edit.shape);
            }
          },
          [&](const DefaultBehindSelect& d) { PutDefaultBehindSelect(edit, d, main, interface, per_graph[&main]); },
          [&](const NewInput& input) {
            interface.AddInput(edit.input, edit.elem_type, edit.shape);
            AddDefault(plan, edit, input, model, main, per_graph[r.default_graph].before[r.default_anchor], broadcasts);
            SetSlot(r.site->mutable_input(), edit.site.input_slot, input.slot_value);
            // Whatever computed the old value may now be dead; pruning checks that nothing else reads it.
            if (!edit.original.empty() && !std::holds_alternative<SelectOriginalDefault>(input.default_value)) {
              site_edits.dropped_originals.insert(edit.original);
            }
          },
      },
      edit.input_edit);
  const bool output_added = std::visit(
      Overloaded{
          [](const KeepOutput&) { return false; },
          [](const ReuseOutput&) { return true; },
          [&](const NameSlot&) {
            SetSlot(r.site->mutable_output(), edit.site.output_slot, edit.output);
            return true;
          },
          [&](const IdentityOutput&) {
            site_edits.after[r.site].push_back(MakeNode("Identity", {edit.final_value}, {edit.output}));
            return true;
          },
          [&](const ThreadedOutput& threaded) {
            if (edit.final_value.empty()) SetSlot(r.site->mutable_output(), edit.site.output_slot, threaded.site_value);
            ThreadOut(r, threaded);
            return true;
          },
      },
      edit.output_edit);
  const std::vector<Dim>& output_shape = edit.output_shape.empty() ? edit.shape : edit.output_shape;
  if (output_added) interface.AddOutputOnce(edit.output, edit.elem_type, output_shape);
}

/// Rebuilds the node list with the inserted nodes, moving (not copying) the existing NodeProtos.
void InsertNodes(onnx::GraphProto& graph, GraphEdits& edits) {
  if (edits.before.empty() && edits.after.empty()) return;
  const std::vector<onnx::NodeProto*> old = ReleaseNodes(graph);
  auto* nodes = graph.mutable_node();
  for (onnx::NodeProto* node : old) {
    if (auto it = edits.before.find(node); it != edits.before.end()) {
      for (auto& inserted : it->second) *nodes->Add() = std::move(inserted);
    }
    nodes->UnsafeArenaAddAllocated(node);
    if (auto it = edits.after.find(node); it != edits.after.end()) {
      for (auto& inserted : it->second) *nodes->Add() = std::move(inserted);
    }
  }
}

/// Names the unnamed batch dimensions of data inputs that state shapes refer to.
void NameInputDims(const Plan& plan, onnx::GraphProto& main) {
  for (const auto& [name, axis, param] : plan.input_dim_names) {
    for (auto& input : *main.mutable_input()) {
      if (input.name() != name || !input.type().tensor_type().has_shape()) continue;
      auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
      if (axis < shape->dim_size()) shape->mutable_dim(axis)->set_dim_param(param);
    }
  }
}

}  // namespace

void ApplyPlan(const Plan& plan, onnx::ModelProto& model) {
  // Resolve every proto first: paths are indices into the model as it was analyzed.
  std::vector<onnx::NodeProto*> renamed;
  for (const auto& [where, name] : plan.node_names) renamed.push_back(NodeIn(model, where.first, where.second));
  const int64_t onnx_opset = OnnxOpset(model);
  std::vector<ResolvedEdit> edits;
  for (const auto& edit : plan.edits) edits.push_back(Resolve(model, onnx_opset, edit));
  std::map<onnx::GraphProto*, GraphEdits> per_graph;
  BroadcastPlaces broadcasts;
  for (const auto& b : plan.broadcasts) {
    broadcasts.push_back(&per_graph[ResolveGraph(model, b.graph)].before[NodeIn(model, b.graph, b.anchor)]);
  }

  // Before any node moves: the readers of a context's value are planned by index.
  RedirectContextReaders(plan.contexts, model);
  for (size_t i = 0; i < renamed.size(); ++i) renamed[i]->set_name(plan.node_names[i].second);
  NameInputDims(plan, *model.mutable_graph());
  MainInterface interface(*model.mutable_graph());
  for (const auto& edit : edits) ApplyEdit(plan, edit, model, interface, per_graph, broadcasts);
  for (auto& [graph, graph_edits] : per_graph) InsertNodes(*graph, graph_edits);
  // The contexts' nodes before the pruning: a window's reader reads its context's Concat already, and its
  // value may be read by nothing else but a dropped default's computation (pruned with it otherwise).
  AddContextStates(plan.contexts, model);
  for (auto& [graph, graph_edits] : per_graph) PruneDropped(*graph, graph_edits.dropped_originals);
  RaiseIrForUndeclaredInitializers(model);
  if (plan.metadata_changes) WriteStatePairs(model, plan.pairs, plan.stream);
}

}  // namespace rnnstate
