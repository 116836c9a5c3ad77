// Pads that fill the frames before time otherwise than with zeros (time/pad_fill.h): a value other than 0,
// `edge` and `reflect` in front of a causal window are carried (CausalWindow::fill), where the rewrite can
// compute the Pad's amounts; negative controls that must not be: the same modes padding after time, on both
// sides or by more than the span, a Pad read twice, below opset 11 (amounts as an attribute), a value the
// model computes. Models as ONNX text.

#include "time/pad_fill.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"
#include "time/causal_windows.h"
#include "time/time_flow.h"

namespace rnnstate::pad_fill_test {
namespace {

using namespace test_names;

/// The causal windows of `body` (over x [batch, 2, seq], time on 2) at `opset`.
struct Filled {
  explicit Filled(const std::string& body, int opset = 14)
      : model(ParseModel("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\n" + body)),
        index(model),
        flow(index, {InputAxis{"x", 2}}),
        found(FindCausalWindows(index, flow)) {}
  /// "window:pad:fill:frames" for each window found.
  std::vector<std::string> Found() const {
    std::vector<std::string> texts;
    for (const CausalWindow& w : found) {
      texts.push_back(model.graph().node(w.window).output(0) + ":" +
                      (w.pad < 0 ? "-" : model.graph().node(w.pad).output(0)) + ":" +
                      (w.fill.empty() ? "zeros" : w.fill) + ":" + std::to_string(w.frames));
    }
    return texts;
  }
  /// PadFillOf of the node writing `output`.
  std::optional<std::string> FillOf(const std::string& output) const {
    for (const onnx::NodeProto& node : model.graph().node()) {
      if (node.output(0) == output) return PadFillOf(index, node);
    }
    ADD_FAILURE() << "no node writes " << output;
    return std::nullopt;
  }
  onnx::ModelProto model;
  ModelIndex index;
  TimeFlow flow;
  std::vector<CausalWindow> found;
};

const char* kFills = R"(g (float[batch, 2, seq] x, float[4, 2, 3] w) => (float[batch, 4, seq] y) {
    pads = Constant <value = int64[6] {0, 0, 2, 0, 0, 0}> ()
    half = Constant <value = float {0.5}> ()
    zero = Constant <value = float {0.0}> ()
    pc = Pad (x, pads, half)
    y = Conv (pc, w)
    pe = Pad <mode = "edge"> (x, pads)
    ye = Conv (pe, w)
    pr = Pad <mode = "reflect"> (x, pads)
    yr = MaxPool <kernel_shape = [3]> (pr)
    pz = Pad (x, pads, zero)
    yz = Conv (pz, w)
  })";

TEST(PadFill, AValueOtherThanZeroEdgeAndReflectAreFillsZerosAreNot) {
  const Filled f(kFills);
  EXPECT_EQ(f.FillOf("pc"), "constant");
  EXPECT_EQ(f.FillOf("pe"), "edge");
  EXPECT_EQ(f.FillOf("pr"), "reflect");
  EXPECT_EQ(f.FillOf("pz"), "");
}

TEST(PadFill, WindowsAfterAFillingPadOfTheirSpanInFrontAreCarriedWithTheFill) {
  const Filled f(kFills);
  // A MaxPool after a reflect Pad too: the Pad's frames are values, not the pool's own padding.
  EXPECT_THAT(f.Found(), ElementsAre("y:pc:constant:2", "ye:pe:edge:2", "yr:pr:reflect:2", "yz:pz:zeros:2"));
  // The flow with them streamed sees the chunk's frames through the Pads.
  const TimeFlow streamed(f.index, {InputAxis{"x", 2}}, {}, -1, {}, StreamedNodesOf(f.found));
  for (const char* out : {"y", "ye", "yr"}) {
    EXPECT_TRUE(streamed.Of(GraphPath{}, out).frames()) << out;
    EXPECT_FALSE(streamed.Of(GraphPath{}, out).broken) << out;
  }
}

TEST(PadFill, FillingPadsAfterTimeOnBothSidesOrBeyondTheSpanAreNotCarried) {
  const Filled f(R"(g (float[batch, 2, seq] x, float[4, 2, 3] w) => (float[batch, 4, seq] y) {
    after = Constant <value = int64[6] {0, 0, 0, 0, 0, 2}> ()
    pa = Pad <mode = "reflect"> (x, after)
    y = Conv (pa, w)
    both = Constant <value = int64[6] {0, 0, 1, 0, 0, 1}> ()
    pb = Pad <mode = "reflect"> (x, both)
    yb = Conv (pb, w)
    more = Constant <value = int64[6] {0, 0, 3, 0, 0, 0}> ()
    pm = Pad <mode = "edge"> (x, more)
    ym = Conv (pm, w)
    pads = Constant <value = int64[6] {0, 0, 2, 0, 0, 0}> ()
    pt = Pad <mode = "edge"> (x, pads)
    yt = Conv (pt, w)
    twice = Relu (pt)
  })");
  EXPECT_THAT(f.Found(), IsEmpty());
}

TEST(PadFill, BelowOpsetElevenOrWithAComputedValueNothingIsCarried) {
  // Below opset 11 the amounts are an attribute, which no call can change.
  const Filled old(R"(g (float[batch, 2, seq] x, float[4, 2, 3] w) => (float[batch, 4, seq] y) {
    pr = Pad <mode = "reflect", pads = [0, 0, 2, 0, 0, 0]> (x)
    y = Conv (pr, w)
    pc = Pad <value = 0.5, pads = [0, 0, 2, 0, 0, 0]> (x)
    yc = Conv (pc, w)
    pz = Pad <pads = [0, 0, 2, 0, 0, 0]> (x)
    yz = Conv (pz, w)
  })",
                   10);
  EXPECT_EQ(old.FillOf("pr"), std::nullopt);
  EXPECT_EQ(old.FillOf("pc"), std::nullopt);
  EXPECT_THAT(old.Found(), ElementsAre("yz:pz:zeros:2"));
  // A value the model computes from the data: not a constant a context can stand for.
  const Filled computed(R"(g (float[batch, 2, seq] x, float[4, 2, 3] w) => (float[batch, 4, seq] y) {
    pads = Constant <value = int64[6] {0, 0, 2, 0, 0, 0}> ()
    m = ReduceMean <keepdims = 0> (x)
    p = Pad (x, pads, m)
    y = Conv (p, w)
  })");
  EXPECT_EQ(computed.FillOf("p"), std::nullopt);
  EXPECT_THAT(computed.Found(), IsEmpty());
}

TEST(PadFill, AReflectingContextNeedsOneFrameMoreThanItsSpanOnTheFirstCall) {
  EXPECT_EQ(FirstChunkMin("reflect", 2, 1), 3);
  EXPECT_EQ(FirstChunkMin("reflect", 4, 2), 10);  // after a stride 2: each frame there is two input frames
  EXPECT_EQ(FirstChunkMin("edge", 4, 1), 0);
  EXPECT_EQ(FirstChunkMin("constant", 4, 1), 0);
  EXPECT_EQ(FirstChunkMin("", 4, 1), 0);
}

}  // namespace
}  // namespace rnnstate::pad_fill_test
