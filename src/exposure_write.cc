// TraceWrite (declared in exposure.h): from a state's final slot forward to the main-graph outputs that
// hold all of it, element for element.

#include <algorithm>
#include <set>
#include <tuple>

#include "exposure.h"
#include "proto_access.h"
#include "shape_eval.h"
#include "view_ops.h"

namespace rnnstate {

namespace {

constexpr size_t kMaxVisits = 512;

/// One value the final state has reached, with where its elements lie in it.
struct Reached {
  GraphPath path;
  std::string value;
  ElementMap map;
  std::vector<int32_t> types;  // element types on the way (Casts), for the lossless check
  SymShape shape;              // the value's shape, as far as the walk knows it (inference may not)
};

/// The map as text, so that a value reached with two maps (Concat(Y_h, Y_h)) is visited for each.
std::string MapKey(const ElementMap& map) {
  std::string key;
  for (size_t j = 0; j < map.rank(); ++j) {
    key += std::to_string(map.offset(j)) + ":";
    for (size_t a = 0; a < map.state().size(); ++a) key += std::to_string(map.coef(j, a)) + ",";
    key += ";";
  }
  return key;
}

class WriteWalk {
 public:
  WriteWalk(const ModelIndex& index, int32_t source_type) : index_(index), source_type_(source_type) {}

  WriteTrace Run(Reached start) {
    std::vector<Reached> pending{std::move(start)};
    std::set<std::tuple<GraphPath, std::string, std::string>> seen;  // a value reached with one map
    while (!pending.empty() && seen.size() < kMaxVisits) {
      Reached at = std::move(pending.back());
      pending.pop_back();
      if (!seen.insert({at.path, at.value, MapKey(at.map)}).second) continue;
      Visit(at, pending);
    }
    if (!trace_.places.empty()) trace_.broken.clear();
    return trace_;
  }

 private:
  void Stop(const std::string& why) {
    if (trace_.broken.empty()) trace_.broken = why;
  }

  void Visit(const Reached& at, std::vector<Reached>& pending) {
    const GraphIndex& graph_index = index_.graph(at.path);
    if (graph_index.outputs.count(at.value)) LeaveGraph(at, graph_index.outputs.at(at.value), pending);
    const onnx::GraphProto& graph = *ResolveGraph(index_.model(), at.path);
    for (const Consumer& use : graph_index.ConsumersOf(at.value)) {
      if (use.slot < 0) continue;  // read inside a subgraph: used, not written out
      const onnx::NodeProto& node = graph.node(use.node);
      Reached next = at;
      std::string why;
      next.shape = MergeShapes(ShapeOf(index_, at.path, at.value), at.shape);
      const int out = StepForward(at.path, node, use.slot, next, &why);
      if (out < 0) {
        if (!why.empty()) Stop(Where(node, use.node) + why);
        continue;
      }
      next.value = node.output(out);
      pending.push_back(std::move(next));
    }
  }

  /// A graph output: the state leaves the main graph, or an If branch through the If's output.
  void LeaveGraph(const Reached& at, int position, std::vector<Reached>& pending) {
    if (at.path.empty()) {
      if (!Lossless(at.types, source_type_) || !Represents(ElemType(index_, {}, at.value), source_type_)) {
        Stop("output '" + at.value + "' holds it through a Cast that loses precision");
        return;
      }
      trace_.places.push_back(ElementPlace{at.value, at.map});
      return;
    }
    const GraphPath parent(at.path.begin(), at.path.end() - 1);
    const onnx::NodeProto& container = ResolveGraph(index_.model(), parent)->node(at.path.back().node);
    if (!IsOnnxDomain(container.domain()) || container.op_type() != "If") {
      Stop("it leaves " + Where(container, at.path.back().node) + " as a carried value");
      return;
    }
    if (position >= container.output_size()) return;
    Reached next = at;
    next.path = parent;
    next.value = container.output(position);
    pending.push_back(std::move(next));
  }

