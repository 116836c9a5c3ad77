// The operator table's rows (ops/op_table.cc, read through AllOpSemantics in ops/op_semantics.h), beside
// op_semantics_test's pinning against onnx's schemas: every row's opset range is well formed, a row takes
// the axis effect of its class unless its class leaves it to the row, windows mix along their windows,
// shape computations follow no axis, and the rows that differ by opset (Softmax) or keep zeros as stated.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/op_semantics.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::op_table_test {
namespace {

using namespace test_names;

/// The rows of `op`, in table order.
std::vector<OpSemantics> RowsOf(std::string_view op) {
  std::vector<OpSemantics> rows;
  for (const OpSemantics& row : AllOpSemantics()) {
    if (row.op == op) rows.push_back(row);
  }
  return rows;
}

TEST(OpTable, EveryRowHasAnOpsetRange) {
  ASSERT_GT(AllOpSemantics().size(), 50u);
  EXPECT_EQ(&AllOpSemantics(), &AllOpSemantics());  // built once
  for (const OpSemantics& row : AllOpSemantics()) {
    EXPECT_FALSE(row.op.empty());
    EXPECT_GE(row.since, 1) << row.op;
    EXPECT_LE(row.since, row.until) << row.op;
  }
}

TEST(OpTable, ARowHasTheAxisEffectOfItsClass) {
  for (const OpSemantics& row : AllOpSemantics()) {
    const std::string op(row.op);
    switch (row.op_class) {
      case OpClass::kElementwiseUnary:
        EXPECT_EQ(row.effect, AxisEffect::kSame) << op;
        EXPECT_EQ(row.mixing, AxisMixing::kNone) << op;
        break;
      case OpClass::kElementwiseMany:
        EXPECT_EQ(row.effect, AxisEffect::kBroadcast) << op;
        EXPECT_EQ(row.mixing, AxisMixing::kNone) << op;
        break;
      case OpClass::kNormalization:
        EXPECT_EQ(row.effect, AxisEffect::kNormalize) << op;
        break;
      case OpClass::kWindow:
        EXPECT_EQ(row.effect, AxisEffect::kWindow) << op;
        EXPECT_EQ(row.mixing, AxisMixing::kWindow) << op;
        break;
      case OpClass::kShapeComputation:
        EXPECT_EQ(row.effect, AxisEffect::kNone) << op;
        EXPECT_FALSE(row.keeps_zero) << op;
        break;
      default:
        break;
    }
  }
}

TEST(OpTable, SoftmaxMixesFromItsAxisOnwardBeforeOpset13AndAlongItSince) {
  const std::vector<OpSemantics> rows = RowsOf("Softmax");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].until, 12);
  EXPECT_EQ(rows[0].mixing, AxisMixing::kNamedAxisOnward);
  EXPECT_EQ(rows[0].default_axis, 1);
  EXPECT_EQ(rows[0].axes.attribute, "axis");
  EXPECT_EQ(rows[1].since, 13);
  EXPECT_EQ(rows[1].until, OpSemantics::kLatestOpset);
  EXPECT_EQ(rows[1].mixing, AxisMixing::kNamedAxes);
  EXPECT_EQ(rows[1].default_axis, -1);
}

TEST(OpTable, KeepsZeroOnlyWhereZeroMapsToZero) {
  for (const char* op : {"Relu", "Neg", "Transpose"}) {
    ASSERT_FALSE(RowsOf(op).empty()) << op;
    EXPECT_TRUE(RowsOf(op)[0].keeps_zero) << op;
  }
  for (const char* op : {"Sigmoid", "Exp", "Cos"}) {
    ASSERT_FALSE(RowsOf(op).empty()) << op;
    EXPECT_FALSE(RowsOf(op)[0].keeps_zero) << op << "(0) is not 0";
  }
  EXPECT_EQ(RowsOf("Transpose")[0].effect, AxisEffect::kPermute);
  EXPECT_EQ(RowsOf("Transpose")[0].axes.attribute, "perm");
}

}  // namespace
}  // namespace rnnstate::op_table_test
