#include "exposure_test_models.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pipeline_stages.h"
#include "rewrite/planner.h"
#include "test_models.h"
#include "time/stream_verdict.h"

namespace rnnstate::testing {

const char* kHeader = R"(<ir_version: 8, opset_import: ["" : 14]>
)";

const char* kStateIsEmpty = R"(  shp = Shape (state)
  rows = Gather <axis = 0> (shp, one)
  empty = Equal (rows, zero)
)";

Analyzed::Analyzed(const std::string& text)
    : model(ParseModel(text)), index(std::make_unique<ModelIndex>(model)), analysis(Analyze(*index)) {
  JudgeStream(*index, analysis);  // as every command: the whole model's verdict
}

const StateAnalysis& Analyzed::State(size_t node, const std::string& kind) const {
  for (const StateAnalysis* state : analysis.StatesOf(node)) {
    if (state->state.kind_name() == kind) return *state;
  }
  throw std::runtime_error("no state " + kind + " of node " + std::to_string(node));
}

size_t Analyzed::InBranch(const std::string& branch) const {
  for (size_t i = 0; i < analysis.nodes.size(); ++i) {
    const GraphPath& graph = analysis.nodes[i].graph;
    if (!graph.empty() && graph.back().attribute == branch) return i;
  }
  throw std::runtime_error("no recurrent node in " + branch);
}

std::vector<CheckProblem> Analyzed::Problems(bool streamable_only) const {
  return CheckModel(*index, analysis, streamable_only);
}

Plan Analyzed::PlanWith(const PlanOptions& options) const { return MakePlan(*index, analysis, options); }

std::string Region(const Exposure& exposure) { return RegionText(exposure.region); }

const Exposure& ExposureOf(const StateAnalysis& state) {
  if (!state.exposure) throw std::runtime_error(state.state.Label() + " is not exposed: " + state.finding.why_not);
  return *state.exposure;
}

std::vector<std::string> Kinds(const std::vector<CheckProblem>& problems) {
  std::vector<std::string> kinds;
  for (const auto& problem : problems) kinds.push_back(CheckProblemKindName(problem.kind));
  return kinds;
}

void Replace(std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("'" + from + "' is not in the model");
  text.replace(at, from.size(), to);
}

const char* kPackedRead = R"(
  hs = Gather <axis = 0> (state, zero)
  h0 = Unsqueeze (hs, axis0)
  cs = Gather <axis = 0> (state, one)
  c0 = Unsqueeze (cs, axis0)
)";

const char* kPackedWrite = R"(
  hq = Squeeze (Yh, axis0)
  cq = Squeeze (Yc, axis0)
  hu = Unsqueeze (hq, axis0)
  cu = Unsqueeze (cq, axis0)
  stateN = Concat <axis = 0> (hu, cu)
)";

std::string PackedLstm(const std::string& read, const std::string& write, const std::string& header) {
  return header + R"(g (float[seq, batch, 2] X, float[2, batch, 3] state, float[1, 12, 2] W, float[1, 12, 3] R)
    => (float[seq, 1, batch, 3] Y, float[2, batch, 3] stateN) {
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  axis0 = Constant <value = int64[1] {0}> ()
)" + read +
         R"(
  Y, Yh, Yc = LSTM <hidden_size = 3> (X, W, R, , , h0, c0)
)" + write +
         "}";
}

std::string BranchedLstm(const std::string& condition, const std::string& then_start) {
  const std::string fed = R"(
      hs = Gather <axis = 0> (state, zero)
      h0 = Unsqueeze (hs, axis0)
      cs = Gather <axis = 0> (state, one)
      c0 = Unsqueeze (cs, axis0)
)";
  const std::string zeros = R"(
      xs = Shape (X)
      xb = Gather <axis = 0> (xs, one1)
      dims = Concat <axis = 0> (one1, xb, three1)
      h0 = ConstantOfShape (dims)
      c0 = Identity (h0)
)";
  // One branch: `@` is its name, `%` the nodes computing h0 and c0.
  auto branch = [](const std::string& name, const std::string& start) {
    std::string text = R"(@ () => (float[seq, 1, batch, 3] Y_@, float[1, batch, 3] h_@, float[1, batch, 3] c_@) {%
      Y_@, h_@, c_@ = LSTM <hidden_size = 3> (X, W, R, , , h0, c0)
    })";
    Replace(text, "%", start);
    for (size_t at; (at = text.find('@')) != std::string::npos;) text.replace(at, 1, name);
    return text;
  };
  return kHeader +
         std::string(
             R"(g (float[seq, batch, 2] X, float[2, batch, 3] state, bool flag, float[1, 12, 2] W, float[1, 12, 3] R)
    => (float[seq, 1, batch, 3] Y, float[2, batch, 3] stateN) {
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  axis0 = Constant <value = int64[1] {0}> ()
  one1 = Constant <value = int64[1] {1}> ()
  three1 = Constant <value = int64[1] {3}> ()
)") + kStateIsEmpty +
         "  Y, hN, cN = If (" + condition + ") <then_branch = " + branch("then", then_start == "fed" ? fed : zeros) +
         ", else_branch = " + branch("else", fed) + R"(>
  stateN = Concat <axis = 0> (hN, cN)
})";
}

