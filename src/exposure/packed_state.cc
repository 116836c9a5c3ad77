#include "exposure/packed_state.h"

#include <algorithm>
#include <map>

#include "exposure/exposure.h"
#include "exposure/view_ops.h"
#include "states/wiring.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

const onnx::ValueInfoProto* MainValueInfo(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& infos,
                                          const std::string& name) {
  for (const auto& info : infos) {
    if (info.name() == name) return &info;
  }
  return nullptr;
}

/// Why the declared type of packed input/output `info` does not fit the description, or "".
std::string TypeProblem(const onnx::ValueInfoProto& info, const std::string& kind, const PackedValue& value,
                        int64_t width) {
  const onnx::TypeProto& type = info.type();
  if (kind == kPackedSequence) {
    if (!type.has_sequence_type() || !type.sequence_type().elem_type().has_tensor_type()) return "is not a sequence";
    const int32_t elem = type.sequence_type().elem_type().tensor_type().elem_type();
    return ElementTypeName(elem) == value.dtype ? "" : "is not a sequence of " + value.dtype + " tensors";
  }
  if (!type.has_tensor_type()) return "is not a tensor";
  if (ElementTypeName(type.tensor_type().elem_type()) != value.dtype) return "is not a " + value.dtype + " tensor";
  const auto& shape = type.tensor_type().shape();
  if (shape.dim_size() != 2) return "is not a tensor of rank 2";
  if (!shape.dim(1).has_dim_value() || shape.dim(1).dim_value() != width) {
    return "does not declare " + std::to_string(width) + " elements per batch row (the members' total)";
  }
  return "";
}

/// The product of sizes read from metadata, or -1 when one is negative or the product overflows (hostile
/// metadata must not reach signed overflow).
int64_t Product(const std::vector<int64_t>& values) {
  int64_t product = 1;
  for (int64_t v : values) {
    if (v < 0 || __builtin_mul_overflow(product, v, &product)) return -1;
  }
  return product;
}

/// Why the member does not fit its place (columns, row shape), or "".
std::string TensorMemberProblem(const PackedMember& member, int64_t expected_offset) {
  if (member.offset != expected_offset) {
    return "starts at column " + std::to_string(member.offset) + ", expected " + std::to_string(expected_offset);
  }
  const int64_t held = Product(member.row_shape);
  if (held < 0 || held != member.length) return "has a row_shape that does not hold 'length' elements";
  if (member.batch_axis < 0 || static_cast<size_t>(member.batch_axis) >= member.shape.size()) {
    return "has no batch axis";
  }
  std::vector<int64_t> rows;
  for (size_t axis = 0; axis < member.shape.size(); ++axis) {
    if (static_cast<int64_t>(axis) != member.batch_axis) rows.push_back(member.shape[axis].value);
  }
  return rows == member.row_shape ? "" : "has a row_shape that is not its shape without the batch axis";
}

SymShape SymShapeOf(const std::vector<MetaDim>& shape) {
  SymShape out;
  for (const MetaDim& dim : shape) out.push_back(SymDim{dim.value, dim.value >= 0 ? "" : dim.symbol});
  return out;
}

/// Where a tensor member's elements sit in [B, N] as the description says: moved batch-first, flattened
/// row-major, at columns [offset, offset + length).
std::optional<ElementMap> DescribedColumns(const PackedMember& member) {
  const size_t rank = member.shape.size();
  if (member.batch_axis < 0 || static_cast<size_t>(member.batch_axis) >= rank) return std::nullopt;
  ElementMap map = ElementMap::Identity(SymShapeOf(member.shape));
  std::vector<int64_t> perm{member.batch_axis};
  for (int64_t axis = 0; axis < static_cast<int64_t>(rank); ++axis) {
    if (axis != member.batch_axis) perm.push_back(axis);
  }
  // A metadata description can be malformed (a row_shape that is not the shape): then no map.
  if (!map.Permute(perm)) return std::nullopt;
  if (!(rank == 1 ? map.InsertUnit(1) : map.Merge(1, member.row_shape))) return std::nullopt;
  if (!map.Scale(1, 1, member.offset)) return std::nullopt;
  return map;
}

