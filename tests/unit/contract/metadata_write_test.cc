// contract/metadata_write: the metadata document's text, the states' entries streamed into it, as nlohmann
// would dump the whole document; and the model's metadata entry it goes into.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "rnnstate/metadata.h"
#include "test_names.h"

namespace rnnstate::metadata_write_test {
namespace {

using namespace test_names;

/// Pairs that use every optional part of an entry (the grown contract and its path, a context, `carried`),
/// read from a document that lists them.
std::vector<StatePair> VariedPairs() {
  onnx::ModelProto model;
  auto* prop = model.add_metadata_props();
  prop->set_key(kMetadataKey);
  prop->set_value(R"({"version":1,"states":[)"
                  R"({"input":"a\"in","output":"out","node":"/m/LSTM","graph":"main//m/If_1:else_branch","kind":"h",)"
                  R"("optional":true,"streamable":true,"dtype":"float32","shape":[1,"batch",64],"batch_axis":1,)"
                  R"("init":"empty","path":[{"node":"/m/If_1","attribute":"else_branch"},)"
                  R"({"node":"a:b","attribute":"branches","index":2}]},)"
                  R"({"input":"c_in","output":"c_out","node":"conv","graph":"main","kind":"context","optional":true,)"
                  R"("streamable":true,"context":{"value":"x","axis":1,"frames":2,"window":"w","lookahead":1}},)"
                  R"({"input":"h_in","output":"h_out","node":"lstm","graph":"main","kind":"h","optional":false,)"
                  R"("streamable":false,"carried":true}]})");
  std::string error;
  std::vector<StatePair> pairs = ReadStatePairs(model, &error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(pairs.size(), 3u);
  return pairs;
}

TEST(WriteStatePairs, WritesTheTextTheWholeDocumentWouldDumpTo) {
  const std::vector<StatePair> pairs = VariedPairs();
  // Kept keys of the old document and the stream record come after the states, in that order.
  onnx::ModelProto model;
  auto* prop = model.add_metadata_props();
  prop->set_key(kMetadataKey);
  prop->set_value(R"({"version":1,"states":[],"kept":{"a":[1,"\u00e9"]}})");
  const Json stream = {{"inputs", Json::array({"x"})}};
  WriteStatePairs(model, pairs, stream);
  Json whole = {{"version", 1}, {"states", StatePairsJson(pairs)}, {"kept", {{"a", {1, "\u00e9"}}}}};
  whole[kStreamKey] = stream;
  ASSERT_EQ(model.metadata_props_size(), 1);
  EXPECT_EQ(model.metadata_props(0).value(), DumpJson(whole));
}

TEST(WriteStatePairs, NoPairsAreAnEmptyArray) {
  onnx::ModelProto model;
  WriteStatePairs(model, {});
  EXPECT_EQ(model.metadata_props(0).value(), R"({"version":1,"states":[]})");
}

TEST(StateMetadataValue, IsTheDocumentOfThePairsAlone) {
  const std::vector<StatePair> pairs = VariedPairs();
  EXPECT_EQ(StateMetadataValue(pairs), DumpJson(Json{{"version", 1}, {"states", StatePairsJson(pairs)}}));
  EXPECT_EQ(StateMetadataValue({}), R"({"version":1,"states":[]})");
}

/// Pairs built in code with each optional member VariedPairs lacks: rows, a region with its axes and view, a
/// variable, a layout, a context with a pad and a valid window, the contract without a path, names that
/// need escaping or are not valid UTF-8, and `carried` false beside `streamable`.
std::vector<StatePair> PairsOfEveryMember() {
  auto named = [](std::string input, std::string output, std::string node, std::string kind) {
    StatePair pair;
    pair.input = std::move(input);
    pair.output = std::move(output);
    pair.node = std::move(node);
    pair.graph = "main";
    pair.kind = std::move(kind);
    return pair;
  };
  StatePair packed = named("state\tin", "state_out", "n\xc3\xa9", "h");
  packed.rows = RowRange{2, 4};
  packed.region = {RegionAxis{RegionAxis::Kind::kIndex, 1, 0}, RegionAxis{RegionAxis::Kind::kRange, 0, 3},
                   RegionAxis{}};
  packed.axes = {"rows", "batch", "hidden"};
  packed.view = {MetaDim{2, ""}, MetaDim{-1, "batch"}};
  packed.variable = "var\"1\"";
  packed.dtype = "float16";
  packed.shape = {MetaDim{2, ""}, MetaDim{-1, "batch"}, MetaDim{-1, ""}};
  packed.batch_axis = 1;
  packed.init = kInitZeros;
  packed.layout = "batch_first";
  StatePair context = named("ctx_in", "ctx_out\xff", "concat", kKindContext);
  context.optional = false;
  context.carried = false;  // beside streamable: true
  context.context = ContextSpec{};
  context.context->value = "x";
  context.context->axis = 2;
  context.context->frames = 4;
  context.context->pad = "reflect";
  context.context->valid = true;
  return {packed, context};
}

TEST(StateMetadataValue, EveryOptionalMemberIsWrittenAsTheEntrysDocumentDumps) {
  for (const std::vector<StatePair>& pairs : {PairsOfEveryMember(), VariedPairs()}) {
    EXPECT_EQ(StateMetadataValue(pairs), DumpJson(Json{{"version", 1}, {"states", StatePairsJson(pairs)}}));
  }
}

TEST(WriteStateDocument, TakesTheFirstEntryOfTheKeyAndDropsTheOthers) {
  onnx::ModelProto model;
  for (const char* value : {"old", "older"}) {
    auto* prop = model.add_metadata_props();
    prop->set_key(kMetadataKey);
    prop->set_value(value);
  }
  auto* other = model.add_metadata_props();
  other->set_key("author");
  other->set_value("me");
  WriteStateDocument(model, Json{{"version", 1}});
  ASSERT_EQ(model.metadata_props_size(), 2);
  EXPECT_EQ(model.metadata_props(0).value(), R"({"version":1})");
  EXPECT_EQ(model.metadata_props(1).key(), "author");
}

}  // namespace
}  // namespace rnnstate::metadata_write_test
