#include "io/model_file.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/util/message_differencer.h>
#include <google/protobuf/wire_format_lite.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <sstream>

#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::model_file_test {
namespace {

using namespace test_names;

namespace fs = std::filesystem;
using google::protobuf::util::MessageDifferencer;

// ---------------------------------------------------------------------------------------------------
// Helpers

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string Serialize(const onnx::ModelProto& model) {
  std::string bytes;
  EXPECT_TRUE(model.SerializeToString(&bytes));
  return bytes;
}

/// `size` bytes of a pattern that differs per seed, so that a payload spliced in the wrong place shows.
std::string Payload(size_t size, uint32_t seed) {
  std::mt19937 random(seed);
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random());
  return bytes;
}

onnx::TensorProto Tensor(const std::string& name, size_t raw_size, uint32_t seed) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::UINT8);
  tensor.add_dims(static_cast<int64_t>(raw_size));
  tensor.set_raw_data(Payload(raw_size, seed));
  return tensor;
}

void AddValueInfo(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name) {
  onnx::ValueInfoProto* info = list->Add();
  info->set_name(name);
  auto* tensor_type = info->mutable_type()->mutable_tensor_type();
  tensor_type->set_elem_type(onnx::TensorProto::FLOAT);
  tensor_type->mutable_shape()->add_dim()->set_dim_param("batch");
}

onnx::AttributeProto* AddAttribute(onnx::NodeProto* node, const std::string& name,
                                   onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(type);
  return attribute;
}

/// A model with tensors on every path the walker knows: initializers, sparse initializers, node attributes
/// (t, tensors, sparse_tensor, g, graphs), functions and training info. `unit` scales the payload sizes.
onnx::ModelProto SampleModel(size_t unit = 1000) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("model_file_test");
  model.set_doc_string("a model for model_file_test");
  auto* opset = model.add_opset_import();
  opset->set_version(17);
  auto* meta = model.add_metadata_props();
  meta->set_key("k");
  meta->set_value("v");

  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("main");
  *graph->add_initializer() = Tensor("W", 4 * unit, 1);
  *graph->add_initializer() = Tensor("R", 2 * unit, 2);
  *graph->add_initializer() = Tensor("B", 16, 3);
  onnx::TensorProto* floats = graph->add_initializer();
  floats->set_name("F");
  floats->set_data_type(onnx::TensorProto::FLOAT);
  floats->add_dims(3);
  for (float value : {1.f, 2.f, 3.f}) floats->add_float_data(value);
  onnx::SparseTensorProto* sparse = graph->add_sparse_initializer();
  *sparse->mutable_values() = Tensor("S", 3 * unit / 2, 4);
  *sparse->mutable_indices() = Tensor("S_indices", 4 * unit / 5, 5);
  sparse->add_dims(10 * static_cast<int64_t>(unit));
  AddValueInfo(graph->mutable_input(), "X");
  AddValueInfo(graph->mutable_output(), "Y");

  onnx::NodeProto* lstm = graph->add_node();
  lstm->set_name("lstm");
  lstm->set_op_type("LSTM");
  for (const char* input : {"X", "W", "R", "B"}) lstm->add_input(input);
  lstm->add_output("H");
  AddAttribute(lstm, "hidden_size", onnx::AttributeProto::INT)->set_i(4);

  onnx::NodeProto* branch = graph->add_node();
  branch->set_name("if");
  branch->set_op_type("If");
  branch->add_input("cond");
  branch->add_output("Y");
  onnx::GraphProto* then_branch = AddAttribute(branch, "then_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  then_branch->set_name("then");
  *then_branch->add_initializer() = Tensor("T_init", 6 * unit / 5, 6);
  onnx::NodeProto* constant = then_branch->add_node();
  constant->set_op_type("Constant");
  constant->add_output("Y_then");
  *AddAttribute(constant, "value", onnx::AttributeProto::TENSOR)->mutable_t() = Tensor("C", 3 * unit, 7);
  AddValueInfo(then_branch->mutable_output(), "Y_then");
  onnx::GraphProto* else_branch = AddAttribute(branch, "else_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  else_branch->set_name("else");
  AddValueInfo(else_branch->mutable_output(), "Y_else");

  onnx::NodeProto* custom = graph->add_node();
  custom->set_name("custom");
  custom->set_op_type("Custom");
  custom->set_domain("test");
  onnx::AttributeProto* list = AddAttribute(custom, "list", onnx::AttributeProto::TENSORS);
  *list->add_tensors() = Tensor("L0", 11 * unit / 10, 8);
  *list->add_tensors() = Tensor("L1", 20, 9);
  onnx::AttributeProto* one_sparse = AddAttribute(custom, "sparse", onnx::AttributeProto::SPARSE_TENSOR);
  *one_sparse->mutable_sparse_tensor()->mutable_values() = Tensor("SV", 5 * unit / 4, 10);
  onnx::AttributeProto* graphs = AddAttribute(custom, "graphs", onnx::AttributeProto::GRAPHS);
  *graphs->add_graphs()->add_initializer() = Tensor("G0", 7 * unit / 5, 11);

  onnx::FunctionProto* function = model.add_functions();
  function->set_name("F");
  function->set_domain("test");
  onnx::NodeProto* function_node = function->add_node();
  function_node->set_op_type("Constant");
  *AddAttribute(function_node, "value", onnx::AttributeProto::TENSOR)->mutable_t() = Tensor("FC", 11 * unit / 10, 12);

  onnx::TrainingInfoProto* training = model.add_training_info();
  *training->mutable_initialization()->add_initializer() = Tensor("TI", 13 * unit / 10, 13);
  *training->mutable_algorithm()->add_initializer() = Tensor("TA", 100, 14);
  return model;
}

/// Offsets at which a top-level field of `bytes` ends, read with protobuf's own wire format code.
std::set<size_t> TopLevelFieldEnds(const std::string& bytes) {
  std::set<size_t> ends;
  google::protobuf::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(bytes.data()),
                                               static_cast<int>(bytes.size()));
  while (const uint32_t tag = input.ReadTag()) {
    if (!google::protobuf::internal::WireFormatLite::SkipField(&input, tag)) break;
    ends.insert(static_cast<size_t>(input.CurrentPosition()));
  }
  return ends;
}

class ModelFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "model_file_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
    for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
      fs::permissions(entry.path(), fs::perms::owner_all, fs::perm_options::add);
    }
    fs::remove_all(dir_);
  }

  std::string PathOf(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  /// Writes `model` to a file named `name` and returns its path.
  std::string Save(const onnx::ModelProto& model, const std::string& name = "in.onnx") {
    const std::string path = PathOf(name);
    WriteFile(path, Serialize(model));
    return path;
  }

  /// Names of the files in `dir`.
  static std::set<std::string> Listing(const std::string& dir) {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
    return names;
  }

  /// Expects the file at `path` to parse with plain protobuf into `expected`.
  static void ExpectFileHolds(const std::string& path, const onnx::ModelProto& expected) {
    onnx::ModelProto written;
    ASSERT_TRUE(written.ParseFromString(ReadFile(path)));
    std::string difference;
    MessageDifferencer differencer;
    differencer.ReportDifferencesToString(&difference);
    EXPECT_TRUE(differencer.Compare(expected, written)) << difference;
  }

  /// Writes over the file a ModelFile was opened from, twice: the ModelFile must still hold the original
  /// bytes (the file is renamed over, not rewritten), whether it read the file or mapped it.
  static void ExpectInPlaceWritesWork(const std::string& in, const onnx::ModelProto& original) {
    ASSERT_EQ(chmod(in.c_str(), 0640), 0);
    ModelFile file = ModelFile::Open(in);
    file.model().mutable_graph()->set_name("first");
    file.Write(in);
    onnx::ModelProto expected = original;
    expected.mutable_graph()->set_name("first");
    ExpectFileHolds(in, expected);
    // The original file is now unlinked: a second in-place write must still find its payloads.
    file.model().mutable_graph()->set_name("second");
    file.Write(in);
    expected.mutable_graph()->set_name("second");
    ExpectFileHolds(in, expected);
    struct stat info;
    ASSERT_EQ(stat(in.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 07777, 0640u);
  }

  std::string dir_;
};

// ---------------------------------------------------------------------------------------------------
// Round trips

TEST_F(ModelFileTest, UnchangedModelIsWrittenByteIdentical) {
  const std::string in = Save(SampleModel());
  for (size_t threshold : {ModelFile::kMinPayloadThreshold, size_t{1024}, size_t{5000}, SIZE_MAX}) {
    const ModelFile file = ModelFile::Open(in, threshold);
    file.Write(PathOf("out.onnx"));
    EXPECT_EQ(ReadFile(PathOf("out.onnx")), ReadFile(in)) << "threshold " << threshold;
  }
}

TEST_F(ModelFileTest, TheModelIsParsedOntoAnArena) {
  // Allocation and teardown of a big graph are a few blocks, not one malloc and free per message.
  const ModelFile file = ModelFile::Open(Save(SampleModel()));
  EXPECT_NE(file.model().GetArena(), nullptr);
  EXPECT_EQ(file.model().graph().GetArena(), file.model().GetArena());
}

TEST_F(ModelFileTest, DefersOnlyPayloadsAtLeastTheThreshold) {
  const ModelFile file = ModelFile::Open(Save(SampleModel()), 1024);
  // W 4000, R 2000, S 1500, T_init 1200, C 3000, L0 1100, SV 1250, G0 1400, FC 1100, TI 1300
  EXPECT_EQ(file.deferred_count(), 10u);
  EXPECT_EQ(file.deferred_bytes(), 4000u + 2000 + 1500 + 1200 + 3000 + 1100 + 1250 + 1400 + 1100 + 1300);
  const onnx::GraphProto& graph = file.model().graph();
  const std::string& placeholder = graph.initializer(0).raw_data();
  ASSERT_EQ(placeholder.size(), ModelFile::kPlaceholderSize);
  EXPECT_EQ(std::memcmp(placeholder.data(), kPlaceholderMagic, 16), 0);
  EXPECT_EQ(graph.initializer(2).raw_data(), Payload(16, 3));                // B stays
  EXPECT_EQ(graph.sparse_initializer(0).indices().raw_data().size(), 800u);  // under the threshold
  EXPECT_EQ(graph.node(0).name(), "lstm");
}

// A rewrite must see that a state's default is zeros: a placeholder hides the value, and a rewrite of a
// rewrite then took rnnstate's own [1,128,28] zero default for a learned one (issue 23).
TEST_F(ModelFileTest, ZeroPayloadsUpToOneMiBStayInTheParse) {
  onnx::ModelProto model = SampleModel();
  onnx::TensorProto* zeros = model.mutable_graph()->add_initializer();
  zeros->set_name("h0");
  zeros->set_data_type(onnx::TensorProto::FLOAT);
  zeros->add_dims(1);
  zeros->add_dims(128);
  zeros->add_dims(28);
  zeros->set_raw_data(std::string(128 * 28 * 4, '\0'));
  onnx::TensorProto* big = model.mutable_graph()->add_initializer();
  *big = *zeros;
  big->set_name("big_zeros");
  big->set_raw_data(std::string(ModelFile::kMaxInlineZeros + 1, '\0'));
  const std::string in = Save(model);
  ModelFile file = ModelFile::Open(in, 1024);
  const onnx::GraphProto& graph = file.model().graph();
  const int count = graph.initializer_size();
  EXPECT_EQ(graph.initializer(count - 2).raw_data(), std::string(128 * 28 * 4, '\0'));  // kept
  EXPECT_EQ(graph.initializer(count - 1).raw_data().size(), ModelFile::kPlaceholderSize);  // over 1 MiB: deferred
  EXPECT_EQ(graph.initializer(0).raw_data().size(), ModelFile::kPlaceholderSize);  // not zeros: deferred
  file.Write(PathOf("out.onnx"));
  EXPECT_EQ(ReadFile(PathOf("out.onnx")), ReadFile(in));
}

TEST_F(ModelFileTest, ThresholdBelowPlaceholderSizeIsRaised) {
  const ModelFile file = ModelFile::Open(Save(SampleModel()), 1);
  EXPECT_EQ(file.model().graph().initializer(2).raw_data(), Payload(16, 3));  // 16 < kMinPayloadThreshold
  EXPECT_EQ(file.model().training_info(0).algorithm().initializer(0).raw_data().size(),
            ModelFile::kPlaceholderSize);  // 100 bytes: deferred
}

TEST_F(ModelFileTest, LargePayloadsRoundTrip) {
  const std::string in = Save(SampleModel(1 << 20));  // payloads of 0.8 to 4 MiB
  ModelFile file = ModelFile::Open(in);
  EXPECT_GT(file.deferred_bytes(), 10u << 20);
  file.model().mutable_graph()->mutable_node(0)->set_name("renamed");
  file.Write(PathOf("out.onnx"));
  onnx::ModelProto expected = SampleModel(1 << 20);
  expected.mutable_graph()->mutable_node(0)->set_name("renamed");
  ExpectFileHolds(PathOf("out.onnx"), expected);
}

TEST_F(ModelFileTest, MovedFileStillWrites) {
  const std::string in = Save(SampleModel());
  ModelFile first = ModelFile::Open(in);
  ModelFile second = std::move(first);
  second.Write(PathOf("out.onnx"));
  EXPECT_EQ(ReadFile(PathOf("out.onnx")), ReadFile(in));
}

TEST_F(ModelFileTest, DeeplyNestedGraphsRoundTrip) {
  onnx::ModelProto model = SampleModel(100);
  onnx::GraphProto* graph = model.mutable_graph();
  for (int level = 0; level < 25; ++level) {  // 3 messages a level: 75 deep, under protobuf's 100
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type("Loop");
    graph = AddAttribute(node, "body", onnx::AttributeProto::GRAPH)->mutable_g();
  }
  *graph->add_initializer() = Tensor("deep", 5000, 99);
  const std::string in = Save(model);
  const ModelFile file = ModelFile::Open(in);
  file.Write(PathOf("out.onnx"));
  EXPECT_EQ(ReadFile(PathOf("out.onnx")), ReadFile(in));
}

// The real models shipped with onnx's test data, all written by protobuf.
TEST_F(ModelFileTest, OnnxTestDataModelsRoundTripByteIdentical) {
  const fs::path root = "/usr/share/libonnx-testdata/data";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is not installed";
  int models = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().filename() != "model.onnx") continue;
    ++models;
    const std::string in = entry.path().string();
    for (size_t threshold : {ModelFile::kMinPayloadThreshold, ModelFile::kDefaultPayloadThreshold}) {
      const ModelFile file = ModelFile::Open(in, threshold);
      file.Write(PathOf("out.onnx"));
      ASSERT_EQ(ReadFile(PathOf("out.onnx")), ReadFile(in)) << in << " threshold " << threshold;
    }
  }
  EXPECT_GT(models, 100);
}

