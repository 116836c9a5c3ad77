// The producer of the recurrent operators' states (recurrent_node.h): every RNN/GRU/LSTM at any depth, the
// facts read from its attributes and shapes (direction, hidden size, layout, batch, element type), whether
// it streams, why it cannot be rewritten, and one state per slot (h, then c).

#include "find/recurrent_node.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::recurrent_node_test {
namespace {

using namespace test_names;

/// What FindOpStates finds in `model`.
struct Found {
  std::vector<RecurrentNode> nodes;
  std::vector<RecurrentState> states;
};

Found FindIn(const onnx::ModelProto& model) {
  const ModelIndex index(model);
  Found found;
  FindOpStates(index, &found.nodes, &found.states);
  return found;
}

Found FindInText(const std::string& text) { return FindIn(ParseModel(text)); }

/// kGru with `attributes` (after hidden_size) and `inputs` (after X, W, R) given to its GRU.
std::string GruWith(const std::string& attributes, const std::string& inputs = "") {
  std::string text = kGru;
  text.replace(text.find("<hidden_size = 3>"), 17, "<hidden_size = 3" + attributes + ">");
  text.replace(text.find("(X, W, R)"), 9, "(X, W, R" + inputs + ")");
  return text;
}

TEST(FindOpStates, AnLstmOwnsHThenCWithTheirSlotsAndShape) {
  const Found found = FindInText(kLstm);
  ASSERT_EQ(found.nodes.size(), 1u);
  const RecurrentNode& node = found.nodes[0];
  EXPECT_EQ(node.op, "LSTM");
  EXPECT_EQ(node.graph_name, "main");
  EXPECT_EQ(node.direction, "forward");
  EXPECT_EQ(node.num_directions, 1);
  EXPECT_EQ(node.hidden_size, 3);
  EXPECT_EQ(node.elem_type, onnx::TensorProto::FLOAT);
  EXPECT_EQ(node.batch.param, "batch");
  EXPECT_EQ(node.x, "X");
  EXPECT_TRUE(node.streamable);
  EXPECT_EQ(node.problem, "");
  ASSERT_EQ(found.states.size(), 2u);
  const RecurrentState& h = found.states[0];
  const RecurrentState& c = found.states[1];
  EXPECT_EQ(h.kind, StateKind::kHidden);
  EXPECT_EQ(h.initial_slot, 5);
  EXPECT_EQ(h.final_slot, 1);
  EXPECT_EQ(h.initial_name, "initial_h");
  EXPECT_EQ(c.kind, StateKind::kCell);
  EXPECT_EQ(c.initial_slot, 6);
  EXPECT_EQ(c.final_slot, 2);
  EXPECT_EQ(c.final_name, "Y_c");
  EXPECT_EQ(ShapeText(h.shape), "[1,batch,3]");
  EXPECT_EQ(h.batch_axis, 1);
  EXPECT_THAT(h.axis_names, ElementsAre("num_directions", "batch", "hidden_size"));
  EXPECT_EQ(h.batch_source.value, "X");
  EXPECT_EQ(h.batch_source.axis, 1);
  EXPECT_TRUE(h.streamable);
}

TEST(FindOpStates, AGruOwnsOneState) {
  const Found found = FindInText(kGru);
  ASSERT_EQ(found.states.size(), 1u);
  EXPECT_EQ(found.states[0].kind, StateKind::kHidden);
  EXPECT_EQ(found.states[0].owner.op, "GRU");
}

TEST(FindOpStates, LayoutOnePutsTheBatchFirst) {
  std::string text = GruWith(", layout = 1");
  text.replace(text.find("float[seq, batch, 2] X"), 22, "float[batch, seq, 2] X");
  text.replace(text.find("float[seq, 1, batch, 3] Y"), 25, "float[batch, seq, 1, 3] Y");
  const Found found = FindInText(text);
  ASSERT_EQ(found.states.size(), 1u);
  const RecurrentState& h = found.states[0];
  EXPECT_EQ(found.nodes[0].layout, 1);
  EXPECT_EQ(ShapeText(h.shape), "[batch,1,3]");
  EXPECT_EQ(h.batch_axis, 0);
  EXPECT_THAT(h.axis_names, ElementsAre("batch", "num_directions", "hidden_size"));
  EXPECT_EQ(h.batch_source.axis, 0);
}

TEST(FindOpStates, ReverseAndBidirectionalNodesDoNotStream) {
  const Found reverse = FindInText(kReverseGru);
  ASSERT_EQ(reverse.nodes.size(), 1u);
  EXPECT_FALSE(reverse.nodes[0].streamable);
  EXPECT_THAT(reverse.nodes[0].not_streamable_reason, HasSubstr("reverse: the final state needs the whole sequence"));
  EXPECT_FALSE(reverse.states[0].streamable);

  std::string text = GruWith(", direction = \"bidirectional\"");
  text.replace(text.find("float[1, 9, 2] W"), 16, "float[2, 9, 2] W");
  text.replace(text.find("float[1, 9, 3] R"), 16, "float[2, 9, 3] R");
  text.replace(text.find("float[seq, 1, batch, 3] Y"), 25, "float[seq, 2, batch, 3] Y");
  const Found both = FindInText(text);
  ASSERT_EQ(both.nodes.size(), 1u);
  EXPECT_EQ(both.nodes[0].num_directions, 2);
  EXPECT_FALSE(both.nodes[0].streamable);
  EXPECT_THAT(both.nodes[0].not_streamable_reason, HasSubstr("bidirectional"));
  EXPECT_EQ(ShapeText(both.states[0].shape), "[2,batch,3]");
}

TEST(FindOpStates, SequenceLengthsKeepANodeFromStreaming) {
  std::string text = GruWith("", ", , lens");
  text.replace(text.find("float[1, 9, 3] R)"), 17, "float[1, 9, 3] R, int32[batch] lens)");
  const Found found = FindInText(text);
  ASSERT_EQ(found.nodes.size(), 1u);
  EXPECT_TRUE(found.nodes[0].has_sequence_lens);
  EXPECT_FALSE(found.nodes[0].streamable);
  EXPECT_THAT(found.nodes[0].not_streamable_reason, HasSubstr("sequence_lens"));
}

TEST(FindOpStates, WithoutTheAttributeTheHiddenSizeComesFromR) {
  std::string text = kGru;
  text.replace(text.find("<hidden_size = 3> "), 18, "");
  const Found found = FindInText(text);
  ASSERT_EQ(found.nodes.size(), 1u);
  EXPECT_EQ(found.nodes[0].hidden_size, 3);  // R [1, 3H, H]
  EXPECT_EQ(found.nodes[0].problem, "");
}

TEST(FindOpStates, ANodeWithoutAnyHiddenSizeIsNotRewritable) {
  std::string text = kGru;
  text.replace(text.find("<hidden_size = 3> "), 18, "");
  onnx::ModelProto model = ParseModel(text);
  for (int i : {1, 2}) model.mutable_graph()->mutable_input(i)->mutable_type()->mutable_tensor_type()->clear_shape();
  const Found found = FindIn(model);
  ASSERT_EQ(found.nodes.size(), 1u);
  EXPECT_THAT(found.nodes[0].problem, HasSubstr("hidden size unknown"));
  ASSERT_EQ(found.states.size(), 1u);
  EXPECT_EQ(found.states[0].problem, found.nodes[0].problem);
}

TEST(FindOpStates, AnUnknownBatchOfXIsTakenFromTheFinalState) {
  const Found found = FindInText(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, ?, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, ?, 3] Y, float[1, 4, 3] h) {
  Y, h = GRU <hidden_size = 3> (X, W, R)
})");
  ASSERT_EQ(found.nodes.size(), 1u);
  EXPECT_EQ(found.nodes[0].batch.value, 4);
  EXPECT_EQ(ShapeText(found.states[0].shape), "[1,4,3]");
}