  /// Moves `map` from `node`'s input `slot` to one of its outputs; returns that output, or -1 (with
  /// `why` set when the proof breaks rather than the value being used for something else).
  int StepForward(const GraphPath& path, const onnx::NodeProto& node, int slot, Reached& at, std::string* why) {
    if (!IsOnnxDomain(node.domain()) || node.output_size() == 0) return -1;
    ElementMap& map = at.map;
    std::vector<int32_t>& types = at.types;
    const std::optional<SymShape> in_shape = at.shape.empty() ? std::nullopt : std::optional<SymShape>(at.shape);
    const int out = StepMap(path, node, slot, map, types, in_shape, why);
    if (out >= 0) at.shape = OutputShape(path, node, slot, out, map, in_shape);
    return out;
  }

  /// The shape of `node`'s output `out` when the state's value came in at `slot` with `in_shape`: what
  /// inference says, completed by what the operator does to the shape.
  SymShape OutputShape(const GraphPath& path, const onnx::NodeProto& node, int slot, int out, const ElementMap& map,
                       const std::optional<SymShape>& in_shape) {
    const std::optional<SymShape> inferred = ShapeOf(index_, path, node.output(out));
    const std::string& op = node.op_type();
    std::optional<SymShape> derived;
    if ((op == "Identity" || op == "Cast" || op == "Dropout") && in_shape) derived = in_shape;
    if ((op == "Reshape" || op == "Expand") && node.input_size() > 1) {
      std::optional<SymShape> target = ShapeValue(index_, path, node.input(1));
      SymShape resolved;
      if (target && in_shape && op == "Reshape" &&
          ReshapeGroups(*in_shape, *target, IntAttribute(node, "allowzero", 0) != 0, &resolved)) {
        derived = resolved;
      } else if (op == "Expand") {
        derived = target;
      }
    }
    if (op == "ScatterND") derived = slot == 0 ? in_shape : ShapeOf(index_, path, node.input(0));
    if ((op == "Unsqueeze" || op == "Squeeze" || op == "Transpose") && in_shape) {
      // The map's rank is the output's; the input's dims move as the map's rows did.
      SymShape shape(map.rank(), SymDim{});
      if (op == "Transpose") {
        const onnx::AttributeProto* perm = FindAttribute(node, "perm");
        for (size_t i = 0; i < shape.size() && i < in_shape->size(); ++i) {
          shape[i] = (*in_shape)[perm ? perm->ints(i) : in_shape->size() - 1 - i];
        }
      } else if (std::optional<std::vector<int64_t>> axes = AxesOperand(index_, path, node)) {
        const int64_t rank = static_cast<int64_t>(op == "Unsqueeze" ? shape.size() : in_shape->size());
        std::vector<int64_t> listed = Normalized(*axes, rank);
        size_t from = 0;
        for (size_t i = 0, k = 0; i < (op == "Unsqueeze" ? shape.size() : in_shape->size()); ++i) {
          const bool is_listed = std::find(listed.begin(), listed.end(), static_cast<int64_t>(i)) != listed.end();
          if (op == "Unsqueeze") {
            shape[i] = is_listed ? SymDim{1, ""} : (from < in_shape->size() ? (*in_shape)[from++] : SymDim{});
          } else if (!is_listed && k < shape.size()) {
            shape[k++] = (*in_shape)[i];
          }
        }
      }
      derived = shape;
    }
    return MergeShapes(inferred, derived);
  }