// ---------------------------------------------------------------------------------------------------
// Edits

TEST_F(ModelFileTest, EditedModelIsWrittenWithItsPayloads) {
  // The same edits on a ModelFile and on a fully parsed model must give the same model.
  const auto edit = [](onnx::ModelProto* model) {
    onnx::GraphProto* graph = model->mutable_graph();
    AddValueInfo(graph->mutable_output(), "H");        // add an output
    graph->mutable_node(0)->set_name("lstm_renamed");  // rename a node
    onnx::GraphProto* then_branch = graph->mutable_node(1)->mutable_attribute(0)->mutable_g();
    *then_branch->add_initializer() = graph->initializer(0);  // move W into a subgraph...
    graph->mutable_initializer()->DeleteSubrange(0, 1);       // ...out of the main graph
    graph->mutable_initializer()->DeleteSubrange(0, 1);       // drop R
    onnx::GraphProto* else_branch = graph->mutable_node(1)->mutable_attribute(1)->mutable_g();
    onnx::NodeProto* constant = else_branch->add_node();  // copy C into a new Constant
    constant->set_op_type("Constant");
    *AddAttribute(constant, "value", onnx::AttributeProto::TENSOR)->mutable_t() = then_branch->node(0).attribute(0).t();
    *model->add_functions()->add_node() = *constant;  // and once more into a function
    model->mutable_training_info()->Clear();          // drop TI
  };
  ModelFile file = ModelFile::Open(Save(SampleModel()));
  edit(&file.model());
  file.Write(PathOf("out.onnx"));
  onnx::ModelProto expected = SampleModel();
  edit(&expected);
  ExpectFileHolds(PathOf("out.onnx"), expected);
  // Written deterministically by protobuf's rules, so writing the expected model gives the same bytes.
  EXPECT_EQ(ReadFile(PathOf("out.onnx")), Serialize(expected));
}

