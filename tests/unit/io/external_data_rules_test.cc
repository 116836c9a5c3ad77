// External data references read strictly: byte counts, keys, ranges against the data file, the length
// a tensor's dims require, and data files that are not regular files (never opened, never blocking).

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>

#include "io/data_placement.h"
#include "io/external_data.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::external_data_rules_test {
namespace {

using namespace test_names;

namespace fs = std::filesystem;

onnx::TensorProto External(std::vector<std::pair<std::string, std::string>> entries,
                           onnx::TensorProto::DataType type = onnx::TensorProto::FLOAT,
                           std::vector<int64_t> dims = {4}) {
  onnx::TensorProto tensor;
  tensor.set_name("W");
  tensor.set_data_type(type);
  for (int64_t dim : dims) tensor.add_dims(dim);
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] : entries) {
    auto* entry = tensor.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  return tensor;
}

TEST(ParseByteCount, AcceptsDecimalDigitsUpTo2To64Minus1) {
  EXPECT_EQ(ParseByteCount("0"), 0u);
  EXPECT_EQ(ParseByteCount("0072"), 72u);
  EXPECT_EQ(ParseByteCount("4611686018427387904"), uint64_t{1} << 62);
  EXPECT_EQ(ParseByteCount("18446744073709551615"), UINT64_MAX);
}

TEST(ParseByteCount, RefusesEverythingElse) {
  for (const char* text : {"", "-1", "+1", " 1", "1 ", "0x48", "1e3", "12abc", "1.0", "18446744073709551616",
                           "99999999999999999999999", "\xd9\xa1"}) {
    EXPECT_EQ(ParseByteCount(text), std::nullopt) << "'" << text << "'";
  }
}

TEST(ParseExternalData, ReadsLocationOffsetAndLength) {
  const ExternalDataRef ref =
      ParseExternalData(External({{"location", "w.bin"}, {"offset", "16"}, {"length", "8"}, {"checksum", "x"}}));
  EXPECT_EQ(ref.location, "w.bin");
  EXPECT_EQ(ref.offset, 16u);
  EXPECT_EQ(ref.length, 8u);
  const ExternalDataRef bare = ParseExternalData(External({{"location", "w.bin"}}));
  EXPECT_EQ(bare.offset, 0u);
  EXPECT_EQ(bare.length, std::nullopt);
}

TEST(ParseExternalData, RefusesAmbiguousOrMalformedEntries) {
  ExpectError(
      [] {
        ParseExternalData(External({{"location", "a"}, {"location", "b"}}));
      },
      ExitCode::kBadInput, "key 'location' is given twice");
  ExpectError(
      [] {
        ParseExternalData(External({{"location", "a"}, {"offset", "0"}, {"offset", "0"}}));
      },
      ExitCode::kBadInput, "key 'offset' is given twice");
  ExpectError([] { ParseExternalData(External({{"offset", "0"}})); }, ExitCode::kBadInput, "without a location");
  ExpectError(
      [] {
        ParseExternalData(External({{"location", "a"}, {"offset", "-8"}}));
      },
      ExitCode::kBadInput, "offset '-8' is not a byte count");
  ExpectError(
      [] {
        ParseExternalData(External({{"location", "a"}, {"length", ""}}));
      },
      ExitCode::kBadInput, "length '' is not a byte count");
}

TEST(CheckExternalData, QuotesNamesFromTheModelEscaped) {
  // A NUL in the location cut the message short ("external data 'w.bin"); bytes that are not printable
  // ASCII reach the terminal as \xNN, in the tensor's name too.
  onnx::ModelProto model;
  onnx::TensorProto tensor = External({{"location", std::string("w.bin\0junk", 10)}});
  tensor.set_name("W\x1b[2J");
  *model.mutable_graph()->add_initializer() = tensor;
  ExpectError(
      [&] { CheckExternalData(model, "."); }, ExitCode::kBadInput,
      "tensor 'W\\x1b[2J' at graph.initializer[0], external data 'w.bin\\x00junk': the location contains a NUL");
  ExpectError(
      [] {
        ParseExternalData(External({{"location", "a"}, {"offset", "\x7f"}}));
      },
      ExitCode::kBadInput, "offset '\\x7f' is not a byte count");
}

