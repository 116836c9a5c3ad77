// The one validation of the `rnnstate` metadata (rules/metadata_rules.h): each rule on a rewritten
// model whose metadata is edited, the commands that rely on it, its cost in the number of pairs, and a
// bounded random-mutation run of the reader (the CI's fuzzing of it; tools/fuzz/fuzz_metadata.cc is the
// libFuzzer target for longer runs).

#include "rules/metadata_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "contract/export_openvino.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::metadata_rules_test {
namespace {

using namespace test_names;

/// Two GRUs, the second reading the first's Y: rewritten, two pairs with every contract field.
onnx::ModelProto Rewritten() {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, 9, 3] W2) => (float[seq, 1, batch, 3] Y2) {
  Y, H = GRU <hidden_size = 3> (X, W, R)
  axes = Constant <value = int64[1] {1}> ()
  X2 = Squeeze (Y, axes)
  Y2, H2 = GRU <hidden_size = 3> (X2, W2, R)
})");
  RewriteModel(model, PlanOptions{}, /*strict=*/false);
  return model;
}

std::string& MetadataText(onnx::ModelProto& model) { return *model.mutable_metadata_props(0)->mutable_value(); }

/// The model with its metadata document edited by `edit`.
template <typename Edit>
onnx::ModelProto Edited(Edit edit) {
  onnx::ModelProto model = Rewritten();
  Json document = ParseJson(MetadataText(model));
  edit(document);
  MetadataText(model) = DumpJson(document);
  return model;
}

std::string Summary(const onnx::ModelProto& model) { return ReadMetadata(model).Summary(); }

TEST(MetadataRules, TheRewriteItselfIsValid) {
  const MetadataReading reading = ReadMetadata(Rewritten());
  EXPECT_TRUE(reading.valid()) << reading.Summary();
  EXPECT_EQ(reading.pairs.size(), 2u);
}

TEST(MetadataRules, NamesTheModelLacks) {
  EXPECT_THAT(Summary(Edited([](Json& d) { d["states"][0]["input"] = "gone"; })),
              HasSubstr("'gone' is not a main-graph input"));
  EXPECT_THAT(Summary(Edited([](Json& d) { d["states"][1]["output"] = "gone"; })),
              HasSubstr("'gone' is not a main-graph output"));
}

TEST(MetadataRules, TwoPairsOnOneInputOrOutput) {
  EXPECT_THAT(Summary(Edited([](Json& d) { d["states"][1]["input"] = d["states"][0]["input"]; })),
              HasSubstr("input 'GRU_0.h_in' is in 2 state pairs that take the same elements"));
  EXPECT_THAT(Summary(Edited([](Json& d) { d["states"][1]["output"] = d["states"][0]["output"]; })),
              HasSubstr("is in 2 state pairs"));
  // Rows of one tensor that do not overlap are the authors' stacked state: valid here.
  const MetadataReading rows = ReadMetadata(Edited([](Json& d) {
    d["states"][1]["input"] = d["states"][0]["input"];
    d["states"][0]["rows"] = Json::array({0, 1});
    d["states"][1]["rows"] = Json::array({1, 2});
  }));
  for (const CheckProblem& problem : rows.problems) EXPECT_NE(problem.kind, CheckProblem::Kind::kDuplicateInput);
}

TEST(MetadataRules, FieldValues) {
  EXPECT_THAT(Summary(Edited([](Json& d) { d["states"][0]["init"] = "ones"; })),
              HasSubstr("init 'ones' is not \"zeros\" or \"empty\""));
  EXPECT_THAT(Summary(Edited([](Json& d) { d["states"][0]["dtype"] = "complex64"; })),
              HasSubstr("dtype 'complex64' is not an element type a state has"));
  EXPECT_THAT(Summary(Edited([](Json& d) { d["states"][0]["dtype"] = "float16"; })),
              HasSubstr("dtype 'float16' contradicts input 'GRU_0.h_in' of element type float32"));
  EXPECT_THAT(Summary(Edited([](Json& d) { d["states"][0]["batch_axis"] = 3; })),
              HasSubstr("batch_axis 3 is not an axis of shape [1,batch,3]"));
}

