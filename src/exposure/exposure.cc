#include "exposure/exposure.h"

#include <algorithm>
#include <map>
#include <set>

#include "exposure/default_path.h"
#include "exposure/view_ops.h"
#include "graph/control_flow.h"
#include "graph/proto_access.h"
#include "ops/op_semantics.h"
#include "states/recurrent_ops.h"
#include "states/state_origin.h"
#include "values/reshape_groups.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

constexpr int kMaxSteps = 64;

}  // namespace

SymShape StateShape(const RecurrentState& state) {
  SymShape shape;
  for (const Dim& d : state.shape) shape.push_back(SymDim{d.value, d.fixed() ? "" : d.param});
  return shape;
}

// ---------------------------------------------------------------------------------------------------
// Reading: from the initial slot back to a main-graph input.

namespace {

class ReadWalk {
 public:
  /// `batch_axis`: the state's (-1: none); `empty_inputs` (name -> batch axis): inputs whose empty feed
  /// selects a default, whose If branches for that case are skipped (a packed value's unpacking).
  /// `facts`: If branches that cannot run (skipped), when known.
  ReadWalk(const ModelIndex& index, int batch_axis, const std::map<std::string, size_t>* empty_inputs = nullptr,
           const BranchFacts* facts = nullptr)
      : index_(index), empty_inputs_(empty_inputs), facts_(facts), batch_axis_(batch_axis) {}

  ReadTrace From(GraphPath path, std::string value, ElementMap map, std::vector<int32_t> types, int depth) {
    for (int step = 0; step < kMaxSteps && depth < 8; ++step) {
      const ResolvedName resolved = index_.Resolve(path, value);
      const Producer& producer = resolved.producer;
      const bool input =
          producer.kind == Producer::Kind::kGraphInput || producer.kind == Producer::Kind::kDefaultedInput;
      if (input && resolved.graph.empty()) {
        if (!Lossless(types, ElemType(index_, {}, value))) return Fail("a Cast on the way loses precision");
        return ReadTrace{ElementPlace{value, std::move(map)}, ""};
      }
      if (input) return Fail("it is read from an input of a loop body ('" + value + "')");
      // An initializer or a Constant node: no proof is broken, there is nothing to read.
      if (producer.kind != Producer::Kind::kNode || IsOnnxOp(*resolved.node, {"Constant"})) {
        return ReadTrace{std::nullopt, "it is read from a constant ('" + value + "')", true};
      }
      path = resolved.graph;
      const onnx::NodeProto& node = *resolved.node;
      if (ContainerKindOf(node, index_.onnx_opset()) == ContainerKind::kIf) {
        return ThroughIf(path, producer, map, types, depth);
      }
      std::string why;
      const int slot = StepBack(path, node, producer.slot, map, types, &why);
      if (slot < 0 || slot >= node.input_size()) {
        return Fail(Where(node, producer.index) + (why.empty() ? " is not a view of its input" : why));
      }
      value = node.input(slot);
    }
    return Fail("the chain is too long");
  }

 private:
  static ReadTrace Fail(std::string why) { return ReadTrace{std::nullopt, std::move(why), false}; }

  /// Both branches must read the same place; or one makes zeros and runs only when that place's tensor is
  /// empty (the authors' "empty means start from zeros", choosing only the initial value). A branch that
  /// runs only when one of `empty_inputs_` is fed empty is skipped, when they are given.
  ReadTrace ThroughIf(const GraphPath& path, const Producer& producer, const ElementMap& map,
                      const std::vector<int32_t>& types, int depth) {
    const onnx::NodeProto& node = ResolveGraph(index_.model(), path)->node(producer.index);
    std::optional<ReadTrace> read;
    std::string zeros;  // the branch that makes zeros, if one does
    const int position = BodyOutputOfNodeOutput(ContainerKind::kIf, producer.slot);
    for (const char* branch : kIfBranches) {
      if (empty_inputs_ && RunsOnlyWhenEmpty(index_, path, producer.index, branch, *empty_inputs_)) continue;
      if (facts_ && facts_->Excludes(index_, path, producer.index, branch)) continue;
      const onnx::GraphProto* body = GraphAttribute(node, branch);
      if (body == nullptr || position >= body->output_size()) return Fail(Where(node, producer.index) + " is malformed");
      GraphPath inner = path;
      inner.push_back(GraphStep{producer.index, branch, -1});
      const std::string& out = body->output(position).name();
      ReadTrace trace = From(inner, out, map, types, depth + 1);
      if (!trace.place) {
        if (!zeros.empty() || !IsProvablyZero(index_, inner, out)) return trace;
        zeros = branch;
        continue;
      }
      if (read && (read->place->tensor != trace.place->tensor || !read->place->map.SamePlaces(trace.place->map))) {
        return Fail("the branches of " + Where(node, producer.index) + " read different places");
      }
      read = std::move(trace);
    }
    if (!read) {
      return Fail(zeros.empty() ? Where(node, producer.index) + " runs no branch for a fed value"
                                : "both branches of " + Where(node, producer.index) + " make zeros");
    }
    if (!zeros.empty()) {
      const int axis = BatchAxisIn(read->place->map);
      std::map<std::string, size_t> inputs;
      if (axis >= 0) inputs[read->place->tensor] = static_cast<size_t>(axis);
      if (axis < 0 || !RunsOnlyWhenEmpty(index_, path, producer.index, zeros, inputs)) {
        return Fail("the " + zeros + " of " + Where(node, producer.index) + " makes zeros, but not exactly when '" +
                    read->place->tensor + "' is empty");
      }
    }
    return *read;
  }

