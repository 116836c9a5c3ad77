// The window a Conv, ConvTranspose or pooling node slides along one spatial axis (time/time_window.h):
// kernel from `kernel_shape` or the weight, stride, dilation, pads per axis, auto_pad resolved, a
// ConvTranspose at stride 1 read as the window it equals; nullopt where the window is not known.

#include "time/time_window.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::time_window_test {
namespace {

using namespace test_names;

/// The windows of the nodes of `body` (opset 14), by output name.
struct Windows {
  explicit Windows(const std::string& body)
      : model(ParseModel("<ir_version: 8, opset_import: [\"\" : 14]>\n" + body)), index(model) {}
  /// "kernel/stride/dilation/before/after" plus " transpose" or " flipped", or "none".
  std::string Of(const std::string& output, int64_t axis = 2, int rank = 3) const {
    for (const auto& node : model.graph().node()) {
      if (node.output(0) != output) continue;
      const std::optional<TimeWindow> w = ReadTimeWindow(index, {}, node, axis, rank);
      if (!w) return "none";
      return std::to_string(w->kernel) + "/" + std::to_string(w->stride) + "/" + std::to_string(w->dilation) + "/" +
             std::to_string(w->pad_before) + "/" + std::to_string(w->pad_after) + (w->transpose ? " transpose" : "") +
             (w->flipped ? " flipped" : "");
    }
    return "no node";
  }
  onnx::ModelProto model;
  ModelIndex index;
};

const char* kWindows = R"(g (float[batch, 2, seq] x, float[4, 2, 5] w5, float[2, 4, 3] wt, float[4, 2, 3, 3] w2d,
    float[batch, 2, 8, seq] image, float w_unknown) => (float[batch, 4, seq] causal) {
  causal = Conv <pads = [4, 0]> (x, w5)
  dilated = Conv <dilations = [2], strides = [2]> (x, w5)
  pool = MaxPool <kernel_shape = [3], pads = [1, 2]> (x)
  upper = AveragePool <kernel_shape = [4], auto_pad = "SAME_UPPER"> (x)
  lower = AveragePool <kernel_shape = [4], auto_pad = "SAME_LOWER"> (x)
  valid = Conv <auto_pad = "VALID", pads = [1, 1]> (x, w5)
  same_t = ConvTranspose <pads = [2, 2]> (x, wt)
  causal_t = ConvTranspose <pads = [0, 2]> (x, wt)
  strided_t = ConvTranspose <strides = [2], pads = [1, 1]> (x, wt)
  padded_t = ConvTranspose <output_padding = [1], pads = [1, 1]> (x, wt)
  over_cropped_t = ConvTranspose <pads = [3, 0]> (x, wt)
  image_conv = Conv <pads = [1, 2, 1, 0]> (image, w2d)
  unknown = Conv (x, w_unknown)
  zero_stride = Conv <strides = [0]> (x, w5)
})";

TEST(ReadTimeWindow, ReadsTheKernelFromTheAttributeOrTheWeight) {
  const Windows w(kWindows);
  EXPECT_EQ(w.Of("causal"), "5/1/1/4/0");
  EXPECT_EQ(w.Of("dilated"), "5/2/2/0/0");
  EXPECT_EQ(w.Of("pool"), "3/1/1/1/2");
}

TEST(ReadTimeWindow, ResolvesAutoPad) {
  const Windows w(kWindows);
  // A span of 3: SAME_UPPER puts the larger half after, SAME_LOWER before; VALID pads nothing.
  EXPECT_EQ(w.Of("upper"), "4/1/1/1/2");
  EXPECT_EQ(w.Of("lower"), "4/1/1/2/1");
  EXPECT_EQ(w.Of("valid"), "5/1/1/0/0");
}

TEST(ReadTimeWindow, ReadsAConvTransposeAtStrideOneAsTheWindowItEquals) {
  const Windows w(kWindows);
  EXPECT_EQ(w.Of("same_t"), "3/1/1/0/0 flipped");
  EXPECT_EQ(w.Of("causal_t"), "3/1/1/2/0 flipped");
  // At a stride, with output_padding, or cropping more than its span, it stays a transpose.
  EXPECT_EQ(w.Of("strided_t"), "3/2/1/1/1 transpose");
  EXPECT_EQ(w.Of("padded_t"), "3/1/1/1/1 transpose");
  EXPECT_EQ(w.Of("over_cropped_t"), "3/1/1/3/0 transpose");
}

TEST(ReadTimeWindow, ReadsTheAxisAsksOfSeveralSpatialAxes) {
  const Windows w(kWindows);
  EXPECT_EQ(w.Of("image_conv", 2, 4), "3/1/1/1/1");
  EXPECT_EQ(w.Of("image_conv", 3, 4), "3/1/1/2/0");
  EXPECT_EQ(w.Of("image_conv", 4, 4), "none");
}

TEST(ReadTimeWindow, IsUnknownWithoutAKernelAStrideOrASpatialAxis) {
  const Windows w(kWindows);
  EXPECT_EQ(w.Of("unknown"), "none");
  EXPECT_EQ(w.Of("zero_stride"), "none");
  EXPECT_EQ(w.Of("causal", 1), "none");
  EXPECT_EQ(w.Of("causal", 3), "none");
}

TEST(TimeWindow, SpansAndTextsAWindow) {
  TimeWindow window;
  window.kernel = 5;
  window.dilation = 2;
  window.pad_before = 8;
  EXPECT_EQ(window.Span(), 8);
  EXPECT_FALSE(window.PerFrame());
  EXPECT_EQ(window.Text(), "slides a window of 5 frames over time (dilation 2, stride 1; padding 8 before, 0 after)");
  TimeWindow one;
  EXPECT_TRUE(one.PerFrame());
  one.stride = 2;
  EXPECT_FALSE(one.PerFrame());
  TimeWindow spread;
  spread.kernel = 4;
  spread.stride = 2;
  spread.transpose = true;
  EXPECT_EQ(spread.Text(),
            "spreads each frame over a window of 4 frames over time (dilation 1, stride 2; padding 0 before, 0 after)");
  TimeWindow flipped;
  flipped.kernel = 3;
  flipped.flipped = true;
  EXPECT_THAT(flipped.Text(), HasSubstr("(a ConvTranspose at stride 1 read as the window it equals; dilation 1"));
}

}  // namespace
}  // namespace rnnstate::time_window_test
