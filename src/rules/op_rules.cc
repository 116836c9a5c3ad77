#include "rules/op_rules.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "graph/graph_path.h"
#include "graph/proto_access.h"

namespace rnnstate {

namespace {

std::string InputOrEmpty(const onnx::NodeProto& node, int slot) {
  return slot >= 0 && slot < node.input_size() ? node.input(slot) : std::string();
}

/// "a, b or c" (`last` "and": "a, b and c").
template <typename T, typename Text>
std::string ListText(const std::vector<T>& items, Text&& text, const char* last = " or ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    out += std::string(i == 0 ? "" : i + 1 == items.size() ? last : ", ") + text(items[i]);
  }
  return out;
}

/// Why attribute `a` is not of `type` ("" when it is). An attribute without a type breaks the IR (its
/// value cannot be read): that is said first.
std::string WrongAttributeType(const onnx::AttributeProto& a, onnx::AttributeProto::AttributeType type,
                               const char* what) {
  if (a.type() == onnx::AttributeProto::UNDEFINED) return "attribute '" + a.name() + "' has no type";
  if (a.type() == type) return "";
  return "attribute '" + a.name() + "' is not " + what;
}

/// True when the attribute's value is the calling function's (a function body's `ref_attr_name`): unknown here.
bool Referenced(const onnx::AttributeProto& a) { return !a.ref_attr_name().empty(); }

std::string InputRuleViolation(const onnx::NodeProto& node, const RecurrentOp& op) {
  int needed = 0;
  for (int slot : op.required_slots) needed = std::max(needed, slot + 1);
  if (node.input_size() < needed) {
    return "has " + std::to_string(node.input_size()) + " input" + (node.input_size() == 1 ? "" : "s") + ", but " +
           node.op_type() + " requires " +
           ListText(
               op.required_slots, [&](int slot) { return InputName(op, slot); }, " and ");
  }
  for (int slot : op.required_slots) {
    if (node.input(slot).empty()) return "required input " + InputName(op, slot) + " is empty";
  }
  return "";
}

std::string Lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

/// `activations`: names of the spec (ONNX Runtime reads them case-insensitively), as many as the operator
/// has functions per direction times the directions.
std::string ActivationRuleViolation(const onnx::NodeProto& node, const RecurrentOp& op, int directions) {
  const auto* a = FindAttribute(node, "activations");
  if (a == nullptr || Referenced(*a)) return "";
  if (auto wrong = WrongAttributeType(*a, onnx::AttributeProto::STRINGS, "a list of strings"); !wrong.empty()) {
    return wrong;
  }
  const auto& names = ActivationNames();
  for (const std::string& name : a->strings()) {
    if (std::none_of(names.begin(), names.end(), [&](std::string_view n) { return Lowercase(n) == Lowercase(name); })) {
      return "unknown activation '" + name + "' (" + node.op_type() + " takes " +
             ListText(names, [](std::string_view n) { return std::string(n); }) + ")";
    }
  }
  const int expected = op.activations_per_direction * directions;
  if (a->strings_size() != expected) {
    return "has " + std::to_string(a->strings_size()) + " activations, but a " +
           (directions == 2 ? "bidirectional " : "") + node.op_type() + " takes " + std::to_string(expected);
  }
  return "";
}

/// A float as messages print it: "-1", "0.5", "nan".
std::string FloatText(float value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

std::string AttributeRuleViolation(const onnx::NodeProto& node, const RecurrentOp& op, int64_t opset) {
  int directions = 1;
  if (const auto* a = FindAttribute(node, "direction"); a != nullptr && !Referenced(*a)) {
    if (auto wrong = WrongAttributeType(*a, onnx::AttributeProto::STRING, "a string"); !wrong.empty()) return wrong;
    if (std::find(op.directions.begin(), op.directions.end(), a->s()) == op.directions.end()) {
      return "unknown direction '" + a->s() + "' (" + node.op_type() + " takes " +
             ListText(op.directions, [](std::string_view d) { return std::string(d); }) + ")";
    }
    if (a->s() == "bidirectional") directions = 2;
  }
  if (const auto* a = FindAttribute(node, "hidden_size"); a != nullptr && !Referenced(*a)) {
    if (auto wrong = WrongAttributeType(*a, onnx::AttributeProto::INT, "an integer"); !wrong.empty()) return wrong;
    if (a->i() <= 0) return "hidden_size " + std::to_string(a->i()) + " is not positive";
  }
  // Every operator of the table has `clip`; ONNX Runtime refuses one that is not above 0 (NaN included).
  if (const auto* a = FindAttribute(node, "clip"); a != nullptr && !Referenced(*a)) {
    if (auto wrong = WrongAttributeType(*a, onnx::AttributeProto::FLOAT, "a float"); !wrong.empty()) return wrong;
    if (!(a->f() > 0.0f)) return "clip " + FloatText(a->f()) + " is not positive";
  }
  if (const auto* a = op.has_layout ? FindAttribute(node, "layout") : nullptr) {
    // The same text as an attribute onnx's schema does not have at that opset (schema_rules.h).
    if (opset > 0 && opset < op.layout_since) {
      return "attribute 'layout' is not defined by " + node.op_type() + " at ai.onnx opset " + std::to_string(opset) +
             " (only from opset " + std::to_string(op.layout_since) + ")";
    }
    if (auto wrong = WrongAttributeType(*a, onnx::AttributeProto::INT, "an integer"); !wrong.empty()) return wrong;
    if (!Referenced(*a) && a->i() != 0 && a->i() != 1) {
      return "unknown layout " + std::to_string(a->i()) + " (" + node.op_type() + " takes 0 or 1)";
    }
  }
  return ActivationRuleViolation(node, op, directions);
}

std::string TypeRuleViolation(const onnx::NodeProto& node, const RecurrentOp& op, const TypeLookup& type_of) {
  for (const SlotTypes& group : op.slot_types) {
    std::string bound;  // the first input of the group with a known element type, which binds the constraint
    int32_t bound_type = onnx::TensorProto::UNDEFINED;
    for (int slot : group.slots) {
      const std::string name = InputOrEmpty(node, slot);
      const onnx::TypeProto* type = name.empty() ? nullptr : type_of(name);
      if (type == nullptr || type->value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
      const std::string input = "input " + InputName(op, slot) + " '" + name + "'";
      if (!type->has_tensor_type()) return input + " is not a tensor";
      const int32_t elem_type = type->tensor_type().elem_type();
      if (elem_type == onnx::TensorProto::UNDEFINED) continue;
      if (std::find(group.types.begin(), group.types.end(), elem_type) == group.types.end()) {
        return input + " has element type " + DataTypeName(elem_type) + "; " + node.op_type() + " takes " +
               ListText(group.types, DataTypeName);
      }
      // One type constraint binds one type: ONNX Runtime refuses an initial_h of DOUBLE beside an X of FLOAT.
      if (bound_type == onnx::TensorProto::UNDEFINED) {
        bound = input;
        bound_type = elem_type;
      } else if (elem_type != bound_type) {
        return input + " has element type " + DataTypeName(elem_type) + ", but " + bound + " has " +
               DataTypeName(bound_type) + " (" + node.op_type() + " takes one element type for " +
               ListText(
                   group.slots, [&](int s) { return InputName(op, s); }, " and ") +
               ")";
      }
    }
  }
  return "";
}

/// The hidden size the shapes are judged by: the attribute, else what the analysis reads from the
/// weights' shapes (RecurrentOp::hidden_from), with the words that say where it came from.
struct HiddenSize {
  int64_t value = -1;
  std::string basis;  ///< "with hidden_size 5", "with hidden size 4 (read from R)"
};

/// A fixed dimension `axis` of `name`'s declared or inferred tensor shape, or -1.
int64_t FixedDim(const TypeLookup& type_of, const std::string& name, int axis) {
  const onnx::TypeProto* type = name.empty() ? nullptr : type_of(name);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) return -1;
  const auto& shape = type->tensor_type().shape();
  if (axis >= shape.dim_size() || !shape.dim(axis).has_dim_value()) return -1;
  return shape.dim(axis).dim_value();
}

HiddenSize HiddenSizeOf(const onnx::NodeProto& node, const RecurrentOp& op, const TypeLookup& type_of) {
  if (const auto* a = FindAttribute(node, "hidden_size"); a != nullptr && a->i() > 0) {
    return {a->i(), "with hidden_size " + std::to_string(a->i())};
  }
  for (const HiddenSizeSource& source : op.hidden_from) {
    const int64_t dim = FixedDim(type_of, InputOrEmpty(node, source.slot), source.axis);
    if (dim > 0 && dim % source.divisor == 0) {
      const int64_t hidden = dim / source.divisor;
      return {hidden, "with hidden size " + std::to_string(hidden) + " (read from " + InputName(op, source.slot) + ")"};
    }
  }
  return {};
}

/// The value `dim` requires, or -1 when it is free or the hidden size is unknown.
int64_t Required(const SpecDim& dim, int directions, int64_t hidden) {
  switch (dim.kind) {
    case SpecDim::Kind::kDirections:
      return directions;
    case SpecDim::Kind::kHidden:
      return hidden > 0 ? dim.multiple * hidden : -1;
    case SpecDim::Kind::kFree:
      return -1;
  }
  return -1;
}

std::string SpecText(const std::vector<SpecDim>& dims, int directions, int64_t hidden) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t value = Required(dims[i], directions, hidden);
    std::string text = value >= 0                             ? std::to_string(value)
                       : dims[i].kind == SpecDim::Kind::kFree ? std::string(dims[i].name)
                       : dims[i].multiple == 1                ? std::string("hidden_size")
                                                              : std::to_string(dims[i].multiple) + "*hidden_size";
    out += (i ? "," : "") + text;
  }
  return out + "]";
}

