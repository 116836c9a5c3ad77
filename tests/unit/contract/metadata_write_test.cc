// contract/metadata_write: the metadata document's text, the states' entries streamed into it, as nlohmann
// would dump the whole document; and the model's metadata entry it goes into.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rnnstate/metadata.h"
#include "test_names.h"

namespace rnnstate::metadata_write_test {
namespace {

using namespace test_names;

/// Pairs that use every optional part of an entry: the grown contract and its path, a context, `carried`.
std::vector<StatePair> VariedPairs() {
  StatePair full = PairOf("a\"in", "out", "/model/LSTM", "main//model/If_1:else_branch", "h");
  full.dtype = "float32";
  full.shape = {MetaDim{1, ""}, MetaDim{-1, "batch"}, MetaDim{64, ""}};
  full.batch_axis = 1;
  full.init = kInitEmpty;
  full.path = {PathStep{"/model/If_1", "else_branch", -1}, PathStep{"a:b", "branches", 2}};
  StatePair context = full;
  context.kind = kKindContext;
  context.context = ContextSpec{"onnx::input", 1, 64, "w", 2, "", true};
  StatePair plain = PairOf("h_in", "h_out", "lstm", "main", "h");
  plain.carried = !plain.streamable;
  return {full, context, plain};
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
