// The structural mutations of structure_mutator.h. Each picks its target with `random` and edits the
// model in place; none tries to keep the model valid (the rules must refuse what is broken), only
// parseable, so that every mutant reaches the model rules and most reach the analysis.

#include "structure_mutator.h"

#include <algorithm>
#include <string>
#include <vector>

#include "ops/op_semantics.h"

namespace rnnstate::fuzz {

namespace {

/// A graph of the model and the graphs enclosing it (outermost first): the values it may read.
struct Scope {
  onnx::GraphProto* graph;
  std::vector<onnx::GraphProto*> enclosing;
};

void CollectGraphs(onnx::GraphProto* graph, std::vector<onnx::GraphProto*> enclosing, std::vector<Scope>* out) {
  out->push_back({graph, enclosing});
  enclosing.push_back(graph);
  for (auto& node : *graph->mutable_node()) {
    for (auto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) CollectGraphs(attribute.mutable_g(), enclosing, out);
      for (auto& g : *attribute.mutable_graphs()) CollectGraphs(&g, enclosing, out);
    }
  }
}

template <typename T>
T Pick(const std::vector<T>& items, std::minstd_rand& random) {
  return items[std::uniform_int_distribution<size_t>(0, items.size() - 1)(random)];
}

size_t Below(size_t n, std::minstd_rand& random) { return std::uniform_int_distribution<size_t>(0, n - 1)(random); }

bool OneIn(int n, std::minstd_rand& random) { return Below(n, random) == 0; }

Scope PickScope(onnx::ModelProto& model, std::minstd_rand& random) {
  std::vector<Scope> scopes;
  CollectGraphs(model.mutable_graph(), {}, &scopes);
  return Pick(scopes, random);
}

/// Every value name `scope` may read: its graphs' inputs, initializers and node outputs.
std::vector<std::string> NamesInScope(const Scope& scope) {
  std::vector<std::string> names;
  std::vector<onnx::GraphProto*> graphs = scope.enclosing;
  graphs.push_back(scope.graph);
  for (const onnx::GraphProto* graph : graphs) {
    for (const auto& input : graph->input()) names.push_back(input.name());
    for (const auto& initializer : graph->initializer()) names.push_back(initializer.name());
    for (const auto& node : graph->node()) names.insert(names.end(), node.output().begin(), node.output().end());
  }
  return names;
}

/// The operators a node may become: the table's, the recurrent ones, control flow and a few with their own
/// rules in the analysis.
const std::vector<std::string>& OpTypes() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> all = {"RNN",   "GRU",      "LSTM",     "If",       "Loop",    "Scan",
                                    "Constant", "Shape", "SequenceConstruct", "SequenceAt", "SplitToSequence",
                                    "SequenceEmpty", "Resize", "Einsum", "NoSuchOp"};
    for (const auto& row : AllOpSemantics()) all.emplace_back(row.op);
    return all;
  }();
  return ops;
}

int64_t AnInteger(std::minstd_rand& random) {
  static const std::vector<int64_t> special = {0, 1, 2, 3, -1, -2, 4, 64, 255, 256, 1 << 20, INT32_MAX, INT64_MAX,
                                               INT64_MIN, -(1LL << 40)};
  return OneIn(3, random) ? static_cast<int64_t>(random()) % 16 - 4 : Pick(special, random);
}

std::string FreshName(std::minstd_rand& random) { return "fz_" + std::to_string(random() % 100000); }

bool InsertNode(onnx::ModelProto& model, std::minstd_rand& random) {
  Scope scope = PickScope(model, random);
  std::vector<std::string> names = NamesInScope(scope);
  onnx::NodeProto node;
  node.set_op_type(Pick(OpTypes(), random));
  const size_t inputs = names.empty() ? 0 : Below(4, random);
  for (size_t i = 0; i < inputs; ++i) node.add_input(Pick(names, random));
  for (size_t i = 0, n = 1 + Below(3, random); i < n; ++i) node.add_output(FreshName(random));
  auto* nodes = scope.graph->mutable_node();
  nodes->Add(std::move(node));
  // Topological order is the rules' business: anywhere, often before its readers.
  for (size_t at = nodes->size() - 1, to = Below(nodes->size(), random); at > to; --at) nodes->SwapElements(at, at - 1);
  return true;
}

