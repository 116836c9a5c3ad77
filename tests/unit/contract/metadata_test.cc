// The metadata contract (metadata.h): reading and writing the state pairs, the fields the contract grew,
// and the graph path as an array of steps whose names may hold any character.

#include "rnnstate/metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "pipeline_stages.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::metadata_test {
namespace {

using namespace test_names;

onnx::ModelProto WithMetadata(const std::string& value) {
  onnx::ModelProto model;
  auto* prop = model.add_metadata_props();
  prop->set_key(kMetadataKey);
  prop->set_value(value);
  return model;
}

/// A document of one entry: the pair i -> o of node n in the main graph, with `fields` (each followed by a
/// comma but the last) after those, and `document_fields` after the states.
std::string OneEntry(const std::string& fields, const std::string& document_fields = "") {
  return R"({"version":1,"states":[{"input":"i","output":"o","node":"n","graph":"main",)" + fields + "}]" +
         document_fields + "}";
}

/// The one pair `model`'s metadata holds (which must read without an error).
StatePair TheOnlyPair(const onnx::ModelProto& model) {
  std::string error;
  std::vector<StatePair> pairs = ReadStatePairs(model, &error);
  const std::string& document = model.metadata_props(0).value();
  EXPECT_EQ(error, "") << document;
  if (pairs.size() != 1) throw std::runtime_error(std::to_string(pairs.size()) + " pairs read of " + document);
  return pairs[0];
}

/// The one pair read from `document`.
StatePair ReadTheOnlyPair(const std::string& document) { return TheOnlyPair(WithMetadata(document)); }

/// `pair` written into `model`'s metadata and read back.
StatePair RoundTrip(const StatePair& pair, onnx::ModelProto& model) {
  WriteStatePairs(model, {pair});
  return TheOnlyPair(model);
}

StatePair FullPair() {
  StatePair pair = PairOf("a\"in", "out", "/model/decoder/LSTM", "main//model/decoder/If_1:else_branch", "h");
  pair.dtype = "float32";
  pair.shape = {MetaDim{1, ""}, MetaDim{-1, "batch"}, MetaDim{64, ""}};
  pair.batch_axis = 1;
  pair.init = kInitEmpty;
  pair.path = {PathStep{"/model/decoder/If_1", "else_branch", -1}, PathStep{"a:b\"c", "branches", 2}};
  return pair;
}

TEST(Metadata, EveryFieldSurvivesARoundTrip) {
  onnx::ModelProto model;
  EXPECT_EQ(RoundTrip(FullPair(), model), FullPair());
  const std::string& text = model.metadata_props(0).value();
  EXPECT_THAT(text, HasSubstr(R"("shape":[1,"batch",64],"batch_axis":1,"init":"empty")"));
  EXPECT_THAT(text, HasSubstr(R"("path":[{"node":"/model/decoder/If_1","attribute":"else_branch"},)"
                              R"({"node":"a:b\"c","attribute":"branches","index":2}])"));
}

TEST(Metadata, AContextSurvivesARoundTrip) {
  StatePair pair = FullPair();
  pair.kind = kKindContext;
  pair.context = ContextSpec{"onnx::input", 1, 64, "", 0, "", false};
  onnx::ModelProto model;
  EXPECT_EQ(RoundTrip(pair, model), pair);
  EXPECT_THAT(model.metadata_props(0).value(), HasSubstr(R"("context":{"value":"onnx::input","axis":1,"frames":64})"));
  std::string error;
  for (const char* bad : {R"("context":[1])", R"("context":{"axis":1,"frames":2})", R"("context":{"value":"x","axis":-1,"frames":2})",
                          R"("context":{"value":"x","axis":1,"frames":0})", R"("context":{"value":"","axis":1,"frames":2})"}) {
    ReadStatePairs(WithMetadata(OneEntry(R"("kind":"context",)" + std::string(bad))), &error);
    EXPECT_THAT(error, HasSubstr("is invalid")) << bad;
  }
}

