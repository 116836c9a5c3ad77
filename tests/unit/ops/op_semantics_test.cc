// The operator table (op_semantics.h): every row pinned against onnx's operator schemas, the classes the
// analyses ask for, the operand readers and the axis maps through view operators, both ways.

#include "ops/op_semantics.h"

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <set>

#include "graph/model_index.h"
#include "ops/axis_map.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::op_semantics_test {
namespace {

using namespace test_names;

/// The newest default-domain opset onnx's registry knows.
int NewestOpset() {
  return onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
}

TEST(OpSemantics, EveryRowNamesAnOperatorTheSchemasHaveInItsOpsetRange) {
  const int newest = NewestOpset();
  int pinned = 0;
  for (const OpSemantics& row : AllOpSemantics()) {
    SCOPED_TRACE(std::string(row.op) + " since " + std::to_string(row.since));
    ASSERT_LE(row.since, row.until);
    if (row.since > newest) continue;  // newer than this onnx (Gelu is opset 20): nothing to pin against
    for (int opset : {row.since, std::min(row.until, newest)}) {
      const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(std::string(row.op), opset, "");
      ASSERT_NE(schema, nullptr) << "no schema at opset " << opset;
      if (!row.axes.attribute.empty()) {
        EXPECT_TRUE(schema->attributes().count(std::string(row.axes.attribute)))
            << "opset " << opset << " has no attribute " << row.axes.attribute;
      }
      if (row.axes.input >= 0) {
        EXPECT_LT(row.axes.input, static_cast<int>(schema->inputs().size()))
            << "opset " << opset << " has no input " << row.axes.input;
      }
    }
    ++pinned;
  }
  EXPECT_GT(pinned, 90);
}

/// The attributes an axis effect reads (MapAxis, AxisAttribute), besides the row's axes operand.
std::vector<std::string> AttributesOf(const OpSemantics& row) {
  switch (row.effect) {
    case AxisEffect::kPermute:
      return {"perm"};
    case AxisEffect::kReduce:  // those naming axes (the global pools have none)
      return row.axes.attribute.empty() && row.axes.input < 0 ? std::vector<std::string>{}
                                                              : std::vector<std::string>{"keepdims"};
    case AxisEffect::kGemm:
      return {"transA"};
    case AxisEffect::kGather:
    case AxisEffect::kConcat:
    case AxisEffect::kSplit:
    case AxisEffect::kFlatten:
      return {"axis"};
    default:
      return {};
  }
}

TEST(OpSemantics, EveryAxisEffectReadsAttributesTheSchemasHaveWithTheirDefaultsPerOpset) {
  const int newest = NewestOpset();
  int checked = 0, defaults = 0;
  for (const OpSemantics& row : AllOpSemantics()) {
    if (row.effect == AxisEffect::kNone || row.since > newest) continue;
    SCOPED_TRACE(std::string(row.op) + " since " + std::to_string(row.since));
    for (int opset : {row.since, std::min(row.until, newest)}) {
      const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(std::string(row.op), opset, "");
      ASSERT_NE(schema, nullptr);
      std::vector<std::string> attributes = AttributesOf(row);
      if (row.axes.attribute == "axis") attributes.push_back("axis");
      for (const std::string& name : attributes) {
        const auto found = schema->attributes().find(name);
        ASSERT_NE(found, schema->attributes().end()) << "opset " << opset << " has no attribute " << name;
        // The row's default axis is the schema's (AxisAttribute answers with it when the attribute is absent).
        if (name == "axis" && found->second.default_value.has_i()) {
          EXPECT_EQ(found->second.default_value.i(), row.default_axis) << "opset " << opset;
          ++defaults;
        }
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(defaults, 20);
}

TEST(OpSemantics, TheRowsOfOneOperatorCoverItsOpsetsWithoutOverlap) {
  std::map<std::string_view, std::vector<const OpSemantics*>> by_op;
  for (const OpSemantics& row : AllOpSemantics()) by_op[row.op].push_back(&row);
  for (const auto& [op, rows] : by_op) {
    SCOPED_TRACE(std::string(op));
    for (size_t k = 1; k < rows.size(); ++k) EXPECT_EQ(rows[k]->since, rows[k - 1]->until + 1);
    EXPECT_EQ(rows.back()->until, OpSemantics::kLatestOpset);
  }
}

TEST(OpSemantics, AnOpsetPicksTheRowOfItsRange) {
  onnx::NodeProto squeeze;
  squeeze.set_op_type("Squeeze");
  EXPECT_EQ(FindOpSemantics(squeeze, 11)->axes.attribute, "axes");
  EXPECT_EQ(FindOpSemantics(squeeze, 13)->axes.input, 1);
  onnx::NodeProto reduce;
  reduce.set_op_type("ReduceMean");
  EXPECT_EQ(FindOpSemantics(reduce, 17)->axes.attribute, "axes");
  EXPECT_EQ(FindOpSemantics(reduce, 18)->axes.input, 1);
  onnx::NodeProto custom;
  custom.set_op_type("Relu");
  custom.set_domain("com.example");
  EXPECT_EQ(FindOpSemantics(custom, 13), nullptr);
  EXPECT_FALSE(ClassOf(custom));
}

TEST(OpSemantics, OneAxisIsNamedByAnAxisAttributeOnly) {
  // The loop chunk walk follows a normalization over one named axis (Softmax, LayerNormalization); CumSum
  // names its axis in an input and InstanceNormalization none: not one axis attribute.
  auto names_one_axis = [](const char* op, int64_t opset) {
    onnx::NodeProto node;
    node.set_op_type(op);
    return NamesOneAxis(*FindOpSemantics(node, opset));
  };
  EXPECT_TRUE(names_one_axis("Softmax", 11));
  EXPECT_TRUE(names_one_axis("Softmax", 13));
  EXPECT_TRUE(names_one_axis("LayerNormalization", 17));
  EXPECT_FALSE(names_one_axis("CumSum", 14));
  EXPECT_FALSE(names_one_axis("InstanceNormalization", 13));
  EXPECT_FALSE(names_one_axis("ReduceSum", 11));
}

TEST(OpSemantics, ClassesAreTheOnesTheAnalysesAskFor) {
  auto node = [](const char* op) {
    onnx::NodeProto n;
    n.set_op_type(op);
    return n;
  };
  // One list now: these disagreed between the batch, time and chunk analyses before.
  for (const char* op : {"Gelu", "Mish", "HardSwish", "Relu", "Cast", "Clip"}) {
    EXPECT_TRUE(IsElementwiseUnary(node(op))) << op;
    EXPECT_TRUE(KeepsShape(node(op))) << op;
  }
  for (const char* op : {"Add", "Where", "Less", "PRelu"}) EXPECT_TRUE(IsElementwiseMany(node(op))) << op;
  EXPECT_TRUE(KeepsShape(node("Softmax")));
  EXPECT_FALSE(IsElementwiseUnary(node("Softmax")));
  EXPECT_FALSE(KeepsShape(node("Transpose")));
  EXPECT_TRUE(OnlyReshapes(node("Reshape")));
  EXPECT_TRUE(OnlyReshapes(node("Cast")));
  EXPECT_FALSE(OnlyReshapes(node("Transpose")));
  EXPECT_TRUE(KeepsZero(node("Expand")));
  EXPECT_TRUE(KeepsZero(node("Relu")));
  EXPECT_FALSE(KeepsZero(node("Sigmoid")));  // sigmoid(0) = 0.5
  EXPECT_FALSE(KeepsZero(node("Concat")));   // the other parts need not be zeros
  EXPECT_FALSE(ClassOf(node("LSTM")));
}

TEST(OpSemantics, OneElementKeepsItsValueThroughReductionsAndOneOperandMax) {
  auto node = [](const char* op, int inputs) {
    onnx::NodeProto n;
    n.set_op_type(op);
    for (int k = 0; k < inputs; ++k) n.add_input("v" + std::to_string(k));
    return n;
  };
  // tf2onnx: trip count Cast(ReduceMax(Unsqueeze(length))).
  for (const char* op : {"ReduceMax", "ReduceMin", "ReduceSum", "ReduceMean", "ReduceProd", "Cast", "Unsqueeze"})
    EXPECT_TRUE(KeepsOneElement(node(op, 1))) << op;
  EXPECT_TRUE(KeepsOneElement(node("Max", 1)));
  EXPECT_FALSE(KeepsOneElement(node("Max", 2)));       // max(a, b) is not a
  EXPECT_FALSE(KeepsOneElement(node("ReduceL2", 1)));  // |a|
  EXPECT_FALSE(KeepsOneElement(node("ReduceSumSquare", 1)));
  EXPECT_FALSE(KeepsOneElement(node("Neg", 1)));
}

TEST(OpSemantics, NormalizationRefusesAxesOutOfRangeAndNegativesOfUnknownRank) {
  EXPECT_EQ(NormalizeAxis(-1, 3), 2);
  EXPECT_EQ(NormalizeAxis(2, 3), 2);
  EXPECT_FALSE(NormalizeAxis(3, 3));
  EXPECT_FALSE(NormalizeAxis(-4, 3));
  EXPECT_FALSE(NormalizeAxis(-1, -1));
  EXPECT_EQ(NormalizeAxis(1, -1), 1);
  EXPECT_EQ(NormalizeAxes({-1, 0}, 3), (std::vector<int64_t>{0, 2}));
  EXPECT_FALSE(NormalizeAxes({2, -1}, 3));  // listed twice
  EXPECT_EQ(AxisIndex(-2, 2), size_t{0});
  EXPECT_FALSE(AxisIndex(2, 2));
}

TEST(OpSemantics, PermsAreCheckedAndInverted) {
  onnx::NodeProto t;
  t.set_op_type("Transpose");
  EXPECT_EQ(PermOf(t, 3), (std::vector<int64_t>{2, 1, 0}));  // default: reversed
  EXPECT_FALSE(PermOf(t, -1));
  auto* perm = t.add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  for (int64_t p : {1, 2, 0}) perm->add_ints(p);
  EXPECT_EQ(PermOf(t, -1), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_FALSE(PermOf(t, 2));
  EXPECT_EQ(InversePerm({1, 2, 0}), (std::vector<int64_t>{2, 0, 1}));
  perm->set_ints(2, 1);
  EXPECT_FALSE(PermOf(t, 3));  // not a permutation
}

// The views tf2onnx and PyTorch write around recurrences: a batch-1 transpose written as a Reshape, unit
// axes added and removed, computed Squeeze axes.
onnx::ModelProto ViewsModel() {
  return ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[1, 60, 36] x, float[2, B, 8] s) => (float[60, 1, 36] moved, float[60, 36] merged, float[B, 8, 2] t,
                                     float[1, 2, B, 8] u, float[B, 8] q, float[2, 8, B] p) {
  target = Constant <value = int64[3] {60, 1, 36}> ()
  moved = Reshape (x, target)
  flat = Constant <value = int64[2] {-1, 36}> ()
  merged = Reshape (x, flat)
  t = Transpose <perm = [1, 2, 0]> (s)
  zero = Constant <value = int64[1] {0}> ()
  u = Unsqueeze (s, zero)
  first = Constant <value = int64 {0}> ()
  g0 = Gather <axis = 0> (s, first)
  q = Identity (g0)
  s2 = Transpose <perm = [0, 2, 1]> (s)
  p = Transpose (s2)
})");
}

TEST(OpSemantics, AxesFollowViewsForwardAndBack) {
  const onnx::ModelProto model = ViewsModel();
  const ModelIndex index(model);
  auto node = [&](const std::string& output) -> const onnx::NodeProto& { return *index.Resolve({}, output).node; };
  auto forward = [&](const std::string& output, int64_t axis, int rank) {
    return MapAxis(index, {}, node(output), AxisOf{axis, rank}, AxisDirection::kForward);
  };
  auto backward = [&](const std::string& output, int64_t axis) {
    return MapAxis(index, {}, node(output), AxisOf{axis, RankOf(index, {}, output)}, AxisDirection::kBackward);
  };
  // [1,60,36] -> [60,1,36]: time (axis 1) becomes axis 0, features stay on axis 2, the batch is a unit
  // axis moved.
  ASSERT_TRUE(forward("moved", 1, 3));
  EXPECT_EQ(forward("moved", 1, 3)->axis, 0);
  EXPECT_EQ(forward("moved", 2, 3)->axis, 2);
  EXPECT_EQ(backward("moved", 0)->axis, 1);
  EXPECT_FALSE(backward("moved", 1));  // a unit axis the Reshape adds
  // [1,60,36] -> [60,36] by -1: the unit batch is removed, time kept on axis 0.
  EXPECT_EQ(backward("merged", 0)->axis, 1);
  // Transpose perm [1,2,0]: output axis k is input axis perm[k].
  EXPECT_EQ(backward("t", 0)->axis, 1);
  EXPECT_EQ(forward("t", 0, 3)->axis, 2);
  // The default perm reverses.
  EXPECT_EQ(backward("p", 0)->axis, 2);
  // Unsqueeze with its axes an input (opset 13 and later): a new leading unit axis.
  EXPECT_FALSE(backward("u", 0));
  EXPECT_EQ(backward("u", 2)->axis, 1);
  EXPECT_EQ(forward("u", 1, 3)->axis, 2);
  EXPECT_EQ(forward("u", 1, 3)->rank, 4);
  // Elementwise keeps the axis; a Gather of one index at axis 0 removes that axis.
  EXPECT_EQ(backward("q", 1)->axis, 1);
  EXPECT_EQ(forward("g0", 1, 3)->axis, 0);
  EXPECT_FALSE(forward("g0", 0, 3));
  EXPECT_EQ(RankOf(index, {}, "first"), 0);  // a constant's rank
}

TEST(OpSemantics, ReshapesThatSplitOrMergeTheAxisDoNotKeepIt) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[4, 6] x) => (float[24] flat, float[2, 2, 6] split) {
  n = Constant <value = int64[1] {24}> ()
  flat = Reshape (x, n)
  m = Constant <value = int64[3] {2, 2, 6}> ()
  split = Reshape (x, m)
})");
  const ModelIndex index(model);
  const onnx::NodeProto& flat = *index.Resolve({}, "flat").node;
  const onnx::NodeProto& split = *index.Resolve({}, "split").node;
  EXPECT_FALSE(MapAxis(index, {}, flat, AxisOf{0, 2}, AxisDirection::kForward));
  EXPECT_FALSE(MapAxis(index, {}, split, AxisOf{0, 2}, AxisDirection::kForward));
  EXPECT_EQ(MapAxis(index, {}, split, AxisOf{1, 2}, AxisDirection::kForward)->axis, 2);
}

