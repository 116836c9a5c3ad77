#include "loops/time_source.h"

#include <algorithm>
#include <initializer_list>
#include <set>

#include "graph/control_flow.h"
#include "graph/proto_access.h"
#include "ops/axis_map.h"
#include "ops/op_semantics.h"
#include "values/constant_value.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

constexpr int kMaxSourceDepth = 32;

/// The rank of `name` when it is a constant of one element (see ConstantDims), or nullopt.
std::optional<int> OneElementRank(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const std::optional<std::vector<int64_t>> dims = ConstantDims(index, path, name);
  if (!dims) return std::nullopt;
  int64_t count = 1;
  for (int64_t d : *dims) count *= d;
  if (count != 1) return std::nullopt;
  return static_cast<int>(dims->size());
}

std::optional<TimeRef> Trace(const ModelIndex& index, const GraphPath& path, const std::string& name, int64_t axis,
                             int depth, std::vector<ViewOnTime>* views);

/// The input axis a Loop's scan output `slot` walks along axis 0: its body writes step i at iteration i,
/// so when every read at its iteration index (the iteration number, or a counter started at 0 stepping
/// by 1) is of the same input axis, that is the axis (tf2onnx's stacked Keras layers).
std::optional<TimeRef> ThroughLoop(const ModelIndex& index, const GraphPath& path, int node, int slot, int depth,
                                   std::vector<ViewOnTime>* views) {
  const onnx::NodeProto& loop_node = ResolveGraph(index.model(), path)->node(node);
  if (!IsScanOutput(ContainerKind::kLoop, loop_node, slot)) return std::nullopt;
  const std::optional<LoopAnatomy> loop = ReadLoop(index, path, node, CarrierSlots{});
  if (!loop || loop->kind != ContainerKind::kLoop) return std::nullopt;
  std::vector<IndexedRead> reads = loop->iteration.reads;
  for (const CarriedInfo& c : loop->carried) {
    if (c.role == CarriedRole::kCounter && c.start == 0 && c.step == 1)
      reads.insert(reads.end(), c.uses.reads.begin(), c.uses.reads.end());
  }
  std::optional<TimeRef> walked;
  for (const IndexedRead& read : reads) {
    const std::optional<TimeRef> time = Trace(index, path, read.data, read.axis, depth + 1, views);
    if (!time || (walked && *walked != *time)) return std::nullopt;
    walked = time;
  }
  return walked;
}

std::optional<TimeRef> Trace(const ModelIndex& index, const GraphPath& path, const std::string& name, int64_t axis,
                             int depth, std::vector<ViewOnTime>* views) {
  if (depth > kMaxSourceDepth || name.empty()) return std::nullopt;
  if (axis < 0) {
    const int rank = RankOf(index, path, name);
    if (rank < 0) return std::nullopt;
    axis += rank;
  }
  const ResolvedName at = index.Resolve(path, name);
  const bool input =
      at.producer.kind == Producer::Kind::kGraphInput || at.producer.kind == Producer::Kind::kDefaultedInput;
  if (input && at.graph.empty()) return TimeRef{name, axis};
  if (at.node == nullptr || at.node->input_size() == 0 || !IsOnnxDomain(at.node->domain())) return std::nullopt;
  const onnx::NodeProto& node = *at.node;
  if (IsOnnxOp(node, {"Loop"}) && axis == 0) {
    return ThroughLoop(index, at.graph, at.producer.index, at.producer.slot, depth, views);
  }
  // Ops that keep each step apart and move the axis at most: elementwise ops, Transpose, Squeeze,
  // Unsqueeze, and Reshapes that only move unit axes (tf2onnx writes a batch-1 transpose as one).
  if (IsElementwiseUnary(node) || IsClass(node, OpClass::kView)) {
    const std::optional<AxisOf> in = MapAxis(index, at.graph, node, AxisOf{axis, RankOf(index, at.graph, name)},
                                             AxisDirection::kBackward, AxisPort{0, at.producer.slot});
    if (!in) return std::nullopt;
    if (views != nullptr && IsOnnxOp(node, {"Reshape"}))
      views->push_back(ViewOnTime{at.graph, at.producer.index, axis});
    return Trace(index, at.graph, node.input(0), in->axis, depth + 1, views);
  }
  if (IsOnnxOp(node, {"Add", "Sub", "Mul", "Div"}) && node.input_size() == 2) {
    // One operand a one-element constant: every step is computed from the same step of the other. A
    // constant of higher rank ([1,1,1,1] times [seq,batch,3]) adds leading axes: the output's axis is the
    // other's axis plus the difference.
    for (int data = 0; data < 2; ++data) {
      const std::optional<int> constant_rank = OneElementRank(index, at.graph, node.input(1 - data));
      if (!constant_rank) continue;
      if (*constant_rank <= 1) return Trace(index, at.graph, node.input(data), axis, depth + 1, views);
      const int data_rank = RankOf(index, at.graph, node.input(data));
      if (data_rank < 0) return std::nullopt;
      const int64_t shift = std::max(0, *constant_rank - data_rank);
      if (axis < shift) return std::nullopt;  // an axis the constant adds
      return Trace(index, at.graph, node.input(data), axis - shift, depth + 1, views);
    }
  }
  return std::nullopt;
}

