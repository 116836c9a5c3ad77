#include "pack/pack_apply.h"

#include <numeric>

#include "graph/control_flow.h"
#include "graph/node_builder.h"
#include "pack/state_layout.h"

namespace rnnstate {

namespace {

/// True when dims before `axis` are all 1 and exactly one dim follows it: the member and its batch-first
/// rows differ only by leading axes of size 1 (an Unsqueeze / Squeeze, no data movement).
bool OnlyLeadingOnes(const std::vector<int64_t>& dims, int64_t axis) {
  if (axis < 0 || static_cast<size_t>(axis) + 2 != dims.size()) return false;
  for (int64_t a = 0; a < axis; ++a) {
    if (dims[static_cast<size_t>(a)] != 1) return false;
  }
  return true;
}

/// The permutation swapping axes 0 and 1 of a rank-`rank` tensor.
std::vector<int64_t> SwapFirstTwo(size_t rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[0], perm[1]);
  return perm;
}

std::vector<int64_t> Range(int64_t count) {
  std::vector<int64_t> out(static_cast<size_t>(count));
  std::iota(out.begin(), out.end(), 0);
  return out;
}

/// The dims of `member` with `rows` at its batch axis (a member without one: its own dims, or with
/// `rows` 0 an empty axis 0, which the model's selection of its own default takes as "empty").
std::vector<int64_t> WithBatch(const PackMemberPlan& member, int64_t rows) {
  std::vector<int64_t> dims = member.dims;
  const int64_t axis = member.meta.batch_axis;
  if (axis >= 0) {
    dims[static_cast<size_t>(axis)] = rows;
  } else if (rows == 0 && !dims.empty()) {
    dims[0] = 0;
  }
  return dims;
}

onnx::GraphProto Branch(const std::string& name, std::vector<onnx::NodeProto> nodes,
                        std::vector<onnx::ValueInfoProto> outputs) {
  onnx::GraphProto graph;
  graph.set_name(name);
  for (auto& node : nodes) *graph.add_node() = std::move(node);
  for (auto& output : outputs) *graph.add_output() = std::move(output);
  return graph;
}

/// Adds to `b` the nodes computing the 1-D int64 `output`: `dims`, with the rows `zero_batch` asks for at
/// `batch_axis` (a fixed number, or the size of an axis of a data input read at run time).
void AddRowsShape(NodeBuilder& b, const ZeroBatch& zero_batch, std::vector<int64_t> dims, int64_t batch_axis,
                  const std::string& stem, const std::string& output) {
  if (zero_batch.fixed >= 0) {
    if (batch_axis >= 0) dims[static_cast<size_t>(batch_axis)] = zero_batch.fixed;
    b.Int64Constant(output, dims);
    return;
  }
  const std::string shape = b.Name(stem + ".data_shape"), index = b.Name(stem + ".batch_index");
  const std::string batch = b.Name(stem + ".batch");
  b.Add("Shape", {zero_batch.input}, {shape});
  b.Int64Constant(index, {zero_batch.axis});
  SetIntAttribute(b.Add("Gather", {shape, index}, {batch}), "axis", 0);
  std::vector<std::string> parts;
  auto constant = [&](std::vector<int64_t> values) {
    if (values.empty()) return;
    parts.push_back(b.Name(stem + ".dims"));
    b.Int64Constant(parts.back(), values);
  };
  const auto at = dims.begin() + batch_axis;
  constant({dims.begin(), at});
  parts.push_back(batch);
  constant({at + 1, dims.end()});
  b.Concat(parts, 0, output);
}

/// Adds to `b` the nodes computing `output`: zeros of `one_row`'s shape with the rows `zero_batch` asks for
/// on `batch_axis`. A ConstantOfShape where the opset has one for the type, so that the model stores nothing
/// of their size (a hidden size of 2^26 would otherwise add 256 MB); else one stored zero row, tiled (Tile
/// takes its repeats as an input from opset 6), which the plan keeps under kMaxZeroDefaultBytes.
void AddZeros(NodeBuilder& b, const ZeroBatch& zero_batch, int32_t elem_type, const std::vector<int64_t>& one_row,
              int64_t batch_axis, const std::string& stem, const std::string& output) {
  if (ConstantOfShapeTakes(elem_type, b.opset())) {
    const std::string shape = b.Name(stem + ".zeros_shape");
    AddRowsShape(b, zero_batch, one_row, batch_axis, stem, shape);
    b.ZerosOfShape(shape, elem_type, output);
    return;
  }
  if (zero_batch.fixed == 1) {
    b.TensorConstant(output, ZeroTensor(output, elem_type, one_row));
    return;
  }
  const std::string row = b.Name(stem + ".zero_row"), repeats = b.Name(stem + ".repeats");
  b.TensorConstant(row, ZeroTensor(row, elem_type, one_row));
  AddRowsShape(b, zero_batch, std::vector<int64_t>(one_row.size(), 1), batch_axis, stem, repeats);
  b.Add("Tile", {row, repeats}, {output});
}

class Applier {
 public:
  Applier(const PackPlan& plan, onnx::ModelProto& model, NameAllocator& names, NameAllocator& node_names)
      : plan_(plan),
        main_(*model.mutable_graph()),
        names_(names),
        node_names_(node_names),
        before_(plan.opset, names, node_names),
        after_(plan.opset, names, node_names) {}

