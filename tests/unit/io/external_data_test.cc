#include "io/external_data.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "io/model_dirs.h"
#include "io/model_io.h"
#include "io/tensor_places.h"
#include "rnnstate/error.h"

namespace rnnstate::external_data_test {
namespace {

namespace fs = std::filesystem;

class ExternalData : public testing::ModelDirs {
 protected:
  static onnx::ModelProto ModelWithLocation(const std::string& location) {
    onnx::ModelProto model;
    onnx::TensorProto* tensor = model.mutable_graph()->add_initializer();
    tensor->set_name("W");
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    tensor->add_dims(4);
    tensor->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = tensor->add_external_data();
    entry->set_key("location");
    entry->set_value(location);
    return model;
  }

  ExitCode CodeOf(const std::string& location) {
    try {
      CheckExternalData(ModelWithLocation(location), (root_ / "model").string());
    } catch (const Error& e) {
      return e.code();
    }
    return ExitCode::kOk;
  }
};

TEST_F(ExternalData, AcceptsAFileInTheModelDirectory) {
  EXPECT_EQ(CheckExternalData(ModelWithLocation("w.bin"), (root_ / "model").string()),
            std::vector<std::string>{"w.bin"});
}

TEST_F(ExternalData, HandsEveryTensorToTheOtherVisitorInTheSameWalk) {
  onnx::ModelProto model = ModelWithLocation("w.bin");
  onnx::TensorProto* inline_tensor = model.mutable_graph()->add_initializer();
  inline_tensor->set_name("B");
  std::vector<std::string> seen;
  const auto files = CheckExternalData(model, (root_ / "model").string(),
                                       [&](const onnx::TensorProto& tensor, const places::TensorPath& path) {
                                         seen.push_back(tensor.name() + " at " + path.ToString());
                                       });
  EXPECT_EQ(files, std::vector<std::string>{"w.bin"});
  EXPECT_EQ(seen, (std::vector<std::string>{"W at graph.initializer[0]", "B at graph.initializer[1]"}));
}

// OpenModel judges inline values in the external data checks' walk: a refused external tensor is still
// named before a refused inline one that comes earlier in the model, as when the two were walked in turn.
TEST_F(ExternalData, OpeningNamesARefusedExternalTensorBeforeARefusedInlineOne) {
  auto open = [&](const std::string& location) {
    onnx::ModelProto model;
    model.add_opset_import()->set_version(14);
    onnx::TensorProto* short_values = model.mutable_graph()->add_initializer();
    short_values->set_name("A");
    short_values->set_data_type(onnx::TensorProto::FLOAT);
    short_values->add_dims(4);
    short_values->add_float_data(1.0F);
    *model.mutable_graph()->add_initializer() = ModelWithLocation(location).graph().initializer(0);
    const fs::path path = root_ / "model" / "m.onnx";
    std::ofstream(path, std::ios::binary) << model.SerializeAsString();
    try {
      OpenModel(path.string());
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(open("missing.bin").find("'W'"), std::string::npos) << open("missing.bin");
  EXPECT_EQ(open("w.bin"), "tensor 'A' at graph.initializer[0]: float_data has 1 value, but FLOAT [4] takes 4");
}

TEST_F(ExternalData, RefusesLocationsThatEscape) {
  Write(root_ / "secret.bin", "x");
  EXPECT_EQ(CodeOf("/etc/passwd"), ExitCode::kBadInput);
  EXPECT_EQ(CodeOf("../secret.bin"), ExitCode::kBadInput);
  EXPECT_EQ(CodeOf("sub/../../secret.bin"), ExitCode::kBadInput);
  fs::create_symlink(root_ / "secret.bin", root_ / "model" / "link.bin");
  EXPECT_EQ(CodeOf("link.bin"), ExitCode::kBadInput);
  EXPECT_EQ(CodeOf("missing.bin"), ExitCode::kBadInput);
}

}  // namespace
}  // namespace rnnstate::external_data_test