TEST(Metadata, PairsOfTheFirstVersionOfTheContractAreRead) {
  const StatePair pair = ReadTheOnlyPair(OneEntry(R"("kind":"h","optional":true,"streamable":true)"));
  EXPECT_EQ(pair.init, "");
  EXPECT_TRUE(pair.path.empty());
}

TEST(Metadata, UnknownKindsAndKeysAreAccepted) {
  EXPECT_EQ(ReadTheOnlyPair(OneEntry(R"("kind":"state","future":[1,2])", R"(,"also":{})")).kind, "state");
}

TEST(Metadata, MalformedContractFieldsAreErrors) {
  for (const char* field : {R"("shape":[1,true])", R"("shape":"1,2")", R"("batch_axis":"1")", R"("init":0)",
                            R"("path":[{"node":"x"}])", R"("path":[{"node":"x","attribute":"body","index":"2"}])"}) {
    std::string error;
    ReadStatePairs(WithMetadata(OneEntry(R"("kind":"h",)" + std::string(field))), &error);
    EXPECT_THAT(error, HasSubstr("is invalid")) << field;
  }
}

// Issue 32: a dimension the model leaves unnamed is JSON null (older metadata wrote "", read alike) and
// `?` in text.
TEST(Metadata, AnUnnamedDimensionIsNullInJsonAndAQuestionMarkInText) {
  const std::vector<MetaDim> shape{MetaDim{2, ""}, MetaDim{-1, ""}, MetaDim{-1, "batch"}};
  EXPECT_EQ(DumpJson(MetaShapeJson(shape)), R"([2,null,"batch"])");
  EXPECT_EQ(MetaShapeText(shape), "[2,?,batch]");
  EXPECT_EQ(MetaShapeFromJson(ParseJson(R"([2,null,"batch"])"), "shape"), shape);
  EXPECT_EQ(MetaShapeFromJson(ParseJson(R"([2,"","batch"])"), "shape"), shape) << "older metadata";
  StatePair pair = FullPair();
  pair.shape = {MetaDim{2, ""}, MetaDim{-1, ""}, MetaDim{128, ""}};
  onnx::ModelProto model;
  EXPECT_EQ(RoundTrip(pair, model).shape, pair.shape);
  EXPECT_THAT(model.metadata_props(0).value(), HasSubstr(R"("shape":[2,null,128])"));
}

TEST(Metadata, AViewSurvivesARoundTripNextToItsRegion) {
  StatePair pair = FullPair();
  pair.shape = {MetaDim{1, ""}, MetaDim{1056, ""}};
  pair.batch_axis = -1;
  pair.region = {RegionAxis{RegionAxis::Kind::kIndex, 0, 0}, RegionAxis{RegionAxis::Kind::kRange, 33, 66},
                 RegionAxis{RegionAxis::Kind::kRange, 8, 16}};
  pair.axes = {"batch", "hidden_size"};
  pair.view = {MetaDim{1, ""}, MetaDim{66, ""}, MetaDim{16, ""}};
  onnx::ModelProto model;
  EXPECT_EQ(RoundTrip(pair, model), pair);
  EXPECT_THAT(model.metadata_props(0).value(),
              HasSubstr(R"("region":[0,[33,66],[8,16]],"axes":["batch","hidden_size"],"view":[1,66,16])"));
  EXPECT_EQ(PlaceSuffix(pair.rows, pair.region, pair.view), "[0, 33:66, 8:16] of view [1,66,16]");
}

