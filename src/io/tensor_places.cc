#include "io/tensor_places.h"

#include <array>
#include <iterator>

namespace rnnstate::places {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

namespace {

/// Field numbers below this index kChildByField; every field of kTensorPaths is one of them (a larger one
/// would make the table's construction fail to compile).
constexpr uint32_t kFieldsIndexed = 32;

/// kTensorPaths by parent and field number (-1: no edge), built at compile time. ChildMessage is asked
/// about every length-delimited field of every message on the paths (each name of each node): a lookup,
/// not a scan of the table.
constexpr auto kChildByField = [] {
  std::array<std::array<int8_t, kFieldsIndexed>, static_cast<size_t>(Msg::kTensor) + 1> table{};
  for (auto& row : table) {
    for (auto& child : row) child = -1;
  }
  for (const Edge& edge : kTensorPaths) {
    table[static_cast<size_t>(edge.parent)][edge.field] = static_cast<int8_t>(edge.child);
  }
  return table;
}();

}  // namespace

std::optional<Msg> ChildMessage(Msg parent, uint32_t field) {
  if (field >= kFieldsIndexed) return std::nullopt;
  const int8_t child = kChildByField[static_cast<size_t>(parent)][field];
  if (child < 0) return std::nullopt;
  return static_cast<Msg>(child);
}

const Descriptor* DescriptorOf(Msg kind) {
  switch (kind) {
    case Msg::kModel:
      return onnx::ModelProto::descriptor();
    case Msg::kTrainingInfo:
      return onnx::TrainingInfoProto::descriptor();
    case Msg::kGraph:
      return onnx::GraphProto::descriptor();
    case Msg::kFunction:
      return onnx::FunctionProto::descriptor();
    case Msg::kNode:
      return onnx::NodeProto::descriptor();
    case Msg::kAttribute:
      return onnx::AttributeProto::descriptor();
    case Msg::kSparseTensor:
      return onnx::SparseTensorProto::descriptor();
    case Msg::kTensor:
      return onnx::TensorProto::descriptor();
  }
  return nullptr;
}

std::string TensorPath::ToString() const {
  std::string text;
  for (const Step& step : steps_) {
    if (!text.empty()) text += '.';
    text += step.field->name();
    if (step.index >= 0) text += "[" + std::to_string(step.index) + "]";
  }
  return text;
}

namespace {

/// The field descriptor of each edge of kTensorPaths (null for a field this onnx does not have), resolved
/// once.
const std::vector<const FieldDescriptor*>& EdgeFields() {
  static const std::vector<const FieldDescriptor*> fields = [] {
    std::vector<const FieldDescriptor*> resolved;
    for (const Edge& edge : kTensorPaths) {
      resolved.push_back(DescriptorOf(edge.parent)->FindFieldByNumber(static_cast<int>(edge.field)));
    }
    return resolved;
  }();
  return fields;
}

/// The indices into kTensorPaths of the edges leaving each kind of message (by Msg's value), in table
/// order: a message looks only at its own fields, not at the whole table.
const std::vector<std::vector<size_t>>& EdgesByParent() {
  static const std::vector<std::vector<size_t>> edges = [] {
    std::vector<std::vector<size_t>> by_parent(static_cast<size_t>(Msg::kTensor) + 1);
    for (size_t i = 0; i < std::size(kTensorPaths); ++i) {
      by_parent[static_cast<size_t>(kTensorPaths[i].parent)].push_back(i);
    }
    return by_parent;
  }();
  return edges;
}

}  // namespace

/// The walk of ForEachTensor: protobuf reflection led by the field numbers of kTensorPaths, so that the
/// table, not a second hand-written list, decides where tensors are looked for.
class TensorWalk {
 public:
  explicit TensorWalk(const TensorVisitor& visit) : visit_(visit) {}

  void Walk(const Message& message, Msg kind) {
    if (kind == Msg::kTensor) {
      // Reflection hands out the generated message itself, never a dynamic copy.
      visit_(static_cast<const onnx::TensorProto&>(message), path_);
      return;
    }
    const Reflection* reflection = message.GetReflection();
    const std::vector<const FieldDescriptor*>& fields = EdgeFields();
    for (const size_t i : EdgesByParent()[static_cast<size_t>(kind)]) {
      const Edge& edge = kTensorPaths[i];
      const FieldDescriptor* field = fields[i];
      if (field == nullptr) continue;  // tensor_places_test: no edge lacks its field
      if (field->is_repeated()) {
        const int count = reflection->FieldSize(message, field);
        for (int j = 0; j < count; ++j) Step(reflection->GetRepeatedMessage(message, field, j), edge.child, field, j);
      } else if (reflection->HasField(message, field)) {
        Step(reflection->GetMessage(message, field), edge.child, field, -1);
      }
    }
  }

 private:
  void Step(const Message& child, Msg kind, const FieldDescriptor* field, int index) {
    path_.steps_.push_back({field, index});
    Walk(child, kind);
    path_.steps_.pop_back();
  }

  const TensorVisitor& visit_;
  TensorPath path_;
};

void ForEachTensor(const onnx::ModelProto& model, const TensorVisitor& visit) {
  TensorWalk(visit).Walk(model, Msg::kModel);
}

}  // namespace rnnstate::places