  /// The axis of the tensor that holds the state's batch, or -1.
  int BatchAxisIn(const ElementMap& map) const {
    if (batch_axis_ < 0) return -1;
    for (size_t j = 0; j < map.rank(); ++j) {
      if (map.coef(j, static_cast<size_t>(batch_axis_)) == 1) return static_cast<int>(j);
    }
    return -1;
  }

  /// Moves `map` from `node`'s output `slot` to one of its inputs; returns that input, or -1 (with `why`
  /// saying what is not a view, when it is one of the view operators).
  int StepBack(const GraphPath& path, const onnx::NodeProto& node, int slot, ElementMap& map,
               std::vector<int32_t>& types, std::string* why) {
    const std::string& op = node.op_type();
    if (!IsOnnxDomain(node.domain()) || node.input_size() == 0) return -1;
    const std::optional<SymShape> in_shape = ShapeOf(index_, path, node.input(0));
    if (op == "Identity") return 0;
    for (int operand : {0, 1}) {
      if (AddsZero(index_, path, node, operand, map.rank())) return operand;
    }
    if (op == "Dropout" && slot == 0) {
      if (InferenceDropout(index_, path, node)) return 0;
      *why = " may drop elements (its training_mode is not a constant false)";
      return -1;
    }
    if (op == "Cast") {
      types.push_back(ElemType(index_, path, node.input(0)));
      return 0;
    }
    if (op == "Unsqueeze" || op == "Squeeze") {
      std::optional<std::vector<int64_t>> axes = AxesOperand(index_, path, node);
      if (!axes) {
        // Without axes a Squeeze removes every unit axis: which ones needs the input's shape.
        *why = " takes axes that are not constants";
        return -1;
      }
      if (op == "Unsqueeze" ? !RemoveUnitAxes(map, *axes) : !InsertUnitAxes(map, *axes)) {
        *why = op == "Unsqueeze" ? " adds axes that are out of range or not unit axes of the state"
                                 : " removes axes out of range";
        return -1;
      }
      return 0;
    }
    if (op == "Transpose") {
      std::optional<std::vector<int64_t>> order = PermOf(node, static_cast<int64_t>(map.rank()));
      if (!order) {
        *why = " has a perm that is not a permutation of the state's axes";
        return -1;
      }
      return map.Permute(InversePerm(*order)) ? 0 : -1;
    }
    if (op == "Slice") return SliceBack(path, node, map, in_shape, why);
    if (op == "Gather") return GatherBack(path, node, map, in_shape, why);
    if (op == "Reshape") {
      std::optional<SymShape> target = node.input_size() > 1 ? ShapeValue(index_, path, node.input(1)) : std::nullopt;
      std::optional<std::vector<ReshapeGroup>> groups;
      if (in_shape && target) groups = ReshapeGroups(*in_shape, *target, IntAttribute(node, "allowzero", 0) != 0);
      std::optional<SymShape> out_shape = ShapeOf(index_, path, node.output(0));
      SymShape out = target ? *target : SymShape{};  // resolved sizes per output axis come from the groups
      if (out_shape && out_shape->size() == out.size()) out = *out_shape;
      if (!groups || !ApplyReshape(*groups, *in_shape, out, /*forward=*/false, map)) {
        *why = " reshapes in a way that is not a split or merge of axes";
        return -1;
      }
      return 0;
    }
    if (op == "Expand") {
      std::optional<SymShape> target = node.input_size() > 1 ? ShapeValue(index_, path, node.input(1)) : std::nullopt;
      if (!in_shape || !target || !SameShape(*in_shape, *target)) {
        *why = " broadcasts its input";
        return -1;
      }
      return 0;
    }
    if (op == "Concat") return ConcatBack(path, node, map, why);
    if (op == "Split") return SplitBack(path, node, slot, map, why);
    if (op == "ScatterND") return ScatterBack(path, node, map, why);
    return -1;
  }

