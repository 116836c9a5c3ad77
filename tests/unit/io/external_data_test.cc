#include "io/external_data.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "io/model_dirs.h"
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