TEST(OpSemantics, OperandsAreReadFromAttributesOrComputedInputs) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2, 3] x) => (float[3] y, float[2, 1] r, float[2, 3] sm) {
  last = Shape <start = -1> (x)
  two = Constant <value = int64[1] {2}> ()
  one_end = Sub (last, two)
  zero = Constant <value = int64[1] {0}> ()
  x0 = Slice (x, zero, one_end, zero)
  y = Squeeze (x0, zero)
  one_axis = Constant <value = int64[1] {1}> ()
  r = ReduceSum <keepdims = 1> (x, one_axis)
  sm = Softmax <axis = -1> (x)
})");
  const ModelIndex index(model);
  auto node = [&](const std::string& output) -> const onnx::NodeProto& { return *index.Resolve({}, output).node; };
  EXPECT_EQ(AxesOperand(index, {}, node("y")), (std::vector<int64_t>{0}));
  EXPECT_EQ(AxesOperand(index, {}, node("r")), (std::vector<int64_t>{1}));
  EXPECT_EQ(AxesOperand(index, {}, node("sm")), (std::vector<int64_t>{-1}));
  EXPECT_EQ(IntsOperand(index, {}, node("x0"), "", 2), (std::vector<int64_t>{1}));
  EXPECT_FALSE(AxesOperand(index, {}, node("last")));  // Shape has no axes
}

}  // namespace
}  // namespace rnnstate::op_semantics_test