bool DeleteNode(onnx::ModelProto& model, std::minstd_rand& random) {
  Scope scope = PickScope(model, random);
  auto* nodes = scope.graph->mutable_node();
  if (nodes->empty()) return false;
  nodes->DeleteSubrange(static_cast<int>(Below(nodes->size(), random)), 1);
  return true;
}

bool DuplicateNode(onnx::ModelProto& model, std::minstd_rand& random) {
  Scope scope = PickScope(model, random);
  auto* nodes = scope.graph->mutable_node();
  if (nodes->empty()) return false;
  onnx::NodeProto copy = nodes->Get(static_cast<int>(Below(nodes->size(), random)));
  // Same outputs (two producers of a name) now and then; usually renamed.
  if (!OneIn(4, random)) {
    for (auto& output : *copy.mutable_output()) output += "_dup";
  }
  copy.set_name(copy.name() + "_dup");
  nodes->Add(std::move(copy));
  return true;
}

bool RewireInput(onnx::ModelProto& model, std::minstd_rand& random) {
  Scope scope = PickScope(model, random);
  auto* nodes = scope.graph->mutable_node();
  std::vector<std::string> names = NamesInScope(scope);
  if (nodes->empty() || names.empty()) return false;
  onnx::NodeProto& node = nodes->at(static_cast<int>(Below(nodes->size(), random)));
  if (node.input_size() == 0 || OneIn(5, random)) {
    node.add_input(OneIn(4, random) ? "" : Pick(names, random));  // an optional input given, or skipped
    return true;
  }
  std::string& input = *node.mutable_input(static_cast<int>(Below(node.input_size(), random)));
  input = OneIn(8, random) ? "" : OneIn(8, random) ? FreshName(random) : Pick(names, random);
  // Graph outputs too: a state leaving by another value.
  if (OneIn(3, random) && scope.graph->output_size() > 0) {
    scope.graph->mutable_output(static_cast<int>(Below(scope.graph->output_size(), random)))
        ->set_name(Pick(names, random));
  }
  return true;
}

bool SwapOpType(onnx::ModelProto& model, std::minstd_rand& random) {
  Scope scope = PickScope(model, random);
  auto* nodes = scope.graph->mutable_node();
  if (nodes->empty()) return false;
  onnx::NodeProto& node = nodes->at(static_cast<int>(Below(nodes->size(), random)));
  node.set_op_type(Pick(OpTypes(), random));
  if (OneIn(6, random)) node.set_domain(OneIn(2, random) ? "com.microsoft" : "");
  return true;
}

void MutateAttributeValue(onnx::AttributeProto& attribute, std::minstd_rand& random) {
  switch (Below(6, random)) {
    case 0:
      attribute.set_i(AnInteger(random));
      attribute.set_type(onnx::AttributeProto::INT);
      break;
    case 1:
      if (attribute.ints_size() > 0 && !OneIn(3, random)) {
        attribute.set_ints(static_cast<int>(Below(attribute.ints_size(), random)), AnInteger(random));
      } else if (attribute.ints_size() > 0 && OneIn(2, random)) {
        attribute.mutable_ints()->RemoveLast();
      } else {
        attribute.add_ints(AnInteger(random));
      }
      attribute.set_type(onnx::AttributeProto::INTS);
      break;
    case 2:
      attribute.set_f(OneIn(2, random) ? -attribute.f() : static_cast<float>(AnInteger(random)) / 3.0f);
      break;
    case 3:
      attribute.set_s(Pick(std::vector<std::string>{"forward", "reverse", "bidirectional", "", "Tanh", "Sigmoid",
                                                    "constant", "NOTSET"},
                           random));
      break;
    case 4:  // the right value in the wrong field, or no value at all
      attribute.set_type(static_cast<onnx::AttributeProto::AttributeType>(Below(15, random)));
      break;
    default:
      attribute.clear_ints();
      attribute.clear_i();
  }
}

