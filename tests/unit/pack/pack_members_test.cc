// pack/pack_members.h: the members of a packed value grouped from the state pairs (PackMembers), where the
// zeros of an empty packed value get their batch (ZeroBatchOf) and how big those zeros may be
// (CheckZeroSize). Pairs built by hand, over kLstm's main graph (X [seq, batch, 2], W, R) or a variant.

#include "pack/pack_members.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pack/packed_rewrite.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::pack_members_test {
namespace {

using namespace test_names;

/// kLstm's main graph with the default initializers [1, 1, 3] named in `defaults`.
onnx::GraphProto LstmGraphWithDefaults(const std::vector<std::string>& defaults) {
  onnx::ModelProto model = ParseModel(kLstm);
  for (const std::string& name : defaults) AddFloatInitializer(*model.mutable_graph(), name, {1, 1, 3}, {0.0f});
  return model.graph();
}

/// ZeroBatchOf the members of `pairs` over `main`.
ZeroBatch ZeroBatchOfPairs(const onnx::GraphProto& main, const std::vector<StatePair>& pairs) {
  const std::vector<PackMemberPlan> members = PackMembers(main, pairs);
  std::vector<const PackMemberPlan*> all;
  for (const PackMemberPlan& member : members) all.push_back(&member);
  return ZeroBatchOf(main, all, pairs);
}

TEST(PackMembers, OneMemberPerStateTensorInPairOrder) {
  const onnx::GraphProto main = LstmGraphWithDefaults({"c"});
  const std::vector<PackMemberPlan> members = PackMembers(main, {FloatHPair("h"), FloatHPair("c", kInitEmpty)});
  ASSERT_EQ(members.size(), 2u);
  const PackMemberPlan& h = members[0];
  EXPECT_EQ(h.meta.input, "h");
  EXPECT_EQ(h.meta.output, "h_out");
  EXPECT_EQ(h.meta.states, std::vector<int64_t>{0});
  EXPECT_EQ(h.meta.batch_axis, 1);
  EXPECT_EQ(h.meta.shape, FloatHPair("h").shape);
  EXPECT_EQ(h.elem_type, onnx::TensorProto::FLOAT);
  EXPECT_EQ(h.dims, (std::vector<int64_t>{1, -1, 3}));  // -1 at the batch
  EXPECT_TRUE(h.zero_default);
  EXPECT_EQ(h.default_initializer, "");
  const PackMemberPlan& c = members[1];
  EXPECT_EQ(c.meta.states, std::vector<int64_t>{1});
  EXPECT_FALSE(c.zero_default);  // fed empty: the model selects its own default
  EXPECT_EQ(c.default_initializer, "c");
}

TEST(PackMembers, TheRowsOfOneTensorAreOneMember) {
  StatePair h = FloatHPair("state"), c = FloatHPair("state", kInitEmpty), other = FloatHPair("other");
  h.rows = RowRange{0, 1};
  c.rows = RowRange{1, 2};
  const std::vector<PackMemberPlan> members = PackMembers(LstmGraphWithDefaults({}), {h, other, c});
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0].meta.input, "state");
  EXPECT_EQ(members[0].meta.states, (std::vector<int64_t>{0, 2}));
  EXPECT_FALSE(members[0].zero_default);  // zeros only when every row's default is zeros
  EXPECT_EQ(members[1].meta.states, std::vector<int64_t>{1});
}

TEST(PackMembers, RefusesPairsItCannotGroup) {
  const onnx::GraphProto main = LstmGraphWithDefaults({});
  StatePair old = FloatHPair("h");
  old.dtype = "";
  ExpectError([&] { PackMembers(main, {old}); }, ExitCode::kBadInput, "'h' -> 'h_out' lacks dtype/shape/init");
  ExpectError([&] { PackMembers(main, {FloatHPair("h", "")}); }, ExitCode::kBadInput, "lacks dtype/shape/init");
  StatePair odd = FloatHPair("h");
  odd.dtype = "float128";
  ExpectError([&] { PackMembers(main, {odd}); }, ExitCode::kUnsupported, "element type 'float128'");
  StatePair elsewhere = FloatHPair("h");
  elsewhere.output = "c_out";
  ExpectError(
      [&] {
        PackMembers(main, {FloatHPair("h"), elsewhere});
      },
      ExitCode::kUnsupported, "shares its input with another pair but not its output or shape");
}

