// The members of a packed value — one per state tensor — and how the zeros an empty packed value stands
// for are sized and bounded (moved unchanged from pack_plan.cc, which plans the packed values from them).

#include "pack/pack_members.h"

#include <cstdint>
#include <map>
#include <optional>

#include "graph/graph_edit.h"
#include "graph/node_builder.h"
#include "graph/proto_access.h"
#include "rewrite/plan.h"
#include "rnnstate/error.h"

namespace rnnstate {

namespace {

/// onnx::TensorProto::FLOAT for "float32", ...; 0 when unknown.
int32_t ElementTypeOf(const std::string& dtype) {
  for (int32_t type = onnx::TensorProto::FLOAT; type <= onnx::TensorProto::BFLOAT16; ++type) {
    if (!ElementTypeName(type).empty() && ElementTypeName(type) == dtype) return type;
  }
  return 0;
}

/// The main-graph input (other than the states') declaring dimension `symbol`, and its axis.
ZeroBatch BatchFromData(const onnx::GraphProto& main, const std::string& symbol, const std::vector<StatePair>& pairs) {
  for (const auto& input : main.input()) {
    bool state_input = false;
    for (const auto& pair : pairs) state_input |= pair.input == input.name();
    if (state_input || !input.type().has_tensor_type()) continue;
    const auto& dims = input.type().tensor_type().shape().dim();
    for (int axis = 0; axis < dims.size(); ++axis) {
      if (dims[axis].has_dim_param() && dims[axis].dim_param() == symbol) return ZeroBatch{-1, input.name(), axis};
    }
  }
  return ZeroBatch{};
}

/// "[1,8]" for dims.
std::string DimsText(const std::vector<int64_t>& dims) {
  std::vector<MetaDim> shape;
  for (int64_t d : dims) shape.push_back(MetaDim{d, ""});
  return MetaShapeText(shape);
}

}  // namespace

std::vector<PackMemberPlan> PackMembers(const onnx::GraphProto& main, const std::vector<StatePair>& pairs) {
  std::vector<PackMemberPlan> members;
  std::map<std::string, size_t> by_input;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const StatePair& pair = pairs[i];
    const std::string label = "state pair '" + pair.input + "' -> '" + pair.output + "'";
    if (pair.dtype.empty() || pair.init.empty()) {
      throw Error(ExitCode::kBadInput, label + " lacks dtype/shape/init (metadata of an older rnnstate: rewrite the " +
                                           "original model again)");
    }
    if (auto found = by_input.find(pair.input); found != by_input.end()) {
      PackMemberPlan& member = members[found->second];
      if (member.meta.output != pair.output || member.meta.shape != pair.shape) {
        throw Error(ExitCode::kUnsupported, label + " shares its input with another pair but not its output or shape");
      }
      member.meta.states.push_back(static_cast<int64_t>(i));
      member.zero_default = member.zero_default && pair.init == kInitZeros;
      continue;
    }
    by_input[pair.input] = members.size();
    PackMemberPlan member;
    member.meta.states = {static_cast<int64_t>(i)};
    member.meta.input = pair.input;
    member.meta.output = pair.output;
    member.meta.shape = pair.shape;
    member.meta.batch_axis = pair.batch_axis;
    member.elem_type = ElementTypeOf(pair.dtype);
    if (member.elem_type == 0) throw Error(ExitCode::kUnsupported, label + ": element type '" + pair.dtype + "'");
    for (size_t axis = 0; axis < pair.shape.size(); ++axis) {
      member.dims.push_back(static_cast<int64_t>(axis) == pair.batch_axis ? -1 : pair.shape[axis].value);
    }
    member.zero_default = pair.init == kInitZeros;
    if (FindInitializer(main, pair.input)) member.default_initializer = pair.input;
    members.push_back(std::move(member));
  }
  return members;
}

ZeroBatch ZeroBatchOf(const onnx::GraphProto& main, const std::vector<const PackMemberPlan*>& members,
                      const std::vector<StatePair>& pairs) {
  if (members.empty()) return ZeroBatch{};
  const PackMemberPlan& first = *members.front();
  const MetaDim batch = first.meta.shape.at(static_cast<size_t>(first.meta.batch_axis));
  if (batch.value >= 0) return ZeroBatch{batch.value, "", -1};
  // Zeros of one row are the default of an input whose default is one row (broadcast to the batch of X
  // by the model, or the batch-1 default of the model's own input): that is what the model does unfed.
  bool one_row = true;
  for (const PackMemberPlan* member : members) {
    const onnx::TensorProto* tensor =
        member->default_initializer.empty() ? nullptr : FindInitializer(main, member->default_initializer);
    one_row = one_row && tensor && member->meta.batch_axis < tensor->dims_size() &&
              tensor->dims(static_cast<int>(member->meta.batch_axis)) == 1;
  }
  if (one_row) return ZeroBatch{1, "", -1};
  ZeroBatch from_data = batch.symbol.empty() ? ZeroBatch{} : BatchFromData(main, batch.symbol, pairs);
  if (from_data.input.empty() && batch.symbol.empty()) {
    // The authors' own state input with an unnamed batch: nothing tells the packed model how many rows
    // of zeros an empty packed value stands for.
    throw Error(ExitCode::kUnsupported,
                "cannot pack state '" + first.meta.input + "': its first feed is zeros of a batch its input '" +
                    first.meta.input +
                    "' leaves unnamed, which no data input declares, so an empty packed value "
                    "cannot be sized; keep the states unpacked (rewrite without --pack) and feed '" +
                    first.meta.input + "' its zeros, or name that dimension after the data's batch in the model");
  }
  if (from_data.input.empty()) {
    throw Error(ExitCode::kUnsupported,
                "cannot pack state '" + first.meta.input + "': its default is zeros of batch '" + batch.symbol +
                    "', which no graph input declares (pack with --state-inputs defaults, which keeps the model's "
                    "own default computation)");
  }
  return from_data;
}

void CheckZeroSize(const std::string& label, int32_t type, std::vector<int64_t> dims, int64_t batch_axis,
                   const ZeroBatch& rows, int64_t opset) {
  if (batch_axis >= 0) dims[static_cast<size_t>(batch_axis)] = rows.fixed >= 0 ? rows.fixed : 1;
  const std::optional<uint64_t> bytes = DenseTensorBytes(type, dims);
  if (!bytes || *bytes > static_cast<uint64_t>(INT64_MAX)) {
    throw Error(ExitCode::kUnsupported,
                label + ": zeros " + DimsText(dims) + " of " + ElementTypeName(type) + " would not fit in 2^63 bytes");
  }
  if (ConstantOfShapeTakes(type, opset)) return;
  if (batch_axis >= 0) dims[static_cast<size_t>(batch_axis)] = 1;
  if (const std::optional<uint64_t> row = DenseTensorBytes(type, dims); !row || *row > kMaxZeroDefaultBytes) {
    throw Error(ExitCode::kUnsupported,
                label + ": ai.onnx opset " + std::to_string(opset) + " has no ConstantOfShape of " +
                    ElementTypeName(type) + ", and the zero row " + DimsText(dims) + " stored instead would be over " +
                    std::to_string(kMaxZeroDefaultBytes >> 20) + " MiB (rewrite without --pack)");
  }
}

}  // namespace rnnstate