bool MutateAttribute(onnx::ModelProto& model, std::minstd_rand& random) {
  Scope scope = PickScope(model, random);
  auto* nodes = scope.graph->mutable_node();
  if (nodes->empty()) return false;
  onnx::NodeProto& node = nodes->at(static_cast<int>(Below(nodes->size(), random)));
  auto* attributes = node.mutable_attribute();
  if (!attributes->empty() && OneIn(5, random)) {
    attributes->DeleteSubrange(static_cast<int>(Below(attributes->size(), random)), 1);
    return true;
  }
  if (attributes->empty() || OneIn(4, random)) {
    onnx::AttributeProto* added = attributes->Add();
    added->set_name(Pick(std::vector<std::string>{"axis", "axes", "perm", "hidden_size", "direction", "layout",
                                                  "keepdims", "num_scan_inputs", "scan_input_axes",
                                                  "scan_output_axes", "pads", "kernel_shape", "strides",
                                                  "dilations", "auto_pad", "group", "starts", "ends", "to"},
                         random));
    MutateAttributeValue(*added, random);
    return true;
  }
  MutateAttributeValue(attributes->at(static_cast<int>(Below(attributes->size(), random))), random);
  return true;
}

void MutateShape(onnx::TypeProto* type, std::minstd_rand& random) {
  if (type->has_sequence_type() && OneIn(2, random)) type = type->mutable_sequence_type()->mutable_elem_type();
  if (OneIn(8, random)) {  // a tensor becomes a sequence, or the reverse
    if (type->has_tensor_type()) {
      onnx::TypeProto element = *type;
      *type->mutable_sequence_type()->mutable_elem_type() = element;
    } else {
      type->mutable_tensor_type()->set_elem_type(1);
    }
    return;
  }
  auto* tensor = type->mutable_tensor_type();
  if (OneIn(4, random)) {
    tensor->set_elem_type(static_cast<int32_t>(Below(18, random)));
    return;
  }
  auto* dims = tensor->mutable_shape()->mutable_dim();
  const int choice = static_cast<int>(Below(5, random));
  if (choice == 0 || dims->empty()) {
    dims->Add()->set_dim_param(Pick(std::vector<std::string>{"batch", "seq", "time", "N", "unk__0"}, random));
  } else if (choice == 1) {
    dims->DeleteSubrange(static_cast<int>(Below(dims->size(), random)), 1);
  } else if (choice == 2) {
    tensor->clear_shape();
  } else {
    auto& dim = dims->at(static_cast<int>(Below(dims->size(), random)));
    if (OneIn(2, random))
      dim.set_dim_value(AnInteger(random));
    else
      dim.set_dim_param(OneIn(2, random) ? "batch" : "");
  }
}

bool MutateValueType(onnx::ModelProto& model, std::minstd_rand& random) {
  Scope scope = PickScope(model, random);
  onnx::GraphProto& graph = *scope.graph;
  std::vector<onnx::ValueInfoProto*> values;
  for (auto& v : *graph.mutable_input()) values.push_back(&v);
  for (auto& v : *graph.mutable_output()) values.push_back(&v);
  for (auto& v : *graph.mutable_value_info()) values.push_back(&v);
  if (values.empty()) return false;
  MutateShape(Pick(values, random)->mutable_type(), random);
  return true;
}

bool MutateInitializer(onnx::ModelProto& model, std::minstd_rand& random) {
  Scope scope = PickScope(model, random);
  auto* initializers = scope.graph->mutable_initializer();
  if (initializers->empty()) return false;
  onnx::TensorProto& tensor = initializers->at(static_cast<int>(Below(initializers->size(), random)));
  switch (Below(5, random)) {
    case 0:
      if (tensor.dims_size() > 0) {
        tensor.set_dims(static_cast<int>(Below(tensor.dims_size(), random)), AnInteger(random));
      } else {
        tensor.add_dims(AnInteger(random));
      }
      break;
    case 1:
      tensor.set_data_type(static_cast<int32_t>(Below(18, random)));
      break;
    case 2:  // a payload fitting the new dims, or not
      tensor.mutable_raw_data()->resize(Below(tensor.raw_data().size() + 9, random));
      break;
    case 3:
      if (tensor.dims_size() > 0) tensor.mutable_dims()->RemoveLast();
      break;
    default: {
      std::vector<std::string> names = NamesInScope(scope);
      tensor.set_name(Pick(names, random));  // an initializer shadowing a value, or a graph input's default
    }
  }
  return true;
}

