// The wire format as the lazy reader needs it (io/wire_splice.h): varints both ways and their limits, a
// plan of pieces that merges neighbouring spans and rolls back, placeholder magic counted where it
// overlaps, indices in little endian, and the rewriter that replaces raw_data values at any depth,
// recomputing every enclosing length, copies everything else byte for byte, and refuses a broken file.

#include "io/wire_splice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "graph/payload_placeholder.h"
#include "graph/proto_access.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::wire_splice_test {
namespace {

using namespace test_names;
using namespace wire;

const uint8_t* Data(const std::string& bytes) { return reinterpret_cast<const uint8_t*>(bytes.data()); }

TEST(Varint, EncodesAndReadsBackEveryWidth) {
  for (const uint64_t value :
       {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{300}, uint64_t{1} << 35, UINT64_MAX}) {
    uint8_t buffer[10];
    const size_t size = EncodeVarint(value, buffer);
    const uint8_t* pos = buffer;
    uint64_t read = 0;
    ASSERT_TRUE(ReadVarint(&pos, buffer + size, &read)) << value;
    EXPECT_EQ(read, value);
    EXPECT_EQ(pos, buffer + size);
  }
  uint8_t buffer[10];
  EXPECT_EQ(EncodeVarint(127, buffer), 1u);
  EXPECT_EQ(EncodeVarint(128, buffer), 2u);
  EXPECT_EQ(EncodeVarint(UINT64_MAX, buffer), 10u);
}

TEST(Varint, RefusesOneThatRunsPastTheEndOrIsTooLong) {
  const uint8_t truncated[] = {0x80, 0x80};
  const uint8_t* pos = truncated;
  uint64_t value = 0;
  EXPECT_FALSE(ReadVarint(&pos, truncated + 2, &value));
  std::vector<uint8_t> eleven(11, 0x80);
  eleven.back() = 0x01;
  pos = eleven.data();
  EXPECT_FALSE(ReadVarint(&pos, eleven.data() + eleven.size(), &value));
}

TEST(SplicePlan, MergesNeighbouringSpansAndRollsBack) {
  const std::string source = "abcdefgh";
  SplicePlan plan;
  plan.AppendSpan(Data(source), 3);
  plan.AppendSpan(Data(source) + 3, 2);  // contiguous: one piece
  plan.AppendSpan(Data(source), 0);      // nothing
  EXPECT_EQ(plan.pieces().size(), 1u);
  const SplicePlan::Mark mark = plan.GetMark();
  const uint8_t literal[] = {'X', 'Y'};
  plan.AppendLiteral(literal, 2);
  const SplicePlan::VarintSlot slot = plan.ReserveVarint();
  plan.AppendSpan(Data(source) + 6, 2);
  EXPECT_EQ(plan.SetVarint(slot, 300), 2u);
  EXPECT_EQ(plan.TotalSize(), 5u + 2 + 2 + 2);
  EXPECT_EQ(plan.Materialize(), std::string("abcdeXY\xac\x02gh", 11));
  plan.Rollback(mark);
  EXPECT_EQ(plan.Materialize(), "abcde");
  plan.AppendSpan(Data(source) + 5, 1);  // contiguous with the span before the mark again
  EXPECT_EQ(plan.pieces().size(), 1u);
  EXPECT_EQ(plan.Materialize(), "abcdef");
}

TEST(CountMagic, CountsEveryWholeOccurrence) {
  const std::string magic(reinterpret_cast<const char*>(kPlaceholderMagic), sizeof(kPlaceholderMagic));
  EXPECT_EQ(CountMagic(Data(std::string("nothing here")), 12), 0u);
  const std::string twice = "x" + magic + "y" + magic;
  EXPECT_EQ(CountMagic(Data(twice), twice.size()), 2u);
  EXPECT_EQ(CountMagic(Data(twice), twice.size() - 1), 1u);  // the second cut short
  EXPECT_EQ(CountMagic(Data(magic + magic), 2 * magic.size()), 2u);
}

TEST(PlaceholderIndex, IsEightBytesLittleEndianBothWays) {
  const std::array<uint8_t, 8> bytes = EncodeIndex(0x0102030405060708ULL);
  EXPECT_THAT(bytes, ElementsAre(8, 7, 6, 5, 4, 3, 2, 1));
  EXPECT_EQ(DecodeIndex(bytes.data()), 0x0102030405060708ULL);
  EXPECT_EQ(DecodeIndex(EncodeIndex(UINT64_MAX).data()), UINT64_MAX);
}

/// A model with raw_data in the main graph's initializer `w` and in an If branch's initializer `k`.
onnx::ModelProto RawModel() {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x, bool c) => (float[2] y) {
  y = If (c) <then_branch = t () => (float[2] a) { a = Add (x, k) },
              else_branch = e () => (float[2] b) { b = Add (x, w) }>
})");
  AddFloatInitializer(*model.mutable_graph(), "w", {2}, {1.0f, 2.0f});
  AddFloatInitializer(*GraphAttribute(*model.mutable_graph()->mutable_node(0), "then_branch"), "k", {2}, {3.0f});
  for (onnx::TensorProto* tensor :
       {model.mutable_graph()->mutable_initializer(0),
        GraphAttribute(*model.mutable_graph()->mutable_node(0), "then_branch")->mutable_initializer(0)}) {
    tensor->clear_float_data();
    tensor->set_raw_data(std::string(8, static_cast<char>(tensor->name()[0])));
  }
  return model;
}