TEST(MetadataRules, AContextObjectGoesWithItsKindAndShape) {
  EXPECT_THAT(Summary(Edited([](Json& d) { d["states"][0]["kind"] = "context"; })),
              HasSubstr("kind \"context\" without its \"context\" object"));
  EXPECT_THAT(Summary(Edited([](Json& d) { d["states"][0]["context"] = {{"value", "X"}, {"axis", 2}, {"frames", 3}}; })),
              HasSubstr("a \"context\" object on a state of kind 'h'"));
  EXPECT_THAT(Summary(Edited([](Json& d) {
                d["states"][0]["kind"] = "context";
                d["states"][0]["context"] = {{"value", "X"}, {"axis", 2}, {"frames", 4}};
              })),
              HasSubstr("shape [1,batch,3] does not hold 4 frames on axis 2"));
  // The right frames on the right axis: only check's deeper question (is it wired?) remains.
  EXPECT_EQ(Summary(Edited([](Json& d) {
              d["states"][0]["kind"] = "context";
              d["states"][0]["context"] = {{"value", "X"}, {"axis", 2}, {"frames", 3}};
            })),
            "");
}

TEST(MetadataRules, ShapeAgainstTheDeclaredShape) {
  EXPECT_THAT(Summary(Edited([](Json& d) { d["states"][0]["shape"] = Json::array({1, "batch", 4}); })),
              HasSubstr("shape [1,batch,4] contradicts the declared shape [1,batch,3] of 'GRU_0.h_in'"));
  EXPECT_THAT(Summary(Edited([](Json& d) { d["states"][0]["shape"] = Json::array({1, 3}); })),
              HasSubstr("contradicts the declared shape"));
  // A fixed size where the input declares a name is the data's batch: valid.
  EXPECT_EQ(Summary(Edited([](Json& d) { d["states"][0]["shape"] = Json::array({1, 5, 3}); })), "");
}

TEST(MetadataRules, PathAndGraph) {
  EXPECT_THAT(Summary(Edited([](Json& d) {
                d["states"][0]["path"] = Json::array({{{"node", "loop"}, {"attribute", "body"}}});
              })),
              HasSubstr("path step 1 (loop:body): graph 'main' has no node with that graph attribute"));
  EXPECT_THAT(Summary(Edited([](Json& d) { d["states"][0]["graph"] = "main/x:body"; })),
              HasSubstr("graph 'main/x:body' is not the main graph its empty path names"));
}

TEST(MetadataRules, TheKeyGivenTwice) {
  onnx::ModelProto model = Rewritten();
  *model.add_metadata_props() = model.metadata_props(0);
  EXPECT_EQ(Summary(model), "metadata 'rnnstate' is given 2 times; a model carries one");
  EXPECT_FALSE(ReadMetadata(model).document_valid);
}

// The ghost pairs: a second entry stayed beside the rewritten first, and check refused the result.
TEST(MetadataRules, ARewriteLeavesOneEntry) {
  onnx::ModelProto model = Rewritten();
  onnx::StringStringEntryProto ghost = model.metadata_props(0);
  ghost.set_value(std::string(ghost.value()).replace(ghost.value().find("GRU_0.h_in"), 10, "ghost_in_0"));
  *model.add_metadata_props() = ghost;
  RewriteOutcome outcome = RewriteModel(model, PlanOptions{}, /*strict=*/false);
  EXPECT_THAT(WarningTexts(outcome.warnings), ::testing::Contains(HasSubstr("is given 2 times")));
  ASSERT_EQ(model.metadata_props_size(), 1);
  EXPECT_TRUE(ReadMetadata(model).valid()) << Summary(model);
  EXPECT_EQ(model.metadata_props(0).value().find("ghost"), std::string::npos);
}

// Parser messages say what is wrong and where, without the library's own text.
TEST(MetadataRules, ParserMessages) {
  onnx::ModelProto model = Rewritten();
  MetadataText(model) = R"({"version":1,"states":[{"input":})";
  EXPECT_EQ(Summary(model), "metadata 'rnnstate' is not valid JSON at byte 33: syntax error while parsing value - "
                            "unexpected '}'; expected '[', '{', or a literal");
  MetadataText(model) = R"({"version":1,"states":[{"input":"a","input":"b"}]})";
  EXPECT_EQ(Summary(model), "metadata 'rnnstate' is invalid: key 'input' is given twice in one object");
  MetadataText(model) = R"({"version":1,"states":[{"input":"a"}]})";
  EXPECT_EQ(Summary(model), "metadata 'rnnstate' is invalid: states[0]: missing string 'output'");
  MetadataText(model) = R"({"version":1,"states":[],"x":18446744073709551615})";
  EXPECT_THAT(Summary(model), HasSubstr("does not fit a 64-bit integer"));
}

// export openvino silently dropped one of two pairs on one input; init printed feeds for missing inputs.
TEST(MetadataRules, CommandsThatActOnPairsRefuseInvalidMetadata) {
  onnx::ModelProto model = Edited([](Json& d) { d["states"][1]["input"] = d["states"][0]["input"]; });
  try {
    RequireValidMetadata(model);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_THAT(e.what(), HasSubstr("is in 2 state pairs"));
  }
  EXPECT_NO_THROW(RequireValidMetadata(Rewritten()));
}

