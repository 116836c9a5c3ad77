#include "rules/schema_rules.h"

#include <limits>
#include <set>

#include "graph/model_index.h"
#include "graph/proto_access.h"

namespace rnnstate {

namespace {

using onnx::AttributeProto;

/// "an integer", "a graph", ...: an attribute type in a message.
std::string TypeWords(AttributeProto::AttributeType type) {
  switch (type) {
    case AttributeProto::FLOAT:
      return "a float";
    case AttributeProto::INT:
      return "an integer";
    case AttributeProto::STRING:
      return "a string";
    case AttributeProto::TENSOR:
      return "a tensor";
    case AttributeProto::GRAPH:
      return "a graph";
    case AttributeProto::SPARSE_TENSOR:
      return "a sparse tensor";
    case AttributeProto::TYPE_PROTO:
      return "a type";
    case AttributeProto::FLOATS:
      return "a list of floats";
    case AttributeProto::INTS:
      return "a list of integers";
    case AttributeProto::STRINGS:
      return "a list of strings";
    case AttributeProto::TENSORS:
      return "a list of tensors";
    case AttributeProto::GRAPHS:
      return "a list of graphs";
    case AttributeProto::SPARSE_TENSORS:
      return "a list of sparse tensors";
    case AttributeProto::TYPE_PROTOS:
      return "a list of types";
    default:
      return "of type " + std::to_string(static_cast<int>(type));
  }
}

/// onnx's internal attributes (two leading underscores) are accepted by any schema.
bool IsInternal(const std::string& name) { return name.size() >= 2 && name[0] == '_' && name[1] == '_'; }

/// " (only from opset 14)" when a newer version of the operator that onnx knows defines `attribute`.
std::string DefinedLater(const onnx::NodeProto& node, const std::string& attribute, int64_t opset) {
  const std::string domain = IsOnnxDomain(node.domain()) ? "" : node.domain();
  const auto& versions = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto range = versions.find(domain.empty() ? onnx::ONNX_DOMAIN : domain);
  if (range == versions.end()) return "";
  for (int64_t version = opset + 1; version <= range->second.second; ++version) {
    const onnx::OpSchema* later = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(version), domain);
    if (later == nullptr || later->since_version() <= opset) continue;
    if (later->attributes().count(attribute))
      return " (only from opset " + std::to_string(later->since_version()) + ")";
  }
  return "";
}

std::string AttributeViolation(const onnx::NodeProto& node, const onnx::OpSchema& schema, int64_t opset) {
  for (const auto& attribute : node.attribute()) {
    if (IsInternal(attribute.name())) continue;
    const auto defined = schema.attributes().find(attribute.name());
    if (defined == schema.attributes().end()) {
      return "attribute '" + Printable(attribute.name()) + "' is not defined by " + node.op_type() + " at " +
             OpsetText(node.domain(), opset) + DefinedLater(node, attribute.name(), opset);
    }
    if (attribute.type() != defined->second.type) {
      return "attribute '" + Printable(attribute.name()) + "' is not " + TypeWords(defined->second.type);
    }
  }
  return "";
}

std::string Counted(int count, const char* what) {
  return std::to_string(count) + " " + what + (count == 1 ? "" : "s");
}

/// "1 to 8", "at least 1", "exactly 2".
std::string RangeText(int low, int high) {
  if (low == high) return "exactly " + std::to_string(low);
  if (high == std::numeric_limits<int>::max()) return "at least " + std::to_string(low);
  return std::to_string(low) + " to " + std::to_string(high);
}

/// An empty name in a slot whose formal parameter is Single (neither optional nor variadic).
std::string EmptyRequired(const google::protobuf::RepeatedPtrField<std::string>& names,
                          const std::vector<onnx::OpSchema::FormalParameter>& formals, const char* what) {
  for (int i = 0; i < names.size() && i < static_cast<int>(formals.size()); ++i) {
    if (names.Get(i).empty() && formals[i].GetOption() == onnx::OpSchema::Single) {
      return std::string("required ") + what + " " + formals[i].GetName() + " is empty";
    }
  }
  return "";
}

std::string ArityViolation(const onnx::NodeProto& node, const onnx::OpSchema& schema) {
  if (node.input_size() < schema.min_input() || node.input_size() > schema.max_input()) {
    return "has " + Counted(node.input_size(), "input") + ", but " + node.op_type() + " takes " +
           RangeText(schema.min_input(), schema.max_input());
  }
  if (node.output_size() < schema.min_output() || node.output_size() > schema.max_output()) {
    return "has " + Counted(node.output_size(), "output") + ", but " + node.op_type() + " takes " +
           RangeText(schema.min_output(), schema.max_output());
  }
  if (std::string empty = EmptyRequired(node.input(), schema.inputs(), "input"); !empty.empty()) return empty;
  if (std::string empty = EmptyRequired(node.output(), schema.outputs(), "output"); !empty.empty()) return empty;
  std::set<std::string> present;
  for (const auto& attribute : node.attribute()) present.insert(attribute.name());
  for (const auto& [name, attribute] : schema.attributes()) {
    if (attribute.required && !present.count(name)) return "required attribute '" + name + "' is missing";
  }
  return "";
}

/// The first line of onnx's message (it appends "==> Context: ..." lines).
std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

std::string OpsetText(const std::string& domain, int64_t opset) {
  return (IsOnnxDomain(domain) ? std::string("ai.onnx") : domain) + " opset " + std::to_string(opset);
}

std::string AttributeFormViolation(const onnx::NodeProto& node) {
  std::set<std::string> seen;
  for (const auto& attribute : node.attribute()) {
    if (!seen.insert(attribute.name()).second) return "attribute '" + Printable(attribute.name()) + "' is given twice";
  }
  for (const auto& attribute : node.attribute()) {
    if (attribute.type() == AttributeProto::UNDEFINED) {
      return "attribute '" + Printable(attribute.name()) + "' has no type";
    }
  }
  return "";
}

SchemaViolation SchemaRuleViolation(const onnx::NodeProto& node, const onnx::OpSchema& schema, int64_t opset) {
  try {
    schema.Verify(node);
    return {};
  } catch (const std::exception& e) {
    SchemaViolation violation{AttributeViolation(node, schema, opset), ArityViolation(node, schema)};
    // Verify refused the node for a reason the rules above do not name: say it in onnx's words.
    if (violation.attributes.empty() && violation.arity.empty()) violation.arity = FirstLine(e.what());
    return violation;
  }
}

}  // namespace rnnstate
