// A Pad's amounts on one axis (ops/pad_amounts.h): the attribute (opset 2 to 10), input 1 as one constant
// or as PyTorch 1.13's chain of constant nodes (F.pad), the axes an opset-18 input 3 lists (negative ones
// too), each mode said, crops said; and the Pads whose amounts must not be read (negative controls):
// amounts or axes no constant decides, an `axes` input before opset 18, an axis listed twice or out of
// range, a list of the wrong length. Models as ONNX text.

#include "ops/pad_amounts.h"

#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::pad_amounts_test {
namespace {

using namespace test_names;

/// A model at `opset` over x [batch, 2, seq] whose `body` defines the Pad `p`.
struct PadModel {
  PadModel(const std::string& body, int opset)
      : model(ParseModel("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + R"(]>
g (float[batch, 2, seq] x) => (float[batch, 2, seq2] p) {
)" + body + "\n}")),
        index(model) {}
  const onnx::NodeProto& Pad() const { return NodeOfType(model.graph(), "Pad"); }
  /// "begin,end" on `axis` (rank 3 unless `rank` says), or "unknown".
  std::string On(int64_t axis, int rank = 3) const {
    const std::optional<AxisPadding> on = PadAmountsOn(index, {}, Pad(), axis, rank);
    return on ? std::to_string(on->begin) + "," + std::to_string(on->end) : "unknown";
  }
  onnx::ModelProto model;
  ModelIndex index;
};

TEST(PadAmounts, OneConstantInputPadsEachAxisInOrder) {
  const PadModel m(R"(
    pads = Constant <value = int64[6] {0, 1, 2, 0, 0, 3}> ()
    p = Pad (x, pads))",
                   13);
  EXPECT_EQ(m.On(0), "0,0");
  EXPECT_EQ(m.On(1), "1,0");
  EXPECT_EQ(m.On(2), "2,3");
  EXPECT_EQ(m.On(2, /*rank=*/-1), "2,3");  // the rank unknown: the list's pairs are the axes
  const std::optional<PadAmounts> all = PadAmountsOf(m.index, {}, m.Pad(), 3);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->axes, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(all->PositionsOf(2), std::make_pair(size_t{2}, size_t{5}));
  EXPECT_EQ(all->mode, PadMode::kConstant);
}

TEST(PadAmounts, TheAttributeOfOpsetsBefore11IsRead) {
  const PadModel m(R"(
    p = Pad <pads = [0, 0, 2, 0, 0, 1]> (x))",
                   10);
  EXPECT_EQ(m.On(2), "2,1");
}

TEST(PadAmounts, PyTorchsChainOfConstantNodesIsFolded) {
  // F.pad(x, (4, 0)) on a rank-3 input, as torch 1.13 exports it.
  const PadModel m("\n" + TorchPadAmountsText({4, 0}, 3) + "    p = Pad (x, pads)", 14);
  EXPECT_EQ(m.On(2), "4,0");
  EXPECT_EQ(m.On(1), "0,0");
}

TEST(PadAmounts, AnOpset18PadPadsTheAxesItLists) {
  const PadModel m(R"(
    pads = Constant <value = int64[4] {2, 1, 0, 3}> ()
    axes = Constant <value = int64[2] {-1, 1}> ()
    p = Pad (x, pads, , axes))",
                   18);
  EXPECT_EQ(m.On(2), "2,0");
  EXPECT_EQ(m.On(1), "1,3");
  EXPECT_EQ(m.On(0), "0,0");  // not listed: left alone
  const std::optional<PadAmounts> all = PadAmountsOf(m.index, {}, m.Pad(), 3);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->axes, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(all->PositionsOf(1), std::make_pair(size_t{1}, size_t{3}));
  EXPECT_FALSE(all->PositionsOf(0));
  EXPECT_EQ(m.On(2, /*rank=*/-1), "unknown");  // -1 names no axis before the rank is known
}

TEST(PadAmounts, TheModeAndCropsAreSaid) {
  const std::pair<const char*, PadMode> modes[] = {{"constant", PadMode::kConstant},
                                                   {"edge", PadMode::kEdge},
                                                   {"reflect", PadMode::kReflect},
                                                   {"wrap", PadMode::kWrap},
                                                   {"mirror", PadMode::kOther}};
  for (const auto& [mode, expected] : modes) {
    SCOPED_TRACE(mode);
    const PadModel m(std::string(R"(
    pads = Constant <value = int64[6] {0, 0, -1, 0, 0, 2}> ()
    p = Pad <mode = ")") +
                         mode + R"("> (x, pads))",
                     19);
    const std::optional<AxisPadding> on = PadAmountsOn(m.index, {}, m.Pad(), 2, 3);
    ASSERT_TRUE(on);
    EXPECT_EQ(on->mode, expected);
    EXPECT_TRUE(on->Crops());
    EXPECT_FALSE(on->None());
    const std::optional<AxisPadding> batch = PadAmountsOn(m.index, {}, m.Pad(), 0, 3);
    ASSERT_TRUE(batch);
    EXPECT_TRUE(batch->None());
    EXPECT_FALSE(batch->Crops());
  }
}

TEST(PadAmounts, AmountsNothingDecidesAreNotRead) {
  EXPECT_EQ(PadModel(R"(
    s = Shape (x)
    pads = Concat <axis = 0> (s, s)
    p = Pad (x, pads))",
                     14)
                .On(2),
            "unknown");
  // The axes computed from the input's shape.
  EXPECT_EQ(PadModel(R"(
    pads = Constant <value = int64[2] {1, 0}> ()
    s = Shape (x)
    i = Constant <value = int64[1] {2}> ()
    axes = Gather <axis = 0> (s, i)
    p = Pad (x, pads, , axes))",
                     18)
                .On(2),
            "unknown");
}

TEST(PadAmounts, AxesAndListsThatDoNotFitAreNotRead) {
  const char* const cases[] = {
      // An `axes` input before opset 18 defines one.
      "pads = Constant <value = int64[2] {1, 0}> ()\n axes = Constant <value = int64[1] {2}> ()\n"
      " p = Pad (x, pads, , axes)",
      // An axis listed twice, one out of range, more amounts than axes.
      "pads = Constant <value = int64[4] {1, 0, 0, 0}> ()\n axes = Constant <value = int64[2] {2, -1}> ()\n"
      " p = Pad (x, pads, , axes)",
      "pads = Constant <value = int64[2] {1, 0}> ()\n axes = Constant <value = int64[1] {3}> ()\n"
      " p = Pad (x, pads, , axes)",
      "pads = Constant <value = int64[4] {1, 0, 0, 0}> ()\n axes = Constant <value = int64[1] {2}> ()\n"
      " p = Pad (x, pads, , axes)",
      // Without axes: amounts for another rank, or an odd count.
      "pads = Constant <value = int64[4] {0, 1, 0, 0}> ()\n p = Pad (x, pads)",
      "pads = Constant <value = int64[5] {0, 1, 0, 0, 0}> ()\n p = Pad (x, pads)",
  };
  int k = 0;
  for (const char* body : cases) {
    SCOPED_TRACE(body);
    EXPECT_EQ(PadModel(body, k++ == 0 ? 13 : 18).On(2), "unknown");
  }
}

}  // namespace
}  // namespace rnnstate::pad_amounts_test
