#pragma once
/// \file
/// The members of a packed value (one per state tensor, grouped from the state pairs) and how the zeros of
/// an empty packed value get their batch size: what pack_plan.h plans the packed values from.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "rnnstate/metadata.h"
#include "rnnstate/packed_metadata.h"

namespace rnnstate {

/// Where the zeros of an empty packed value get their batch size.
struct ZeroBatch {
  int64_t fixed = -1;  ///< >= 0: this many rows (a fixed batch, or 1 when every zero default broadcasts)
  std::string input;   ///< otherwise: axis `axis` of this main-graph input (the data's batch)
  int64_t axis = -1;
};

/// One member of a packed value: one state tensor (the states of one pair, or all rows of a stacked one).
struct PackMemberPlan {
  PackedMember meta;  ///< as recorded in the metadata
  int32_t elem_type = 0;
  std::vector<int64_t> dims;        ///< the member's shape, -1 at the batch axis
  bool zero_default = true;         ///< an empty packed value gives zeros (else: the member fed empty)
  std::string default_initializer;  ///< the input's default initializer, removed ("" when none)
  // Helper values (named by the plan).
  std::string part;           ///< tensor: the member's columns [B, length]
  std::string flat;           ///< tensor: the final state as [B, length]
  std::string position;       ///< sequence: the Constant index
  std::string default_value;  ///< sequence: the member's default in the then-branch
  std::string given;          ///< sequence: the member as taken from the sequence in the else-branch
  ZeroBatch zero_batch;       ///< sequence: how its zeros are sized (zero_default only)
};

/// Groups the pairs into members (one per state tensor), in pair order.
std::vector<PackMemberPlan> PackMembers(const onnx::GraphProto& main, const std::vector<StatePair>& pairs);

/// How zeros for `members` (those taking zeros when the packed value is empty) get their batch size.
ZeroBatch ZeroBatchOf(const onnx::GraphProto& main, const std::vector<const PackMemberPlan*>& members,
                      const std::vector<StatePair>& pairs);

/// Throws Error(kUnsupported), the message starting with `label`, unless the zeros of `type` and `dims`
/// (the rows `rows` gives at `batch_axis`) can be built: their size in bytes fits 63 bits (one row when the
/// batch is only known at run time), and where ConstantOfShape cannot make them at `opset`, the zero row
/// stored instead stays under kMaxZeroDefaultBytes.
void CheckZeroSize(const std::string& label, int32_t type, std::vector<int64_t> dims, int64_t batch_axis,
                   const ZeroBatch& rows, int64_t opset);

}  // namespace rnnstate