std::string Cache(const std::vector<int>& read, const std::vector<int>& write) {
  const size_t count = read.size();
  std::string text = kHeader + std::string(R"(g (float[seq, batch, 2] X, float[3, batch, 3] cache, float[1, 9, 2] W0,
     float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y, float[3, batch, 3] cache_out) {
  zero = Constant <value = int64 {0}> ()
  axis0 = Constant <value = int64[1] {0}> ()
  one1 = Constant <value = int64[1] {1}> ()
  big = Constant <value = int64[1] {9223372036854775807}> ()
  C0 = Identity (cache)
  X0 = Identity (X)
)");
  for (size_t i = 0; i < count; ++i) {
    const std::string I = std::to_string(i), N = std::to_string(i + 1);
    text += "  r" + I + " = Constant <value = int64 {" + std::to_string(read[i]) + "}> ()\n";
    text += "  w" + I + " = Constant <value = int64[1, 1] {" + std::to_string(write[i]) + "}> ()\n";
    text += "  g" + I + " = Gather <axis = 0> (C" + I + ", r" + I + ")\n";
    text += "  h" + I + " = Unsqueeze (g" + I + ", axis0)\n";
    text += "  Y" + I + ", Yh" + I + " = GRU <hidden_size = 3> (X" + I + (i == 0 ? ", W0" : ", R") + ", R, , , h" + I +
            ")\n";
    text += "  X" + N + " = Squeeze (Y" + I + ", one1)\n";
    text += "  f" + I + " = Gather <axis = 0> (Yh" + I + ", zero)\n";
    text += "  shape" + I + " = Shape (C" + I + ")\n";
    text += "  tail" + I + " = Slice (shape" + I + ", one1, big)\n";
    text += "  dims" + I + " = Concat <axis = 0> (one1, tail" + I + ")\n";
    text += "  u" + I + " = Reshape (f" + I + ", dims" + I + ")\n";
    text += "  C" + N + " = ScatterND (C" + I + ", w" + I + ", u" + I + ")\n";
  }
  const std::string last = std::to_string(count);
  return text + "  Y = Identity (Y" + std::to_string(count - 1) + ")\n  cache_out = Identity (C" + last + ")\n}";
}

std::string StackedGrus(const std::string& second_rows) {
  return kHeader +
         std::string(R"(g (float[seq, batch, 2] X, float[2, batch, 3] h0, float[1, 9, 2] W0, float[1, 9, 3] R0,
     float[1, 9, 3] W1, float[1, 9, 3] R1) => (float[seq, 1, batch, 3] Y1, float[2, batch, 3] h_n) {
  zero = Constant <value = int64[1] {0}> ()
  one = Constant <value = int64[1] {1}> ()
  two = Constant <value = int64[1] {2}> ()
  h0_0 = Slice (h0, zero, one, zero)
  h0_1 = Slice (h0, )") +
         second_rows + R"(, zero)
  Y0, Yh0 = GRU <hidden_size = 3> (X, W0, R0, , , h0_0)
  X1 = Squeeze (Y0, one)
  Y1, Yh1 = GRU <hidden_size = 3> (X1, W1, R1, , , h0_1)
  h_n = Concat <axis = 0> (Yh0, Yh1)
})";
}

void ExpectCheckedAndSettled(const onnx::ModelProto& model, const PlanOptions& options, const std::string& why) {
  const ModelIndex index(model);
  EXPECT_THAT(CheckModel(index, Analyze(index)), ::testing::IsEmpty()) << why;
  onnx::ModelProto again = model;
  EXPECT_FALSE(RewriteModel(again, options, /*strict=*/true).changed);
  EXPECT_EQ(Bytes(again), Bytes(model));
}

onnx::ModelProto RewrittenMetadataOnly(const std::string& text, const PlanOptions& options) {
  const onnx::ModelProto original = ParseModel(text);
  onnx::ModelProto model = original;
  EXPECT_TRUE(RewriteModel(model, options, /*strict=*/true).changed);
  EXPECT_TRUE(model.graph().SerializeAsString() == original.graph().SerializeAsString())
      << "the rewrite changed the graph of a model whose states the authors expose: metadata only";
  return model;
}

}  // namespace rnnstate::testing