TEST_F(ModelFileTest, InPlaceWriteReplacesTheInput) {
  ExpectInPlaceWritesWork(Save(SampleModel()), SampleModel());  // small: read into memory
  EXPECT_EQ(Listing(dir_), std::set<std::string>{"in.onnx"});
}

TEST_F(ModelFileTest, InPlaceWriteReplacesAMappedInput) {
  ExpectInPlaceWritesWork(Save(SampleModel(1 << 20)), SampleModel(1 << 20));  // large: mapped
  EXPECT_EQ(Listing(dir_), std::set<std::string>{"in.onnx"});
}

TEST_F(ModelFileTest, PlaceholderCopiedOutsideRawDataIsRefused) {
  ModelFile file = ModelFile::Open(Save(SampleModel()));
  file.model().set_doc_string(file.model().graph().initializer(0).raw_data());
  ExpectError([&] { file.Write(PathOf("out.onnx")); }, ExitCode::kCannotWrite, "outside TensorProto.raw_data");
  EXPECT_EQ(Listing(dir_), std::set<std::string>{"in.onnx"});
}

TEST_F(ModelFileTest, PlaceholderWithUnknownIndexIsRefused) {
  ModelFile file = ModelFile::Open(Save(SampleModel()));
  std::string placeholder = file.model().graph().initializer(0).raw_data();
  placeholder[20] = '\x7f';
  file.model().mutable_graph()->mutable_initializer(0)->set_raw_data(placeholder);
  ExpectError([&] { file.Write(PathOf("out.onnx")); }, ExitCode::kCannotWrite, "index out of range");
  EXPECT_EQ(Listing(dir_), std::set<std::string>{"in.onnx"});
}