std::string ShapeRuleViolation(const onnx::NodeProto& node, const RecurrentOp& op, const TypeLookup& type_of) {
  const auto* direction = FindAttribute(node, "direction");
  const int directions = direction != nullptr && direction->s() == "bidirectional" ? 2 : 1;
  const auto* layout = op.has_layout ? FindAttribute(node, "layout") : nullptr;
  const bool batch_first = layout != nullptr && layout->i() == 1;
  const HiddenSize hidden = HiddenSizeOf(node, op, type_of);
  for (const SpecShape& spec : op.shapes) {
    const std::string name = InputOrEmpty(node, spec.slot);
    const onnx::TypeProto* type = name.empty() ? nullptr : type_of(name);
    if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) continue;
    const auto& shape = type->tensor_type().shape();
    std::vector<SpecDim> dims = spec.dims;
    if (spec.batch_first_with_layout && batch_first) std::swap(dims[0], dims[1]);
    bool breaks = shape.dim_size() != static_cast<int>(dims.size());
    for (int axis = 0; !breaks && axis < shape.dim_size(); ++axis) {
      const int64_t required = Required(dims[axis], directions, hidden.value);
      breaks = required >= 0 && shape.dim(axis).has_dim_value() && shape.dim(axis).dim_value() != required;
    }
    if (!breaks) continue;
    std::string who = std::string(directions == 2 ? "a bidirectional " : "") + node.op_type();
    if (hidden.value > 0) who += " " + hidden.basis;
    return "input " + InputName(op, spec.slot) + " '" + name + "' has shape " + ShapeText(shape) + ", but " + who +
           " takes " + SpecText(dims, directions, hidden.value);
  }
  return "";
}

}  // namespace

