// The one table of where tensors live (tensor_places) against onnx's own descriptors, and the proto-level
// walk against the wire-level reader: both must find the same tensors, and external data checks must see
// a tensor wherever it is.

#include "io/tensor_places.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "io/external_data.h"
#include "io/model_file.h"
#include "io/wire_splice.h"
#include "rnnstate/error.h"

namespace rnnstate::tensor_places_test {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using places::DescriptorOf;
using places::ForEachTensor;
using places::kTensorPaths;

onnx::TensorProto Tensor(const std::string& name) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::UINT8);
  tensor.add_dims(64);
  tensor.set_raw_data(std::string(64, static_cast<char>(name.size())));
  return tensor;
}

onnx::AttributeProto* Attribute(onnx::NodeProto* node, const std::string& name,
                                onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(type);
  return attribute;
}

void SetSparse(onnx::SparseTensorProto* sparse, const std::string& name) {
  *sparse->mutable_values() = Tensor(name + "_values");
  *sparse->mutable_indices() = Tensor(name + "_indices");
  sparse->add_dims(100);
}

/// A model with a tensor in every place onnx 1.12 has for one, each named after its place; and the path
/// ForEachTensor must report for each name.
onnx::ModelProto EveryPlace(std::map<std::string, std::string>* paths) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  *graph->add_initializer() = Tensor("initializer");
  SetSparse(graph->add_sparse_initializer(), "sparse_initializer");
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type("Custom");
  *Attribute(node, "t", onnx::AttributeProto::TENSOR)->mutable_t() = Tensor("attribute_t");
  onnx::AttributeProto* tensors = Attribute(node, "tensors", onnx::AttributeProto::TENSORS);
  *tensors->add_tensors() = Tensor("attribute_tensors0");
  *tensors->add_tensors() = Tensor("attribute_tensors1");
  SetSparse(Attribute(node, "s", onnx::AttributeProto::SPARSE_TENSOR)->mutable_sparse_tensor(), "attribute_sparse");
  SetSparse(Attribute(node, "ss", onnx::AttributeProto::SPARSE_TENSORS)->add_sparse_tensors(), "attribute_sparses");
  onnx::GraphProto* body = Attribute(node, "g", onnx::AttributeProto::GRAPH)->mutable_g();
  *body->add_initializer() = Tensor("subgraph_initializer");
  onnx::NodeProto* inner = body->add_node();
  *Attribute(inner, "value", onnx::AttributeProto::TENSOR)->mutable_t() = Tensor("subgraph_node_t");
  onnx::AttributeProto* graphs = Attribute(node, "gs", onnx::AttributeProto::GRAPHS);
  *graphs->add_graphs()->add_initializer() = Tensor("graphs_initializer");
  onnx::FunctionProto* function = model.add_functions();
  function->set_name("F");
  onnx::NodeProto* function_node = function->add_node();
  *Attribute(function_node, "value", onnx::AttributeProto::TENSOR)->mutable_t() = Tensor("function_t");
  onnx::GraphProto* function_body = Attribute(function_node, "g", onnx::AttributeProto::GRAPH)->mutable_g();
  SetSparse(function_body->add_sparse_initializer(), "function_subgraph_sparse");
  onnx::TrainingInfoProto* training = model.add_training_info();
  *training->mutable_initialization()->add_initializer() = Tensor("training_initialization");
  *training->mutable_algorithm()->add_initializer() = Tensor("training_algorithm");

  *paths = {
      {"initializer", "graph.initializer[0]"},
      {"sparse_initializer_values", "graph.sparse_initializer[0].values"},
      {"sparse_initializer_indices", "graph.sparse_initializer[0].indices"},
      {"attribute_t", "graph.node[0].attribute[0].t"},
      {"attribute_tensors0", "graph.node[0].attribute[1].tensors[0]"},
      {"attribute_tensors1", "graph.node[0].attribute[1].tensors[1]"},
      {"attribute_sparse_values", "graph.node[0].attribute[2].sparse_tensor.values"},
      {"attribute_sparse_indices", "graph.node[0].attribute[2].sparse_tensor.indices"},
      {"attribute_sparses_values", "graph.node[0].attribute[3].sparse_tensors[0].values"},
      {"attribute_sparses_indices", "graph.node[0].attribute[3].sparse_tensors[0].indices"},
      {"subgraph_initializer", "graph.node[0].attribute[4].g.initializer[0]"},
      {"subgraph_node_t", "graph.node[0].attribute[4].g.node[0].attribute[0].t"},
      {"graphs_initializer", "graph.node[0].attribute[5].graphs[0].initializer[0]"},
      {"function_t", "functions[0].node[0].attribute[0].t"},
      {"function_subgraph_sparse_values", "functions[0].node[0].attribute[1].g.sparse_initializer[0].values"},
      {"function_subgraph_sparse_indices", "functions[0].node[0].attribute[1].g.sparse_initializer[0].indices"},
      {"training_initialization", "training_info[0].initialization.initializer[0]"},
      {"training_algorithm", "training_info[0].algorithm.initializer[0]"},
  };
  return model;
}