TEST(Metadata, AViewOfOtherElementsThanTheShapeIsAnError) {
  const std::string entry = R"("kind":"h","dtype":"float32","shape":[1,1056],"batch_axis":-1,"init":"zeros",)"
                            R"("region":[0,[0,33],[0,8]],"axes":["batch","hidden_size"],)";
  std::string error;
  ReadStatePairs(WithMetadata(OneEntry(entry + R"("view":[1,66,16])")), &error);
  EXPECT_EQ(error, "");
  for (const char* view : {R"("view":[1,66,15])", R"("view":[1,16,66,1])", R"("view":[66,16])", R"("view":[1,0,16])",
                           R"("view":"1,66,16")"}) {
    error.clear();
    ReadStatePairs(WithMetadata(OneEntry(entry + view)), &error);
    EXPECT_THAT(error, HasSubstr("is invalid")) << view;
    EXPECT_THAT(error, HasSubstr("'view'")) << view;
  }
}

TEST(Metadata, APathOfNamesWithSlashesAndColonsLocatesTheGraph) {
  onnx::ModelProto model = testing::ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, bool cond, float[1, 9, 2] W, float[1, 9, 3] R, float[seq, 1, batch, 3] Z)
  => (float[seq, 1, batch, 3] Y) {
  Y = If (cond) <
    then_branch = t () => (float[seq, 1, batch, 3] a) { a = GRU <hidden_size = 3> (X, W, R) },
    else_branch = e () => (float[seq, 1, batch, 3] b) { b = Identity (Z) }>
})");
  model.mutable_graph()->mutable_node(0)->set_name("/model/decoder/If:1");
  RewriteModel(model, PlanOptions{}, /*strict=*/false);
  auto pairs = testing::RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].graph, "main//model/decoder/If:1:then_branch");  // display text: ambiguous
  EXPECT_THAT(pairs[0].path, ElementsAre(PathStep{"/model/decoder/If:1", "then_branch", -1}));
}

TEST(Metadata, MoreEntriesThanTheModelCanHaveStatesAreRefusedBeforeTheRestIsRead) {
  // A GRU: 3 node inputs and 3 graph inputs, so at most 6 states.
  onnx::ModelProto model = testing::ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] x, float[1, 9, 2] w, float[1, 9, 3] r) => (float[seq, 1, batch, 3] y) {
  y = GRU <hidden_size = 3> (x, w, r)
})");
  const std::string entry = R"({"input":"i","output":"o","node":"n","graph":"main","kind":"h"})";
  const auto document = [&](int entries, const std::string& tail) {
    std::string text = R"({"version":1,"states":[)";
    for (int i = 0; i < entries; ++i) text += (i ? "," : "") + entry;
    return text + tail;
  };
  auto* prop = model.add_metadata_props();
  prop->set_key(kMetadataKey);
  std::string error;
  // Seven entries, then text that is no JSON: the bound refuses at the seventh, the rest unread.
  prop->set_value(document(7, ", not JSON"));
  EXPECT_TRUE(ReadStatePairs(model, &error, nullptr, /*bounded=*/true).empty());
  EXPECT_EQ(error, "metadata 'rnnstate' is invalid: states: more than 6 entries, more than the model has states to "
                   "pair (one per node input and graph input)");
  error.clear();
  ReadStatePairs(model, &error);  // unbounded (a document without its model): the whole text is read
  EXPECT_THAT(error, HasSubstr("not valid JSON"));
  // Six entries are within the bound (their names are the rules' concern, not the reader's).
  error.clear();
  prop->set_value(document(6, "]}"));
  EXPECT_EQ(ReadStatePairs(model, &error, nullptr, /*bounded=*/true).size(), 6u);
  EXPECT_EQ(error, "");
  // A writer of new pairs keeps the old document's other keys, its states unread; past the bound, none.
  prop->set_value(document(6, R"(],"later":1})"));
  WriteStatePairs(model, {FullPair()});
  EXPECT_THAT(model.metadata_props(0).value(), HasSubstr(R"("later":1)"));
  prop->set_value(document(7, R"(],"later":1})"));
  WriteStatePairs(model, {FullPair()});
  EXPECT_THAT(model.metadata_props(0).value(), Not(HasSubstr("later")));
  EXPECT_EQ(ReadStatePairs(model, &error).size(), 1u);
}

}  // namespace
}  // namespace rnnstate::metadata_test