std::string OpRuleViolationWithoutTypes(const onnx::NodeProto& node, const RecurrentOp& op, int64_t opset) {
  if (std::string rule = InputRuleViolation(node, op); !rule.empty()) return rule;
  return AttributeRuleViolation(node, op, opset);
}

std::string OpRuleViolationOfTypes(const onnx::NodeProto& node, const RecurrentOp& op, const TypeLookup& type_of) {
  if (std::string rule = TypeRuleViolation(node, op, type_of); !rule.empty()) return rule;
  return ShapeRuleViolation(node, op, type_of);
}

std::string OpRuleViolation(const onnx::NodeProto& node, const RecurrentOp& op, int64_t opset,
                            const TypeLookup& type_of) {
  if (std::string rule = OpRuleViolationWithoutTypes(node, op, opset); !rule.empty()) return rule;
  return OpRuleViolationOfTypes(node, op, type_of);
}

int64_t OpsetOf(const onnx::ModelProto& model, const RecurrentOp& op) {
  for (const auto& import : model.opset_import()) {
    if (op.domain.empty() ? IsOnnxDomain(import.domain()) : import.domain() == op.domain) return import.version();
  }
  return 0;
}

std::string FirstOpRuleViolation(const ModelIndex& index) {
  for (const auto& [path, graph_index] : index.graphs()) {
    const onnx::GraphProto* graph = ResolveGraph(index.model(), path);
    if (graph == nullptr) continue;
    const TypeLookup type_of = [&index, &at = path](const std::string& name) { return index.TypeOf(at, name); };
    for (int n = 0; n < graph->node_size(); ++n) {
      const RecurrentOp* op = FindRecurrentOp(graph->node(n));
      if (op == nullptr) continue;
      if (std::string rule = OpRuleViolationOfTypes(graph->node(n), *op, type_of); !rule.empty()) {
        return GraphPathString(index.model(), path) + ": " + DescribeNode(index.model(), path, n) + ": " + rule;
      }
    }
  }
  return "";
}

}  // namespace rnnstate