/// "columns [5:10)" of a map into [B, N], or "" when they are not one known range.
std::string ColumnsText(const ElementMap& map) {
  if (map.rank() != 2) return "";
  const auto range = map.Range(1);
  if (!range) return "";
  return "columns [" + std::to_string(range->first) + ":" + std::to_string(range->second + 1) + ")";
}

/// Why the graph does not unpack tensor member `member` from the columns of `value` the description
/// names, or pack its final state into other columns of the output, or "". A side whose trace is not
/// conclusive (onnx's inference does not know a shape on the way) is left to the other; neither
/// conclusive is a problem too.
std::string TensorColumnsProblem(const ModelIndex& index, const PackedValue& value, const PackedMember& member) {
  const std::optional<ElementMap> described = DescribedColumns(member);
  if (!described) return "";  // reported by TensorMemberProblem
  const std::string claimed = ColumnsText(*described);
  const SymShape shape = SymShapeOf(member.shape);
  const int32_t type = ElemType(index, {}, value.input);
  const ReadTrace read = TraceValueRead(index, member.input, shape, type, {{value.input, 0}});
  if (read.place && read.place->tensor != value.input) {
    return "is read from '" + read.place->tensor + "', not from '" + value.input + "'";
  }
  if (read.place && !read.place->map.SamePlaces(*described)) {
    const std::string found = ColumnsText(read.place->map);
    return "is described at " + claimed + " of '" + value.input + "', but the graph unpacks it from " +
           (found.empty() || found == claimed ? "other elements" : found);
  }
  const WriteTrace write = TraceValueWrite(index, member.output, shape, type);
  for (const ElementPlace& place : write.places) {
    if (place.tensor != value.output) continue;
    if (place.map.SamePlaces(*described)) return "";
    const std::string found = ColumnsText(place.map);
    return "'" + member.output + "' is described at " + claimed + " of '" + value.output +
           "', but the graph packs it into " + (found.empty() || found == claimed ? "other elements" : found);
  }
  if (read.place) return "";
  return "its columns cannot be traced (" + read.broken + "; " +
         (write.broken.empty() ? "'" + member.output + "' is not packed into '" + value.output + "' whole"
                               : write.broken) +
         ")";
}

/// The node writing main-graph value `name`, or nullptr.
const onnx::NodeProto* MainProducer(const ModelIndex& index, const std::string& name, int* slot) {
  const ResolvedName resolved = index.Resolve(GraphPath{}, name);
  if (resolved.producer.kind != Producer::Kind::kNode || !resolved.graph.empty()) return nullptr;
  if (slot) *slot = resolved.producer.slot;
  return resolved.node;
}

/// Why the graph does not take sequence member `member` from position `position` of `value`'s input
/// (SequenceAt in the branch that runs for a fed sequence) and put its final state there in the output
/// (SequenceConstruct), or "".
std::string SequencePositionProblem(const ModelIndex& index, const PackedValue& value, const PackedMember& member) {
  const std::string claimed = "position " + std::to_string(member.position);
  int slot = -1;
  const onnx::NodeProto* unpack = MainProducer(index, member.input, &slot);
  std::optional<int64_t> read;
  if (unpack && unpack->op_type() == "If") {
    for (const auto& attribute : unpack->attribute()) {
      if (!attribute.has_g() || slot >= attribute.g().output_size()) continue;
      const std::string& inner = attribute.g().output(slot).name();
      for (const auto& node : attribute.g().node()) {
        if (node.op_type() != "SequenceAt" || node.output_size() != 1 || node.output(0) != inner) continue;
        if (node.input(0) != value.input) continue;
        GraphPath path{GraphStep{index.Resolve(GraphPath{}, member.input).producer.index, attribute.name(), -1}};
        std::optional<std::vector<int64_t>> at = IntValues(index, path, node.input(1));
        if (at && at->size() == 1) read = at->front();
      }
    }
  }
  if (!read) return "is not taken from '" + value.input + "' by a SequenceAt at a constant position";
  if (*read != member.position) {
    return "is described at " + claimed + " of '" + value.input + "', but the graph takes it from position " +
           std::to_string(*read);
  }
  const onnx::NodeProto* pack = MainProducer(index, value.output, nullptr);
  if (!pack || pack->op_type() != "SequenceConstruct") return "'" + value.output + "' is not a SequenceConstruct";
  if (member.position >= pack->input_size() || pack->input(static_cast<int>(member.position)) != member.output) {
    for (int k = 0; k < pack->input_size(); ++k) {
      if (pack->input(k) == member.output) {
        return "'" + member.output + "' is described at " + claimed + " of '" + value.output +
               "', but the graph puts it at position " + std::to_string(k);
      }
    }
    return "'" + member.output + "' is not in '" + value.output + "'";
  }
  return "";
}

