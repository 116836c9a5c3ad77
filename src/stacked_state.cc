#include "stacked_state.h"

#include <vector>

#include "constant_value.h"
#include "proto_access.h"

namespace rnnstate {

namespace {

/// The opset from which Slice takes starts/ends/axes/steps as inputs instead of attributes.
constexpr int64_t kSliceInputsOpset = 10;

/// Rows [begin, end) that `slice` takes on axis 0 of its data, or nullopt when it takes anything else
/// (another axis, several axes, steps other than 1, bounds that are not constants).
std::optional<RowRange> SliceRows(const ModelIndex& index, const onnx::NodeProto& slice) {
  if (slice.op_type() != "Slice" || !IsOnnxDomain(slice.domain()) || slice.input_size() == 0) return std::nullopt;
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (index.onnx_opset() < kSliceInputsOpset) {
    auto ints = [&](const char* name) -> std::optional<std::vector<int64_t>> {
      const onnx::AttributeProto* attribute = FindAttribute(slice, name);
      if (attribute == nullptr) return std::nullopt;
      return std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
    };
    starts = ints("starts");
    ends = ints("ends");
    axes = ints("axes");
  } else {
    auto input = [&](int slot) -> std::optional<std::vector<int64_t>> {
      if (slot >= slice.input_size() || slice.input(slot).empty()) return std::nullopt;
      return ConstantIntegers(index, GraphPath{}, slice.input(slot));
    };
    starts = input(1);
    ends = input(2);
    axes = input(3);
    steps = input(4);
    if (slice.input_size() > 3 && !slice.input(3).empty() && !axes) return std::nullopt;
    if (slice.input_size() > 4 && !slice.input(4).empty() && (!steps || *steps != std::vector<int64_t>{1})) {
      return std::nullopt;
    }
  }
  if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
  if (axes && *axes != std::vector<int64_t>{0}) return std::nullopt;  // absent axes: the first axis
  const int64_t begin = (*starts)[0], end = (*ends)[0];
  if (begin < 0 || end <= begin) return std::nullopt;
  return RowRange{begin, end};
}

/// The fixed size of axis 0 of main-graph value `name`, or nullopt.
std::optional<int64_t> Rows(const ModelIndex& index, const std::string& name) {
  const onnx::TypeProto* type = index.TypeOf(GraphPath{}, name);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) return std::nullopt;
  const auto& shape = type->tensor_type().shape();
  if (shape.dim_size() == 0 || !shape.dim(0).has_dim_value()) return std::nullopt;
  return shape.dim(0).dim_value();
}

}  // namespace

std::optional<StackedExposure> FindStackedExposure(const ModelIndex& index, const RecurrentState& state,
                                                   const StateSite& site, const StateOrigin& origin,
                                                   const FinalState& final_state) {
  if (!site.graph.empty() || site.carried || state.batch_axis != 1 || !state.shape[0].fixed()) return std::nullopt;
  if (origin.kind != StateOrigin::Kind::kComputed || origin.other_consumers != 0 || final_state.value.empty()) {
    return std::nullopt;
  }
  const GraphIndex& main = index.graph(GraphPath{});
  const onnx::GraphProto& graph = index.model().graph();

  // The input side: the slot is a Slice of a main-graph input, and so is every use of that input.
  const Producer slice_at = main.ProducerOf(origin.value);
  if (slice_at.kind != Producer::Kind::kNode) return std::nullopt;
  const onnx::NodeProto& slice = graph.node(slice_at.index);
  const auto rows = SliceRows(index, slice);
  if (!rows || rows->second - rows->first != state.shape[0].value) return std::nullopt;
  const std::string& input = slice.input(0);
  const Producer::Kind input_kind = main.ProducerOf(input).kind;
  if (input_kind != Producer::Kind::kGraphInput && input_kind != Producer::Kind::kDefaultedInput) return std::nullopt;
  for (const Consumer& use : main.ConsumersOf(input)) {
    if (use.slot != 0 || !SliceRows(index, graph.node(use.node))) return std::nullopt;
  }

  // The output side: the final state is the part of an axis-0 Concat at the same rows.
  for (const Consumer& use : main.ConsumersOf(final_state.value)) {
    if (use.slot < 0) continue;
    const onnx::NodeProto& concat = graph.node(use.node);
    if (concat.op_type() != "Concat" || !IsOnnxDomain(concat.domain()) || concat.output_size() != 1) continue;
    const int64_t axis = IntAttribute(concat, "axis", -1);
    if ((axis != 0 && axis != -3) || !main.outputs.count(concat.output(0))) continue;
    int64_t offset = 0;
    for (int part = 0; part < use.slot; ++part) {
      const std::optional<int64_t> part_rows = Rows(index, concat.input(part));
      if (!part_rows) return std::nullopt;
      offset += *part_rows;
    }
    if (offset == rows->first) return StackedExposure{input, concat.output(0), *rows};
  }
  return std::nullopt;
}

ClaimConflict StackedClaimsConflict(const RowClaim& a, const RowClaim& b) {
  const bool same_input = a.input == b.input, same_output = a.output == b.output;
  if (!same_input && !same_output) return ClaimConflict::kNone;
  if (RowsOverlap(a.rows, b.rows)) return ClaimConflict::kOverlapping;
  if (same_input != same_output) return ClaimConflict::kCrossed;
  return ClaimConflict::kNone;
}

bool RecordsStacked(const StatePair& pair, const std::optional<StackedExposure>& stacked) {
  return pair.rows && stacked && pair.input == stacked->input && pair.output == stacked->output &&
         *pair.rows == stacked->rows;
}

std::string StackedText(const StackedExposure& stacked) {
  const std::string rows = RowRangeText(stacked.rows);
  return "stacked input '" + stacked.input + "'" + rows + " -> output '" + stacked.output + "'" + rows;
}

}  // namespace rnnstate