// ---------------------------------------------------------------------------------------------------
// Bad input

TEST_F(ModelFileTest, MissingFileDirectoryAndEmptyFileAreBadInput) {
  ExpectError([&] { ModelFile::Open(PathOf("missing.onnx")); }, ExitCode::kBadInput, "cannot open");
  ExpectError([&] { ModelFile::Open(dir_); }, ExitCode::kBadInput, "is a directory");
  WriteFile(PathOf("empty.onnx"), "");
  ExpectError([&] { ModelFile::Open(PathOf("empty.onnx")); }, ExitCode::kBadInput, "empty file");
}

TEST_F(ModelFileTest, MalformedWireFormatIsBadInput) {
  const struct {
    std::string bytes;
    std::string message;
  } cases[] = {
      {"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "bad varint in a field tag"},
      {std::string("\x08\x80", 2), "bad varint in field 1"},
      {"\x0f", "invalid wire type 7"},
      {"\x0b\x0c", "invalid wire type 3"},
      {std::string("\x00", 1), "invalid field number"},
      {"\x3a\x05\x0a", "field 7 has length 5 but only 1 bytes remain in the file"},
      {"\x3a\x03\x0a\x05\x0a", "field 1 has length 5 but only 1 bytes remain in its enclosing message"},
      {"\x11\x01\x02", "field 2 runs past the file"},
  };
  for (const auto& test : cases) {
    WriteFile(PathOf("bad.onnx"), test.bytes);
    ExpectError([&] { ModelFile::Open(PathOf("bad.onnx")); }, ExitCode::kBadInput, test.message);
  }
}

TEST_F(ModelFileTest, NonModelsAreBadInput) {
  WriteFile(PathOf("text.onnx"), "this is not an ONNX model\n");
  ExpectError([&] { ModelFile::Open(PathOf("text.onnx")); }, ExitCode::kBadInput, "not a valid ONNX model");
  onnx::ModelProto no_graph;
  no_graph.set_ir_version(8);
  ExpectError([&] { ModelFile::Open(Save(no_graph, "no_graph.onnx")); }, ExitCode::kBadInput, "has no graph");
  // A known field holding a message that protobuf rejects (a ValueInfoProto.type that is not a TypeProto).
  WriteFile(PathOf("bad_type.onnx"), std::string("\x3a\x06\x5a\x04\x12\x02\x0f\x00", 8));
  ExpectError([&] { ModelFile::Open(PathOf("bad_type.onnx")); }, ExitCode::kBadInput, "protobuf cannot parse");
}

TEST_F(ModelFileTest, NestingDeeperThanProtobufAllowsIsBadInput) {
  onnx::ModelProto model;
  onnx::GraphProto* graph = model.mutable_graph();
  for (int level = 0; level < 40; ++level) {
    graph = AddAttribute(graph->add_node(), "body", onnx::AttributeProto::GRAPH)->mutable_g();
  }
  ExpectError([&] { ModelFile::Open(Save(model)); }, ExitCode::kBadInput, "nested deeper than 100");
}

TEST_F(ModelFileTest, InputContainingThePlaceholderMarkerIsRefused) {
  onnx::ModelProto model = SampleModel();
  model.set_doc_string(std::string(reinterpret_cast<const char*>(kPlaceholderMagic), 16));
  ExpectError([&] { ModelFile::Open(Save(model)); }, ExitCode::kBadInput, "placeholder marker");
}

// A cut at a top-level field boundary is a valid, shorter model; any other cut leaves a field incomplete.
TEST_F(ModelFileTest, TruncationAtEveryOffsetIsDetected) {
  const std::string bytes = Serialize(SampleModel(40));
  const std::set<size_t> ends = TopLevelFieldEnds(bytes);
  const std::string path = PathOf("cut.onnx");
  size_t opened = 0;
  for (size_t size = 1; size < bytes.size(); ++size) {
    const std::string cut = bytes.substr(0, size);
    WriteFile(path, cut);
    onnx::ModelProto reference;
    const bool valid = ends.count(size) > 0 && reference.ParseFromString(cut) && reference.has_graph();
    try {
      const ModelFile file = ModelFile::Open(path, ModelFile::kMinPayloadThreshold);
      ASSERT_TRUE(valid) << "opened a model cut at " << size;
      file.Write(PathOf("out.onnx"));
      ASSERT_EQ(ReadFile(PathOf("out.onnx")), cut) << "cut at " << size;
      ++opened;
    } catch (const Error& error) {
      ASSERT_FALSE(valid) << "refused a model cut at a field boundary " << size << ": " << error.what();
      ASSERT_EQ(error.code(), ExitCode::kBadInput);
    }
  }
  EXPECT_GT(opened, 0u);
}

// Differential fuzzing against protobuf: whatever ModelFile opens, protobuf parses to the same model.
TEST_F(ModelFileTest, RandomAndMutatedInputNeverCrashes) {
  const std::string original = Serialize(SampleModel(60));
  const std::string path = PathOf("fuzz.onnx");
  std::mt19937 random(12345);
  size_t opened = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bytes;
    if (round % 3 == 0) {
      bytes = Payload(1 + random() % 300, static_cast<uint32_t>(round));
    } else {
      bytes = original;
      for (int flips = 1 + random() % 4; flips > 0; --flips)
        bytes[random() % bytes.size()] = static_cast<char>(random());
    }
    WriteFile(path, bytes);
    try {
      const ModelFile file = ModelFile::Open(path, 32);
      file.Write(PathOf("out.onnx"));
      onnx::ModelProto reference;
      ASSERT_TRUE(reference.ParseFromString(bytes)) << "round " << round;
      ExpectFileHolds(PathOf("out.onnx"), reference);
      ++opened;
    } catch (const Error& error) {
      ASSERT_EQ(error.code(), ExitCode::kBadInput) << error.what();
    }
  }
  EXPECT_GT(opened, 100u);
}