TEST(ExpectedByteSize, FixedSizeTypesTimesDims) {
  EXPECT_EQ(ExpectedByteSize(External({}, onnx::TensorProto::FLOAT, {1, 6, 2})), 48u);
  EXPECT_EQ(ExpectedByteSize(External({}, onnx::TensorProto::DOUBLE, {})), 8u);  // a scalar
  EXPECT_EQ(ExpectedByteSize(External({}, onnx::TensorProto::BOOL, {3})), 3u);
  EXPECT_EQ(ExpectedByteSize(External({}, onnx::TensorProto::FLOAT16, {3})), 6u);
  EXPECT_EQ(ExpectedByteSize(External({}, onnx::TensorProto::COMPLEX128, {2})), 32u);
  EXPECT_EQ(ExpectedByteSize(External({}, onnx::TensorProto::INT64, {5, 0, 1 << 30})), 0u);
  EXPECT_EQ(ExpectedByteSize(External({}, onnx::TensorProto::INT64, {1 << 30, 1 << 30, 1 << 30})), UINT64_MAX);
}

TEST(ExpectedByteSize, UnknownWithoutAFixedElementSizeOrWithNegativeDims) {
  EXPECT_EQ(ExpectedByteSize(External({}, onnx::TensorProto::STRING, {4})), std::nullopt);
  EXPECT_EQ(ExpectedByteSize(External({}, onnx::TensorProto::UNDEFINED, {4})), std::nullopt);
  EXPECT_EQ(ExpectedByteSize(External({}, static_cast<onnx::TensorProto::DataType>(99), {4})), std::nullopt);
  EXPECT_EQ(ExpectedByteSize(External({}, onnx::TensorProto::FLOAT, {4, -1})), std::nullopt);
}

TEST(CheckExternalRange, AcceptsARangeInsideTheFileOfTheRightLength) {
  const onnx::TensorProto tensor = External({}, onnx::TensorProto::FLOAT, {4});
  EXPECT_EQ(CheckExternalRange(tensor, {"w.bin", 0, 16}, 16), 16u);
  EXPECT_EQ(CheckExternalRange(tensor, {"w.bin", 8, 16}, 100), 16u);
  EXPECT_EQ(CheckExternalRange(tensor, {"w.bin", 4, std::nullopt}, 20), 16u);  // to the end of the file
  EXPECT_EQ(CheckExternalRange(External({}, onnx::TensorProto::FLOAT, {0}), {"w.bin", 20, std::nullopt}, 20), 0u);
  EXPECT_EQ(CheckExternalRange(External({}, onnx::TensorProto::STRING, {4}), {"w.bin", 0, 3}, 20), 3u);
}

TEST(CheckExternalRange, RefusesRangesPastTheEndOfTheFile) {
  const onnx::TensorProto tensor = External({}, onnx::TensorProto::FLOAT, {4});
  ExpectError(
      [&] {
        CheckExternalRange(tensor, {"w.bin", 21, std::nullopt}, 20);
      },
      ExitCode::kBadInput, "offset 21 is past the end of the file (20 bytes)");
  ExpectError(
      [&] {
        CheckExternalRange(tensor, {"w.bin", 8, 16}, 20);
      },
      ExitCode::kBadInput, "offset 8 + length 16 runs past the end of the file (20 bytes)");
  ExpectError(
      [&] {
        CheckExternalRange(tensor, {"w.bin", 0, uint64_t{1} << 62}, 20);
      },
      ExitCode::kBadInput, "runs past the end of the file");
  ExpectError(
      [&] {
        CheckExternalRange(tensor, {"w.bin", 16, UINT64_MAX}, 20);
      },
      ExitCode::kBadInput,
      "runs past the end of the file");  // offset + length overflows 64 bits
}

TEST(CheckExternalRange, RefusesALengthTheDimsDoNotTake) {
  const onnx::TensorProto tensor = External({}, onnx::TensorProto::FLOAT, {1, 6, 2});
  ExpectError(
      [&] {
        CheckExternalRange(tensor, {"w.bin", 0, 40}, 100);
      },
      ExitCode::kBadInput, "length 40 does not match the tensor: FLOAT [1,6,2] takes 48 bytes");
  ExpectError(
      [&] {
        CheckExternalRange(tensor, {"w.bin", 50, std::nullopt}, 100);
      },
      ExitCode::kBadInput, "50 bytes from offset 50 to the end of the file (no length given) does not match");
}

