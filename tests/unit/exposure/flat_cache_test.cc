// Strided exposures: GRU states the authors keep in a flat cache (UL-UNAS's inter_cache [1,1056]: per
// block, V = Reshape(Slice(cache, block), [1, batch, 2H]), h0 = Slice(V, last axis, [0:H] or [H:2H]);
// written back by Concat(Y_h, Y_h, -1) -> Reshape [1, -1] -> Concat(blocks, axis 1)). Each state is a
// box of the view [1, 2*batch, 2H] of the cache: recognized, recorded with its `view`, checked, kept
// through rewrite. A hand-written small copy: cache [1, 48], GRU batch 4, hidden 3, two blocks of two.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exposure/exposed_state.h"
#include "exposure_test_models.h"
#include "find/analysis.h"
#include "graph/model_index.h"
#include "pipeline_stages.h"
#include "rewrite/plan.h"
#include "rnnstate/metadata.h"
#include "test_models.h"
#include "test_names.h"
#include "views/check.h"

namespace rnnstate::flat_cache_test {
namespace {

using namespace test_names;

/// Four GRUs (batch 4, hidden 3) in two blocks of cache [1, 48]; `write` joins the blocks into cache_out.
std::string FlatCache(const std::string& write = "cache_out = Concat <axis = 1> (f1, f2)") {
  return kHeader + std::string(R"(g (float[seq, 4, 2] X, float[1, 48] cache, float[1, 9, 2] W, float[1, 9, 3] R)
    => (float[seq, 1, 4, 3] Ya, float[1, 48] cache_out) {
  zero = Constant <value = int64[1] {0}> ()
  one = Constant <value = int64[1] {1}> ()
  last = Constant <value = int64[1] {-1}> ()
  three = Constant <value = int64[1] {3}> ()
  six = Constant <value = int64[1] {6}> ()
  half = Constant <value = int64[1] {24}> ()
  full = Constant <value = int64[1] {48}> ()
  view_shape = Constant <value = int64[3] {1, 4, 6}> ()
  flat_shape = Constant <value = int64[2] {1, -1}> ()
  b1 = Slice (cache, zero, half, one)
  b2 = Slice (cache, half, full, one)
  V1 = Reshape (b1, view_shape)
  V2 = Reshape (b2, view_shape)
  h0a = Slice (V1, zero, three, last)
  h0b = Slice (V1, three, six, last)
  h0c = Slice (V2, zero, three, last)
  h0d = Slice (V2, three, six, last)
  Ya, Yha = GRU <hidden_size = 3> (X, W, R, , , h0a)
  Yb, Yhb = GRU <hidden_size = 3> (X, W, R, , , h0b)
  Yc, Yhc = GRU <hidden_size = 3> (X, W, R, , , h0c)
  Yd, Yhd = GRU <hidden_size = 3> (X, W, R, , , h0d)
  c1 = Concat <axis = -1> (Yha, Yhb)
  c2 = Concat <axis = -1> (Yhc, Yhd)
  f1 = Reshape (c1, flat_shape)
  f2 = Reshape (c2, flat_shape)
  )") + write +
         "\n}";
}

const char* kRegions[] = {"[0, 0:4, 0:3]", "[0, 0:4, 3:6]", "[0, 4:8, 0:3]", "[0, 4:8, 3:6]"};

TEST(FlatCache, EachGruIsABoxOfTheView1x8x6) {
  Analyzed a(FlatCache());
  for (size_t node = 0; node < 4; ++node) {
    const StateAnalysis& state = a.State(node, "h");
    const Exposure& exposure = ExposureOf(state);
    EXPECT_TRUE(state.exposed) << node;
    EXPECT_EQ(exposure.input, "cache");
    EXPECT_EQ(exposure.output, "cache_out");
    EXPECT_EQ(RegionText(exposure.region), kRegions[node]);
    EXPECT_EQ(MetaShapeText(exposure.view), "[1,8,6]");
    EXPECT_THAT(exposure.axes, ElementsAre("batch", "hidden_size"));
    EXPECT_EQ(exposure.rows, std::nullopt);
    EXPECT_EQ(ExposureText(exposure), std::string("region ") + kRegions[node] +
                                          " of view [1,8,6] of input 'cache' -> " + "region " + kRegions[node] +
                                          " of view [1,8,6] of output 'cache_out'");
  }
  EXPECT_THAT(a.Problems(), IsEmpty());
}

TEST(FlatCache, RewriteRecordsTheViewAddsNoInputAndIsIdempotent) {
  for (StateInputMode mode : {StateInputMode::kDefaults, StateInputMode::kRequired}) {
    const PlanOptions options = InMode(mode);
    const onnx::ModelProto model = RewrittenMetadataOnly(FlatCache(), options);
    const std::vector<StatePair> pairs = RecordedPairs(model);
    ASSERT_THAT(pairs, SizeIs(4));
    for (size_t k = 0; k < 4; ++k) {
      EXPECT_EQ(pairs[k].input, "cache");
      EXPECT_EQ(pairs[k].output, "cache_out");
      EXPECT_EQ(RegionText(pairs[k].region), kRegions[k]);
      EXPECT_EQ(MetaShapeText(pairs[k].view), "[1,8,6]");
      EXPECT_EQ(MetaShapeText(pairs[k].shape), "[1,48]");
      EXPECT_EQ(pairs[k].batch_axis, -1) << "the GRU's batch is a part of axis 1, not an axis of the cache";
      EXPECT_EQ(pairs[k].init, kInitZeros);
    }
    const std::string& text = model.metadata_props(0).value();
    EXPECT_THAT(text, HasSubstr(R"("region":[0,[0,4],[0,3]],"axes":["batch","hidden_size"],"view":[1,8,6])"));
    ExpectCheckedAndSettled(model, options, "the recorded regions and views match the graph");
  }
}

TEST(FlatCache, CheckRefusesARecordedViewThatIsNotTheGraphs) {
  onnx::ModelProto model = ParseModel(FlatCache());
  ASSERT_TRUE(RewriteModel(model, PlanOptions{}, /*strict=*/true).changed);
  std::string value = model.metadata_props(0).value();
  // The second block recorded as rows [0:4] of the view: GRU 2 claims GRU 0's elements.
  Replace(value, R"("region":[0,[4,8],[0,3]])", R"("region":[0,[0,4],[0,3]])");
  model.mutable_metadata_props(0)->set_value(value);
  const ModelIndex index(model);
  const std::vector<CheckProblem> problems = CheckModel(index, Analyze(index));
  EXPECT_THAT(Kinds(problems), ::testing::Contains("input_not_wired"));
  EXPECT_THAT(Kinds(problems), ::testing::Contains("duplicate_input"));
}

TEST(FlatCache, BlocksWrittenBackSwappedAreNotExposed) {
  Analyzed a(FlatCache("cache_out = Concat <axis = 1> (f2, f1)"));
  for (size_t node = 0; node < 4; ++node) {
    const StateAnalysis& state = a.State(node, "h");
    EXPECT_FALSE(state.exposure.has_value()) << node;
    EXPECT_THAT(state.finding.why_not, HasSubstr("of view [1,8,6]")) << "the places are described on the view";
    EXPECT_THAT(state.finding.why_not, HasSubstr("not the same elements"));
  }
}

TEST(FlatCache, HiddenStatesSwappedInABlockAreNotExposed) {
  std::string text = FlatCache();
  Replace(text, "c1 = Concat <axis = -1> (Yha, Yhb)", "c1 = Concat <axis = -1> (Yhb, Yha)");
  Analyzed a(text);
  EXPECT_FALSE(a.State(0, "h").exposure.has_value());
  EXPECT_FALSE(a.State(1, "h").exposure.has_value());
  EXPECT_TRUE(a.State(2, "h").exposed) << "the other block is as it was";
  EXPECT_TRUE(a.State(3, "h").exposed);
}

}  // namespace
}  // namespace rnnstate::flat_cache_test
