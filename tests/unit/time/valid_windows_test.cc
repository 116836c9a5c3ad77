// Windows without padding over time ("valid", time/causal_windows.h): a Conv or pool at stride 1 with no
// padding and no Pad in front is carried with a context whose first call holds no frames; the negative
// controls must not be: a strided overlapping window (its phase would not line up), a Pad on time in front
// that is not its span of zeros, auto_pad SAME, a window over frames chunks do not reproduce. Models as ONNX
// text.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"
#include "time/causal_windows.h"
#include "time/time_flow.h"

namespace rnnstate::valid_windows_test {
namespace {

using namespace test_names;

/// The windows `FindCausalWindows` carries in `body` (opset 14, x [batch, 2, seq], time on 2): "node:valid".
std::vector<std::string> Carried(const std::string& body) {
  const onnx::ModelProto model = ParseModel("<ir_version: 8, opset_import: [\"\" : 14]>\n" + body);
  const ModelIndex index(model);
  const TimeFlow flow(index, {InputAxis{"x", 2}});
  std::vector<std::string> texts;
  for (const CausalWindow& w : FindCausalWindows(index, flow)) {
    texts.push_back(model.graph().node(w.window).output(0) + ":" + (w.valid ? "valid" : "padded") + ":" +
                    std::to_string(w.frames));
  }
  return texts;
}

TEST(ValidWindows, AWindowWithoutPaddingAtStrideOneIsCarriedWithItsSpan) {
  EXPECT_THAT(Carried(R"(g (float[batch, 2, seq] x, float[4, 2, 3] w) => (float[batch, 4, seq2] c) {
    c = Conv (x, w)
    d = Conv <dilations = [2]> (x, w)
    m = MaxPool <kernel_shape = [3]> (x)
    a = AveragePool <kernel_shape = [2]> (x)
    v = Conv <auto_pad = "VALID"> (x, w)
    causal = Conv <pads = [2, 0]> (x, w)
  })"),
              ElementsAre("c:valid:2", "d:valid:4", "m:valid:2", "a:valid:1", "v:valid:2", "causal:padded:2"));
}

TEST(ValidWindows, StridesPadsOnTimeAndBrokenFramesAreNotCarried) {
  EXPECT_THAT(Carried(R"(g (float[batch, 2, seq] x, float[4, 2, 3] w) => (float[batch, 4, seq2] s) {
    s = Conv <strides = [2]> (x, w)
    same = Conv <auto_pad = "SAME_UPPER"> (x, w)
    pads = Constant <value = int64[6] {0, 0, 1, 0, 0, 0}> ()
    p = Pad (x, pads)
    after_pad = Conv (p, w)
    r = ReduceMean <axes = [2], keepdims = 1> (x)
    mixed = Add (x, r)
    over_mixed = Conv (mixed, w)
    apart = MaxPool <kernel_shape = [2], strides = [2]> (x)
  })"),
              ElementsAre());
}

}  // namespace
}  // namespace rnnstate::valid_windows_test