  /// Moves `map` from `node`'s input `slot` to one of its outputs; returns that output, or -1.
  int StepMap(const GraphPath& path, const onnx::NodeProto& node, int slot, ElementMap& map,
              std::vector<int32_t>& types, const std::optional<SymShape>& in_shape, std::string* why) {
    const std::string& op = node.op_type();
    if (op == "Identity" || (op == "Dropout" && slot == 0)) return 0;
    if (op == "Cast") {
      types.push_back(ElemType(index_, path, node.output(0)));
      return 0;
    }
    if (slot != 0 && op != "Concat" && op != "ScatterND") return -1;
    if (op == "Unsqueeze") {
      std::optional<std::vector<int64_t>> axes = AxesOperand(index_, path, node);
      if (!axes) return -1;
      InsertUnitAxes(map, *axes);
      return 0;
    }
    if (op == "Squeeze") {
      std::optional<std::vector<int64_t>> axes = AxesOperand(index_, path, node);
      return axes && RemoveUnitAxes(map, *axes) ? 0 : -1;
    }
    if (op == "Transpose") {
      const onnx::AttributeProto* perm = FindAttribute(node, "perm");
      std::vector<int64_t> order;
      for (size_t i = 0; i < map.rank(); ++i) order.push_back(perm ? perm->ints(i) : int64_t(map.rank() - 1 - i));
      map.Permute(order);
      return 0;
    }
    if (op == "Reshape") {
      std::optional<SymShape> target = node.input_size() > 1 ? ShapeValue(index_, path, node.input(1)) : std::nullopt;
      std::optional<std::vector<ReshapeGroup>> groups;
      if (in_shape && target) groups = ReshapeGroups(*in_shape, *target, IntAttribute(node, "allowzero", 0) != 0);
      std::optional<SymShape> out_shape = ShapeOf(index_, path, node.output(0));
      SymShape out = target ? *target : SymShape{};
      if (out_shape && out_shape->size() == out.size()) out = *out_shape;
      if (!groups || !ApplyReshape(*groups, *in_shape, out, /*forward=*/true, map)) {
        *why = " reshapes it in a way that is not a split or merge of axes";
        return -1;
      }
      return 0;
    }
    if (op == "Expand") {
      std::optional<SymShape> target = node.input_size() > 1 ? ShapeValue(index_, path, node.input(1)) : std::nullopt;
      if (!in_shape || !target || !SameShape(*in_shape, *target)) {
        *why = " broadcasts it";
        return -1;
      }
      return 0;
    }
    if (op == "Concat") {
      int64_t axis = IntAttribute(node, "axis", 0);
      if (axis < 0) axis += static_cast<int64_t>(map.rank());
      std::optional<int64_t> offset = ConcatOffset(path, node, slot, static_cast<size_t>(axis), in_shape);
      if (!offset) {
        *why = " joins it after parts of unknown size";
        return -1;
      }
      map.Scale(static_cast<size_t>(axis), 1, *offset);
      return 0;
    }
    if (op == "Split" || op == "Slice") return Cut(path, node, map);
    if (op == "Gather") return GatherForward(path, node, map);
    if (op == "ScatterND") return ScatterForward(path, node, slot, map, why);
    return -1;
  }

  /// Where input `slot` of a Concat starts on `axis` (`own` is that input's shape): the sizes of the inputs
  /// before it. One input of unknown size (onnx infers no shapes for the outputs of RNN/GRU/LSTM-1, so a
  /// packed state at opset <= 6 has such parts) is the output's size less all the others'; nullopt when
  /// that does not decide it.
  std::optional<int64_t> ConcatOffset(const GraphPath& path, const onnx::NodeProto& node, int slot, size_t axis,
                                      const std::optional<SymShape>& own) {
    auto size_of = [&](int k) -> std::optional<int64_t> {
      const std::optional<SymShape> part = k == slot ? own : ShapeOf(index_, path, node.input(k));
      if (!part || part->size() <= axis || !(*part)[axis].fixed()) return std::nullopt;
      return (*part)[axis].value;
    };
    int64_t before = 0;
    std::optional<int> unknown;
    for (int k = 0; k < slot; ++k) {
      if (std::optional<int64_t> size = size_of(k)) {
        before += *size;
      } else if (unknown) {
        return std::nullopt;
      } else {
        unknown = k;
      }
    }
    if (!unknown) return before;
    const std::optional<SymShape> out = ShapeOf(index_, path, node.output(0));
    if (!out || out->size() <= axis || !(*out)[axis].fixed()) return std::nullopt;
    int64_t others = 0;
    for (int k = 0; k < node.input_size(); ++k) {
      if (k == *unknown) continue;
      std::optional<int64_t> size = size_of(k);
      if (!size) return std::nullopt;
      others += *size;
    }
    const int64_t missing = (*out)[axis].value - others;
    if (missing < 0) return std::nullopt;
    return before + missing;
  }

