// Which input axes chunked runs cut (time/time_sources.h): ChooseTimeAxes takes `--time-axis` first, then
// the metadata's record (an empty record kept as none), then the one symbolic dimension besides the batch
// or the axis the recurrences run along (with the fixed length of an export without dynamic axes), and
// none for a model without such an axis; DataInputs leaves out initializers' defaults and state inputs.

#include "time/time_sources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::time_sources_test {
namespace {

using namespace test_names;
using Source = TimeAxes::Source;

/// The time axes ChooseTimeAxes picks for the model `text`.
TimeAxes AxesOf(const std::string& text, const std::vector<InputAxis>& given = {},
                const std::optional<std::vector<InputAxis>>& recorded = std::nullopt) {
  const onnx::ModelProto model = ParseModel(text);
  const ModelIndex index(model);
  return ChooseTimeAxes(index, Analyze(index), given, recorded);
}

/// A GRU with weights as initializers and an initial state input h, on X of type `x_type`.
onnx::ModelProto GruWithState(const std::string& x_type) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g ()" + x_type + R"( X, float[1, batch, 3] h) => (float[?, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R, , , h)
})");
  AddFloatInitializer(*model.mutable_graph(), "W", {1, 9, 2}, {0.1f});
  AddFloatInitializer(*model.mutable_graph(), "R", {1, 9, 3}, {0.2f});
  return model;
}

TEST(ChooseTimeAxes, TakesTheGivenAxesFirstThenTheRecordedOnes) {
  const TimeAxes given = AxesOf(kGru, {InputAxis{"X", 1}}, std::vector<InputAxis>{InputAxis{"X", 0}});
  EXPECT_EQ(given.source, Source::kGiven);
  EXPECT_THAT(given.axes, ElementsAre(InputAxis{"X", 1}));
  const TimeAxes recorded = AxesOf(kGru, {}, std::vector<InputAxis>{InputAxis{"X", 0}});
  EXPECT_EQ(recorded.source, Source::kRecorded);
  EXPECT_THAT(recorded.axes, ElementsAre(InputAxis{"X", 0}));
  // A rewrite that found none recorded none: its rewrite keeps that rather than guessing again.
  const TimeAxes none = AxesOf(kGru, {}, std::vector<InputAxis>{});
  EXPECT_THAT(none.axes, IsEmpty());
  EXPECT_EQ(none.source, Source::kRecorded);
}

TEST(ChooseTimeAxes, FindsTheAxisOfTheRecurrenceInADynamicExport) {
  const TimeAxes found = AxesOf(kGru);
  EXPECT_THAT(found.axes, ElementsAre(InputAxis{"X", 0}));
  EXPECT_NE(found.source, Source::kNone);
  EXPECT_EQ(found.fixed_length, -1);
}

TEST(ChooseTimeAxes, FollowsTheRecurrenceOfAStaticExportAndKeepsItsLength) {
  const onnx::ModelProto model = GruWithState("float[5, 1, 2]");
  const ModelIndex index(model);
  const TimeAxes found = ChooseTimeAxes(index, Analyze(index), {}, std::nullopt);
  EXPECT_EQ(found.source, Source::kFollowed);
  EXPECT_THAT(found.axes, ElementsAre(InputAxis{"X", 0}));
  EXPECT_EQ(found.fixed_length, 5);
}

TEST(ChooseTimeAxes, FindsNoneInAModelOfOneFramePerCall) {
  const TimeAxes none = AxesOf(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 4] x) => (float[batch, 4] y) {
  y = Relu (x)
})");
  EXPECT_EQ(none.source, Source::kNone);
  EXPECT_THAT(none.axes, IsEmpty());
}

TEST(DataInputs, LeavesOutDefaultsAndStateInputs) {
  onnx::ModelProto model = GruWithState("float[seq, batch, 2]");
  // W also a graph input, with its initializer as the default: not data.
  auto* w = model.mutable_graph()->add_input();
  w->set_name("W");
  w->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  const ModelIndex index(model);
  EXPECT_THAT(DataInputs(index, Analyze(index)), ElementsAre("X"));
}

}  // namespace
}  // namespace rnnstate::time_sources_test