  void Apply() {
    for (const PackValuePlan& value : plan_.values) {
      if (plan_.kind == PackKind::kTensor) {
        UnpackTensor(value);
        PackTensor(value);
      } else {
        UnpackSequence(value);
        after_.Add("SequenceConstruct", Outputs(value), {value.meta.output});
      }
      Interface(value);
      if (plan_.kind == PackKind::kTensor) DeclareShapes(value);
    }
    SurroundNodes(main_, before_.Take(), after_.Take());
  }

 private:
  static std::vector<std::string> Outputs(const PackValuePlan& value) {
    std::vector<std::string> outputs;
    for (const auto& member : value.members) outputs.push_back(member.meta.output);
    return outputs;
  }

  /// Size(input) == 0 (SequenceLength for a sequence) -> is_empty.
  void EmptyTest(const PackValuePlan& value) {
    before_.Add(plan_.kind == PackKind::kTensor ? "Size" : "SequenceLength", {value.meta.input}, {value.size});
    before_.Int64Constant(value.zero, {0}, /*scalar=*/true);
    before_.Add("Equal", {value.size, value.zero}, {value.is_empty});
  }

  /// Z = If(is_empty, then: zeros [b, N], else: the input) for the members that take zeros.
  void SelectZeros(const PackValuePlan& value) {
    NodeBuilder then_nodes(plan_.opset, names_, node_names_), else_nodes(plan_.opset, names_, node_names_);
    AddZeros(then_nodes, value.zero_batch, value.elem_type, {1, value.width}, 0, value.meta.input, value.then_out);
    else_nodes.Add("Identity", {value.meta.input}, {value.else_out});
    onnx::NodeProto& select = before_.Add("If", {value.is_empty}, {value.selected});
    // [?, N]: the row size known, so that inference (and check's trace of the columns) knows the parts'.
    const std::vector<MetaDim> rows{MetaDim{-1, ""}, MetaDim{value.width, ""}};
    SetIfBranches(select, Branch(value.then_out, then_nodes.Take(), {TensorInfo(value.then_out, value.elem_type, rows)}),
                  Branch(value.else_out, else_nodes.Take(), {TensorInfo(value.else_out, value.elem_type, rows)}));
  }

  /// The input of each block of `value` taking its columns from `source` (zero or not): the source
  /// itself when there is one block, else a Split of it (blocks not taken from it get unused names).
  void SplitBlocks(const PackValuePlan& value, const std::string& source, bool zero_blocks,
                   std::vector<std::string>& inputs) {
    if (value.blocks.size() == 1) {
      inputs[0] = source;
      return;
    }
    std::vector<int64_t> sizes;
    std::vector<std::string> outputs;
    for (size_t b = 0; b < value.blocks.size(); ++b) {
      const PackBlock& block = value.blocks[b];
      sizes.push_back(block.length);
      const bool mine = block.zero_default == zero_blocks;
      outputs.push_back(mine ? block.part : before_.Name(source + ".unused"));
      if (mine) inputs[b] = block.part;
    }
    before_.Split(source, 1, sizes, outputs);
  }