// 10,000 pairs took 0.3 s, 100,000 6.6 s: export openvino's object grew by a lookup of every key.
/// `model` with its one recorded pair copied `count` times under names of their own.
onnx::ModelProto WithCopiedPairs(const onnx::ModelProto& rewritten, int count) {
  onnx::ModelProto model = rewritten;
  Json document = ParseJson(MetadataText(model));
  Json states = Json::array();
  for (int i = 0; i < count; ++i) {
    Json pair = document["states"][0];
    pair["input"] = "in_" + std::to_string(i);
    pair["output"] = "out_" + std::to_string(i);
    states.push_back(std::move(pair));
    // An input per pair, as a model of that many states has: a reader refuses more pairs than inputs.
    onnx::ValueInfoProto* input = model.mutable_graph()->add_input();
    *input = model.graph().input(0);
    input->set_name("in_" + std::to_string(i));
  }
  document["states"] = std::move(states);
  MetadataText(model) = DumpJson(document);
  return model;
}

/// The fastest of three exports of `model`'s pairs, in seconds.
double FastestExport(const onnx::ModelProto& model, size_t expected_pairs) {
  double best = 1e9;
  for (int run = 0; run < 3; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const OpenVinoPairs pairs = OpenVinoStatePairs(model);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    EXPECT_EQ(pairs.json["param_res_names"].size(), expected_pairs);
  }
  return best;
}

// A ratio measured in one run (the build and the machine's load cancel out), not a time limit: ten times
// the pairs cost about ten times as much; the quadratic key lookup this replaced cost a hundred times.
TEST(MetadataRules, OpenVinoExportIsLinearInThePairs) {
  const onnx::ModelProto rewritten = Rewritten();
  const double small = FastestExport(WithCopiedPairs(rewritten, 2000), 2000);
  const double large = FastestExport(WithCopiedPairs(rewritten, 20000), 20000);
  EXPECT_LT(large / std::max(small, 1e-6), 35.0) << "2,000 pairs: " << small << " s; 20,000 pairs: " << large << " s";
}

/// One random edit of `text`: a byte changed, removed or repeated, a span cut or doubled, or a JSON token
/// put in.
void Mutate(std::string& text, std::mt19937& random) {
  static const char* kTokens[] = {"{", "}", "[", "]", ",", ":", "\"", "null", "true", "-1", "1e999", "18446744073709551616",
                                  "\"states\"", "\"input\"", "\"rows\"", "[0,1]", "\"\\u0000\"", "\"region\"", "\\"};
  if (text.empty()) text = "{}";
  const size_t at = random() % text.size();
  switch (random() % 6) {
    case 0:
      text[at] = static_cast<char>(random());
      break;
    case 1:
      text.erase(at, 1);
      break;
    case 2:
      text.insert(at, 1, text[at]);
      break;
    case 3:
      text.erase(at, random() % 16);
      break;
    case 4:
      text.insert(at, text.substr(at, random() % 64));
      break;
    default:
      text.insert(at, kTokens[random() % (sizeof(kTokens) / sizeof(kTokens[0]))]);
      break;
  }
}

// The CI's bounded fuzzing of the metadata reader: 20,000 mutated documents (fixed seed, about a second).
// Reading never throws or crashes; a document it accepts is written and read back to the same pairs, and
// a rewrite of the model leaves metadata that is valid.
TEST(MetadataRules, RandomMutationsOfTheDocument) {
  onnx::ModelProto model = Rewritten();
  const std::string original = MetadataText(model);
  std::mt19937 random(23);
  int accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text = original;
    for (int edits = 1 + static_cast<int>(random() % 4); edits > 0; --edits) Mutate(text, random);
    MetadataText(model) = text;
    MetadataReading reading;
    ASSERT_NO_THROW(reading = ReadMetadata(model)) << text;
    if (!reading.valid()) {
      ASSERT_FALSE(reading.Summary().empty());
      ASSERT_EQ(reading.Summary().find("json.exception"), std::string::npos) << reading.Summary();
      continue;
    }
    ++accepted;
    onnx::ModelProto copy = model;
    WriteStatePairs(copy, reading.pairs);
    std::string error;
    ASSERT_EQ(ReadStatePairs(copy, &error), reading.pairs) << text;
    if (round % 500 == 0) {
      RewriteModel(copy, PlanOptions{}, /*strict=*/false);
      ASSERT_TRUE(ReadMetadata(copy).valid()) << text << "\n" << ReadMetadata(copy).Summary();
    }
  }
  EXPECT_GT(accepted, 100);  // the mutations reach the rules, not only the parser
}

}  // namespace
}  // namespace rnnstate::metadata_rules_test