TEST(WireRewriter, WithoutReplacementsCopiesTheModelByteForByte) {
  const std::string bytes = RawModel().SerializeAsString();
  WireRewriter rewriter(ExitCode::kBadInput, "cannot read",
                        [](const uint8_t*, uint64_t, SplicePlan*) { return std::optional<uint64_t>(); });
  EXPECT_EQ(rewriter.Run(Data(bytes), bytes.size()).Materialize(), bytes);
}

TEST(WireRewriter, ReplacesRawDataAtAnyDepthAndRecomputesTheLengths) {
  const onnx::ModelProto model = RawModel();
  const std::string bytes = model.SerializeAsString();
  std::vector<std::string> seen;
  const std::string longer = "a much longer payload than eight bytes";
  WireRewriter rewriter(ExitCode::kBadInput, "cannot read",
                        [&](const uint8_t* value, uint64_t size, SplicePlan* plan) -> std::optional<uint64_t> {
                          seen.emplace_back(reinterpret_cast<const char*>(value), size);
                          if (seen.back() != std::string(8, 'k')) return std::nullopt;
                          plan->AppendSpan(Data(longer), longer.size());
                          return longer.size();
                        });
  const std::string rewritten = rewriter.Run(Data(bytes), bytes.size()).Materialize();
  EXPECT_THAT(seen, ElementsAre(std::string(8, 'k'), std::string(8, 'w')));
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(rewritten));
  EXPECT_EQ(GraphAttribute(parsed.graph().node(0), "then_branch")->initializer(0).raw_data(), longer);
  onnx::ModelProto expected = model;
  GraphAttribute(*expected.mutable_graph()->mutable_node(0), "then_branch")
      ->mutable_initializer(0)
      ->set_raw_data(longer);
  EXPECT_EQ(Bytes(parsed), Bytes(expected));
}

TEST(WireRewriter, RefusesATruncatedFileWithItsCodeAndProblem) {
  const std::string bytes = RawModel().SerializeAsString();
  WireRewriter rewriter(ExitCode::kBadInput, "cannot read the model",
                        [](const uint8_t*, uint64_t, SplicePlan*) { return std::optional<uint64_t>(); });
  ExpectError([&] { rewriter.Run(Data(bytes), bytes.size() - 3); }, ExitCode::kBadInput, "cannot read the model: ");
}

}  // namespace
}  // namespace rnnstate::wire_splice_test