  /// A run of members of one shape: [B, n*d*rest] -> [B, n*d, rest] (-> [n*d, B, rest]) -> n members.
  void UnpackGroup(const PackValuePlan& value, const PackBlock& block, const std::string& in) {
    const PackMemberPlan& first = value.members[block.first];
    const int64_t axis = first.meta.batch_axis, d = first.dims[axis == 0 ? 1 : 0];
    std::vector<int64_t> shape{0, d * static_cast<int64_t>(block.count)};
    shape.insert(shape.end(), first.dims.begin() + 2, first.dims.end());
    before_.Reshape(in, shape, block.rows);
    std::string stacked = block.rows;
    if (axis == 1) {
      before_.Transpose(block.rows, SwapFirstTwo(first.dims.size()), block.stacked);
      stacked = block.stacked;
    }
    std::vector<std::string> outputs;
    for (size_t k = block.first; k < block.first + block.count; ++k) outputs.push_back(value.members[k].meta.input);
    before_.Split(stacked, axis == 1 ? 0 : 1, std::vector<int64_t>(block.count, d), outputs);
  }

  /// One member from its columns `in` [B, length].
  void UnpackMember(const PackMemberPlan& member, const std::string& in) {
    if (in == member.meta.input) return;
    const int64_t axis = member.meta.batch_axis;
    if (axis == 0 && member.dims.size() == 2) {
      before_.Add("Identity", {in}, {member.meta.input});
    } else if (OnlyLeadingOnes(member.dims, axis)) {
      before_.Unsqueeze(in, Range(axis), member.meta.input);
    } else {
      std::vector<int64_t> shape{0};
      shape.insert(shape.end(), member.meta.row_shape.begin(), member.meta.row_shape.end());
      if (axis == 0) {
        before_.Reshape(in, shape, member.meta.input);
        return;
      }
      const std::string rows = before_.Name(member.part + ".rows");
      before_.Reshape(in, shape, rows);
      before_.Transpose(rows, InversePermutation(BatchFirstPermutation(member.dims.size(), axis)), member.meta.input);
    }
  }

  void UnpackTensor(const PackValuePlan& value) {
    bool any_zero = false, any_empty = false;
    for (const auto& member : value.members) (member.zero_default ? any_zero : any_empty) = true;
    std::vector<std::string> inputs(value.blocks.size());
    if (any_zero) {
      EmptyTest(value);
      SelectZeros(value);
      SplitBlocks(value, value.selected, true, inputs);
    }
    if (any_empty) SplitBlocks(value, value.meta.input, false, inputs);
    for (size_t b = 0; b < value.blocks.size(); ++b) {
      const PackBlock& block = value.blocks[b];
      if (block.group)
        UnpackGroup(value, block, inputs[b]);
      else
        UnpackMember(value.members[block.first], inputs[b]);
    }
  }

  /// The final states of one member as [B, length] named `flat`.
  void PackMember(const PackMemberPlan& member, const std::string& flat) {
    const int64_t axis = member.meta.batch_axis;
    if (axis == 0 && member.dims.size() == 2) {
      if (flat != member.meta.output) after_.Add("Identity", {member.meta.output}, {flat});
    } else if (OnlyLeadingOnes(member.dims, axis)) {
      after_.Squeeze(member.meta.output, Range(axis), flat);
    } else {
      std::string source = member.meta.output;
      if (axis != 0) {
        source = after_.Name(flat + ".batch_first");
        after_.Transpose(member.meta.output, BatchFirstPermutation(member.dims.size(), axis), source);
      }
      after_.Reshape(source, {0, member.meta.length}, flat);
    }
  }

  void PackTensor(const PackValuePlan& value) {
    std::vector<std::string> flats;
    for (const PackBlock& block : value.blocks) {
      flats.push_back(block.flat);
      if (!block.group) {
        PackMember(value.members[block.first], block.flat);
        continue;
      }
      const PackMemberPlan& first = value.members[block.first];
      std::vector<std::string> outputs;
      for (size_t k = block.first; k < block.first + block.count; ++k) outputs.push_back(value.members[k].meta.output);
      after_.Concat(outputs, first.meta.batch_axis == 1 ? 0 : 1, block.stacked_out);
      std::string rows = block.stacked_out;
      if (first.meta.batch_axis == 1) {
        after_.Transpose(block.stacked_out, SwapFirstTwo(first.dims.size()), block.rows_out);
        rows = block.rows_out;
      }
      after_.Reshape(rows, {0, block.length}, block.flat);
    }
    if (value.blocks.size() > 1) after_.Concat(flats, 1, value.meta.output);
  }

