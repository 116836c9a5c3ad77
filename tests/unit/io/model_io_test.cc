// Opening a model for a rewrite and writing it (io/model_io.h): what OpenModel refuses (exit 3) before any
// command reads the model — a missing file, a directory, a model cut before its opset_import, external data
// outside its directory, inline values that do not fit — and WriteModel putting the external data beside
// an output in another directory, refusing (exit 5) where it cannot write and leaving nothing behind.

#include "io/model_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::model_io_test {
namespace {

using namespace test_names;
namespace fs = std::filesystem;

class ModelIo : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("rnnstate_model_io_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "in");
    fs::create_directories(root_ / "out");
  }
  void TearDown() override { fs::remove_all(root_); }

  /// Writes `bytes` to `name` under the root; returns its path.
  std::string Put(const std::string& name, const std::string& bytes) const {
    const fs::path path = root_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
  }

  /// kGru with W's values in the external file `location` (of `file_bytes` bytes, W taking 72).
  std::string PutExternal(const std::string& location, size_t file_bytes = 72) const {
    onnx::ModelProto model = ParseModel(kGru);
    onnx::TensorProto* w = model.mutable_graph()->add_initializer();
    w->set_name("W");
    w->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {1, 9, 2}) w->add_dims(d);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = w->add_external_data();
    entry->set_key("location");
    entry->set_value(location);
    Put("in/w.bin", std::string(file_bytes, '\0'));
    return Put("in/model.onnx", model.SerializeAsString());
  }

  fs::path root_;
};

TEST_F(ModelIo, OpensAModelWithItsDirectoryAndExternalData) {
  const OpenedModel plain = OpenModel(Put("in/plain.onnx", ParseModel(kGru).SerializeAsString()));
  EXPECT_EQ(plain.directory, (root_ / "in").string());
  EXPECT_THAT(plain.external_data, IsEmpty());
  EXPECT_EQ(Bytes(plain.file.model()), Bytes(ParseModel(kGru)));
  const OpenedModel external = OpenModel(PutExternal("w.bin"));
  EXPECT_THAT(external.external_data, ElementsAre("w.bin"));
}

TEST_F(ModelIo, RefusesWhatIsNoCompleteSafeModel) {
  ExpectError([&] { OpenModel((root_ / "in" / "missing.onnx").string()); }, ExitCode::kBadInput, "");
  ExpectError([&] { OpenModel((root_ / "in").string()); }, ExitCode::kBadInput, "");
  onnx::ModelProto no_opset = ParseModel(kGru);
  no_opset.clear_opset_import();
  ExpectError([&] { OpenModel(Put("in/cut.onnx", no_opset.SerializeAsString())); }, ExitCode::kBadInput,
              "not a complete ONNX model (no opset_import: truncated?)");
  ExpectError([&] { OpenModel(PutExternal("../outside.bin")); }, ExitCode::kBadInput, "");
  ExpectError([&] { OpenModel(PutExternal("w.bin", 8)); }, ExitCode::kBadInput, "");
  onnx::ModelProto misfit = ParseModel(kGru);
  AddFloatInitializer(*misfit.mutable_graph(), "W", {1, 9, 2}, {1.0f});
  misfit.mutable_graph()->mutable_initializer(0)->add_float_data(2.0f);
  ExpectError([&] { OpenModel(Put("in/misfit.onnx", misfit.SerializeAsString())); }, ExitCode::kBadInput,
              "tensor 'W' at graph.initializer[0]: float_data has 19 values, but FLOAT [1,9,2] takes 18");
}

TEST_F(ModelIo, WritesElsewhereWithTheExternalDataBesideTheOutput) {
  const OpenedModel opened = OpenModel(PutExternal("w.bin"));
  const std::string output = (root_ / "out" / "model.onnx").string();
  WriteModel(opened, output);
  EXPECT_TRUE(fs::exists(root_ / "out" / "w.bin"));
  EXPECT_EQ(fs::file_size(root_ / "out" / "w.bin"), 72u);
  const OpenedModel written = OpenModel(output);
  EXPECT_EQ(Bytes(written.file.model()), Bytes(opened.file.model()));
  EXPECT_NO_THROW(SyncOutputs({output, (root_ / "nowhere" / "x.onnx").string()}));
}

TEST_F(ModelIo, AnOutputItCannotWriteLeavesNothingBehind) {
  const OpenedModel opened = OpenModel(PutExternal("w.bin"));
  fs::create_directories(root_ / "out" / "taken.onnx");  // a directory where the output should go
  ExpectError([&] { WriteModel(opened, (root_ / "out" / "taken.onnx").string()); }, ExitCode::kCannotWrite, "");
  ExpectError([&] { WriteModel(opened, (root_ / "missing" / "model.onnx").string()); }, ExitCode::kCannotWrite, "");
  EXPECT_FALSE(fs::exists(root_ / "out" / "w.bin"));
  EXPECT_FALSE(fs::exists(root_ / "missing"));
}

}  // namespace
}  // namespace rnnstate::model_io_test