// ---------------------------------------------------------------------------------------------------
// Write failures leave nothing behind

TEST_F(ModelFileTest, WriteToMissingDirectoryFails) {
  const ModelFile file = ModelFile::Open(Save(SampleModel()));
  ExpectError([&] { file.Write(PathOf("no/such/dir/out.onnx")); }, ExitCode::kCannotWrite, "cannot create");
  EXPECT_EQ(Listing(dir_), std::set<std::string>{"in.onnx"});
}

TEST_F(ModelFileTest, WriteOverADirectoryFailsAndRemovesTheTemporary) {
  const ModelFile file = ModelFile::Open(Save(SampleModel()));
  fs::create_directory(PathOf("out.onnx"));
  WriteFile(PathOf("out.onnx/keep"), "x");
  ExpectError([&] { file.Write(PathOf("out.onnx")); }, ExitCode::kCannotWrite, "is not a regular file (a directory)");
  EXPECT_EQ(Listing(dir_), (std::set<std::string>{"in.onnx", "out.onnx"}));
  EXPECT_EQ(Listing(PathOf("out.onnx")), std::set<std::string>{"keep"});
}

// `-o /dev/full` as root renamed the temporary over the device node (issue 23): a destination that is
// neither a regular file nor a symlink is refused before anything is written, and left as it is.
TEST_F(ModelFileTest, WriteOverASpecialFileIsRefused) {
  const ModelFile file = ModelFile::Open(Save(SampleModel()));
  ASSERT_EQ(mkfifo(PathOf("fifo.onnx").c_str(), 0600), 0);
  ExpectError([&] { file.Write(PathOf("fifo.onnx")); }, ExitCode::kCannotWrite, "is not a regular file (a FIFO)");
  struct stat info;
  ASSERT_EQ(lstat(PathOf("fifo.onnx").c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
  EXPECT_EQ(Listing(dir_), (std::set<std::string>{"in.onnx", "fifo.onnx"}));
  if (mknod(PathOf("null.onnx").c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0) {  // /dev/null's numbers; root only
    ExpectError([&] { file.Write(PathOf("null.onnx")); }, ExitCode::kCannotWrite, "(a character device)");
    ASSERT_EQ(lstat(PathOf("null.onnx").c_str(), &info), 0);
    EXPECT_TRUE(S_ISCHR(info.st_mode));
  }
}

// A valid 255-byte name was refused ("File name too long"): the temporary's name was 16 bytes longer.
TEST_F(ModelFileTest, TheLongestNameIsWritten) {
  const ModelFile file = ModelFile::Open(Save(SampleModel()));
  const std::string name = std::string(250, 'n') + ".onnx";
  file.Write(PathOf(name));
  EXPECT_EQ(Listing(dir_), (std::set<std::string>{"in.onnx", name}));
  ExpectError([&] { file.Write(PathOf("n" + name)); }, ExitCode::kCannotWrite, "cannot create a file in");
  EXPECT_EQ(Listing(dir_), (std::set<std::string>{"in.onnx", name}));
}

/// Runs `action` in a child process and returns its exit status: 0 if it threw Error(kCannotWrite).
int InChild(const std::function<void()>& action) {
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      action();
      _exit(1);
    } catch (const Error& error) {
      _exit(error.code() == ExitCode::kCannotWrite ? 0 : 2);
    } catch (...) {
      _exit(3);
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

TEST_F(ModelFileTest, WriteToUnwritableDirectoryFails) {
  const ModelFile file = ModelFile::Open(Save(SampleModel()));
  fs::create_directory(PathOf("locked"));
  ASSERT_EQ(chmod(PathOf("locked").c_str(), 0555), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  // Root writes anywhere: drop to an unprivileged user in a child to see the permission fail.
  const int status = InChild([&] {
    if (geteuid() == 0 && setuid(65534) != 0) _exit(4);
    file.Write(PathOf("locked/out.onnx"));
  });
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(Listing(PathOf("locked")).empty());
}

TEST_F(ModelFileTest, FailureMidWriteKeepsTheOldOutput) {
  // Payloads of 80 KiB and more, which the kernel copies file to file: a failure can hit either path.
  const ModelFile file = ModelFile::Open(Save(SampleModel(80 << 10)));
  WriteFile(PathOf("out.onnx"), "old content");
  for (rlim_t size_limit : {rlim_t{5000}, rlim_t{300000}, rlim_t{1200000}}) {
    // A file size limit makes the write fail halfway, after the temporary has received some bytes.
    const int status = InChild([&] {
      signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{size_limit, size_limit};
      setrlimit(RLIMIT_FSIZE, &limit);
      file.Write(PathOf("out.onnx"));
    });
    EXPECT_EQ(status, 0) << "limit " << size_limit;
    EXPECT_EQ(ReadFile(PathOf("out.onnx")), "old content");
    EXPECT_EQ(Listing(dir_), (std::set<std::string>{"in.onnx", "out.onnx"}));
  }
}

// Across file systems the kernel may refuse to copy file to file; the payloads then come from the input's
// bytes in memory: a mapping (a big file), or the process's own memory (a small file read whole), which
// must not be dropped once written as a mapping's pages are (that zeroed the heap: a second write came
// out wrong, and a batch crashed a few files later).
TEST_F(ModelFileTest, WritesAcrossFileSystems) {
  const fs::path shm = "/dev/shm";
  if (!fs::is_directory(shm)) GTEST_SKIP() << "no /dev/shm";
  // A file read whole (under 256 KiB: one 80 KiB payload) and one mapped, each with payloads the kernel
  // is asked to copy (64 KiB and more).
  onnx::ModelProto small;
  small.set_ir_version(8);
  small.add_opset_import()->set_version(17);
  small.mutable_graph()->set_name("main");
  *small.mutable_graph()->add_initializer() = Tensor("W", 80 << 10, 1);
  for (const onnx::ModelProto& model : {small, SampleModel(100 << 10)}) {
    const std::string bytes = Serialize(model);
    SCOPED_TRACE(bytes.size());
    const std::string in = (shm / ("model_file_test." + std::to_string(getpid()) + ".onnx")).string();
    WriteFile(in, bytes);
    ModelFile file = ModelFile::Open(in);
    unlink(in.c_str());  // the open file keeps its contents
    file.Write(PathOf("out.onnx"));
    EXPECT_EQ(ReadFile(PathOf("out.onnx")), bytes);
    file.Write(PathOf("again.onnx"));
    EXPECT_EQ(ReadFile(PathOf("again.onnx")), bytes);
  }
}

}  // namespace
}  // namespace rnnstate::model_file_test