TEST(ZeroBatchOf, AFixedBatchIsThatManyRowsAndNoMembersNone) {
  const onnx::GraphProto main = LstmGraphWithDefaults({});
  StatePair fixed = FloatHPair("h");
  fixed.shape[1] = MetaDim{4, ""};
  const ZeroBatch four = ZeroBatchOfPairs(main, {fixed});
  EXPECT_EQ(four.fixed, 4);
  EXPECT_EQ(four.input, "");
  const ZeroBatch none = ZeroBatchOf(main, {}, {fixed});
  EXPECT_EQ(none.fixed, -1);
  EXPECT_EQ(none.input, "");
  EXPECT_EQ(none.axis, -1);
}

TEST(ZeroBatchOf, DefaultsOfOneRowGiveOneRowOtherwiseTheDataNamesTheBatch) {
  const ZeroBatch one = ZeroBatchOfPairs(LstmGraphWithDefaults({"h", "c"}), {FloatHPair("h"), FloatHPair("c")});
  EXPECT_EQ(one.fixed, 1);
  // c has no default of one row: the zeros take the batch of the data input declaring "batch".
  const ZeroBatch data = ZeroBatchOfPairs(LstmGraphWithDefaults({"h"}), {FloatHPair("h"), FloatHPair("c")});
  EXPECT_EQ(data.fixed, -1);
  EXPECT_EQ(data.input, "X");
  EXPECT_EQ(data.axis, 1);
}

TEST(ZeroBatchOf, AStateInputDeclaringTheBatchIsNotTheData) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[1, batch, 3] h, float[batch, seq, 2] x, float[1, 12, 2] W, float[1, 12, 3] R) => (float[seq, 1, batch, 3] Y) {
  X = Transpose <perm = [1, 0, 2]> (x)
  Y = LSTM <hidden_size = 3> (X, W, R, , , h)
})");
  const ZeroBatch batch = ZeroBatchOfPairs(model.graph(), {FloatHPair("h")});
  EXPECT_EQ(batch.input, "x");
  EXPECT_EQ(batch.axis, 0);
}

TEST(ZeroBatchOf, RefusesABatchNoDataInputNames) {
  const onnx::GraphProto main = LstmGraphWithDefaults({});
  StatePair frames = FloatHPair("h");
  frames.shape[1] = MetaDim{-1, "frames"};
  ExpectError([&] { ZeroBatchOfPairs(main, {frames}); }, ExitCode::kUnsupported,
              "its default is zeros of batch 'frames', which no graph input declares");
  StatePair unnamed = FloatHPair("h");
  unnamed.shape[1] = MetaDim{-1, ""};
  ExpectError([&] { ZeroBatchOfPairs(main, {unnamed}); }, ExitCode::kUnsupported,
              "its input 'h' leaves unnamed, which no data input declares");
}

TEST(CheckZeroSize, ZerosThatFitPass) {
  const int32_t kFloat = onnx::TensorProto::FLOAT;
  EXPECT_NO_THROW(CheckZeroSize("h", kFloat, {1, -1, 3}, 1, ZeroBatch{2, "", -1}, 14));
  EXPECT_NO_THROW(CheckZeroSize("h", kFloat, {1, -1, int64_t{1} << 40}, 1, ZeroBatch{-1, "X", 1}, 14));  // computed
  // Stored (opset 8 has no ConstantOfShape): one row of exactly 1 MiB is allowed, whatever the batch.
  EXPECT_NO_THROW(CheckZeroSize("h", kFloat, {1, -1, 262144}, 1, ZeroBatch{1000, "", -1}, 8));
}

TEST(CheckZeroSize, RefusesZerosOverSixtyThreeBitsOrAStoredRowOverOneMebibyte) {
  const int32_t kFloat = onnx::TensorProto::FLOAT;
  // The batch known only at run time counts as one row.
  ExpectError(
      [&] {
        CheckZeroSize("label", kFloat, {1, -1, int64_t{1} << 61}, 1, ZeroBatch{-1, "X", 1}, 14);
      },
      ExitCode::kUnsupported, "label: zeros [1,1,2305843009213693952] of float32 would not fit in 2^63 bytes");
  ExpectError(
      [&] {
        CheckZeroSize("label", kFloat, {1, -1, 3}, 1, ZeroBatch{int64_t{1} << 62, "", -1}, 14);
      },
      ExitCode::kUnsupported, "would not fit in 2^63 bytes");
  ExpectError(
      [&] {
        CheckZeroSize("label", kFloat, {1, -1, 262145}, 1, ZeroBatch{1, "", -1}, 8);
      },
      ExitCode::kUnsupported,
      "label: ai.onnx opset 8 has no ConstantOfShape of float32, and the zero row [1,1,262145] stored "
      "instead would be over 1 MiB");
}

}  // namespace
}  // namespace rnnstate::pack_members_test