  /// If(SequenceLength == 0, then: every member's default, else: SequenceAt(position) each).
  void UnpackSequence(const PackValuePlan& value) {
    EmptyTest(value);
    NodeBuilder then_nodes(plan_.opset, names_, node_names_), else_nodes(plan_.opset, names_, node_names_);
    std::vector<onnx::ValueInfoProto> then_outputs, else_outputs;
    std::vector<std::string> outputs;
    for (const auto& member : value.members) {
      const int64_t axis = member.meta.batch_axis;
      if (member.zero_default) {
        AddZeros(then_nodes, member.zero_batch, member.elem_type, WithBatch(member, 1), axis, member.meta.input,
                 member.default_value);
      } else {
        // The model selects its own default when the state is fed empty (batch 0; axis 0 without a batch).
        std::vector<int64_t> dims = WithBatch(member, 0);
        for (int64_t& d : dims) d = d < 0 ? 0 : d;
        then_nodes.TensorConstant(member.default_value, ZeroTensor(member.default_value, member.elem_type, dims));
      }
      else_nodes.Int64Constant(member.position, {member.meta.position}, /*scalar=*/true);
      else_nodes.Add("SequenceAt", {value.meta.input, member.position}, {member.given});
      then_outputs.push_back(RankOnlyInfo(member.default_value, member.elem_type, member.dims.size()));
      else_outputs.push_back(RankOnlyInfo(member.given, member.elem_type, member.dims.size()));
      outputs.push_back(member.meta.input);
    }
    onnx::NodeProto& select = before_.Add("If", {value.is_empty}, outputs);
    SetIfBranches(select, Branch(value.then_out, then_nodes.Take(), std::move(then_outputs)),
                  Branch(value.else_out, else_nodes.Take(), std::move(else_outputs)));
  }

  /// Declares the shapes of the members and their columns ([?, length]: the batch left unknown, as it is
  /// the data's or 0), where onnx's inference cannot know them (values leaving a Loop, an If): so that
  /// check can trace which columns hold which member.
  void DeclareShapes(const PackValuePlan& value) {
    auto declare = [&](const std::string& name, std::vector<int64_t> dims, int64_t batch_axis) {
      for (const auto& info : main_.value_info()) {
        if (info.name() == name) return;
      }
      for (const auto& info : main_.output()) {
        if (info.name() == name) return;
      }
      std::vector<MetaDim> shape;
      for (size_t axis = 0; axis < dims.size(); ++axis) {
        shape.push_back(static_cast<int64_t>(axis) == batch_axis ? MetaDim{-1, ""} : MetaDim{dims[axis], ""});
      }
      *main_.add_value_info() = TensorInfo(name, value.elem_type, shape);
    };
    for (const PackMemberPlan& member : value.members) {
      declare(member.meta.input, member.dims, member.meta.batch_axis);
      declare(member.meta.output, member.dims, member.meta.batch_axis);
    }
    if (!value.selected.empty()) declare(value.selected, {-1, value.width}, 0);  // the If's output
    for (const PackBlock& block : value.blocks) {
      for (const std::string& name : {block.part, block.flat}) {
        if (!name.empty() && name != value.meta.input && name != value.meta.output) {
          declare(name, {-1, block.length}, 0);
        }
      }
    }
  }

  /// The states' inputs, defaults and outputs leave the interface, the packed value takes their place; the
  /// model's own outputs (h_n) stay, as the packed value holds a copy of them.
  void Interface(const PackValuePlan& value) {
    for (const auto& member : value.members) {
      RemoveGraphInput(main_, member.meta.input);
      if (!member.default_initializer.empty()) RemoveInitializer(main_, member.default_initializer);
      if (!plan_.kept_outputs.count(member.meta.output)) RemoveGraphOutput(main_, member.meta.output);
    }
    if (plan_.kind == PackKind::kSequence) {
      *main_.add_input() = SequenceInfo(value.meta.input, value.elem_type);
      *main_.add_output() = SequenceInfo(value.meta.output, value.elem_type);
      return;
    }
    *main_.add_input() =
        TensorInfo(value.meta.input, value.elem_type, {MetaDim{-1, value.declared_batch}, MetaDim{value.width, ""}});
    if (plan_.defaults) *main_.add_initializer() = ZeroTensor(value.meta.input, value.elem_type, {0, value.width});
    *main_.add_output() = TensorInfo(value.meta.output, value.elem_type, value.meta.shape);
  }

  const PackPlan& plan_;
  onnx::GraphProto& main_;
  NameAllocator& names_;
  NameAllocator& node_names_;
  NodeBuilder before_, after_;
};

}  // namespace

void ApplyPack(const PackPlan& plan, onnx::ModelProto& model, NameAllocator& names, NameAllocator& node_names) {
  Applier(plan, model, names, node_names).Apply();
}

}  // namespace rnnstate
