// The "packed" object of the metadata (rnnstate/packed_metadata.h, contract/packed_metadata.cc): written by
// PackedStatesJson and read back unchanged for both kinds, each state found in its value and member, and a
// description that is not valid (unknown kind, a member naming a state "states" lacks, a tensor member
// without columns, a value without members) refused with the reason, not read.

#include "rnnstate/packed_metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::packed_metadata_test {
namespace {

using namespace test_names;

/// A tensor-packed description: value 0 holds states {0, 1} (one stacked member) and state 3; value 1
/// holds state 2.
PackedStates TensorPacked() {
  PackedMember stacked{{0, 1}, "h", "h_n", {MetaDim{2, ""}, MetaDim{-1, "batch"}, MetaDim{3, ""}}, 1, 0, 6, {2, 3}, -1};
  PackedMember last{{3}, "c", "c_n", {MetaDim{-1, "batch"}, MetaDim{4, ""}}, 0, 6, 4, {4}, -1};
  PackedMember token{{2}, "t", "t_n", {MetaDim{-1, "batch"}, MetaDim{1, ""}}, 0, 0, 1, {1}, -1};
  PackedValue floats{"state_in", "state_out", "float32",      {MetaDim{-1, "batch"}, MetaDim{10, ""}}, 0, kInitEmpty,
                     true,       true,        {stacked, last}};
  PackedValue ints{
      "state_in_int64", "state_out_int64", "int64", {MetaDim{-1, "batch"}, MetaDim{1, ""}}, 0, kInitEmpty, false, false,
      {token}};
  return PackedStates{kPackedTensor, {floats, ints}};
}

/// `packed` as a document's "packed" member, read back with `state_count` states.
std::optional<PackedStates> ReadBack(const Json& packed, size_t state_count, std::string* error) {
  return ReadPackedStates(Json{{"states", Json::array()}, {"packed", packed}}, state_count, error);
}

/// The error of reading `packed` after `edit`.
std::string ErrorAfter(const std::function<void(Json&)>& edit) {
  Json packed = PackedStatesJson(TensorPacked());
  edit(packed);
  std::string error;
  EXPECT_FALSE(ReadBack(packed, 4, &error));
  return error;
}

TEST(ReadPackedStates, ReadsBackWhatPackedStatesJsonWrites) {
  std::string error;
  EXPECT_EQ(ReadBack(PackedStatesJson(TensorPacked()), 4, &error), TensorPacked());
  EXPECT_EQ(error, "");
  const std::vector<MetaDim> shape{MetaDim{1, ""}, MetaDim{-1, "batch"}, MetaDim{3, ""}};
  const PackedMember first{{0}, "h", "h_n", shape, 1, -1, -1, {}, 0};
  const PackedMember second{{1}, "c", "c_n", shape, 1, -1, -1, {}, 1};
  const PackedStates sequence{kPackedSequence,
                              {{"seq_in", "seq_out", "float32", {}, -1, kInitEmpty, true, true, {first, second}}}};
  const Json json = PackedStatesJson(sequence);
  EXPECT_FALSE(json["values"][0].contains("shape"));
  EXPECT_FALSE(json["values"][0]["members"][0].contains("offset"));
  EXPECT_EQ(ReadBack(json, 2, &error), sequence);
  EXPECT_EQ(error, "");
}

TEST(ReadPackedStates, AModelWithoutPackedStatesIsNotPacked) {
  std::string error;
  EXPECT_FALSE(ReadPackedStates(Json{{"states", Json::array()}}, 0, &error));
  EXPECT_EQ(error, "");
  EXPECT_FALSE(HasPackedStates(std::optional<Json>(Json{{"states", Json::array()}})));
  EXPECT_FALSE(HasPackedStates(std::optional<Json>()));
  EXPECT_TRUE(HasPackedStates(std::optional<Json>(Json{{"packed", 1}})));  // valid or not
  EXPECT_FALSE(HasPackedStates(ParseModel(kLstm)));
}

TEST(ReadPackedStates, RefusesAnInvalidDescriptionWithTheReason) {
  EXPECT_THAT(ErrorAfter([](Json& p) { p["kind"] = "list"; }),
              AllOf(HasSubstr("metadata 'rnnstate': \"packed\" is invalid"), HasSubstr("unknown kind 'list'")));
  EXPECT_THAT(ErrorAfter([](Json& p) { p["values"][1]["members"][0]["states"] = {4}; }),
              HasSubstr("names state 4, which \"states\" does not have"));
  EXPECT_THAT(ErrorAfter([](Json& p) { p["values"][0]["members"][1]["length"] = 0; }),
              HasSubstr("offset or length is out of range"));
  EXPECT_THAT(ErrorAfter([](Json& p) { p["values"][0]["members"][1].erase("row_shape"); }),
              HasSubstr("missing array 'row_shape'"));
  EXPECT_THAT(ErrorAfter([](Json& p) { p["values"][1]["members"] = Json::array(); }), HasSubstr("no \"members\""));
  EXPECT_THAT(ErrorAfter([](Json& p) { p["values"][0]["optional"] = "yes"; }), HasSubstr("'optional' is not true"));
  EXPECT_THAT(ErrorAfter([](Json& p) { p = Json::array(); }), HasSubstr("not an object"));
}

TEST(PackedStates, MemberOfFindsTheValueAndMemberHoldingAState) {
  const PackedStates packed = TensorPacked();
  EXPECT_EQ(packed.MemberOf(0), std::make_pair(0, 0));
  EXPECT_EQ(packed.MemberOf(1), std::make_pair(0, 0));
  EXPECT_EQ(packed.MemberOf(3), std::make_pair(0, 1));
  EXPECT_EQ(packed.MemberOf(2), std::make_pair(1, 0));
  EXPECT_EQ(packed.MemberOf(4), std::make_pair(-1, -1));
}

}  // namespace
}  // namespace rnnstate::packed_metadata_test