  /// Split and Slice pass the state on when it lies inside one piece (steps of 1).
  int Cut(const GraphPath& path, const onnx::NodeProto& node, ElementMap& map) {
    if (node.op_type() == "Slice") {
      std::optional<SliceSpec> spec = SliceOf(index_, path, node, map.rank());
      if (!spec) return -1;
      for (size_t k = 0; k < spec->axes.size(); ++k) {
        auto range = map.Range(static_cast<size_t>(spec->axes[k]));
        if (spec->steps[k] != 1 || spec->starts[k] < 0 || !range || range->first < spec->starts[k] ||
            (spec->ends[k] >= 0 && range->second >= spec->ends[k])) {
          return -1;
        }
        map.Scale(static_cast<size_t>(spec->axes[k]), 1, -spec->starts[k]);
      }
      return 0;
    }
    int64_t axis = IntAttribute(node, "axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(map.rank());
    auto range = map.Range(static_cast<size_t>(axis));
    int64_t offset = 0;
    for (int k = 0; k < node.output_size() && range; ++k) {
      std::optional<SymShape> part = ShapeOf(index_, path, node.output(k));
      if (!part || part->size() <= static_cast<size_t>(axis) || !(*part)[axis].fixed()) return -1;
      const int64_t size = (*part)[axis].value;
      if (range->first >= offset && range->second < offset + size) {
        map.Scale(static_cast<size_t>(axis), 1, -offset);
        return k;
      }
      offset += size;
    }
    return -1;
  }

  int GatherForward(const GraphPath& path, const onnx::NodeProto& node, ElementMap& map) {
    std::optional<std::vector<int64_t>> indices =
        node.input_size() > 1 ? IntValues(index_, path, node.input(1)) : std::nullopt;
    std::optional<SymShape> indices_shape = node.input_size() > 1 ? ShapeOf(index_, path, node.input(1)) : std::nullopt;
    int64_t axis = IntAttribute(node, "axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(map.rank());
    if (!indices || !indices_shape || indices_shape->size() > 1 || !map.IsConstant(static_cast<size_t>(axis))) {
      return -1;
    }
    const int64_t at = map.offset(static_cast<size_t>(axis));
    for (size_t k = 0; k < indices->size(); ++k) {
      if ((*indices)[k] != at) continue;
      map.RemoveFixed(static_cast<size_t>(axis), at);
      if (!indices_shape->empty()) map.InsertFixed(static_cast<size_t>(axis), static_cast<int64_t>(k));
      return 0;
    }
    return -1;
  }

  int ScatterForward(const GraphPath& path, const onnx::NodeProto& node, int slot, ElementMap& map, std::string* why) {
    std::optional<std::vector<std::vector<int64_t>>> rows =
        node.input_size() > 2 ? ScatterRows(index_, path, node.input(1)) : std::nullopt;
    if (!rows) {
      *why = " writes at indices that are not constants";
      return -1;
    }
    if (slot == 0) {  // the state is in the data: it survives where no row writes
      for (const auto& row : *rows) {
        if (RowOverlap(map, row) != Overlap::kApart) {
          *why = " overwrites it";
          return -1;
        }
      }
      return 0;
    }
    if (slot != 2 || map.rank() == 0 || !map.IsConstant(0)) return -1;
    const int64_t r = map.offset(0);
    if (r < 0 || static_cast<size_t>(r) >= rows->size()) return -1;
    map.RemoveFixed(0, r);
    for (size_t k = 0; k < (*rows)[r].size(); ++k) map.InsertFixed(k, (*rows)[r][k]);
    return 0;
  }

  const ModelIndex& index_;
  const int32_t source_type_;
  WriteTrace trace_;
};

}  // namespace

WriteTrace TraceValueWrite(const ModelIndex& index, const std::string& value, const SymShape& shape,
                           int32_t elem_type) {
  return WriteWalk(index, elem_type).Run(Reached{GraphPath{}, value, ElementMap::Identity(shape), {elem_type}, shape});
}

WriteTrace TraceWrite(const ModelIndex& index, const RecurrentState& state) {
  const onnx::NodeProto& owner = ResolveGraph(index.model(), state.owner.graph)->node(state.owner.node);
  if (state.final_slot >= owner.output_size() || owner.output(state.final_slot).empty()) {
    return WriteTrace{{}, "the final state is not produced"};
  }
  Reached start{state.owner.graph,
                owner.output(state.final_slot),
                ElementMap::Identity(StateShape(state)),
                {state.elem_type},
                StateShape(state)};
  return WriteWalk(index, state.elem_type).Run(std::move(start));
}

}  // namespace rnnstate
