#pragma once
/// \file
/// `--pack tensor|sequence`, planned as data: which state tensors go into which packed value (one per
/// element type), where each member sits, how an empty packed value gives every state its default, and
/// every name added. pack_apply.h executes a PackPlan.
///
/// Tensor packing (batch first, one row per batch element):
///
///   state_in [B,N] ──Size==0──> If(then: zeros [b,N], else: state_in) ──> Z ──Split(axis 1)──> parts
///   part [B,H] ──Unsqueeze(0) (or Reshape + Transpose)──> lstm.h_in [1,B,H] ──> (the model as rewritten)
///   h_n [1,B,H] ──Squeeze(0) (or Transpose + Reshape)──> [B,H] ──Concat(axis 1)──> state_out [B,N]
///
/// Members whose default is zeros are split from Z; members whose default the model selects itself when
/// fed empty (`init` "empty") are split from state_in, so that an empty state_in reaches them empty.
/// Consecutive members of one shape (the layers of a stack: [1,B,H] each) form a block handled by three
/// nodes whatever their number, so that the per-call cost does not grow with the number of states:
///
///   block [B,n*H] ──Reshape──> [B,n,H] ──Transpose──> [n,B,H] ──Split(axis 0)──> n x [1,B,H]
///   n x [1,B,H] ──Concat(axis 0)──> [n,B,H] ──Transpose──> [B,n,H] ──Reshape──> [B,n*H]
/// Sequence packing: `If(SequenceLength == 0, then: each member's default, else: SequenceAt(i) each)`
/// unpacks, `SequenceConstruct` of the final states packs.

#include <onnx/onnx_pb.h>

#include <set>
#include <string>
#include <vector>

#include "graph/naming.h"
#include "pack/pack_members.h"
#include "rnnstate/metadata.h"
#include "rnnstate/options.h"
#include "rnnstate/packed_metadata.h"

namespace rnnstate {

/// Columns of a packed tensor handled together: one member, or a run of members of one shape whose batch
/// is on axis 0 or 1 (a "group": unpacked by one Reshape, Transpose and Split, packed by the reverse).
struct PackBlock {
  size_t first = 0;  ///< index of its first member
  size_t count = 1;  ///< number of members
  bool group = false;
  bool zero_default = true;
  int64_t offset = 0;  ///< its columns
  int64_t length = 0;
  std::string part;  ///< its columns [B, length] (the source itself when it is the only block)
  std::string flat;  ///< its final states as [B, length] (the packed output when it is the only block)
  // A group's helper values: [B, n*d, rest] and [n*d, B, rest] (batch axis 1) in, and out.
  std::string rows, stacked, stacked_out, rows_out;
};

/// One packed value (one element type).
struct PackValuePlan {
  PackedValue meta;  ///< as recorded in the metadata
  int32_t elem_type = 0;
  MetaDim batch;               ///< the members' batch (a number or the data's name)
  std::string declared_batch;  ///< the dim_param the tensor input declares for it (its own: it may be 0)
  int64_t width = 0;           ///< N, elements per batch row (tensor)
  ZeroBatch zero_batch;        ///< how the zeros of an empty value are sized (when some member takes zeros)
  std::vector<PackMemberPlan> members;
  std::vector<PackBlock> blocks;  ///< tensor: the members' columns, in order
  // Helper values.
  std::string size, zero, is_empty, then_out, else_out;
  std::string selected;  ///< tensor: Z, the packed value with zeros when it was empty
};

/// The packing of a model, as data.
struct PackPlan {
  PackKind kind = PackKind::kNone;
  int64_t opset = 0;
  bool defaults = false;  ///< the tensor inputs get the empty tensor as their default
  std::vector<PackValuePlan> values;
  std::vector<StatePair> pairs;    ///< the "states" recorded afterwards
  PackedStates packed;             ///< the "packed" object recorded afterwards
  std::vector<std::string> notes;  ///< what a runtime must know (first feed, streamability)
  /// Members' outputs that are the model's own outputs (h_n): they stay graph outputs beside the packed one.
  std::set<std::string> kept_outputs;

  /// One line per packed value, for --dry-run and rewrite's text.
  std::vector<std::string> Describe() const;
};

/// Plans packing every recorded pair of `model` as `options` asks (kind, names, defaults mode). The
/// members' outputs that are in `own_outputs` (the outputs the model had before rnnstate) stay graph
/// outputs. Throws Error(kUnsupported) with the reason when the states cannot be packed that way
/// (sequences below opset 11, a dimension other than the batch unknown, members of one element type with
/// different batches, a zero default whose batch no graph input declares, sizes that overflow 64 bits, a
/// zero row over kMaxZeroDefaultBytes to store where ConstantOfShape cannot make it), Error(kBadInput) for metadata
/// without the contract fields (dtype, shape, init), Error(kUsage) when a packed name asked for
/// explicitly (`options.packed_input_given`, ...) is a name of the model.
PackPlan PlanPack(const onnx::ModelProto& model, const std::vector<StatePair>& pairs, const PlanOptions& options,
                  NameAllocator& names, NameAllocator& dim_names, const std::set<std::string>& own_outputs = {});

}  // namespace rnnstate