class PackedChecker {
 public:
  PackedChecker(const ModelIndex& index, const PackedStates& packed, const std::vector<StatePair>& pairs,
                std::vector<CheckProblem>& problems)
      : index_(index), main_(index.graph(GraphPath{})), packed_(packed), pairs_(pairs), problems_(problems) {}

  void Check() {
    std::map<int64_t, int> claims;
    for (const PackedValue& value : packed_.values) {
      CheckValue(value);
      for (const PackedMember& member : value.members) {
        for (int64_t state : member.states) {
          if (claims[state]++ == 1) {
            Add(CheckProblem::Kind::kPackedMismatch,
                "state pair " + std::to_string(state) + " is a member of several packed values");
          }
        }
      }
    }
  }

 private:
  void Add(CheckProblem::Kind kind, const std::string& message) { problems_.push_back({kind, message}); }

  void CheckValue(const PackedValue& value) {
    const std::string label = "packed value '" + value.input + "' -> '" + value.output + "': ";
    const bool tensor = packed_.kind == kPackedTensor;
    int64_t width = 0;
    for (const PackedMember& member : value.members) {
      if (__builtin_add_overflow(width, std::max<int64_t>(member.length, 0), &width)) width = -1;
      if (width < 0) break;  // reported below: no tensor declares a negative width
    }
    const onnx::ValueInfoProto* input = MainValueInfo(index_.model().graph().input(), value.input);
    const onnx::ValueInfoProto* output = MainValueInfo(index_.model().graph().output(), value.output);
    if (!input) Add(CheckProblem::Kind::kNotGraphInput, label + "'" + value.input + "' is not a main-graph input");
    if (!output) Add(CheckProblem::Kind::kNotGraphOutput, label + "'" + value.output + "' is not a main-graph output");
    for (const onnx::ValueInfoProto* info : {input, output}) {
      if (!info) continue;
      if (std::string why = TypeProblem(*info, packed_.kind, value, width); !why.empty()) {
        Add(CheckProblem::Kind::kPackedMismatch, label + "'" + info->name() + "' " + why);
      }
    }
    if (input && value.optional != (main_.initializers.count(value.input) > 0)) {
      Add(CheckProblem::Kind::kFlagMismatch, label + std::string("optional is ") + (value.optional ? "true" : "false") +
                                                 " but '" + value.input + "' " + (value.optional ? "has no" : "has a") +
                                                 " default");
    }
    if (tensor && (value.shape.size() != 2 || value.shape[1].value != width || value.batch_axis != 0)) {
      Add(CheckProblem::Kind::kPackedMismatch, label + "its shape is not [batch, " + std::to_string(width) + "]");
    }
    bool streamable = true;
    int64_t offset = 0;
    std::vector<int64_t> positions;
    for (const PackedMember& member : value.members) {
      const std::string where = label + "member '" + member.input + "' ";
      if (tensor) {
        if (std::string why = TensorMemberProblem(member, offset); !why.empty()) {
          Add(CheckProblem::Kind::kPackedMismatch, where + why);
        }
        if (__builtin_add_overflow(member.offset, member.length, &offset)) offset = -1;  // matches no member
      } else {
        positions.push_back(member.position);
      }
      for (int64_t state : member.states) {
        const StatePair& pair = pairs_[static_cast<size_t>(state)];
        streamable = streamable && pair.streamable;
        if (pair.input != member.input || pair.output != member.output) {
          Add(CheckProblem::Kind::kPackedMismatch, where + "names state pair " + std::to_string(state) + " ('" +
                                                       pair.input + "' -> '" + pair.output + "'), whose values differ");
        }
      }
      if (input && !ComputedFrom(index_, ValueRef{{}, member.input}, ValueRef{{}, value.input})) {
        Add(CheckProblem::Kind::kInputNotWired, where + "is not unpacked from '" + value.input + "'");
      }
      if (output && !ComputedFrom(index_, ValueRef{{}, value.output}, ValueRef{{}, member.output})) {
        Add(CheckProblem::Kind::kOutputNotWired,
            where + "'" + member.output + "' is not packed into '" + value.output + "'");
      } else if (input && output) {
        // Which columns (positions) hold which member: traced through the unpacking and packing nodes.
        const std::string why =
            tensor ? TensorColumnsProblem(index_, value, member) : SequencePositionProblem(index_, value, member);
        if (!why.empty()) Add(CheckProblem::Kind::kPackedMismatch, where + why);
      }
    }
    std::sort(positions.begin(), positions.end());
    for (size_t i = 0; i < positions.size(); ++i) {
      if (positions[i] != static_cast<int64_t>(i)) {
        Add(CheckProblem::Kind::kPackedMismatch,
            label + "member positions are not 0.." + std::to_string(positions.size() - 1) + ", each once");
        break;
      }
    }
    if (streamable != value.streamable) {
      Add(CheckProblem::Kind::kFlagMismatch, label + "streamable is " + (value.streamable ? "true" : "false") +
                                                 " but its members' states " +
                                                 (streamable ? "all stream" : "do not all stream"));
    }
  }

