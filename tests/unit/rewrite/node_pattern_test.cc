// `--nodes` patterns (NodePattern, rnnstate/options.h): RE2 matches in time linear in the name, without
// recursion. std::regex crashed (stack overflow) on a 100,000-character node name even for `.*`, and
// took exponential time on `(a|aa)*c` over 1,000 characters (issue 23).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <algorithm>
#include <string>
#include <utility>

#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "rnnstate/options.h"
#include "test_models.h"

namespace rnnstate::node_pattern_test {
namespace {

/// The least of three timings of `times` searches of `pattern` over a name of `length` characters (all
/// 'a'), each expected to give `found`: the least, so that a busy machine's pauses do not count.
double SearchSeconds(const NodePattern& pattern, size_t length, int times, bool found) {
  const std::string name(length, 'a');
  double least = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < times; ++i) EXPECT_EQ(pattern.Search(name), found);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    least = attempt == 0 ? seconds : std::min(least, seconds);
  }
  return least;
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
  // A ratio in one run, not a time: 1,000 searches over 10,000 characters against 100 over 100,000, the same
  // work when the cost is linear in the name. Backtracking makes these patterns exponential in it.
  for (const auto& [text, found] : {std::pair{".*", true}, {"(a|aa)*c", false}, {"^(a+)+$", true}}) {
    SCOPED_TRACE(text);
    const NodePattern pattern(text);
    const double short_names = SearchSeconds(pattern, 10000, 1000, found);
    const double long_names = SearchSeconds(pattern, 100000, 100, found);
    EXPECT_LT(long_names, 4 * short_names) << long_names << " s against " << short_names << " s";
  }
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
}  // namespace rnnstate::node_pattern_test
