// What the time analyses read of a Pad's amounts, pinned at each of their three readers: the causal windows
// (a Pad before a window, and the shape a computed Pad lost), the time rule of data movement (does a Pad
// keep a chunk's frames?) and the frames' positions (a Pad of other axes between the frames and the Gather
// that picks them). Each reader is asked the same Pads: amounts as one constant, as PyTorch 1.13's chain of
// constant nodes (F.pad), over the axes an opset-18 `axes` input lists, in `reflect` mode, and amounts no
// constant decides (negative controls). Models as ONNX text.

#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"
#include "time/causal_windows.h"
#include "time/time_flow.h"
#include "values/shape_eval.h"

namespace rnnstate::pad_readers_test {
namespace {

using namespace test_names;

/// F.pad(x, (before, after)) on the last axis of a rank-`rank` input as PyTorch 1.13 exports it, defining
/// `pads` (its steps named "pads_...").
std::string TorchPads(int rank, int64_t before, int64_t after) {
  return TorchPadAmountsText({before, after}, rank, "pads", "pads_");
}

/// A model at `opset` over x [batch, 1, seq, 4] (time on axis 2) whose `pad` lines define `p` from x; its
/// frames' positions `r` pick the frames of p again (`g`, nn.Unfold's export).
struct PaddedFrames {
  PaddedFrames(const std::string& pad, int opset)
      : model(ParseModel("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + R"(]>
g (float[batch, 1, seq, 4] x) => (float[batch, 1, seq, 6] g) {
    s = Shape (x)
    two = Constant <value = int64 {2}> ()
    t = Gather <axis = 0> (s, two)
    zero = Constant <value = int64 {0}> ()
    one = Constant <value = int64 {1}> ()
    r = Range (zero, t, one)
)" + pad + R"(
    g = Gather <axis = 2> (p, r)
})")),
        index(model),
        flow(index, {InputAxis{"x", 2}}) {}
  /// The time fact of `name`, as text.
  std::string Of(const std::string& name) const { return TimeFactText(flow.Of({}, name)); }
  /// p's length along the frequency axis (3) as the causal windows complete it, -1 when not fixed.
  int64_t CompletedFrequency() const {
    const std::optional<SymShape> shape = CompletedShape(index, "p");
    return shape && shape->size() == 4 && (*shape)[3].fixed() ? (*shape)[3].value : -1;
  }
  onnx::ModelProto model;
  ModelIndex index;
  TimeFlow flow;
};

// --- a Pad of the frequency axis alone: the frames stay ------------------------------------------------

TEST(PadReaders, AConstantPadOfFrequencyKeepsTheFramesAtEveryReader) {
  const PaddedFrames f(R"(
    pads = Constant <value = int64[8] {0, 0, 0, 1, 0, 0, 0, 1}> ()
    p = Pad (x, pads))",
                       14);
  EXPECT_EQ(f.Of("p"), "frames on axis 2");
  EXPECT_EQ(f.Of("g"), "frames on axis 2");
  EXPECT_EQ(f.CompletedFrequency(), 6);
}

TEST(PadReaders, PyTorchsChainOfAmountsIsFoldedAtEveryReader) {
  const PaddedFrames f(TorchPads(4, 1, 1) + "    p = Pad (x, pads)", 14);
  EXPECT_EQ(f.Of("p"), "frames on axis 2");
  EXPECT_EQ(f.Of("g"), "frames on axis 2");
  EXPECT_EQ(f.CompletedFrequency(), 6);
}

TEST(PadReaders, AReflectPadOfFrequencyKeepsTheFrames) {
  const PaddedFrames f(R"(
    pads = Constant <value = int64[8] {0, 0, 0, 1, 0, 0, 0, 1}> ()
    p = Pad <mode = "reflect"> (x, pads))",
                       14);
  EXPECT_EQ(f.Of("p"), "frames on axis 2");
  EXPECT_EQ(f.Of("g"), "frames on axis 2");
  EXPECT_EQ(f.CompletedFrequency(), 6);
}

TEST(PadReaders, AnOpset18PadOverListedAxesIsReadOverThem) {
  for (const char* axes : {"{3}", "{-1}"}) {
    SCOPED_TRACE(axes);
    const PaddedFrames f(std::string(R"(
    pads = Constant <value = int64[2] {1, 1}> ()
    axes = Constant <value = int64[1] )") +
                             axes + R"(> ()
    p = Pad (x, pads, , axes))",
                         18);
    EXPECT_EQ(f.Of("p"), "frames on axis 2");
    // The frames' positions refused a Pad that lists its axes before the readers were one.
    EXPECT_EQ(f.Of("g"), "frames on axis 2");
    EXPECT_EQ(f.CompletedFrequency(), 6);
  }
}

// --- negative controls: time padded, or amounts nothing decides ----------------------------------------