  const ModelIndex& index_;
  const GraphIndex& main_;
  const PackedStates& packed_;
  const std::vector<StatePair>& pairs_;
  std::vector<CheckProblem>& problems_;
};

}  // namespace

bool PackedRecordHolds(const ModelIndex& index, const PackedStates& packed, int64_t pair_index,
                       const RecurrentState& state, const StatePair& pair) {
  const auto [v, m] = packed.MemberOf(pair_index);
  if (v < 0) return false;
  const PackedValue& value = packed.values[static_cast<size_t>(v)];
  const PackedMember& member = value.members[static_cast<size_t>(m)];
  const GraphIndex& main = index.graph(GraphPath{});
  if (!main.inputs.count(value.input) || !main.outputs.count(value.output)) return false;
  if (member.input != pair.input || member.output != pair.output) return false;
  if (!ComputedFrom(index, ValueRef{{}, pair.input}, ValueRef{{}, value.input})) return false;
  if (!ComputedFrom(index, ValueRef{{}, value.output}, ValueRef{{}, pair.output})) return false;
  const PairWiring wiring = TracePairWiring(index, state, pair.input, pair.output);
  if (!wiring.input_reaches_slot || !wiring.output_from_final) return false;
  // The member must sit where the description says: a runner reads and writes those columns (position).
  return (packed.kind == kPackedTensor ? TensorColumnsProblem(index, value, member)
                                       : SequencePositionProblem(index, value, member))
      .empty();
}

void CheckPackedValues(const ModelIndex& index, const PackedStates& packed, const std::vector<StatePair>& pairs,
                       std::vector<CheckProblem>& problems) {
  PackedChecker(index, packed, pairs, problems).Check();
}

}  // namespace rnnstate