/// True when `name` is known to hold one element.
bool OneElement(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const std::optional<SymShape> shape = ShapeOf(index, path, name);
  return shape && std::all_of(shape->begin(), shape->end(), [](const SymDim& d) { return d.fixed() && d.value == 1; });
}

/// `name` followed back through casts and reshapes of a scalar, and ops that keep one element's value
/// (tf2onnx's `ReduceMax` of a length), across scopes.
ResolvedName Strip(const ModelIndex& index, const GraphPath& path, std::string name, std::string* stripped) {
  ResolvedName at = index.Resolve(path, name);
  for (int depth = 0; depth < kMaxSourceDepth; ++depth) {
    if (at.node == nullptr || at.node->input_size() == 0) break;
    const bool keeps =
        OnlyReshapes(*at.node) || (KeepsOneElement(*at.node) && OneElement(index, at.graph, at.node->input(0)));
    if (!keeps) break;
    name = at.node->input(0);
    at = index.Resolve(at.graph, name);
  }
  *stripped = name;
  return at;
}

/// The input axis whose length `name` is: Gather(Shape(v), c) along axis 0, with casts.
std::optional<TimeRef> LengthOf(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  std::string stripped;
  const ResolvedName at = Strip(index, path, name, &stripped);
  if (at.node == nullptr || !IsOnnxOp(*at.node, {"Gather"}) || at.node->input_size() != 2 ||
      AxisAttribute(*at.node, index.onnx_opset()) != 0) {
    return std::nullopt;
  }
  const ResolvedName shape = index.Resolve(at.graph, at.node->input(0));
  const std::optional<int64_t> position = ConstantScalar(index, at.graph, at.node->input(1));
  if (shape.node == nullptr || !IsOnnxOp(*shape.node, {"Shape"}) || !position || *position < 0) return std::nullopt;
  if (FindAttribute(*shape.node, "end") != nullptr) return std::nullopt;
  const int64_t start = IntAttribute(*shape.node, "start", 0);
  if (start < 0) return std::nullopt;
  return Trace(index, shape.graph, shape.node->input(0), start + *position, 0, nullptr);
}

}  // namespace

Trip ReadTrip(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  Trip trip;
  if (name.empty()) return trip;
  if (std::optional<TimeRef> time = LengthOf(index, path, name)) {
    trip.kind = Trip::Kind::kLength;
    trip.time = *time;
    return trip;
  }
  std::string stripped;
  const ResolvedName at = Strip(index, path, name, &stripped);
  trip.defined = ValueRef{at.graph, stripped};
  if (std::optional<int64_t> value = ConstantScalar(index, at.graph, stripped)) {
    trip.kind = Trip::Kind::kConstant;
    trip.constant = *value;
  } else if (at.graph.empty() &&
             (at.producer.kind == Producer::Kind::kGraphInput || at.producer.kind == Producer::Kind::kDefaultedInput)) {
    trip.kind = Trip::Kind::kInput;
  } else {
    trip.kind = Trip::Kind::kOther;
    trip.producer = at.node ? at.node->op_type() + " '" + at.node->name() + "'" : "'" + stripped + "'";
  }
  return trip;
}

