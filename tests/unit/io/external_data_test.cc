#include "io/external_data.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "io/data_placement.h"
#include "io/model_io.h"
#include "io/tensor_places.h"
#include "rnnstate/error.h"

namespace rnnstate::external_data_test {
namespace {

namespace fs = std::filesystem;

class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("rnnstate_ext_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "model");
    fs::create_directories(root_ / "out");
    Write(root_ / "model" / "w.bin", "0123456789abcdef");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void Write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

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

  fs::path root_;
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

TEST_F(ExternalData, WritingElsewhereLinksTheDataBeside) {
  ProvideExternalData({"w.bin"}, (root_ / "model").string(), (root_ / "out").string()).Keep();
  ASSERT_TRUE(fs::exists(root_ / "out" / "w.bin"));
  EXPECT_TRUE(fs::equivalent(root_ / "out" / "w.bin", root_ / "model" / "w.bin") ||
              fs::file_size(root_ / "out" / "w.bin") == 16);
  // A second run finds the same file and succeeds.
  EXPECT_NO_THROW(ProvideExternalData({"w.bin"}, (root_ / "model").string(), (root_ / "out").string()).Keep());
}

TEST_F(ExternalData, NeverOverwritesAnotherFile) {
  Write(root_ / "out" / "w.bin", "other");
  try {
    ProvideExternalData({"w.bin"}, (root_ / "model").string(), (root_ / "out").string()).Keep();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kCannotWrite);
  }
  std::ifstream in(root_ / "out" / "w.bin");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "other");
}

TEST_F(ExternalData, SameDirectoryNeedsNothing) {
  EXPECT_NO_THROW(ProvideExternalData({"w.bin"}, (root_ / "model").string(), (root_ / "model").string()).Keep());
}

TEST_F(ExternalData, APlacementNotKeptIsRemovedWithTheDirectoriesItMade) {
  fs::create_directories(root_ / "model" / "sub" / "deeper");
  Write(root_ / "model" / "sub" / "deeper" / "v.bin", "v");
  {
    auto placed =
        ProvideExternalData({"w.bin", "sub/deeper/v.bin"}, (root_ / "model").string(), (root_ / "out").string());
  }
  EXPECT_TRUE(fs::is_empty(root_ / "out"));  // the output was not written: nothing is left beside it
  EXPECT_TRUE(fs::exists(root_ / "model" / "w.bin"));
  EXPECT_TRUE(fs::exists(root_ / "model" / "sub" / "deeper" / "v.bin"));
}

TEST_F(ExternalData, AFailedPlacementRemovesWhatItHadPlaced) {
  fs::create_directories(root_ / "out" / "sub");
  fs::create_directories(root_ / "model" / "sub");
  Write(root_ / "model" / "sub" / "v.bin", "v");
  Write(root_ / "out" / "sub" / "v.bin", "someone else's");
  EXPECT_THROW((void)ProvideExternalData({"w.bin", "sub/v.bin"}, (root_ / "model").string(), (root_ / "out").string()),
               Error);
  EXPECT_FALSE(fs::exists(root_ / "out" / "w.bin"));
  EXPECT_TRUE(fs::exists(root_ / "out" / "sub" / "v.bin"));  // the user's file and directory stay
}

TEST_F(ExternalData, AFailedOutputNeverTakesTheDataAnotherOutputReliesOn) {
  const std::string model = (root_ / "model").string(), out = (root_ / "out").string();
  {
    auto first = ProvideExternalData({"w.bin"}, model, out);
    auto second = ProvideExternalData({"w.bin"}, model, out);  // finds the first one's link
    first.Keep();
  }  // the second output failed
  EXPECT_TRUE(fs::exists(root_ / "out" / "w.bin"));
  {
    auto again = ProvideExternalData({"w.bin"}, model, out);  // a third output, which fails too
    (void)again;
  }
  EXPECT_TRUE(fs::exists(root_ / "out" / "w.bin")) << "kept by an earlier output: the user's now";
  fs::remove(root_ / "out" / "w.bin");
  {
    auto first = ProvideExternalData({"w.bin"}, model, out);
    {
      auto second = ProvideExternalData({"w.bin"}, model, out);
      second.Keep();
    }
  }  // the first one failed after the second was written
  EXPECT_TRUE(fs::exists(root_ / "out" / "w.bin"));
}

TEST_F(ExternalData, AnOutputMayNotReplaceOrBeItsExternalData) {
  const std::string model = (root_ / "model").string();
  auto conflict = [&](const fs::path& output) { return OutputDataConflict({"w.bin"}, model, output.string()); };
  const std::string replaces = "would replace the model's external data file 'w.bin'";
  EXPECT_EQ(conflict(root_ / "model" / "w.bin"),
            "the output '" + (root_ / "model" / "w.bin").string() + "' " + replaces);
  EXPECT_NE(conflict(root_ / "out" / ".." / "model" / "w.bin").find(replaces), std::string::npos);
  fs::create_directory_symlink(root_ / "model", root_ / "alias");
  EXPECT_NE(conflict(root_ / "alias" / "w.bin").find(replaces), std::string::npos);
  fs::create_symlink(root_ / "model" / "w.bin", root_ / "out" / "link.bin");
  EXPECT_NE(conflict(root_ / "out" / "link.bin").find(replaces), std::string::npos);
  fs::create_hard_link(root_ / "model" / "w.bin", root_ / "out" / "hard.bin");
  EXPECT_NE(conflict(root_ / "out" / "hard.bin").find(replaces), std::string::npos);
  // In another directory, the data file goes beside the output under its own name.
  EXPECT_EQ(conflict(root_ / "out" / "w.bin"), "the output '" + (root_ / "out" / "w.bin").string() +
                                                   "' is where its own external data file 'w.bin' must go");
  EXPECT_EQ(conflict(root_ / "out" / "m.onnx"), "");
  EXPECT_EQ(conflict(root_ / "model" / "m.streaming.onnx"), "");
}

}  // namespace
}  // namespace rnnstate::external_data_test