  int SliceBack(const GraphPath& path, const onnx::NodeProto& node, ElementMap& map,
                const std::optional<SymShape>& in_shape, std::string* why) {
    std::optional<SliceSpec> spec = SliceOf(index_, path, node, map.rank());
    if (!spec) {
      *why = " takes starts, ends, axes or steps that are not constants, out of range or a step 0";
      return -1;
    }
    ElementMap result = map;
    for (size_t k = 0; k < spec->axes.size(); ++k) {
      const auto axis = static_cast<size_t>(spec->axes[k]);
      const SymDim dim = in_shape && in_shape->size() == map.rank() ? (*in_shape)[axis] : SymDim{};
      std::optional<SliceAxis> resolved = ResolveSliceAxis(spec->starts[k], spec->ends[k], spec->steps[k], dim);
      if (!resolved) {
        *why = " counts from the end of an axis of unknown size";
        return -1;
      }
      // The state's elements are output indices [first, second] of the axis: all must be in the slice.
      // (An axis of unknown size, the batch, is whole or not: the region decides.)
      std::optional<std::pair<int64_t, int64_t>> range = result.Range(axis);
      if (range && (range->first < 0 || (resolved->limit && range->second >= *resolved->limit))) {
        *why = " yields fewer elements than the state has";
        return -1;
      }
      if (!result.Scale(axis, resolved->step, resolved->start)) return -1;
    }
    map = std::move(result);
    return 0;
  }

  int GatherBack(const GraphPath& path, const onnx::NodeProto& node, ElementMap& map,
                 const std::optional<SymShape>& in_shape, std::string* why) {
    std::optional<std::vector<int64_t>> indices =
        node.input_size() > 1 ? IntValues(index_, path, node.input(1)) : std::nullopt;
    std::optional<SymShape> indices_shape = node.input_size() > 1 ? ShapeOf(index_, path, node.input(1)) : std::nullopt;
    if (!indices || !indices_shape || indices_shape->size() > 1 || indices->empty()) {
      *why = " takes indices that are not constants";
      return -1;
    }
    // The data has the output's rank, less the indices' axes, plus the gathered axis.
    const size_t rank = map.rank() + 1 - indices_shape->size();
    std::optional<size_t> axis = AxisIndex(AxisAttribute(node, index_.onnx_opset()), rank);
    if (!axis) {
      *why = " gathers on an axis out of range";
      return -1;
    }
    const SymDim dim = in_shape && in_shape->size() == rank ? (*in_shape)[*axis] : SymDim{};
    for (auto& i : *indices) {
      if (dim.fixed() ? (i < -dim.value || i >= dim.value) : i < 0) {
        *why = " takes index " + std::to_string(i) + (dim.fixed() ? ", out of range" : " of an axis of unknown size");
        return -1;
      }
      if (i < 0) i += dim.value;
    }
    if (indices_shape->empty()) return map.InsertFixed(*axis, (*indices)[0]) ? 0 : -1;
    int64_t step = 1;
    if (indices->size() > 1 && __builtin_sub_overflow((*indices)[1], (*indices)[0], &step)) return -1;
    for (size_t k = 1; k < indices->size(); ++k) {
      if ((*indices)[k] - (*indices)[k - 1] != step) {  // both in [0, dim): no overflow
        *why = " takes indices that are not an arithmetic progression";
        return -1;
      }
    }
    std::optional<std::pair<int64_t, int64_t>> range = map.Range(*axis);
    if (!range || range->first < 0 || range->second >= static_cast<int64_t>(indices->size())) {
      *why = " yields fewer elements than the state has";
      return -1;
    }
    return map.Scale(*axis, step, (*indices)[0]) ? 0 : -1;
  }