/// A text edit of `value`: a number changed, a span deleted or repeated, a name of the graph put in.
void MutateText(std::string& value, const std::vector<std::string>& names, std::minstd_rand& random) {
  if (value.empty()) value = "{}";
  const size_t at = Below(value.size(), random);
  switch (Below(4, random)) {
    case 0: {
      const size_t digit = value.find_first_of("0123456789", at);
      if (digit != std::string::npos) value.replace(digit, 1, std::to_string(AnInteger(random)));
      break;
    }
    case 1:
      value.erase(at, Below(16, random));
      break;
    case 2:
      value.insert(at, value.substr(at, Below(32, random)));
      break;
    default: {
      const size_t quote = value.find('"', at);
      const size_t end = quote == std::string::npos ? quote : value.find('"', quote + 1);
      if (end != std::string::npos && !names.empty()) value.replace(quote + 1, end - quote - 1, Pick(names, random));
    }
  }
}

bool MutateMetadata(onnx::ModelProto& model, std::minstd_rand& random) {
  auto* props = model.mutable_metadata_props();
  Scope main{model.mutable_graph(), {}};
  const std::vector<std::string> names = NamesInScope(main);
  for (auto& prop : *props) {
    if (prop.key() != "rnnstate") continue;
    if (OneIn(10, random))
      props->DeleteSubrange(static_cast<int>(&prop - &props->at(0)), 1);
    else
      MutateText(*prop.mutable_value(), names, random);
    return true;
  }
  onnx::StringStringEntryProto* added = props->Add();
  added->set_key("rnnstate");
  added->set_value(R"({"version":1,"pairs":[{"input":"h_in","output":"h_out","kind":"h"}]})");
  return true;
}

bool MutateOpsets(onnx::ModelProto& model, std::minstd_rand& random) {
  if (OneIn(4, random)) {
    model.set_ir_version(static_cast<int64_t>(Below(11, random)));
    return true;
  }
  if (model.opset_import_size() == 0) return false;
  auto* opset = model.mutable_opset_import(static_cast<int>(Below(model.opset_import_size(), random)));
  opset->set_version(static_cast<int64_t>(Below(22, random)));
  return true;
}

bool MutateGraphOutputs(onnx::ModelProto& model, std::minstd_rand& random) {
  Scope scope = PickScope(model, random);
  auto* outputs = scope.graph->mutable_output();
  if (!outputs->empty() && OneIn(2, random)) {
    outputs->DeleteSubrange(static_cast<int>(Below(outputs->size(), random)), 1);
    return true;
  }
  std::vector<std::string> names = NamesInScope(scope);
  if (names.empty()) return false;
  onnx::ValueInfoProto* added = outputs->Add();
  added->set_name(Pick(names, random));
  if (!OneIn(3, random)) added->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  return true;
}

}  // namespace

bool MutateOnce(onnx::ModelProto& model, std::minstd_rand& random) {
  using Mutation = bool (*)(onnx::ModelProto&, std::minstd_rand&);
  static const Mutation kMutations[] = {InsertNode,      DeleteNode,         DuplicateNode,    RewireInput,
                                        RewireInput,     SwapOpType,         MutateAttribute,  MutateAttribute,
                                        MutateValueType, MutateInitializer,  MutateMetadata,   MutateOpsets,
                                        MutateGraphOutputs};
  return kMutations[Below(std::size(kMutations), random)](model, random);
}

void CrossNodes(onnx::ModelProto& model, const onnx::ModelProto& donor, std::minstd_rand& random) {
  const auto& nodes = donor.graph().node();
  if (nodes.empty()) return;
  const int first = static_cast<int>(Below(nodes.size(), random));
  const int count = static_cast<int>(std::min<size_t>(1 + Below(4, random), nodes.size() - first));
  Scope scope = PickScope(model, random);
  std::vector<std::string> have = NamesInScope(scope);
  for (int i = first; i < first + count; ++i) {
    for (const auto& input : nodes.Get(i).input()) {
      if (std::find(have.begin(), have.end(), input) != have.end()) continue;
      for (const auto& initializer : donor.graph().initializer()) {
        if (initializer.name() == input) *scope.graph->add_initializer() = initializer;
      }
    }
    *scope.graph->add_node() = nodes.Get(i);
  }
}

}  // namespace rnnstate::fuzz