/// name -> path of every tensor ForEachTensor visits.
std::map<std::string, std::string> Visited(const onnx::ModelProto& model) {
  std::map<std::string, std::string> visited;
  ForEachTensor(model, [&](const onnx::TensorProto& tensor, const places::TensorPath& path) {
    EXPECT_TRUE(visited.emplace(tensor.name(), path.ToString()).second) << tensor.name() << " visited twice";
  });
  return visited;
}

/// The tensor named `name` anywhere in `message`, found by plain reflection over every set field (not
/// by the table under test).
onnx::TensorProto* FindTensor(google::protobuf::Message* message, const std::string& name) {
  if (auto* tensor = dynamic_cast<onnx::TensorProto*>(message); tensor != nullptr && tensor->name() == name) {
    return tensor;
  }
  const google::protobuf::Reflection* reflection = message->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(*message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const int count = field->is_repeated() ? reflection->FieldSize(*message, field) : 1;
    for (int i = 0; i < count; ++i) {
      google::protobuf::Message* child = field->is_repeated() ? reflection->MutableRepeatedMessage(message, field, i)
                                                              : reflection->MutableMessage(message, field);
      if (onnx::TensorProto* found = FindTensor(child, name)) return found;
    }
  }
  return nullptr;
}

TEST(TensorPlaces, EveryEdgeIsAFieldOfTheRightMessageType) {
  for (const places::Edge& edge : kTensorPaths) {
    const Descriptor* parent = DescriptorOf(edge.parent);
    const FieldDescriptor* field = parent->FindFieldByNumber(static_cast<int>(edge.field));
    ASSERT_NE(field, nullptr) << parent->full_name() << " has no field " << edge.field;
    EXPECT_EQ(field->type(), FieldDescriptor::TYPE_MESSAGE) << field->full_name();
    EXPECT_EQ(field->message_type(), DescriptorOf(edge.child)) << field->full_name();
  }
  const FieldDescriptor* raw_data = onnx::TensorProto::descriptor()->FindFieldByNumber(wire::kRawDataField);
  ASSERT_NE(raw_data, nullptr);
  EXPECT_EQ(raw_data->name(), "raw_data");
}

TEST(TensorPlaces, ChildMessageAnswersForEveryFieldAsTheTableDoes) {
  const places::Msg kinds[] = {places::Msg::kModel,        places::Msg::kTrainingInfo, places::Msg::kGraph,
                               places::Msg::kFunction,     places::Msg::kNode,         places::Msg::kAttribute,
                               places::Msg::kSparseTensor, places::Msg::kTensor};
  for (const places::Msg parent : kinds) {
    for (uint32_t field :
         {0u, 1u, 2u, 5u, 6u, 7u, 9u, 10u, 11u, 15u, 20u, 22u, 23u, 25u, 31u, 32u, 1000u, 0x1fffffffu}) {
      std::optional<places::Msg> expected;
      for (const places::Edge& edge : kTensorPaths) {
        if (edge.parent == parent && edge.field == field) expected = edge.child;
      }
      EXPECT_EQ(places::ChildMessage(parent, field), expected)
          << "parent " << static_cast<int>(parent) << ", field " << field;
    }
  }
}