TEST(FindOpStates, NodesOfBranchesComeAfterTheMainGraphsAndUnnamedOnesGetALabel) {
  const Found found = FindInText(R"(<ir_version: 8, opset_import: ["" : 14]>
g (bool c, float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Z) {
  Z = If (c) <then_branch = t () => (float[seq, 1, batch, 3] tz) {
    tz = GRU <hidden_size = 3> (X, W, R)
  }, else_branch = e () => (float[seq, 1, batch, 3] ez) {
    ez = GRU <hidden_size = 3> (X, W, R)
  }>
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  ASSERT_EQ(found.nodes.size(), 3u);
  EXPECT_EQ(found.nodes[0].graph_name, "main");
  EXPECT_EQ(found.nodes[0].node, 1);
  EXPECT_TRUE(found.nodes[0].unnamed);
  EXPECT_FALSE(found.nodes[0].name.empty());
  EXPECT_TRUE(found.nodes[1].graph.size() == 1 && found.nodes[2].graph.size() == 1);
  EXPECT_NE(found.nodes[1].graph_name, found.nodes[2].graph_name);
  ASSERT_THAT(found.states, SizeIs(3u));
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(found.states[i].owner.graph, found.nodes[i].graph) << i;
}

TEST(FindOpStates, AppendsToWhatIsFoundAlready) {
  Found found;
  found.nodes.emplace_back();
  found.states.emplace_back();
  const onnx::ModelProto model = ParseModel(kLstm);
  const ModelIndex index(model);
  FindOpStates(index, &found.nodes, &found.states);
  ASSERT_EQ(found.nodes.size(), 2u);
  EXPECT_EQ(found.nodes[1].op, "LSTM");
  ASSERT_EQ(found.states.size(), 3u);
  EXPECT_EQ(found.states[2].kind, StateKind::kCell);
}

}  // namespace
}  // namespace rnnstate::recurrent_node_test