  int ConcatBack(const GraphPath& path, const onnx::NodeProto& node, ElementMap& map, std::string* why) {
    std::optional<size_t> axis = AxisIndex(AxisAttribute(node, index_.onnx_opset()), map.rank());
    std::optional<std::pair<int64_t, int64_t>> range = axis ? map.Range(*axis) : std::nullopt;
    if (!range) {
      *why = axis ? " joins on an axis the state has no fixed size on" : " joins on an axis out of range";
      return -1;
    }
    int64_t offset = 0;
    for (int k = 0; k < node.input_size(); ++k) {
      std::optional<SymShape> part = ShapeOf(index_, path, node.input(k));
      if (!part || part->size() <= *axis || !(*part)[*axis].fixed()) {
        *why = " joins parts of unknown size";
        return -1;
      }
      const int64_t size = (*part)[*axis].value;
      if (range->first >= offset && range->second - offset < size) return map.Scale(*axis, 1, -offset) ? k : -1;
      if (__builtin_add_overflow(offset, size, &offset)) return -1;
    }
    *why = " joins the state from several parts";
    return -1;
  }

  int SplitBack(const GraphPath& path, const onnx::NodeProto& node, int slot, ElementMap& map, std::string* why) {
    std::optional<size_t> axis = AxisIndex(AxisAttribute(node, index_.onnx_opset()), map.rank());
    if (!axis) {
      *why = " splits on an axis out of range";
      return -1;
    }
    int64_t offset = 0;
    for (int k = 0; k < slot; ++k) {
      std::optional<SymShape> part = ShapeOf(index_, path, node.output(k));
      if (!part || part->size() <= *axis || !(*part)[*axis].fixed() ||
          __builtin_add_overflow(offset, (*part)[*axis].value, &offset)) {
        *why = " splits into parts of unknown size";
        return -1;
      }
    }
    return map.Scale(*axis, 1, offset) ? 0 : -1;
  }

  int ScatterBack(const GraphPath& path, const onnx::NodeProto& node, ElementMap& map, std::string* why) {
    const SymShape data = MergeShapes(ShapeOf(index_, path, node.input(0)), ShapeOf(index_, path, node.output(0)));
    std::optional<ScatterSpec> spec =
        ScatterOf(index_, path, node, data.size() == map.rank() ? std::optional<SymShape>(data) : std::nullopt, why);
    if (!spec) return -1;
    for (size_t r = 0; r < spec->rows.size(); ++r) {
      const std::vector<int64_t>& row = spec->rows[r];
      const Overlap overlap = RowOverlap(map, row);
      if (overlap == Overlap::kApart) continue;
      if (overlap == Overlap::kPartly) {
        *why = " writes part of it";
        return -1;
      }
      if (spec->reduction != "none") {
        *why = " combines the data with its updates there (reduction '" + spec->reduction + "'): not a copy";
        return -1;
      }
      if (spec->Duplicated(r)) {
        *why = " writes there twice (duplicate indices: ONNX leaves the result undefined)";
        return -1;
      }
      // The state is read from what this row wrote: the updates, at the row's position in the indices.
      ElementMap result = map;
      for (size_t k = row.size(); k-- > 0;) {
        if (!result.RemoveFixed(k, row[k])) return -1;
      }
      size_t rest = r;
      for (size_t i = spec->lead.size(); i-- > 0;) {
        const auto size = static_cast<size_t>(spec->lead[i]);
        if (!result.InsertFixed(0, static_cast<int64_t>(rest % size))) return -1;
        rest /= size;
      }
      map = std::move(result);
      return 2;
    }
    return 0;
  }

  const ModelIndex& index_;
  const std::map<std::string, size_t>* empty_inputs_;
  const BranchFacts* facts_;
  const int batch_axis_;
};

}  // namespace

ReadTrace TraceValueRead(const ModelIndex& index, const std::string& value, const SymShape& shape, int32_t elem_type,
                         const std::map<std::string, size_t>& empty_inputs) {
  return ReadWalk(index, /*batch_axis=*/-1, &empty_inputs)
      .From(GraphPath{}, value, ElementMap::Identity(shape), {elem_type}, 0);
}

ReadTrace TraceRead(const ModelIndex& index, const RecurrentState& state, const BranchFacts* facts) {
  const onnx::NodeProto& owner = ResolveGraph(index.model(), state.owner.graph)->node(state.owner.node);
  if (state.initial_slot >= owner.input_size() || owner.input(state.initial_slot).empty()) {
    return ReadTrace{std::nullopt, "the initial state is absent (zeros)", true};
  }
  return ReadWalk(index, state.batch_axis, nullptr, facts)
      .From(state.owner.graph, owner.input(state.initial_slot), ElementMap::Identity(StateShape(state)),
            {state.elem_type}, 0);
}

}  // namespace rnnstate
