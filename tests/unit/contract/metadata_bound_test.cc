// The bound on a metadata document's state entries (contract/metadata_bound.h): the input slots of every
// node of every graph, nested ones included, plus the main graph's inputs; and the document read beside
// its states, which is refused (nullopt) past that bound, when it is no JSON object, or when it is absent.

#include "contract/metadata_bound.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::metadata_bound_test {
namespace {

using namespace test_names;

/// One If whose branches read the outer `x` (slots: If 1, Identity 1, Add 2) over two graph inputs.
const char* kBranches = R"(<ir_version: 8, opset_import: ["" : 14]>
g (bool c, float[2] x) => (float[2] y) {
  y = If (c) <then_branch = g1 () => (float[2] t) { t = Identity (x) },
               else_branch = g2 () => (float[2] e) { e = Add (x, x) }>
})";

/// `model` with `value` under the metadata key `key`.
onnx::ModelProto WithProp(onnx::ModelProto model, const std::string& key, const std::string& value) {
  auto* prop = model.add_metadata_props();
  prop->set_key(key);
  prop->set_value(value);
  return model;
}

/// A document with `n` state entries beside a "producer" member.
std::string DocumentOf(size_t n) {
  std::string states;
  for (size_t i = 0; i < n; ++i) states += std::string(i ? "," : "") + R"({"input":"s)" + std::to_string(i) + "\"}";
  return R"({"version":1,"states":[)" + states + R"(],"producer":"test"})";
}

TEST(MostStateEntries, CountsEveryInputSlotAtAnyDepthAndTheGraphInputs) {
  EXPECT_EQ(MostStateEntries(ParseModel(kLstm)), 3u + 3u);
  EXPECT_EQ(MostStateEntries(ParseModel(kBranches)), 1u + 1u + 2u + 2u);
  // An empty slot (an optional input left out) is a slot too: it names where a state could enter.
  EXPECT_EQ(MostStateEntries(ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, batch, 3] h) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R, , , h)
})")),
            6u + 4u);
}

TEST(ReadDocumentBesideStates, KeepsTheRestOfADocumentWithinTheBound) {
  const onnx::ModelProto model = ParseModel(kLstm);  // bound 6
  const std::optional<Json> document = ReadDocumentBesideStates(WithProp(model, "rnnstate", DocumentOf(6)), "rnnstate");
  ASSERT_TRUE(document);
  EXPECT_EQ((*document)["producer"], "test");
  EXPECT_EQ((*document)["version"], 1);
  EXPECT_TRUE(!document->contains("states") || (*document)["states"].empty()) << document->dump();
  EXPECT_TRUE(ReadDocumentBesideStates(WithProp(model, "other", DocumentOf(0)), "other"));
}

TEST(ReadDocumentBesideStates, RefusesADocumentPastTheBoundOrNotAnObject) {
  const onnx::ModelProto model = ParseModel(kLstm);
  EXPECT_FALSE(ReadDocumentBesideStates(WithProp(model, "rnnstate", DocumentOf(7)), "rnnstate"));
  EXPECT_FALSE(ReadDocumentBesideStates(WithProp(model, "rnnstate", "[1, 2]"), "rnnstate"));
  EXPECT_FALSE(ReadDocumentBesideStates(WithProp(model, "rnnstate", "{\"states\": ["), "rnnstate"));
  EXPECT_FALSE(ReadDocumentBesideStates(WithProp(model, "rnnstate", DocumentOf(1)), "packed"));
  EXPECT_FALSE(ReadDocumentBesideStates(model, "rnnstate"));
}

}  // namespace
}  // namespace rnnstate::metadata_bound_test