// Derived from onnx's descriptors alone: every message field, in a message reachable from ModelProto, whose
// type is or contains a TensorProto. The table must list exactly these.
TEST(TensorPlaces, TableListsEveryFieldThatCanHoldATensor) {
  std::vector<const Descriptor*> reachable = {onnx::ModelProto::descriptor()};
  for (size_t i = 0; i < reachable.size(); ++i) {
    for (int f = 0; f < reachable[i]->field_count(); ++f) {
      const Descriptor* type = reachable[i]->field(f)->message_type();
      if (type != nullptr && std::find(reachable.begin(), reachable.end(), type) == reachable.end()) {
        reachable.push_back(type);
      }
    }
  }
  std::set<const Descriptor*> holds_tensor = {onnx::TensorProto::descriptor()};
  for (bool grew = true; grew;) {
    grew = false;
    for (const Descriptor* message : reachable) {
      for (int f = 0; f < message->field_count(); ++f) {
        if (holds_tensor.count(message->field(f)->message_type()) && holds_tensor.insert(message).second) grew = true;
      }
    }
  }
  std::set<std::pair<std::string, int>> expected, table;
  for (const Descriptor* message : reachable) {
    if (message == onnx::TensorProto::descriptor()) continue;
    for (int f = 0; f < message->field_count(); ++f) {
      if (holds_tensor.count(message->field(f)->message_type())) {
        expected.insert({message->full_name(), message->field(f)->number()});
      }
    }
  }
  for (const places::Edge& edge : kTensorPaths) {
    table.insert({DescriptorOf(edge.parent)->full_name(), static_cast<int>(edge.field)});
  }
  EXPECT_EQ(table, expected);
}

TEST(TensorPlaces, WalkVisitsATensorInEveryPlaceWithItsPath) {
  std::map<std::string, std::string> paths;
  const onnx::ModelProto model = EveryPlace(&paths);
  EXPECT_EQ(Visited(model), paths);
}

// The proto-level walk and the wire-level reader follow one table: every tensor the reader deferred is
// visited, and every visited tensor was deferred.
TEST(TensorPlaces, WalkVisitsExactlyTheTensorsTheWireReaderDefers) {
  std::map<std::string, std::string> paths;
  const onnx::ModelProto model = EveryPlace(&paths);
  std::string pattern = (fs::temp_directory_path() / "tensor_places_test.XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const std::string file_path = pattern + "/every_place.onnx";
  std::ofstream(file_path, std::ios::binary) << model.SerializeAsString();
  const ModelFile file = ModelFile::Open(file_path, ModelFile::kMinPayloadThreshold);
  fs::remove_all(pattern);

  size_t visited = 0;
  ForEachTensor(file.model(), [&](const onnx::TensorProto& tensor, const places::TensorPath& path) {
    ++visited;
    const std::string& raw = tensor.raw_data();
    EXPECT_TRUE(raw.size() == ModelFile::kPlaceholderSize &&
                std::memcmp(raw.data(), kPlaceholderMagic, sizeof(kPlaceholderMagic)) == 0)
        << path.ToString() << " was not deferred by the wire-level reader";
  });
  EXPECT_EQ(visited, paths.size());
  EXPECT_EQ(file.deferred_count(), paths.size());
}

// External data checks go through the walk: a tensor in any place is checked like an initializer.
TEST(TensorPlaces, ExternalDataIsCheckedInEveryPlace) {
  std::string pattern = (fs::temp_directory_path() / "tensor_places_test.XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  std::ofstream(pattern + "/w.bin", std::ios::binary) << std::string(64, 'w');
  std::map<std::string, std::string> paths;
  const onnx::ModelProto original = EveryPlace(&paths);
  for (const auto& [name, path] : paths) {
    for (const char* offset : {"0", "65"}) {  // inside the file, then past its end
      for (const char* location : {"w.bin", "../w.bin"}) {
        onnx::ModelProto model = original;
        onnx::TensorProto* tensor = FindTensor(&model, name);
        ASSERT_NE(tensor, nullptr) << name;
        tensor->clear_raw_data();
        tensor->set_data_location(onnx::TensorProto::EXTERNAL);
        for (const auto& [key, value] :
             {std::pair<const char*, const char*>{"location", location}, {"offset", offset}}) {
          auto* entry = tensor->add_external_data();
          entry->set_key(key);
          entry->set_value(value);
        }
        const bool valid = std::string(offset) == "0" && std::string(location) == "w.bin";
        try {
          EXPECT_EQ(CheckExternalData(model, pattern), std::vector<std::string>{"w.bin"}) << name;
          EXPECT_TRUE(valid) << name << " at " << location << " offset " << offset << " was accepted";
        } catch (const Error& error) {
          EXPECT_FALSE(valid) << error.what();
          EXPECT_EQ(error.code(), ExitCode::kBadInput);
          EXPECT_NE(std::string(error.what()).find("tensor '" + name + "' at " + path), std::string::npos)
              << error.what();
        }
      }
    }
  }
  fs::remove_all(pattern);
}

}  // namespace
}  // namespace rnnstate::tensor_places_test
