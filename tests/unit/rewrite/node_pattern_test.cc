// `--nodes` patterns (NodePattern, rnnstate/options.h): RE2 matches in time linear in the name, without
// recursion. std::regex crashed (stack overflow) on a 100,000-character node name even for `.*`, and
// took exponential time on `(a|aa)*c` over 1,000 characters (issue 23).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "rnnstate/options.h"
#include "test_models.h"

namespace rnnstate {
namespace {

double SecondsOf(const std::function<void()>& run) {
  const auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(NodePattern, SearchesAnywhereInTheName) {
  EXPECT_TRUE(NodePattern("GRU_1").Search("main/GRU_12"));
  EXPECT_FALSE(NodePattern("^GRU_1$").Search("main/GRU_12"));
  EXPECT_TRUE(NodePattern("/decoder/.*LSTM$").Search("/model/decoder/If_1/LSTM"));
}

TEST(NodePattern, InvalidPatternIsAUsageError) {
  for (const char* pattern : {"(", "a{2,1}", "(a)\\1", "(?=a)"}) {  // backreferences, lookahead: not RE2
    try {
      NodePattern{pattern};
      ADD_FAILURE() << pattern << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      EXPECT_THAT(e.what(), ::testing::HasSubstr("is not a valid regular expression (RE2 syntax)"));
    }
  }
}

TEST(NodePattern, HostileNamesTakeLinearTime) {
  const std::string long_name(100000, 'a');
  EXPECT_LT(SecondsOf([&] { EXPECT_TRUE(NodePattern(".*").Search(long_name)); }), 1.0);
  EXPECT_LT(SecondsOf([&] { EXPECT_FALSE(NodePattern("(a|aa)*c").Search(long_name)); }), 1.0);
  EXPECT_LT(SecondsOf([&] { EXPECT_TRUE(NodePattern("^(a+)+$").Search(long_name)); }), 1.0);
}

TEST(NodePattern, RewriteOfANodeWithA100000CharacterName) {
  onnx::ModelProto model = testing::ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  model.mutable_graph()->mutable_node(0)->set_name(std::string(100000, 'a'));
  PlanOptions options;
  options.node_filter = NodePattern(".*");
  EXPECT_EQ(RewriteModel(model, options, /*strict=*/false).plan.pairs.size(), 1u);
}

}  // namespace
}  // namespace rnnstate
