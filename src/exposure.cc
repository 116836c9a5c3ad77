#include "exposure.h"

#include <algorithm>
#include <set>

#include "default_path.h"
#include "proto_access.h"
#include "recurrent_ops.h"
#include "shape_eval.h"
#include "view_ops.h"

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
  explicit ReadWalk(const ModelIndex& index, const std::map<std::string, size_t>* empty_inputs = nullptr)
      : index_(index), empty_inputs_(empty_inputs) {}

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
      if (producer.kind != Producer::Kind::kNode) return Fail("it is read from a constant ('" + value + "')");
      path = resolved.graph;
      const onnx::GraphProto& graph = *ResolveGraph(index_.model(), path);
      const onnx::NodeProto& node = graph.node(producer.index);
      if (IsOnnxDomain(node.domain()) && node.op_type() == "If") return ThroughIf(path, producer, map, types, depth);
      std::string why;
      const int slot = StepBack(path, node, producer.slot, map, types, &why);
      if (slot < 0) return Fail(Where(node, producer.index) + (why.empty() ? " is not a view of its input" : why));
      value = node.input(slot);
    }
    return Fail("the chain is too long");
  }

 private:
  static ReadTrace Fail(std::string why) { return ReadTrace{std::nullopt, std::move(why)}; }

  /// Both branches must read the same place (but one that runs only on an empty fed value, when asked).
  ReadTrace ThroughIf(const GraphPath& path, const Producer& producer, const ElementMap& map,
                      const std::vector<int32_t>& types, int depth) {
    const onnx::NodeProto& node = ResolveGraph(index_.model(), path)->node(producer.index);
    std::optional<ReadTrace> first;
    for (const char* branch : {"then_branch", "else_branch"}) {
      if (empty_inputs_ && RunsOnlyWhenEmpty(index_, path, producer.index, branch, *empty_inputs_)) continue;
      const onnx::GraphProto* body = GraphAttribute(node, branch);
      if (body == nullptr || producer.slot >= body->output_size())
        return Fail(Where(node, producer.index) + " is malformed");
      GraphPath inner = path;
      inner.push_back(GraphStep{producer.index, branch, -1});
      ReadTrace trace = From(inner, body->output(producer.slot).name(), map, types, depth + 1);
      if (!trace.place) return trace;
      if (first && (first->place->tensor != trace.place->tensor || !first->place->map.SamePlaces(trace.place->map))) {
        return Fail("the branches of " + Where(node, producer.index) + " read different places");
      }
      first = std::move(trace);
    }
    if (!first) return Fail(Where(node, producer.index) + " runs no branch for a fed value");
    return *first;
  }

  /// Moves `map` from `node`'s output `slot` to one of its inputs; returns that input, or -1.
  int StepBack(const GraphPath& path, const onnx::NodeProto& node, int slot, ElementMap& map,
               std::vector<int32_t>& types, std::string* why) {
    const std::string& op = node.op_type();
    if (!IsOnnxDomain(node.domain()) || node.input_size() == 0) return -1;
    const std::optional<SymShape> in_shape = ShapeOf(index_, path, node.input(0));
    if (op == "Identity" || (op == "Dropout" && slot == 0)) return 0;
    if (op == "Cast") {
      types.push_back(ElemType(index_, path, node.input(0)));
      return 0;
    }
    if (op == "Unsqueeze") {
      std::optional<std::vector<int64_t>> axes = AxesOperand(index_, path, node);
      return axes && RemoveUnitAxes(map, *axes) ? 0 : -1;
    }
    if (op == "Squeeze") {
      std::optional<std::vector<int64_t>> axes = AxesOperand(index_, path, node);
      if (!axes) return -1;  // without axes every unit axis goes: which ones needs the input's shape
      InsertUnitAxes(map, *axes);
      return 0;
    }
    if (op == "Transpose") {
      const onnx::AttributeProto* perm = FindAttribute(node, "perm");
      std::vector<int64_t> order;
      for (size_t i = 0; i < map.rank(); ++i) order.push_back(perm ? perm->ints(i) : int64_t(map.rank() - 1 - i));
      std::vector<int64_t> inverse(order.size());
      for (size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<int64_t>(i);
      map.Permute(inverse);
      return 0;
    }
    if (op == "Slice") {
      std::optional<SliceSpec> spec = SliceOf(index_, path, node, map.rank());
      if (!spec) return -1;
      for (size_t k = 0; k < spec->axes.size(); ++k) {
        const SymDim dim =
            in_shape && static_cast<size_t>(spec->axes[k]) < in_shape->size() ? (*in_shape)[spec->axes[k]] : SymDim{};
        int64_t start = spec->starts[k];
        if (start < 0) {
          if (!dim.fixed()) return -1;
          start += dim.value;
        }
        if (start < 0 || (dim.fixed() && start >= dim.value && spec->steps[k] > 0)) return -1;
        map.Scale(static_cast<size_t>(spec->axes[k]), spec->steps[k], start);
      }
      return 0;
    }
    if (op == "Gather") return GatherBack(path, node, map, in_shape, why);
    if (op == "Reshape") {
      std::optional<SymShape> target = node.input_size() > 1 ? ShapeValue(index_, path, node.input(1)) : std::nullopt;
      if (!in_shape || !target) return -1;
      auto groups = ReshapeGroups(*in_shape, *target, IntAttribute(node, "allowzero", 0) != 0);
      std::optional<SymShape> out_shape = ShapeOf(index_, path, node.output(0));
      if (!groups) {
        *why = " reshapes in a way that is not a split or merge of axes";
        return -1;
      }
      SymShape out = *target;  // resolved sizes per output axis come from the groups' static sizes
      if (out_shape && out_shape->size() == out.size()) out = *out_shape;
      if (!ApplyReshape(*groups, *in_shape, out, /*forward=*/false, map)) return -1;
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
    if (op == "Split") return SplitBack(path, node, slot, map) ? 0 : -1;
    if (op == "ScatterND") return ScatterBack(path, node, map, why);
    return -1;
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
    const int64_t rank = static_cast<int64_t>(map.rank()) + 1 - static_cast<int64_t>(indices_shape->size());
    int64_t axis = IntAttribute(node, "axis", 0);
    if (axis < 0) axis += rank;
    const SymDim dim = in_shape && static_cast<size_t>(axis) < in_shape->size() ? (*in_shape)[axis] : SymDim{};
    for (auto& i : *indices) {
      if (i < 0 && dim.fixed()) i += dim.value;
      if (i < 0) return -1;
    }
    if (indices_shape->empty()) {
      map.InsertFixed(static_cast<size_t>(axis), (*indices)[0]);
      return 0;
    }
    const int64_t step = indices->size() > 1 ? (*indices)[1] - (*indices)[0] : 1;
    for (size_t k = 1; k < indices->size(); ++k) {
      if ((*indices)[k] - (*indices)[k - 1] != step) return -1;  // not an arithmetic progression
    }
    map.Scale(static_cast<size_t>(axis), step, (*indices)[0]);
    return 0;
  }

  int ConcatBack(const GraphPath& path, const onnx::NodeProto& node, ElementMap& map, std::string* why) {
    int64_t axis = IntAttribute(node, "axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(map.rank());
    std::optional<std::pair<int64_t, int64_t>> range = map.Range(static_cast<size_t>(axis));
    if (!range) return -1;
    int64_t offset = 0;
    for (int k = 0; k < node.input_size(); ++k) {
      std::optional<SymShape> part = ShapeOf(index_, path, node.input(k));
      if (!part || part->size() <= static_cast<size_t>(axis) || !(*part)[axis].fixed()) {
        *why = " joins parts of unknown size";
        return -1;
      }
      const int64_t size = (*part)[axis].value;
      if (range->first >= offset && range->second < offset + size) {
        map.Scale(static_cast<size_t>(axis), 1, -offset);
        return k;
      }
      offset += size;
    }
    *why = " joins the state from several parts";
    return -1;
  }

  bool SplitBack(const GraphPath& path, const onnx::NodeProto& node, int slot, ElementMap& map) {
    int64_t axis = IntAttribute(node, "axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(map.rank());
    int64_t offset = 0;
    for (int k = 0; k < slot; ++k) {
      std::optional<SymShape> part = ShapeOf(index_, path, node.output(k));
      if (!part || part->size() <= static_cast<size_t>(axis) || !(*part)[axis].fixed()) return false;
      offset += (*part)[axis].value;
    }
    map.Scale(static_cast<size_t>(axis), 1, offset);
    return true;
  }

  int ScatterBack(const GraphPath& path, const onnx::NodeProto& node, ElementMap& map, std::string* why) {
    std::optional<std::vector<std::vector<int64_t>>> rows =
        node.input_size() > 2 ? ScatterRows(index_, path, node.input(1)) : std::nullopt;
    if (!rows) {
      *why = " writes at indices that are not constants";
      return -1;
    }
    for (size_t r = 0; r < rows->size(); ++r) {
      const Overlap overlap = RowOverlap(map, (*rows)[r]);
      if (overlap == Overlap::kPartly) return -1;
      if (overlap != Overlap::kInside) continue;
      // The state is read from what this row wrote: the updates, at row r.
      for (size_t k = (*rows)[r].size(); k-- > 0;) map.RemoveFixed(k, (*rows)[r][k]);
      map.InsertFixed(0, static_cast<int64_t>(r));
      return 2;
    }
    return 0;
  }

  const ModelIndex& index_;
  const std::map<std::string, size_t>* empty_inputs_;
};

}  // namespace

ReadTrace TraceValueRead(const ModelIndex& index, const std::string& value, const SymShape& shape, int32_t elem_type,
                         const std::map<std::string, size_t>& empty_inputs) {
  return ReadWalk(index, &empty_inputs).From(GraphPath{}, value, ElementMap::Identity(shape), {elem_type}, 0);
}

ReadTrace TraceRead(const ModelIndex& index, const RecurrentState& state) {
  const onnx::NodeProto& owner = ResolveGraph(index.model(), state.owner.graph)->node(state.owner.node);
  if (state.initial_slot >= owner.input_size() || owner.input(state.initial_slot).empty()) {
    return ReadTrace{std::nullopt, "the initial state is absent (zeros)"};
  }
  return ReadWalk(index).From(state.owner.graph, owner.input(state.initial_slot),
                              ElementMap::Identity(StateShape(state)), {state.elem_type}, 0);
}

}  // namespace rnnstate
