#include "rewrite/input_planner.h"

#include <algorithm>

#include "graph/control_flow.h"
#include "graph/node_builder.h"
#include "graph/proto_access.h"
#include "loops/axis_trace.h"
#include "values/constant_value.h"

namespace rnnstate {

namespace {

/// Opset that introduced Expand, needed to broadcast a zero default to a dynamic batch.

/// "hidden_size 64": the fixed axes of a state, for messages about its size.
std::string FixedAxesText(const RecurrentState& state) {
  std::string text;
  for (size_t i = 0; i < state.shape.size(); ++i) {
    if (static_cast<int>(i) == state.batch_axis || !state.shape[i].fixed() || state.shape[i].value <= 1) continue;
    text += (text.empty() ? "" : ", ") + state.axis_names[i] + " " + std::to_string(state.shape[i].value);
  }
  return text.empty() ? "its shape" : text;
}

bool HasZeroDim(const onnx::TensorProto& tensor) {
  for (auto d : tensor.dims()) {
    if (d == 0) return true;
  }
  return false;
}

/// True when `input` is read by the selection a rewrite adds (Size -> Equal -> If): an empty feed then
/// means the model's default.
bool SelectedWhenEmpty(const GraphIndex& main, const onnx::GraphProto& graph, const std::string& input) {
  for (const Consumer& size : main.ConsumersOf(input)) {
    if (size.slot < 0 || graph.node(size.node).op_type() != "Size") continue;
    for (const Consumer& equal : main.ConsumersOf(graph.node(size.node).output(0))) {
      if (equal.slot < 0 || graph.node(equal.node).op_type() != "Equal") continue;
      for (const Consumer& select : main.ConsumersOf(graph.node(equal.node).output(0))) {
        if (select.slot == 0 && graph.node(select.node).op_type() == "If") return true;
      }
    }
  }
  return false;
}

/// The dims of a zero default small enough to store as an initializer of the state's full shape (a fixed
/// batch, or a loop's state without a batch axis and of fixed shape), or nullopt: then the default is
/// broadcast to the batch of X, or selected by an If.
std::optional<std::vector<int64_t>> StorableZeros(const RecurrentState& state, int32_t elem_type) {
  if (state.batch_axis >= 0 && !state.shape[state.batch_axis].fixed()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : state.shape) {
    if (!d.fixed()) return std::nullopt;
    dims.push_back(d.value);
  }
  const std::optional<uint64_t> bytes = DenseTensorBytes(elem_type, dims);
  if (!bytes || *bytes > kMaxZeroDefaultBytes) return std::nullopt;
  return dims;
}

}  // namespace

std::vector<Dim> DeclaredShape(const RecurrentState& state, const Dim& batch, const std::string& unknown_batch) {
  std::vector<Dim> shape = state.shape;
  if (state.batch_axis >= 0) {
    Dim& dim = shape[state.batch_axis];
    if (batch.fixed() || !batch.param.empty()) dim = batch;
    if (!dim.fixed() && dim.param.empty()) dim.param = unknown_batch;
  }
  return shape;
}

InputPlanner::InputPlanner(const ModelIndex& index, const PlanOptions& options, NameAllocator& names, Plan& plan)
    : index_(index), options_(options), names_(names), dim_names_(index.used_dim_params()), plan_(plan),
      batch_roots_(index) {}

std::string InputPlanner::PlanUnexposed(const StateAnalysis& analyzed, const Dim& batch, const std::string& stem,
                                        const std::string& new_input, StateEdit& edit) {
  const RecurrentState& state = analyzed.state;
  const StateOrigin& origin = analyzed.origin;
  const bool required = options_.mode == StateInputMode::kRequired;
  // A batch no data input names (e.g. batch x frequency bins of a dual-path model) gets a name of its own:
  // the model's "batch" would claim it equals the data's.
  const bool batch_known = batch.fixed() || !batch.param.empty();
  edit.shape = DeclaredShape(state, batch, batch_known ? "" : UnknownBatchName(state));
  edit.optional = !required;
  edit.init = kInitZeros;

  bool is_input = origin.kind == StateOrigin::Kind::kGraphInput || origin.kind == StateOrigin::Kind::kDefaultedInput;
  if (is_input && analyzed.site.graph.empty() && origin.other_consumers == 0) {
    // Already fed by its own graph input: keep the user's name; its default is handled as an exposed one.
    // No input is declared; edit.shape (from the state) declares the output, which has its shape.
    edit.input = origin.value;
    PlanExposed(edit);
    if (std::holds_alternative<KeepInput>(edit.input_edit)) edit.input_edit = ReuseInput{};
    return "";
  }
  if (origin.kind == StateOrigin::Kind::kUndefined) return "its initial state '" + origin.value + "' is never defined";

  edit.input = new_input;
  stem_ = stem;
  NewInput input{NoDefault{}, edit.input, GraphPath{}};
  std::string reason;
  switch (origin.kind) {
    case StateOrigin::Kind::kInitializer:
      reason = PlanInitializerDefault(analyzed, edit, input);
      break;
    case StateOrigin::Kind::kAbsent:
    case StateOrigin::Kind::kComputed:
    case StateOrigin::Kind::kGraphInput:
    case StateOrigin::Kind::kDefaultedInput:
    case StateOrigin::Kind::kSubgraphInput:
      if (!origin.zero) {
        reason = PlanSelectOriginal(state, edit, input, false);
      } else if (!batch_known && state.batch_axis >= 0 && !edit.original.empty()) {
        // Zeros of a size no caller can know: an empty feed selects the model's own zeros (in both modes,
        // one interface), and the first feed is that empty tensor.
        reason = PlanSelectOriginal(state, edit, input, true);
        edit.init = kInitEmpty;
      } else if (!required) {
        reason = PlanZeroDefault(analyzed, edit, input);
      } else if (analyzed.site.carried && !edit.original.empty() && !StorableZeros(state, edit.elem_type)) {
        // Defaults mode selects the original zeros here (a carried site has no X to broadcast zeros to);
        // so does required mode, so that both routes give one interface and one first feed (zeros).
        reason = PlanSelectOriginal(state, edit, input, true);
      }
      break;
    case StateOrigin::Kind::kUndefined:
      reason = "unknown origin";
      break;
  }
  edit.input_edit = std::move(input);
  if (reason.empty()) reason = ScanStateProblem(analyzed, edit);
  return reason;
}

void InputPlanner::PlanExposed(StateEdit& edit) {
  const bool required = options_.mode == StateInputMode::kRequired;
  const GraphIndex& main = index_.graph(GraphPath{});
  const onnx::GraphProto& graph = index_.model().graph();
  edit.input_edit = KeepInput{};
  auto initializer = main.initializers.find(edit.input);
  if (initializer == main.initializers.end()) {
    edit.optional = false;
    if (edit.init.empty()) edit.init = SelectedWhenEmpty(main, graph, edit.input) ? kInitEmpty : kInitZeros;
    return;
  }
  const onnx::TensorProto& tensor = graph.initializer(initializer->second);
  edit.optional = !required;
  if (HasZeroDim(tensor) || KnownAllZero(tensor)) {
    // An empty default (the selection is there) or zeros: dropping it loses nothing. A selection of
    // original zeros keeps the first feed its pair records (zeros).
    if (!HasZeroDim(tensor)) {
      edit.init = kInitZeros;
    } else if (edit.init.empty()) {
      edit.init = kInitEmpty;
    }
    if (required) edit.input_edit = DropDefault{};
    return;
  }
  // A non-zero default (a learned initial state): kept, and selected when the fed tensor is empty.
  edit.init = kInitEmpty;
  DefaultBehindSelect behind;
  behind.default_name = names_.Allocate(edit.input + ".default");
  behind.selected = names_.Allocate(edit.input + ".selected");
  std::vector<int64_t> empty(tensor.dims().begin(), tensor.dims().end());
  const int batch_axis = static_cast<int>(edit.batch_axis);  // the input tensor's own batch axis
  if (batch_axis >= 0 && batch_axis < static_cast<int>(empty.size())) empty[batch_axis] = 0;
  behind.select = SelectNames(edit.input, empty);
  behind.keep_empty_default = !required;
  edit.shape.clear();
  for (int i = 0; i < tensor.dims_size(); ++i) {
    edit.shape.push_back(i == batch_axis ? Dim{-1, "batch"} : Dim{tensor.dims(i), ""});
  }
  edit.input_edit = std::move(behind);
}

/// An initializer: zeros stay the input's default as they are; other values are selected when the
/// input is empty. It must have the state's shape.
std::string InputPlanner::PlanInitializerDefault(const StateAnalysis& analyzed, StateEdit& edit, NewInput& input) {
  const StateOrigin& origin = analyzed.origin;
  const GraphIndex& graph = index_.graph(origin.value_graph);
  const onnx::TensorProto& tensor =
      ResolveGraph(index_.model(), origin.value_graph)->initializer(graph.initializers.at(origin.value));
  const std::vector<Dim>& expected = analyzed.state.shape;
  bool fits = tensor.dims_size() == static_cast<int>(expected.size());
  for (int i = 0; fits && i < tensor.dims_size(); ++i) {
    fits = tensor.dims(i) >= 0 && (!expected[i].fixed() || expected[i].value == tensor.dims(i));
  }
  // onnx checks neither for an operator it has no schema for (com.microsoft): the input is declared with
  // the state's type, so its default must have it too.
  if (tensor.data_type() != edit.elem_type) {
    return "initializer '" + origin.value + "' has element type " + DataTypeName(tensor.data_type()) +
           ", not the state's " + DataTypeName(edit.elem_type);
  }
  if (!fits) {
    std::string dims;
    for (auto d : tensor.dims()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    return "initializer '" + origin.value + "' has shape [" + dims + "], not the state shape " + ShapeText(expected);
  }
  if (!KnownAllZero(tensor)) return PlanSelectOriginal(analyzed.state, edit, input, false);
  edit.shape.clear();
  for (auto d : tensor.dims()) edit.shape.push_back(Dim{d, ""});
  if (options_.mode == StateInputMode::kRequired) return "";
  InitializerDefault initializer;
  initializer.move = analyzed.site.graph.empty() && origin.value_graph.empty() && origin.other_consumers == 0;
  initializer.source = origin.value_graph;
  initializer.dims.assign(tensor.dims().begin(), tensor.dims().end());
  input.default_value = std::move(initializer);
  return "";
}

std::string InputPlanner::PlanZeroDefault(const StateAnalysis& analyzed, StateEdit& edit, NewInput& input) {
  const RecurrentState& state = analyzed.state;
  // Only a state's types have a size here; any other would be misreported as too large below.
  if (StateElementSize(edit.elem_type) == 0) {
    return "state element type " + DataTypeName(edit.elem_type) + " is not a numeric or bool type (no zero default)";
  }
  std::vector<Dim> shape = state.shape;
  const int batch_axis = state.batch_axis;
  if (batch_axis < 0 || state.shape[batch_axis].fixed()) {
    if (std::optional<std::vector<int64_t>> dims = StorableZeros(state, edit.elem_type)) {
      input.default_value = ZerosDefault{*dims};
      return "";
    }
    // Without a batch axis (a loop's state) there is no X to broadcast to: select the original zeros.
    if (batch_axis < 0) return PlanSelectOriginal(state, edit, input, true);
    // Too large to store: broadcast [D,1,H] zeros to the batch of X, as for a dynamic batch. The
    // input's batch is then declared symbolic ([D,1,H] must be a valid value of it).
    const std::string name = UnknownBatchName(state);
    // The output keeps the fixed batch (as required mode declares it: both routes give one interface).
    edit.output_shape = edit.shape;
    edit.shape[batch_axis] = Dim{-1, name};
    shape[batch_axis] = Dim{-1, ""};
  }
  // A carried site has no X to take the batch from: select the original zeros instead.
  if (analyzed.site.carried) return PlanSelectOriginal(state, edit, input, true);
  if (index_.onnx_opset() < kExpandOpset) {
    return "a zero default broadcast to the batch needs Expand (opset 8); use --state-inputs required";
  }
  BroadcastZerosDefault broadcast;
  for (const auto& d : shape) broadcast.dims.push_back(d.fixed() ? d.value : 1);
  const std::optional<uint64_t> bytes = DenseTensorBytes(edit.elem_type, broadcast.dims);
  if (!bytes || *bytes > kMaxZeroDefaultBytes) {
    std::vector<Dim> dims;
    for (int64_t d : broadcast.dims) dims.push_back(Dim{d, ""});
    return FixedAxesText(state) + " makes even a " + ShapeText(dims) + " zero default over " +
           std::to_string(kMaxZeroDefaultBytes >> 20) + " MiB; use --state-inputs required";
  }
  broadcast.broadcast = BroadcastFor(state, edit.site, stem_);
  input.default_graph = plan_.broadcasts[broadcast.broadcast].graph;
  input.slot_value = names_.Allocate(edit.input + ".expanded");
  input.default_value = std::move(broadcast);
  return "";
}

std::string InputPlanner::PlanSelectOriginal(const RecurrentState& state, StateEdit& edit, NewInput& input,
                                             bool original_is_zeros) {
  if (edit.original.empty()) return "no original value to select";
  input.default_graph = index_.Resolve(edit.site.graph, edit.original).graph;
  // An empty tensor means "not fed": empty along the batch, or (a loop's state without one) axis 0. It
  // must be a valid feed: that axis is declared symbolic.
  if (state.shape.empty() || edit.shape.empty())
    return "a scalar state has no empty default; use --state-inputs required";
  const int empty_axis = state.batch_axis >= 0 ? state.batch_axis : 0;
  if (edit.shape[empty_axis].fixed()) edit.shape[empty_axis] = Dim{-1, state.batch_axis >= 0 ? "batch" : ""};
  std::vector<int64_t> empty;
  for (const auto& d : state.shape) empty.push_back(d.fixed() ? d.value : 0);
  empty[empty_axis] = 0;
  SelectOriginalDefault select = SelectNames(edit.input, empty);
  select.empty_default = options_.mode == StateInputMode::kDefaults;
  input.slot_value = names_.Allocate(edit.input + ".selected");
  input.default_value = std::move(select);
  // Zeros fed are the original zeros as well; runtimes that cannot feed an empty tensor (Triton's
  // initial_state) need that to be said.
  edit.init = original_is_zeros ? kInitZeros : kInitEmpty;
  return "";
}

SelectOriginalDefault InputPlanner::SelectNames(const std::string& input, const std::vector<int64_t>& empty_dims) {
  SelectOriginalDefault select;
  select.dims = empty_dims;
  select.size_value = names_.Allocate(input + ".size");
  select.zero_value = names_.Allocate(input + ".zero");
  select.is_empty_value = names_.Allocate(input + ".is_empty");
  select.then_value = names_.Allocate(input + ".original");
  select.else_value = names_.Allocate(input + ".fed");
  return select;
}

std::string InputPlanner::UnknownBatchName(const RecurrentState& state) {
  auto [name, fresh] = batch_params_.try_emplace({state.owner.graph, state.owner.node});
  if (fresh) name->second = dim_names_.Allocate("batch");
  return name->second;
}

AxisRoot InputPlanner::BatchRead(const RecurrentState& state) {
  // Where X is defined (often the main graph even for a node deep in an If or Loop), or the value up
  // X's chain of length-keeping operators there (the previous layers' input): states whose X differ
  // share the shape computation when their chains meet.
  AxisRoot read = batch_roots_.Find(state.owner.graph, state.batch_source.value, state.batch_source.axis);
  // X computed inside If branches (PyTorch's rank-test Ifs around an RNN's input): its batch read from the
  // data input it comes from, so that the default has its full shape wherever the state is threaded
  // (a branch that does not run passes the default on as the state's final value).
  const bool in_branches = std::all_of(read.graph.begin(), read.graph.end(),
                                       [](const GraphStep& step) { return IsIfBranch(step.attribute); });
  if (!read.graph.empty() && in_branches) {
    if (auto traced =
            TraceAxis(index_, state.owner.graph, state.batch_source.value, state.batch_source.axis, &Facts())) {
      return AxisRoot{GraphPath{}, traced->input, traced->axis};
    }
  }
  return read;
}

int InputPlanner::BroadcastFor(const RecurrentState& state, const StateSite& site, const std::string& stem) {
  std::vector<int64_t> other_dims;
  for (size_t i = 0; i < state.shape.size(); ++i) {
    if (static_cast<int>(i) != state.batch_axis) other_dims.push_back(state.shape[i].value);
  }
  const AxisRoot root = BatchRead(state);  // the nodes go to its graph
  auto key = std::make_tuple(root.graph, root.value, root.axis, state.batch_axis, other_dims);
  auto [it, fresh] = broadcasts_.try_emplace(key, static_cast<int>(plan_.broadcasts.size()));
  const std::pair<GraphPath, int> owner{state.owner.graph, state.owner.node};
  if (fresh) {
    // One owner's states read the batch of its own X; the root only once other owners share them.
    AxisRoot own{index_.Resolve(state.owner.graph, state.batch_source.value).graph, state.batch_source.value,
                 state.batch_source.axis};
    if (own.graph != root.graph) own = root;  // X in If branches: the data input traced
    BroadcastShapeNames b;
    b.graph = root.graph;
    b.x = own.value;
    b.batch_axis = own.axis;
    b.batch_position = state.batch_axis;
    b.shape_of_x = names_.Allocate(stem + ".x_shape");
    b.batch_index = names_.Allocate(stem + ".batch_axis");
    b.batch = names_.Allocate(stem + ".batch");
    for (size_t i = 0; i < state.shape.size(); ++i) {
      if (static_cast<int>(i) == state.batch_axis) continue;
      b.fixed_dims.emplace_back(state.shape[i].value, names_.Allocate(stem + "." + state.axis_names[i]));
    }
    b.state_shape = names_.Allocate(stem + ".state_shape");
    plan_.broadcasts.push_back(std::move(b));
    broadcast_owners_.push_back(owner);
  } else if (broadcast_owners_[it->second] != owner) {
    plan_.broadcasts[it->second].x = root.value;
    plan_.broadcasts[it->second].batch_axis = root.axis;
  }
  // The shared nodes go before the first of their readers' places in the graph: the site, or the
  // container holding it there.
  BroadcastShapeNames& b = plan_.broadcasts[it->second];
  if (Encloses(b.graph, site.graph)) {
    const int anchor = b.graph.size() == site.graph.size() ? site.node : site.graph[b.graph.size()].node;
    if (b.anchor < 0 || anchor < b.anchor) b.anchor = anchor;
  }
  return it->second;
}

const BranchFacts& InputPlanner::Facts() {
  if (!facts_) facts_ = BranchFacts::Find(index_);
  return *facts_;
}

/// A Scan carries its state variables with one fixed shape, so the state threaded out through a Scan
/// must start at its full shape. A default of another shape ([D,1,H] to broadcast, or empty to select
/// the original) is fine where the effective state is visible; when it is computed only inside the
/// Scan's body, the Scan would receive the raw default and ONNX Runtime rejects the run.
std::string InputPlanner::ScanStateProblem(const StateAnalysis& analyzed, const StateEdit& edit) const {
  const NewInput* input = std::get_if<NewInput>(&edit.input_edit);
  if (input == nullptr) return "";
  bool partial = std::holds_alternative<BroadcastZerosDefault>(input->default_value) ||
                 std::holds_alternative<SelectOriginalDefault>(input->default_value);
  for (const auto& level : analyzed.levels) {
    if (partial && level.kind == ContainerKind::kScan9 && !Encloses(input->default_graph, level.graph)) {
      if (!analyzed.origin.zero) {
        return "its default (the original, non-zero value) can only be computed inside the Scan body, and a Scan "
               "needs a state of fixed shape";
      }
      return "its default can only be computed inside the Scan body, and a Scan needs a state of fixed shape; "
             "use --state-inputs required (feed zeros on the first call)";
    }
  }
  return "";
}

}  // namespace rnnstate