// ---------------------------------------------------------------------------------------------------
// Data files on disk

class ExternalDataFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "external_data_rules_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directories(root_ / "model");
    fs::create_directories(root_ / "out");
    std::ofstream(root_ / "model" / "w.bin", std::ios::binary) << std::string(16, 'w');
    alarm(20);  // a blocking open would hang the test: fail it instead
  }
  void TearDown() override {
    alarm(0);
    fs::remove_all(root_);
  }

  std::string ModelDir() const { return (root_ / "model").string(); }

  static onnx::ModelProto ModelWith(const std::vector<onnx::TensorProto>& tensors) {
    onnx::ModelProto model;
    for (const auto& tensor : tensors) *model.mutable_graph()->add_initializer() = tensor;
    return model;
  }

  /// Puts a special file of `kind` at model/special.bin.
  void MakeSpecial(const std::string& kind) {
    const std::string path = (root_ / "model" / "special.bin").string();
    if (kind == "fifo") {
      ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    }
    if (kind == "directory") fs::create_directory(path);
    if (kind == "socket") testing::MakeSocketFile(path);
  }

  fs::path root_;
};

TEST_F(ExternalDataFiles, ChecksEveryTensorAgainstItsFile) {
  const auto model =
      ModelWith({External({{"location", "w.bin"}, {"offset", "0"}, {"length", "8"}}, onnx::TensorProto::FLOAT, {2}),
                 External({{"location", "w.bin"}, {"offset", "8"}}, onnx::TensorProto::FLOAT, {2})});
  EXPECT_EQ(CheckExternalData(model, ModelDir()), std::vector<std::string>{"w.bin"});
  const auto past = ModelWith({External({{"location", "w.bin"}, {"offset", "8"}, {"length", "16"}})});
  ExpectError([&] { CheckExternalData(past, ModelDir()); }, ExitCode::kBadInput,
              "tensor 'W' at graph.initializer[0], external data 'w.bin': offset 8 + length 16 runs past the end");
  const auto missing_length = ModelWith({External({{"location", "w.bin"}}, onnx::TensorProto::FLOAT, {3})});
  ExpectError([&] { CheckExternalData(missing_length, ModelDir()); }, ExitCode::kBadInput, "no length given");
}

TEST_F(ExternalDataFiles, SpecialFilesAreRefusedWithoutBlocking) {
  for (const std::string kind : {"fifo", "socket", "directory"}) {
    fs::remove_all(root_ / "model" / "special.bin");
    MakeSpecial(kind);
    const auto model = ModelWith({External({{"location", "special.bin"}})});
    ExpectError([&] { CheckExternalData(model, ModelDir()); }, ExitCode::kBadInput,
                kind == "directory" ? "is a directory"
                                    : "not a regular file (a " + std::string(kind == "fifo" ? "FIFO" : kind) + ")");
  }
}

TEST_F(ExternalDataFiles, ProvidingNeverLinksOrReadsASpecialFile) {
  MakeSpecial("fifo");
  ExpectError([&] { ProvideExternalData({"special.bin"}, ModelDir(), (root_ / "out").string()).Keep(); },
              ExitCode::kBadInput, "not a regular file (a FIFO)");
  EXPECT_TRUE(fs::is_empty(root_ / "out"));
}

TEST_F(ExternalDataFiles, ProvidedLinkIsTheCheckedFile) {
  ProvideExternalData({"w.bin"}, ModelDir(), (root_ / "out").string()).Keep();
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(root_ / "out" / "w.bin")));
  EXPECT_TRUE(fs::equivalent(root_ / "out" / "w.bin", root_ / "model" / "w.bin"));
}

TEST_F(ExternalDataFiles, CopiedAcrossFileSystems) {
  const fs::path shm = "/dev/shm";
  if (!fs::is_directory(shm)) GTEST_SKIP() << "no /dev/shm";
  std::string pattern = (shm / "external_data_rules_test.XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  ProvideExternalData({"w.bin"}, ModelDir(), pattern).Keep();
  std::ifstream in(pattern + "/w.bin", std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), std::string(16, 'w'));
  EXPECT_EQ(std::distance(fs::directory_iterator(pattern), fs::directory_iterator()), 1);  // no temporary left
  fs::remove_all(pattern);
}

}  // namespace
}  // namespace rnnstate::external_data_rules_test
