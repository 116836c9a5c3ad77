#include "pack/pack_plan.h"

#include <algorithm>
#include <map>

#include "contract/state_tensors.h"
#include "graph/graph_edit.h"
#include "graph/node_builder.h"
#include "graph/proto_access.h"
#include "rewrite/plan.h"
#include "rnnstate/error.h"

namespace rnnstate {

namespace {

std::string DimText(const MetaDim& dim) {
  return dim.value >= 0 ? std::to_string(dim.value) : dim.symbol.empty() ? kUnnamedDimText : dim.symbol;
}

class Planner {
 public:
  Planner(const onnx::ModelProto& model, const PlanOptions& options, NameAllocator& names, NameAllocator& dim_names)
      : main_(model.graph()), options_(options), names_(names), dim_names_(dim_names) {
    plan_.kind = options.pack;
    plan_.opset = OnnxOpset(model);
    plan_.defaults = options.pack == PackKind::kTensor && options.mode == StateInputMode::kDefaults;
    plan_.packed.kind = options.pack == PackKind::kTensor ? kPackedTensor : kPackedSequence;
  }

  /// Why a context's first call holds fewer frames than the later ones, for the refusal.
  static std::string ShortStart(const ContextSpec& context) {
    if (!context.pad.empty()) return "a Pad in mode " + context.pad;
    return context.valid ? "a window without padding" : "a window that looked ahead";
  }

  /// Below opset 8 a context's zero default is tiled to the data's batch (no Expand): packed, that
  /// default's rows do not match the batch the other states' defaults take (ONNX Runtime refused the first
  /// unfed call of such a packed model, in Concat), so such a model is not packed. Nor is a context whose
  /// first call holds fewer frames than the later ones (a lookahead's, a valid window's, or one whose Pad
  /// fills): no one size.
  void RefuseTiledContexts(const std::vector<StatePair>& pairs) const {
    for (const StatePair& pair : pairs) {
      if (pair.kind != kKindContext) continue;
      if (pair.context && pair.context->NamedTime()) {
        throw Error(ExitCode::kUnsupported, "cannot pack context state '" + pair.input +
                                                "': its first call holds fewer frames than the later ones (" +
                                                ShortStart(*pair.context) + "): rewrite without --pack");
      }
      if (plan_.opset >= kExpandOpset) continue;
      throw Error(
          ExitCode::kUnsupported,
          "cannot pack context state '" + pair.input + "' below ai.onnx opset " + std::to_string(kExpandOpset) +
              " (the model imports opset " + std::to_string(plan_.opset) +
              "; its zero default is tiled to the batch): rewrite without --pack, or export the model at opset " +
              std::to_string(kExpandOpset) + " or newer");
    }
  }

  PackPlan Plan(const std::vector<StatePair>& pairs) {
    if (plan_.kind == PackKind::kSequence && plan_.opset < 11) {
      throw Error(ExitCode::kUnsupported, "--pack sequence needs ai.onnx opset 11 or newer (sequence operators); " +
                                              std::string("the model imports opset ") + std::to_string(plan_.opset) +
                                              " (use --pack tensor)");
    }
    RefuseTiledContexts(pairs);
    plan_.pairs = pairs;
    std::vector<PackMemberPlan> members = PackMembers(main_, pairs);
    // One value per element type, in the order the types first appear.
    std::vector<int32_t> types;
    for (const auto& member : members) {
      if (std::find(types.begin(), types.end(), member.elem_type) == types.end()) types.push_back(member.elem_type);
    }
    for (int32_t type : types) {
      std::vector<PackMemberPlan> of_type;
      for (auto& member : members) {
        if (member.elem_type == type) of_type.push_back(member);
      }
      const std::string suffix = types.size() > 1 ? "." + ElementTypeName(type) : "";
      plan_.values.push_back(Value(type, std::move(of_type), suffix, pairs));
    }
    for (const auto& value : plan_.values) {
      plan_.packed.values.push_back(value.meta);
      for (const auto& member : value.members) {
        for (int64_t state : member.meta.states) plan_.pairs[static_cast<size_t>(state)].optional = false;
      }
      Notes(value, pairs);
    }
    return std::move(plan_);
  }

 private:
  std::string Helper(const std::string& base, const char* what) { return names_.Allocate(base + "." + what); }

  /// `wanted`, or (a default name) the next free one; a name the user asked for must be free.
  std::string PackedName(const std::string& wanted, const char* option, bool given) {
    if (given && names_.Taken(wanted)) {
      throw Error(ExitCode::kUsage, std::string(option) + " '" + wanted +
                                        "' is already a name in the model (an input, output or value): choose another");
    }
    return names_.Allocate(wanted);
  }