namespace {

/// True when `bound` is the trip count's length again (for a constant trip count: the same number,
/// integer or floating point, recorded in `constants`).
bool IsTripBound(const ModelIndex& index, const GraphPath& path, const std::string& bound, const Trip& trip,
                 std::vector<ValueRef>* constants) {
  std::string stripped;
  const ResolvedName at = Strip(index, path, bound, &stripped);
  switch (trip.kind) {
    case Trip::Kind::kLength: {
      const std::optional<TimeRef> time = LengthOf(index, path, bound);
      return time && *time == trip.time;
    }
    case Trip::Kind::kConstant:
      if (ConstantNumber(index, at.graph, stripped) != static_cast<double>(trip.constant)) return false;
      constants->push_back(ValueRef{at.graph, stripped});
      return true;
    case Trip::Kind::kInput:
      return ValueRef{at.graph, stripped} == trip.defined;
    case Trip::Kind::kAbsent:
    case Trip::Kind::kOther:
      break;
  }
  return false;
}

/// The one BOOL of the constant `name` (a Constant node, or an initializer no caller can override), or
/// nullopt.
std::optional<bool> BoolConstant(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const std::optional<ConstantValue> constant = FindConstant(index, path, name);
  return constant ? OneBool(*constant) : std::nullopt;
}

/// `a < b` as (a, b) from Less(a, b) or Greater(b, a); false for other nodes.
bool LessThan(const ResolvedName& at, std::string* a, std::string* b) {
  if (at.node == nullptr || at.node->input_size() != 2) return false;
  if (IsOnnxOp(*at.node, {"Less"}))
    *a = at.node->input(0), *b = at.node->input(1);
  else if (IsOnnxOp(*at.node, {"Greater"}))
    *a = at.node->input(1), *b = at.node->input(0);
  else
    return false;
  return true;
}

/// The conjuncts of the condition `name`: `And(p, q)` split (through casts), the rest as they are.
void Conjuncts(const ModelIndex& index, const GraphPath& path, const std::string& name,
               std::vector<std::pair<std::string, ResolvedName>>* terms, int depth = 0) {
  std::string stripped;
  const ResolvedName at = Strip(index, path, name, &stripped);
  if (depth < kMaxSourceDepth && at.node != nullptr && IsOnnxOp(*at.node, {"And"}) && at.node->input_size() == 2) {
    Conjuncts(index, at.graph, at.node->input(0), terms, depth + 1);
    Conjuncts(index, at.graph, at.node->input(1), terms, depth + 1);
    return;
  }
  terms->emplace_back(stripped, at);
}

/// True when `a` (in the body), at iteration i, is i or i + 1: the iteration number, or a counter started
/// at 0 stepping by 1 before or after its step. `a < length` then holds until the last iteration.
bool CountsIterations(const ModelIndex& index, const LoopAnatomy& loop, const std::string& a) {
  std::string value;
  Strip(index, loop.body, a, &value);
  if (value == BodyIterationNumber(*ResolveGraph(index.model(), loop.body))) return true;
  for (const auto& c : loop.carried) {
    if (c.role == CarriedRole::kCounter && c.start == 0 && c.step == 1 &&
        (c.body_output == value || c.body_input == value)) {
      return true;
    }
  }
  return false;
}

}  // namespace

/// True when the Loop's condition never ends it before the trip count does: every conjunct of the body's
/// condition is the condition input, true, or `i (+ 1) < length` (tf2onnx: `And(Less(Cast(iter), 60.0),
/// Less(Cast(t + 1), 60.0))`), and every conjunct of the initial condition is true or `0 < length`.
/// Bounds that are constants are added to `constants`; the body's comparisons to `comparisons`.
bool CondEndsWithTrip(const ModelIndex& index, const LoopAnatomy& loop, const Trip& trip,
                      std::vector<ValueRef>* constants, std::vector<int>* comparisons) {
  const onnx::NodeProto& node = ResolveGraph(index.model(), loop.graph)->node(loop.node);
  const onnx::GraphProto& body = *ResolveGraph(index.model(), loop.body);
  if (!MalformedContainer(node, ContainerKind::kLoop).empty()) return false;  // ReadLoop reads well-formed ones
  std::vector<std::pair<std::string, ResolvedName>> terms;
  Conjuncts(index, loop.body, BodyConditionOutput(body), &terms);
  for (const auto& [value, at] : terms) {
    if (value == BodyConditionInput(body) || BoolConstant(index, loop.body, value) == true) continue;
    std::string a, b;
    if (!LessThan(at, &a, &b) || !CountsIterations(index, loop, a) ||
        !IsTripBound(index, loop.body, b, trip, constants))
      return false;
    if (comparisons != nullptr && at.graph == loop.body) comparisons->push_back(at.producer.index);
  }
  const std::string& initial = LoopInitialCondition(node);
  if (initial.empty()) return true;
  terms.clear();
  Conjuncts(index, loop.graph, initial, &terms);
  for (const auto& [value, at] : terms) {
    if (BoolConstant(index, loop.graph, value) == true) continue;
    std::string a, b;
    if (!LessThan(at, &a, &b) || ConstantNumber(index, at.graph, a) != 0.0 ||
        !IsTripBound(index, at.graph, b, trip, constants)) {
      return false;
    }
  }
  return true;
}

std::optional<TimeRef> TraceToInput(const ModelIndex& index, const GraphPath& path, const std::string& name,
                                    int64_t axis, std::vector<ViewOnTime>* views) {
  return Trace(index, path, name, axis, 0, views);
}

int64_t StaticLength(const ModelIndex& index, const TimeRef& time) {
  const onnx::TypeProto* type = index.TypeOf(GraphPath{}, time.input);
  if (type == nullptr || !type->has_tensor_type() || time.axis >= type->tensor_type().shape().dim_size()) return -1;
  const auto& dim = type->tensor_type().shape().dim(static_cast<int>(time.axis));
  return dim.has_dim_value() ? dim.dim_value() : -1;
}

}  // namespace rnnstate