TEST(PadReaders, APadOfTimeBreaksTheFramesAtEveryReader) {
  for (const bool listed : {false, true}) {
    SCOPED_TRACE(listed ? "axes listed" : "every axis");
    const PaddedFrames f(listed ? R"(
    pads = Constant <value = int64[2] {1, 0}> ()
    axes = Constant <value = int64[1] {2}> ()
    p = Pad (x, pads, , axes))"
                                : R"(
    pads = Constant <value = int64[8] {0, 0, 1, 0, 0, 0, 0, 0}> ()
    p = Pad (x, pads))",
                         listed ? 18 : 14);
    EXPECT_EQ(f.Of("p"), "frames on axis 2, inexact");
    EXPECT_EQ(f.Of("g"), "mixed");
    EXPECT_EQ(f.CompletedFrequency(), 4);
  }
}

TEST(PadReaders, AmountsOrAxesNoConstantDecidesAreNotRead) {
  const PaddedFrames computed(R"(
    s4 = Shape (x)
    p = Pad (x, s4))",
                              14);
  EXPECT_EQ(computed.Of("p"), "mixed");
  EXPECT_EQ(computed.Of("g"), "mixed");
  EXPECT_EQ(computed.CompletedFrequency(), -1);
  const PaddedFrames axes_computed(R"(
    pads = Constant <value = int64[2] {1, 1}> ()
    axes = Gather <axis = 0> (s, two)
    p = Pad (x, pads, , axes))",
                                   18);
  EXPECT_EQ(axes_computed.Of("p"), "mixed");
  EXPECT_EQ(axes_computed.Of("g"), "mixed");
  EXPECT_EQ(axes_computed.CompletedFrequency(), -1);
}

// --- a Pad before a window over time ------------------------------------------------------------------

/// The causal windows of a model at `opset` whose `pad` lines define `p` from x [batch, 2, seq] (time on
/// axis 2), read by a Conv of kernel 3: "window:pad:fill" each.
std::vector<std::string> WindowsAfter(const std::string& pad, int opset) {
  const onnx::ModelProto model = ParseModel("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
                                            R"(]>
g (float[batch, 2, seq] x, float[4, 2, 3] w) => (float[batch, 4, seq] y) {
)" + pad + R"(
    y = Conv (p, w)
})");
  const ModelIndex index(model);
  const TimeFlow flow(index, {InputAxis{"x", 2}});
  std::vector<std::string> found;
  for (const CausalWindow& w : FindCausalWindows(index, flow)) {
    found.push_back(model.graph().node(w.window).output(0) + ":" +
                    (w.pad < 0 ? "-" : model.graph().node(w.pad).output(0)) + ":" + w.fill);
  }
  return found;
}

TEST(PadReaders, APadOfTheSpanBeforeTimeIsCausalHoweverItsAmountsAreWritten) {
  EXPECT_THAT(WindowsAfter(R"(
    pads = Constant <value = int64[6] {0, 0, 2, 0, 0, 0}> ()
    p = Pad (x, pads))",
                           14),
              ElementsAre("y:p:"));
  EXPECT_THAT(WindowsAfter(TorchPads(3, 2, 0) + "    p = Pad (x, pads)", 14), ElementsAre("y:p:"));
  EXPECT_THAT(WindowsAfter(TorchPads(3, 2, 0) + "    p = Pad <mode = \"reflect\"> (x, pads)", 14),
              ElementsAre("y:p:reflect"));
  for (const char* axes : {"{2}", "{-1}"}) {
    SCOPED_TRACE(axes);
    const std::vector<std::string> found = WindowsAfter(std::string(R"(
    pads = Constant <value = int64[2] {2, 0}> ()
    axes = Constant <value = int64[1] )") + axes + R"(> ()
    p = Pad (x, pads, , axes))",
                                                        18);
    // Read against the rank of the Pad's input: onnx 1.12 infers no shape for its output at opset 18 (it
    // knows Pad by its opset-13 schema), so the causal windows found none before the readers were one.
    EXPECT_THAT(found, ElementsAre("y:p:"));
  }
}

TEST(PadReaders, APadThatIsNotTheSpanBeforeTimeIsNoCausalWindow) {
  // Time padded on both sides, padded after (listed axes: a lookahead), amounts nothing decides.
  EXPECT_THAT(WindowsAfter(TorchPads(3, 1, 1) + "    p = Pad (x, pads)", 14), IsEmpty());
  EXPECT_THAT(WindowsAfter(R"(
    pads = Constant <value = int64[2] {0, 2}> ()
    axes = Constant <value = int64[1] {2}> ()
    p = Pad (x, pads, , axes))",
                           18),
              IsEmpty());
  EXPECT_THAT(WindowsAfter(R"(
    s3 = Shape (x)
    two = Constant <value = int64[6] {0, 0, 2, 0, 0, 0}> ()
    pads = Add (s3, two)
    p = Pad (x, pads))",
                           14),
              IsEmpty());
}

}  // namespace
}  // namespace rnnstate::pad_readers_test