  PackValuePlan Value(int32_t type, std::vector<PackMemberPlan> members, const std::string& suffix,
                      const std::vector<StatePair>& pairs) {
    const bool tensor = plan_.kind == PackKind::kTensor;
    PackValuePlan value;
    value.elem_type = type;
    value.meta.input = PackedName(options_.packed_input + suffix, "--packed-input", options_.packed_input_given);
    value.meta.output = PackedName(options_.packed_output + suffix, "--packed-output", options_.packed_output_given);
    value.meta.dtype = ElementTypeName(type);
    value.meta.init = kInitEmpty;
    value.meta.optional = plan_.defaults;
    if (tensor && type == onnx::TensorProto::BFLOAT16 && plan_.opset < 13) {
      throw Error(ExitCode::kUnsupported, "--pack tensor of bfloat16 states needs opset 13 (Tile, Split of bfloat16)");
    }
    for (const auto& member : members) {
      for (int64_t state : member.meta.states) value.meta.streamable &= pairs[static_cast<size_t>(state)].streamable;
    }
    if (tensor) PlaceColumns(value, members);
    std::vector<const PackMemberPlan*> zeros;
    for (const auto& member : members) {
      if (member.zero_default) zeros.push_back(&member);
    }
    if (tensor) {
      value.zero_batch = ZeroBatchOf(main_, zeros, pairs);
      if (!zeros.empty()) {
        CheckZeroSize(
            "cannot pack the " + value.meta.dtype + " states into a tensor " + MetaShapeText(value.meta.shape), type,
            {1, value.width}, 0, value.zero_batch, plan_.opset);
      }
    } else {
      for (auto& member : members) member.meta.position = static_cast<int64_t>(&member - members.data());
    }
    NameHelpers(value, members, tensor, pairs);
    for (const auto& member : members) value.meta.members.push_back(member.meta);
    value.members = std::move(members);
    if (tensor) PlanBlocks(value);
    return value;
  }

  /// Tensor packing: every member batch-first with fixed row sizes, one batch shared by all.
  void PlaceColumns(PackValuePlan& value, std::vector<PackMemberPlan>& members) {
    for (auto& member : members) {
      const std::string label = "cannot pack state '" + member.meta.input + "' " + MetaShapeText(member.meta.shape);
      if (member.meta.batch_axis < 0 || static_cast<size_t>(member.meta.batch_axis) >= member.meta.shape.size()) {
        throw Error(ExitCode::kUnsupported, label + " into a tensor: it has no batch axis (use --pack sequence)");
      }
      const MetaDim& batch = member.meta.shape[static_cast<size_t>(member.meta.batch_axis)];
      if (&member == &members.front()) value.batch = batch;
      if (!(batch == value.batch)) {
        throw Error(ExitCode::kUnsupported, label + ": its batch '" + DimText(batch) + "' is not the batch '" +
                                                DimText(value.batch) + "' of the other " + value.meta.dtype +
                                                " states");
      }
      member.meta.length = 1;
      for (size_t axis = 0; axis < member.dims.size(); ++axis) {
        if (static_cast<int64_t>(axis) == member.meta.batch_axis) continue;
        if (member.dims[axis] < 0) {
          throw Error(ExitCode::kUnsupported, label + " into a tensor: its size on axis " + std::to_string(axis) +
                                                  " is not fixed (use --pack sequence)");
        }
        member.meta.row_shape.push_back(member.dims[axis]);
        if (__builtin_mul_overflow(member.meta.length, member.dims[axis], &member.meta.length)) {
          throw Error(ExitCode::kUnsupported, label + " into a tensor: its elements per batch row overflow 64 bits");
        }
      }
      member.meta.offset = value.width;
      if (__builtin_add_overflow(value.width, member.meta.length, &value.width)) {
        throw Error(ExitCode::kUnsupported, label + " into a tensor: the " + value.meta.dtype +
                                                " states' elements per batch row overflow 64 bits");
      }
    }
    // Not the data's batch name, which the metadata's shape gives (what is fed after the first call): the
    // first call feeds 0 rows while the data has B, and ONNX Runtime reuses buffers assuming that one
    // dim_param is one size (measured: "Shape mismatch attempting to re-use buffer. {1,0,4} != {1,2,4}"
    // on exposed/f5_torch_packed_in_direct_out.onnx).
    value.declared_batch = dim_names_.Allocate(value.meta.input + "_batch");
    value.meta.shape = {value.batch, MetaDim{value.width, ""}};
    value.meta.batch_axis = 0;
  }

  void NameHelpers(PackValuePlan& value, std::vector<PackMemberPlan>& members, bool tensor,
                   const std::vector<StatePair>& pairs) {
    const std::string& in = value.meta.input;
    value.size = Helper(in, tensor ? "size" : "length");
    value.zero = Helper(in, "zero");
    value.is_empty = Helper(in, "is_empty");
    value.then_out = Helper(in, "defaults");
    value.else_out = Helper(in, "given");
    if (tensor) {
      value.selected = Helper(in, "selected");
    }
    for (auto& member : members) {
      const size_t rank = member.dims.size();
      const int64_t axis = member.meta.batch_axis;
      const bool direct = tensor && axis == 0 && rank == 2;
      member.part = direct ? member.meta.input : Helper(member.meta.input, "packed");
      member.flat = direct ? member.meta.output : Helper(member.meta.output, "packed");
      if (!tensor) {
        member.position = Helper(member.meta.input, "position");
        member.default_value = Helper(member.meta.input, "default");
        member.given = Helper(member.meta.input, "given");
        if (member.zero_default) {
          // Without a batch axis the zeros are one constant of the member's own (fixed) shape.
          member.zero_batch = axis < 0 ? ZeroBatch{1, "", -1} : ZeroBatchOf(main_, {&member}, pairs);
          for (size_t a = 0; a < rank; ++a) {
            if (static_cast<int64_t>(a) != axis && member.dims[a] < 0) {
              throw Error(ExitCode::kUnsupported, "cannot pack state '" + member.meta.input + "': its default is " +
                                                      "zeros but its size on axis " + std::to_string(a) +
                                                      " is not fixed");
            }
          }
          CheckZeroSize("cannot pack state '" + member.meta.input + "' " + MetaShapeText(member.meta.shape),
                        member.elem_type, member.dims, axis, member.zero_batch, plan_.opset);
        }
      }
    }
  }

