#include "rewrite/time_axis.h"

#include <algorithm>
#include <map>
#include <optional>

#include "graph/control_flow.h"
#include "graph/graph_edit.h"
#include "graph/naming.h"
#include "graph/proto_access.h"
#include "loops/carried_variables.h"
#include "loops/loop_streaming.h"
#include "ops/op_semantics.h"
#include "rnnstate/error.h"
#include "values/constant_value.h"

namespace rnnstate {

namespace {

/// How many casts of a length constant are followed to their users.
constexpr int kMaxCastChain = 4;

/// A Loop with a constant trip count equal to its time input's static length.
struct FixedLoop {
  int node = -1;  ///< in the main graph
  GraphPath graph;
  FixedTimeLoop fixed;
};

std::vector<FixedLoop> FixedLoops(const ModelIndex& index) {
  std::vector<FixedLoop> loops;
  for (const auto& [path, graph_index] : index.graphs()) {
    const onnx::GraphProto* graph = ResolveGraph(index.model(), path);
    for (int n = 0; graph != nullptr && n < graph->node_size(); ++n) {
      const std::optional<LoopAnatomy> loop = ReadLoop(index, path, n, CarrierSlots{});
      if (!loop || loop->kind != ContainerKind::kLoop) continue;
      LoopVerdict verdict = JudgeLoop(index, *loop);
      if (verdict.fixed) loops.push_back(FixedLoop{n, path, *verdict.fixed});
    }
  }
  return loops;
}

/// The element type of the constant `value` (a Constant node's or an initializer's), or 0. A Constant
/// written as value_ints is given no type here (as value_float(s) and value_string(s)).
int32_t ConstantType(const ModelIndex& index, const ValueRef& value) {
  using Form = ConstantValue::Form;
  const std::optional<ConstantValue> constant = FindConstant(index, value.graph, value.name);
  if (!constant || (constant->form != Form::kTensor && constant->form != Form::kInt)) return 0;
  return constant->elem_type;
}

/// "" when every use of `value` is a fixed Loop walking `time` (its trip count, its body's condition) or a
/// comparison (the condition before the loop), also through casts of it (tf2onnx compares floats: one
/// trip-count constant cast to the bound the loops' bodies read is one fact about the length, which the
/// fed length replaces everywhere it flows); else the other user, described.
std::string OtherUser(const ModelIndex& index, const ValueRef& value, const std::vector<FixedLoop>& loops,
                      int depth = 0) {
  const onnx::GraphProto& proto = *ResolveGraph(index.model(), value.graph);
  for (const Consumer& consumer : index.graph(value.graph).ConsumersOf(value.name)) {
    const onnx::NodeProto& node = proto.node(consumer.node);
    const bool loop = std::any_of(loops.begin(), loops.end(), [&](const FixedLoop& l) {
      return l.graph == value.graph && l.node == consumer.node && consumer.slot <= 0;
    });
    if (loop || IsOnnxOp(node, {"Less", "Greater", "LessOrEqual", "GreaterOrEqual"})) continue;
    const bool cast = IsOnnxOp(node, {"Cast", "Identity"}) && consumer.slot == 0 && node.output_size() == 1;
    if (cast && depth < kMaxCastChain) {
      if (std::string user = OtherUser(index, ValueRef{value.graph, node.output(0)}, loops, depth + 1); !user.empty()) {
        return user;
      }
      continue;
    }
    return DescribeNode(index.model(), value.graph, consumer.node);
  }
  return "";
}

/// The axis of main-graph value `name` along which a fixed Loop's scan outputs are concatenated, through
/// Identity, Cast, Transpose and ConcatFromSequence (new_axis 1); nullopt when it is not known.
std::optional<int> TimeAxisOf(const ModelIndex& index, const std::string& name, const std::vector<int>& loops,
                              int depth = 0) {
  const Producer producer = index.graph(GraphPath{}).ProducerOf(name);
  if (depth > 16 || producer.kind != Producer::Kind::kNode) return std::nullopt;
  const onnx::NodeProto& node = index.model().graph().node(producer.index);
  if (std::find(loops.begin(), loops.end(), producer.index) != loops.end()) {
    return IsScanOutput(ContainerKind::kLoop, node, producer.slot) ? std::optional<int>(0) : std::nullopt;
  }
  if (IsOnnxOp(node, {"Identity", "Cast"})) return TimeAxisOf(index, node.input(0), loops, depth + 1);
  if (IsOnnxOp(node, {"Transpose"})) {
    const std::optional<int> inner = TimeAxisOf(index, node.input(0), loops, depth + 1);
    const std::optional<std::vector<int64_t>> perm = PermAttribute(node);
    if (!inner || !perm) return std::nullopt;
    for (size_t i = 0; i < perm->size(); ++i) {
      if ((*perm)[i] == *inner) return static_cast<int>(i);
    }
    return std::nullopt;
  }
  if (IsOnnxOp(node, {"ConcatFromSequence"}) && IntAttribute(node, "new_axis", 0) == 1) {
    const Producer from = index.graph(GraphPath{}).ProducerOf(node.input(0));
    const bool collected =
        from.kind == Producer::Kind::kNode && std::find(loops.begin(), loops.end(), from.index) != loops.end();
    if (collected) return static_cast<int>(AxisAttribute(node, index.onnx_opset()));
  }
  return std::nullopt;
}

/// Plans the target `shape` with -1 at its length's position, appended to `edits`; returns why it cannot
/// be ("" when planned): a target another node reads, or one that already infers an axis.
std::string ShapeEdit(const ModelIndex& index, const LengthInShape& shape, std::vector<ShapeWithoutLength>* edits) {
  const onnx::GraphProto& proto = *ResolveGraph(index.model(), shape.value.graph);
  for (const Consumer& consumer : index.graph(shape.value.graph).ConsumersOf(shape.value.name)) {
    if (consumer.slot != 1 || !IsOnnxOp(proto.node(consumer.node), {"Reshape"})) {
      return "the Reshape target '" + shape.value.name + "' holding the length is also used by " +
             DescribeNode(index.model(), shape.value.graph, consumer.node);
    }
  }
  std::optional<std::vector<int64_t>> values = ConstantIntegers(index, shape.value.graph, shape.value.name);
  if (!values || std::count(values->begin(), values->end(), -1) != 0) {
    return "the Reshape target '" + shape.value.name + "' holding the length already infers an axis (-1)";
  }
  (*values)[static_cast<size_t>(shape.position)] = -1;
  edits->push_back(ShapeWithoutLength{shape.value, std::move(*values)});
  return "";
}

/// Plans one option; returns why it changes nothing ("" when `edit` is to be made, or when the axis is
/// already symbolic: `edit->constants` is then empty).
std::string PlanOne(const ModelIndex& index, const TimeAxisOption& option, const std::vector<FixedLoop>& all,
                    NameAllocator& names, NameAllocator& dim_names, TimeAxisEdit* edit) {
  const GraphIndex& main = index.graph(GraphPath{});
  const onnx::GraphProto& graph = index.model().graph();
  auto input = main.inputs.find(option.input);
  if (input == main.inputs.end() || main.initializers.count(option.input))
    return "no graph input '" + option.input + "'";
  const onnx::TypeProto& type = graph.input(input->second).type();
  const int rank =
      type.has_tensor_type() && type.tensor_type().has_shape() ? type.tensor_type().shape().dim_size() : -1;
  if (option.axis >= rank) return "'" + option.input + "' has no declared axis " + std::to_string(option.axis);
  const auto& dim = type.tensor_type().shape().dim(static_cast<int>(option.axis));
  if (!dim.has_dim_value()) return "";  // already symbolic: nothing to do
  edit->time = TimeRef{option.input, option.axis};
  edit->length = dim.dim_value();
  std::vector<FixedLoop> loops;
  for (const FixedLoop& loop : all) {
    if (loop.fixed.time == edit->time && loop.fixed.length == edit->length) loops.push_back(loop);
  }
  const FixedLengthEdits outside = FindFixedLength(index, edit->time, edit->length);
  if (!outside.refusal.empty()) return outside.refusal;
  std::vector<int> main_loops;
  for (const FixedLoop& loop : loops) {
    edit->loops.push_back(DescribeNode(index.model(), loop.graph, loop.node));
    if (loop.graph.empty()) main_loops.push_back(loop.node);
    for (const ValueRef& value : loop.fixed.constants) {
      if (std::any_of(edit->constants.begin(), edit->constants.end(),
                      [&](const LengthConstant& c) { return c.value == value; })) {
        continue;
      }
      if (std::string user = OtherUser(index, value, loops); !user.empty()) {
        return "constant '" + value.name + "' (" + std::to_string(edit->length) + ") is also used by " + user;
      }
      edit->constants.push_back(LengthConstant{value, ConstantType(index, value)});
    }
  }
  for (const FixedLoop& loop : loops) {
    for (const LengthInShape& shape : loop.fixed.shapes) {
      if (std::any_of(edit->shapes.begin(), edit->shapes.end(),
                      [&](const ShapeWithoutLength& s) { return s.value == shape.value; })) {
        continue;
      }
      if (std::string why = ShapeEdit(index, shape, &edit->shapes); !why.empty()) return why;
    }
  }
  for (const LengthInShape& shape : outside.shapes) {
    if (std::any_of(edit->shapes.begin(), edit->shapes.end(),
                    [&](const ShapeWithoutLength& s) { return s.value == shape.value; })) {
      continue;
    }
    if (std::string why = ShapeEdit(index, shape, &edit->shapes); !why.empty()) return why;
  }
  edit->slices = outside.slices;
  for (SliceToEnd& slice : edit->slices) slice.ends_name = names.Allocate(NodeStem(option.input) + ".time_axis.ends");
  edit->declared = outside.declared;
  for (int k = 0; k < graph.output_size(); ++k) {
    const std::optional<int> axis = TimeAxisOf(index, graph.output(k).name(), main_loops);
    const auto& output_type = graph.output(k).type();
    if (!axis || !output_type.has_tensor_type() || *axis >= output_type.tensor_type().shape().dim_size()) continue;
    if (output_type.tensor_type().shape().dim(*axis).dim_value() == edit->length) {
      edit->output_dims.push_back({graph.output(k).name(), *axis});
    }
  }
  const std::string stem = NodeStem(option.input) + ".time_axis";
  edit->dim_param = dim_names.Allocate(NodeStem(option.input) + "_time");
  edit->shape = names.Allocate(stem + ".shape");
  edit->axis = names.Allocate(stem + ".axis");
  edit->length_value = names.Allocate(stem + ".length");
  return "";
}

void SetDimParam(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* values, const std::string& name, int axis,
                 const std::string& param) {
  for (auto& value : *values) {
    if (value.name() != name) continue;
    auto* shape = value.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (axis < shape->dim_size()) shape->mutable_dim(axis)->set_dim_param(param);
  }
}

/// Sets axis `declared.axis` of the declared shape of `declared.value` to `param`, or unknown when empty.
void SetDeclared(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* values, const DeclaredLength& declared,
                 const std::string& param) {
  for (auto& value : *values) {
    if (value.name() != declared.value) continue;
    auto* shape = value.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (declared.axis >= shape->dim_size()) continue;
    auto* dim = shape->mutable_dim(declared.axis);
    dim->clear_dim_value();
    if (param.empty())
      dim->clear_dim_param();
    else
      dim->set_dim_param(param);
  }
}

/// The length, as the constant's type: Identity for int64, else Cast.
onnx::NodeProto LengthAs(const TimeAxisEdit& edit, const LengthConstant& constant, const std::string& node_name) {
  const bool int64 = constant.elem_type == onnx::TensorProto::INT64;
  onnx::NodeProto node = MakeNode(int64 ? "Identity" : "Cast", {edit.length_value}, {constant.value.name});
  if (!node_name.empty()) node.set_name(node_name);
  if (!int64) SetIntAttribute(node, "to", constant.elem_type);
  return node;
}

/// Writes the new values of a Reshape target: the initializer, or the Constant node, replaced in place.
void SetShape(onnx::ModelProto& model, const ShapeWithoutLength& shape) {
  onnx::GraphProto* graph = ResolveGraph(model, shape.value.graph);
  if (graph == nullptr) throw Error(ExitCode::kInternal, "--time-axis plan does not fit the model");
  if (onnx::TensorProto* tensor = FindInitializer(*graph, shape.value.name)) {
    onnx::TensorProto values;
    values.set_name(tensor->name());
    values.set_data_type(onnx::TensorProto::INT64);
    *values.mutable_dims() = tensor->dims();
    for (int64_t v : shape.values) values.add_int64_data(v);
    *tensor = std::move(values);
    return;
  }
  for (auto& node : *graph->mutable_node()) {
    if (node.output_size() == 1 && node.output(0) == shape.value.name) {
      const std::string name = node.name();
      node = Int64ConstantNode(shape.value.name, shape.values);
      node.set_name(name);
      return;
    }
  }
  throw Error(ExitCode::kInternal, "--time-axis plan does not fit the model");
}

}  // namespace

TimeAxisOption ParseTimeAxis(const std::string& text) {
  const size_t colon = text.rfind(':');
  const std::string axis = colon == std::string::npos ? "" : text.substr(colon + 1);
  const bool digits = !axis.empty() && axis.size() <= 9 &&
                      std::all_of(axis.begin(), axis.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (colon == 0 || !digits) {
    throw Error(ExitCode::kUsage, "--time-axis '" + text + "': expected INPUT:AXIS (e.g. x:1)");
  }
  return TimeAxisOption{text.substr(0, colon), std::stoll(axis)};
}

std::vector<std::string> TimeAxisPlan::Describe() const {
  std::vector<std::string> lines;
  for (const auto& edit : edits) {
    std::string loops;
    for (const auto& loop : edit.loops) loops += (loops.empty() ? "" : ", ") + loop;
    std::vector<std::string> parts;
    if (!edit.constants.empty()) {
      parts.push_back(std::to_string(edit.constants.size()) + " constant(s) become the fed length (" + loops + ")");
    }
    if (!edit.shapes.empty()) parts.push_back(std::to_string(edit.shapes.size()) + " Reshape target(s) infer it");
    if (!edit.slices.empty()) parts.push_back(std::to_string(edit.slices.size()) + " Slice(s) run to the end");
    if (!edit.declared.empty()) parts.push_back(std::to_string(edit.declared.size()) + " declared shape(s) follow");
    std::string what;
    for (const std::string& part : parts) what += (what.empty() ? "; " : ", ") + part;
    lines.push_back("--time-axis " + edit.time.Text() + ": length " + std::to_string(edit.length) + " -> '" +
                    edit.dim_param + "'" + what);
  }
  return lines;
}

TimeAxisPlan PlanTimeAxes(const ModelIndex& index, const std::vector<TimeAxisOption>& axes) {
  TimeAxisPlan plan;
  if (axes.empty()) return plan;
  const std::vector<FixedLoop> loops = FixedLoops(index);
  NameAllocator names = index.NewNames();
  NameAllocator dim_names(index.used_dim_params());
  for (const TimeAxisOption& option : axes) {
    TimeAxisEdit edit;
    const std::string why = PlanOne(index, option, loops, names, dim_names, &edit);
    const std::string text = option.input + ":" + std::to_string(option.axis);
    if (!why.empty()) {
      plan.warnings.push_back("--time-axis " + text + ": " + why + "; nothing changed for it");
      plan.refused.push_back(text);
    } else if (edit.length > 0) {
      const bool twice =
          std::any_of(plan.edits.begin(), plan.edits.end(), [&](const TimeAxisEdit& e) { return e.time == edit.time; });
      if (!twice) plan.edits.push_back(std::move(edit));
    }
  }
  return plan;
}

void ApplyTimeAxes(const TimeAxisPlan& plan, onnx::ModelProto& model) {
  onnx::GraphProto& main = *model.mutable_graph();
  std::map<onnx::GraphProto*, std::vector<onnx::NodeProto>> front;
  for (const TimeAxisEdit& edit : plan.edits) {
    SetDimParam(main.mutable_input(), edit.time.input, static_cast<int>(edit.time.axis), edit.dim_param);
    for (const auto& [output, axis] : edit.output_dims)
      SetDimParam(main.mutable_output(), output, axis, edit.dim_param);
    for (const DeclaredLength& declared : edit.declared) {
      SetDeclared(declared.output ? main.mutable_output() : main.mutable_value_info(), declared,
                  declared.symbolic ? edit.dim_param : "");
    }
    for (const SliceToEnd& slice : edit.slices) {
      onnx::GraphProto* graph = ResolveGraph(model, slice.graph);
      if (graph == nullptr || slice.node >= graph->node_size()) {
        throw Error(ExitCode::kInternal, "--time-axis plan does not fit the model");
      }
      graph->mutable_node(slice.node)->set_input(2, slice.ends_name);
      front[graph].push_back(Int64ConstantNode(slice.ends_name, slice.ends));
    }
    if (edit.constants.empty()) continue;  // no loop constant needs the fed length
    std::vector<onnx::NodeProto>& main_front = front[&main];
    main_front.push_back(MakeNode("Shape", {edit.time.input}, {edit.shape}));
    main_front.push_back(Int64ConstantNode(edit.axis, {edit.time.axis}, /*scalar=*/true));
    main_front.push_back(MakeNode("Gather", {edit.shape, edit.axis}, {edit.length_value}));
    for (const LengthConstant& constant : edit.constants) {
      onnx::GraphProto* graph = ResolveGraph(model, constant.value.graph);
      if (graph == nullptr) throw Error(ExitCode::kInternal, "--time-axis plan does not fit the model");
      auto node = std::find_if(graph->mutable_node()->begin(), graph->mutable_node()->end(), [&](const auto& n) {
        return n.output_size() == 1 && n.output(0) == constant.value.name;
      });
      if (node != graph->mutable_node()->end()) {
        *node = LengthAs(edit, constant, node->name());  // the Constant node, replaced in place
        continue;
      }
      RemoveInitializer(*graph, constant.value.name);
      front[graph].push_back(LengthAs(edit, constant, ""));
    }
  }
  for (const TimeAxisEdit& edit : plan.edits) {
    for (const ShapeWithoutLength& shape : edit.shapes) SetShape(model, shape);
  }
  for (auto& [graph, nodes] : front) SurroundNodes(*graph, std::move(nodes), {});
}

}  // namespace rnnstate
