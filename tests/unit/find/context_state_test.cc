// Context states recorded in metadata, recognized in the graph (find/context_state): the wiring
// `rewrite --input-context` writes (required, with its zero default's Expand, packed) holds; one defect
// at a time (wrong axis, first frames, one frame too many, the output or the front from elsewhere, the
// context behind the value, another node) must not.

#include "find/context_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate {
namespace {

using namespace test_names;

/// The wiring of a 4-frame context of audio [batch, seq] along axis 1, with `concat`, `slice` and
/// `front` (what the Concat reads before audio) replaceable one at a time.
std::string ContextModel(const std::string& concat = "joined = Concat <axis = 1> (front, audio)",
                         const std::string& slice = "ctx_out = Slice (joined, starts, ends, axes)",
                         const std::string& front = "front = Identity (ctx_in)", int opset = 14) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + R"(]>
g (float[batch, seq] audio, float[batch, 4] ctx_in) => (float[batch] y, float[batch, 4] ctx_out) {
  )" + front + R"(
  )" + concat + R"(
  starts = Constant <value = int64[1] {-4}> ()
  ends = Constant <value = int64[1] {9223372036854775807}> ()
  axes = Constant <value = int64[1] {1}> ()
  )" + slice + R"(
  y = ReduceSum <axes = [1], keepdims = 0> (joined)
})";
}

StatePair ContextPair(const std::string& input = "ctx_in") {
  StatePair pair = PairOf(input, "ctx_out", "joined", "main", kKindContext);
  pair.optional = false;
  pair.dtype = "float32";
  pair.shape = {MetaDim{-1, "batch"}, MetaDim{4, ""}};
  pair.batch_axis = 0;
  pair.init = kInitZeros;
  pair.context = ContextSpec{"audio", 1, 4, "", 0, "", false};
  return pair;
}

/// The findings for `text` (its Concat named "joined") with `pair` recorded.
std::vector<ContextFinding> Judge(const std::string& text, const StatePair& pair = ContextPair()) {
  onnx::ModelProto model = ParseModel(text);
  for (auto& node : *model.mutable_graph()->mutable_node()) {
    if (node.output(0) == "joined") node.set_name("joined");
  }
  const ModelIndex index(model);
  return FindContextStates(index, {pair});
}

std::string Problem(const std::string& text, const StatePair& pair = ContextPair()) {
  const std::vector<ContextFinding> findings = Judge(text, pair);
  return findings.size() == 1 ? findings[0].problem : "no finding";
}

TEST(ContextState, TheRewrittenWiringHolds) {
  const std::vector<ContextFinding> findings = Judge(ContextModel());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_TRUE(findings[0].holds()) << findings[0].problem;
  EXPECT_EQ(findings[0].concat, 1);
}

TEST(ContextState, TheZeroDefaultsExpandAndOldOpsetsSliceHold) {
  EXPECT_EQ(Problem(ContextModel("joined = Concat <axis = 1> (front, audio)",
                                 "ctx_out = Slice (joined, starts, ends, axes)",
                                 "target = Shape (audio)\n  front = Expand (ctx_in, target)")),
            "");
  EXPECT_EQ(Problem(ContextModel("joined = Concat <axis = 1> (front, audio)",
                                 "ctx_out = Slice <starts = [-4], ends = [9223372036854775807], axes = [1]> (joined)",
                                 "front = Identity (ctx_in)", 9)),
            "");
  // A negative axis counts from the back.
  EXPECT_EQ(Problem(ContextModel("joined = Concat <axis = -1> (front, audio)")), "");
}

TEST(ContextState, APackedMembersInnerValuesHold) {
  // --pack: the pair names values inside the graph, unpacked from and packed into the packed tensors.
  const std::string text = ContextModel("joined = Concat <axis = 1> (front, audio)",
                                        "last = Slice (joined, starts, ends, axes)\n  ctx_out = Identity (last)",
                                        "member = Identity (ctx_in)\n  front = Identity (member)");
  StatePair pair = ContextPair("member");
  pair.output = "ctx_out";
  EXPECT_EQ(Problem(text, pair), "");
}

TEST(ContextState, EachDefectIsNotRecognized) {
  using ::testing::HasSubstr;
  EXPECT_THAT(Problem(ContextModel("joined = Concat <axis = 0> (front, audio)")),
              HasSubstr("does not join a context in front of 'audio' along axis 1"));
  EXPECT_THAT(Problem(ContextModel("joined = Concat <axis = 1> (audio, front)")),
              HasSubstr("does not join a context in front"));
  EXPECT_THAT(Problem(ContextModel("joined = Add (front, audio)")), HasSubstr("no Concat 'joined'"));
  // The first frames, not the last; one frame too many; a step of 2.
  EXPECT_THAT(Problem(ContextModel("joined = Concat <axis = 1> (front, audio)",
                                   "ctx_out = Slice <starts = [0], ends = [4], axes = [1]> (joined)", "front = Identity (ctx_in)", 9)),
              HasSubstr("is not the last 4 frames"));
  EXPECT_THAT(Problem(ContextModel("joined = Concat <axis = 1> (front, audio)",
                                   "ctx_out = Slice <starts = [-5], ends = [9223372036854775807], axes = [1]> (joined)",
                                   "front = Identity (ctx_in)", 9)),
              HasSubstr("is not the last 4 frames"));
  EXPECT_THAT(Problem(ContextModel("joined = Concat <axis = 1> (front, audio)",
                                   "two = Constant <value = int64[1] {2}> ()\n  ctx_out = Slice (joined, starts, ends, axes, two)")),
              HasSubstr("is not the last 4 frames"));
  // The last frames of the value alone (what a call was fed), not of the concatenation.
  EXPECT_THAT(Problem(ContextModel("joined = Concat <axis = 1> (front, audio)",
                                   "ctx_out = Slice (audio, starts, ends, axes)")),
              HasSubstr("is not the last 4 frames"));
  // The front is zeros of the input's shape: the input's values never reach it.
  EXPECT_THAT(Problem(ContextModel("joined = Concat <axis = 1> (front, audio)",
                                   "ctx_out = Slice (joined, starts, ends, axes)",
                                   "shape = Shape (ctx_in)\n  front = ConstantOfShape (shape)")),
              HasSubstr("input 'ctx_in' does not reach the front of Concat 'joined'"));
}

TEST(ContextState, MetadataThatDoesNotFitIsNotRecognized) {
  StatePair other_value = ContextPair();
  other_value.context->value = "ctx_in";
  EXPECT_THAT(Problem(ContextModel(), other_value), ::testing::HasSubstr("does not join a context in front"));
  StatePair other_frames = ContextPair();
  other_frames.context->frames = 3;
  EXPECT_THAT(Problem(ContextModel(), other_frames), ::testing::HasSubstr("is not the last 3 frames"));
  StatePair without = ContextPair();
  without.context.reset();
  const std::vector<ContextFinding> findings = Judge(ContextModel(), without);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].problem_kind, CheckProblem::Kind::kBadMetadata);
  // Pairs of other kinds are not looked at.
  StatePair recurrent = ContextPair();
  recurrent.kind = "h";
  EXPECT_TRUE(Judge(ContextModel(), recurrent).empty());
}

}  // namespace
}  // namespace rnnstate
