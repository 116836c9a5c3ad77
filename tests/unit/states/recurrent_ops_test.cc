// The operator table, and the copy of it that the scripts read (tools/recurrent_ops.json).

#include "states/recurrent_ops.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "rnnstate/json.h"

namespace rnnstate::recurrent_ops_test {
namespace {

Json ScriptsTable() {
  std::ifstream file(std::string(RNNSTATE_SOURCE_DIR) + "/tools/recurrent_ops.json");
  std::stringstream text;
  text << file.rdbuf();
  return ParseJson(text.str());
}

TEST(RecurrentOps, ScriptsReadTheSameTable) {
  const Json table = ScriptsTable();
  const Json& rows = table.at("ops");
  ASSERT_EQ(rows.size(), RecurrentOps().size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const RecurrentOp& op = RecurrentOps()[i];
    const Json& row = rows[i];
    EXPECT_EQ(row.at("domain").get<std::string>(), op.domain) << i;
    EXPECT_EQ(row.at("op_type").get<std::string>(), op.op_type) << i;
    EXPECT_EQ(row.at("initial_h").get<int>(), op.initial_h_slot) << op.op_type;
    EXPECT_EQ(row.at("initial_c").get<int>(), op.initial_c_slot) << op.op_type;
    EXPECT_EQ(row.at("y_h").get<int>(), op.y_h_slot) << op.op_type;
    EXPECT_EQ(row.at("y_c").get<int>(), op.y_c_slot) << op.op_type;
  }
}

TEST(RecurrentOps, FindsOpsOfTheDefaultDomainUnderBothSpellings) {
  onnx::NodeProto node;
  node.set_op_type("LSTM");
  ASSERT_NE(FindRecurrentOp(node), nullptr);
  EXPECT_TRUE(FindRecurrentOp(node)->has_cell());
  node.set_domain("ai.onnx");
  EXPECT_NE(FindRecurrentOp(node), nullptr);
  node.set_domain("com.example");
  EXPECT_EQ(FindRecurrentOp(node), nullptr);
  node.set_domain("");
  node.set_op_type("GRU");
  ASSERT_NE(FindRecurrentOp(node), nullptr);
  EXPECT_FALSE(FindRecurrentOp(node)->has_cell());
  node.set_op_type("Loop");
  EXPECT_EQ(FindRecurrentOp(node), nullptr);
}

TEST(RecurrentOps, DynamicQuantizeLstmIsAnLstmOfItsOwnDomain) {
  onnx::NodeProto node;
  node.set_op_type("DynamicQuantizeLSTM");
  EXPECT_EQ(FindRecurrentOp(node), nullptr);  // not in the default domain
  node.set_domain("com.microsoft");
  const RecurrentOp* op = FindRecurrentOp(node);
  ASSERT_NE(op, nullptr);
  EXPECT_TRUE(op->has_cell());
  EXPECT_FALSE(op->float_weights);
  EXPECT_FALSE(op->has_layout);
  EXPECT_EQ(op->hidden_from[0].slot, 2);  // R [D, H, 4H]: axis 1
  EXPECT_EQ(op->hidden_from[0].axis, 1);
  EXPECT_FALSE(op->streaming_caveat.empty());
}

}  // namespace
}  // namespace rnnstate::recurrent_ops_test