  /// Tensor packing: runs of members that one Reshape/Transpose/Split can unpack (see PackBlock).
  void PlanBlocks(PackValuePlan& value) {
    const auto& members = value.members;
    auto joins = [&](const PackMemberPlan& a, const PackMemberPlan& b) {
      return a.zero_default == b.zero_default && a.meta.batch_axis == b.meta.batch_axis && a.dims == b.dims &&
             (a.meta.batch_axis == 0 || a.meta.batch_axis == 1) && a.dims.size() >= 2 &&
             !(a.meta.batch_axis == 0 && a.dims.size() == 2);
    };
    for (size_t i = 0; i < members.size();) {
      PackBlock block;
      block.first = i;
      while (i + block.count < members.size() && joins(members[i], members[i + block.count])) ++block.count;
      block.group = block.count > 1;
      block.zero_default = members[i].zero_default;
      block.offset = members[i].meta.offset;
      for (size_t k = i; k < i + block.count; ++k) block.length += members[k].meta.length;
      i += block.count;
      value.blocks.push_back(std::move(block));
    }
    const bool alone = value.blocks.size() == 1;
    for (PackBlock& block : value.blocks) {
      const PackMemberPlan& first = members[block.first];
      if (!block.group) {
        block.part = first.part;
        block.flat = alone ? value.meta.output : first.flat;
        continue;
      }
      const std::string stem = first.meta.input + ".group";
      block.part = alone ? "" : Helper(stem, "packed");  // "" : the source itself
      block.rows = Helper(stem, "rows");
      block.stacked = first.meta.batch_axis == 1 ? Helper(stem, "stacked") : "";
      block.stacked_out = Helper(first.meta.output + ".group", "stacked");
      block.rows_out = first.meta.batch_axis == 1 ? Helper(first.meta.output + ".group", "rows") : "";
      block.flat = alone ? value.meta.output : Helper(first.meta.output + ".group", "packed");
    }
  }

  void Notes(const PackValuePlan& value, const std::vector<StatePair>& pairs) {
    const bool tensor = plan_.kind == PackKind::kTensor;
    if (!value.meta.optional) {
      plan_.notes.push_back("packed input '" + value.meta.input + "': feed " +
                            (tensor ? "an empty tensor [0," + std::to_string(value.width) + "]" : "an empty sequence") +
                            " on the first call (every state takes its default), then '" + value.meta.output + "'");
    }
    for (const auto& member : value.members) {
      for (int64_t state : member.meta.states) {
        const StatePair& pair = pairs[static_cast<size_t>(state)];
        if (!pair.streamable) {
          plan_.notes.push_back("packed input '" + value.meta.input + "' holds state '" + pair.input +
                                "', which is not streamable: chunked runs will not equal one full run");
        }
      }
    }
  }

  const onnx::GraphProto& main_;
  const PlanOptions& options_;
  NameAllocator& names_;
  NameAllocator& dim_names_;
  PackPlan plan_;
};

}  // namespace

std::vector<std::string> PackPlan::Describe() const {
  std::vector<std::string> lines;
  for (const auto& value : values) {
    std::string line = "pack " + std::to_string(value.members.size()) + " state tensor" +
                       (value.members.size() == 1 ? "" : "s") + " into '" + value.meta.input + "' -> '" +
                       value.meta.output + "' (" + value.meta.dtype + " " +
                       (kind == PackKind::kTensor ? "tensor " + MetaShapeText(value.meta.shape) : std::string("sequence")) +
                       ", first feed empty" + (value.meta.optional ? ", optional" : "") + ")";
    lines.push_back(line);
  }
  return lines;
}

PackPlan PlanPack(const onnx::ModelProto& model, const std::vector<StatePair>& pairs, const PlanOptions& options,
                  NameAllocator& names, NameAllocator& dim_names, const std::set<std::string>& own_outputs) {
  PackPlan plan = Planner(model, options, names, dim_names).Plan(pairs);
  for (const auto& value : plan.values) {
    for (const auto& member : value.members) {
      if (own_outputs.count(member.meta.output)) plan.kept_outputs.insert(member.meta.output);
    }
  }
  return plan;
}

}  // namespace rnnstate
