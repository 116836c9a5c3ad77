#include "test_models.h"

#include <gtest/gtest.h>
#include <onnx/defs/parser.h>

#include <stdexcept>

#include "rnnstate/error.h"
#include "rules/model_rules.h"

namespace rnnstate::testing {

onnx::ModelProto ParseModel(const std::string& text) {
  onnx::ModelProto model;
  onnx::Status status = onnx::OnnxParser::Parse(model, text.c_str());
  if (!status.IsOK()) throw std::runtime_error("bad test model: " + status.ErrorMessage());
  return model;
}

void AddFloatInitializer(onnx::GraphProto& graph, const std::string& name, const std::vector<int64_t>& dims,
                         const std::vector<float>& values) {
  onnx::TensorProto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (auto d : dims) {
    tensor->add_dims(d);
    count *= d;
  }
  for (int64_t i = 0; i < count; ++i) tensor->add_float_data(values.empty() ? 0.0f : values[i % values.size()]);
}

std::vector<std::string> InputNames(const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  for (const auto& v : graph.input()) names.push_back(v.name());
  return names;
}

std::vector<std::string> OutputNames(const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  for (const auto& v : graph.output()) names.push_back(v.name());
  return names;
}

std::vector<std::string> InitializerNames(const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  for (const auto& t : graph.initializer()) names.push_back(t.name());
  return names;
}

const onnx::NodeProto* Producer(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& node : graph.node()) {
    for (const auto& output : node.output()) {
      if (output == name) return &node;
    }
  }
  return nullptr;
}

std::string DeclaredShape(const onnx::GraphProto& graph, const std::string& name) {
  auto render = [](const onnx::ValueInfoProto& info) {
    std::string out = "[";
    const auto& shape = info.type().tensor_type().shape();
    for (int i = 0; i < shape.dim_size(); ++i) {
      if (i) out += ",";
      const auto& d = shape.dim(i);
      out += d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?";
    }
    return out + "]";
  };
  for (const auto& v : graph.input()) {
    if (v.name() == name) return render(v);
  }
  for (const auto& v : graph.output()) {
    if (v.name() == name) return render(v);
  }
  return "";
}

const onnx::NodeProto& NodeOfType(const onnx::GraphProto& graph, const std::string& op, int nth) {
  for (const auto& node : graph.node()) {
    if (node.op_type() == op && nth-- == 0) return node;
  }
  throw std::runtime_error("no node " + op);
}

onnx::NodeProto& NodeOfType(onnx::GraphProto& graph, const std::string& op, int nth) {
  return const_cast<onnx::NodeProto&>(NodeOfType(static_cast<const onnx::GraphProto&>(graph), op, nth));
}

std::vector<StatePair> RecordedPairs(const onnx::ModelProto& model) {
  std::string error;
  std::vector<StatePair> pairs = ReadStatePairs(model, &error);
  EXPECT_EQ(error, "");
  return pairs;
}

std::string Bytes(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

std::string Verdict(const onnx::ModelProto& model) {
  try {
    IndexValidModel(model);
    return "";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
}

}  // namespace rnnstate::testing
