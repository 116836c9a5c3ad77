#include "pack/state_layout.h"

#include <map>
#include <set>

#include "graph/graph_edit.h"
#include "graph/node_builder.h"
#include "rnnstate/error.h"

namespace rnnstate {

namespace {

template <typename T>
std::vector<T> Permuted(const std::vector<T>& values, const std::vector<int64_t>& perm) {
  std::vector<T> out;
  for (int64_t axis : perm) out.push_back(values.at(static_cast<size_t>(axis)));
  return out;
}

const onnx::ValueInfoProto* FindInfo(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& infos,
                                     const std::string& name) {
  for (const auto& info : infos) {
    if (info.name() == name) return &info;
  }
  return nullptr;
}

/// True when the node writing `name` is a main-graph node.
bool ProducedByNode(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& node : graph.node()) {
    for (const auto& output : node.output()) {
      if (output == name) return true;
    }
  }
  return false;
}

/// True when moving `batch_axis` to the front keeps the element order of a tensor with `dims`: every
/// axis before it has size 1, or the batch itself has at most one element.
bool OrderKept(const onnx::TensorProto& tensor, int64_t batch_axis) {
  if (batch_axis >= tensor.dims_size()) return false;
  if (tensor.dims(static_cast<int>(batch_axis)) <= 1) return true;
  for (int64_t axis = 0; axis < batch_axis; ++axis) {
    if (tensor.dims(static_cast<int>(axis)) != 1) return false;
  }
  return true;
}

/// Permutes the declared shape of a graph input or output.
void PermuteDeclared(onnx::ValueInfoProto& info, const std::vector<int64_t>& to_batch_first) {
  if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return;
  auto* shape = info.mutable_type()->mutable_tensor_type()->mutable_shape();
  if (static_cast<size_t>(shape->dim_size()) != to_batch_first.size()) return;
  const std::vector<onnx::TensorShapeProto::Dimension> dims(shape->dim().begin(), shape->dim().end());
  const std::vector<onnx::TensorShapeProto::Dimension> permuted = Permuted(dims, to_batch_first);
  for (size_t i = 0; i < permuted.size(); ++i) *shape->mutable_dim(static_cast<int>(i)) = permuted[i];
}

/// The op of the main-graph node a pair names ("" when it is not there), for `{op}` in name templates.
std::string OpOf(const onnx::GraphProto& main, const StatePair& pair) {
  if (!pair.path.empty()) return "";
  for (const auto& node : main.node()) {
    if (node.name() == pair.node) return node.op_type();
  }
  return "";
}

}  // namespace

std::vector<int64_t> BatchFirstPermutation(size_t rank, int64_t batch_axis) {
  std::vector<int64_t> perm{batch_axis};
  for (int64_t axis = 0; axis < static_cast<int64_t>(rank); ++axis) {
    if (axis != batch_axis) perm.push_back(axis);
  }
  return perm;
}

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inverse;
}

LayoutPlan PlanBatchFirst(const onnx::ModelProto& model, const std::vector<StatePair>& pairs, NameAllocator& names,
                          NameAllocator& node_names, NameAllocator& dim_names, const std::set<std::string>& own_outputs,
                          const std::string& output_template) {
  const onnx::GraphProto& main = model.graph();
  LayoutPlan plan;
  plan.pairs = pairs;
  std::set<std::string> planned_inputs, warned;
  std::map<std::string, std::string> planned_outputs;  // output -> the pairs' batch-first output
  for (StatePair& pair : plan.pairs) {
    if (pair.batch_axis == 0 || !pair.layout.empty()) continue;
    const std::string label = "state input '" + pair.input + "' (-> '" + pair.output + "')";
    if (pair.rows || !pair.region.empty()) {
      // One line per tensor, whichever of its rows or regions are states.
      if (warned.insert(pair.input).second) {
        plan.warnings.push_back(label + " is the model's own tensor of stacked states: it keeps its layout");
      }
      continue;
    }
    if (pair.batch_axis < 0 || static_cast<size_t>(pair.batch_axis) >= pair.shape.size()) {
      if (warned.insert(pair.input).second) plan.warnings.push_back(label + " has no batch axis: it keeps its layout");
      continue;
    }
    const std::vector<int64_t> to_batch_first = BatchFirstPermutation(pair.shape.size(), pair.batch_axis);
    if (!FindInfo(main.input(), pair.input) || !FindInfo(main.output(), pair.output)) {
      throw Error(ExitCode::kUnsupported, label + ": not a main-graph input and output (rewrite the model first)");
    }
    if (!ProducedByNode(main, pair.output)) {
      throw Error(ExitCode::kUnsupported, label + ": the output is not computed by a node of the main graph");
    }
    for (const auto& tensor : main.initializer()) {
      if (tensor.name() == pair.input && !OrderKept(tensor, pair.batch_axis)) {
        throw Error(ExitCode::kUnsupported, label + ": its default (an initializer of several rows) would need its " +
                                                "values reordered; --state-layout batch-first does not do that");
      }
    }
    if (planned_inputs.insert(pair.input).second) {
      const std::string internal = names.Allocate(pair.input + ".node_layout");
      const std::string own_batch = pair.init == kInitEmpty ? dim_names.Allocate(pair.input + "_batch") : "";
      plan.inputs.push_back({pair.input, internal, node_names.Allocate(internal), InversePermutation(to_batch_first),
                             to_batch_first, own_batch});
    }
    if (auto [at, fresh] = planned_outputs.try_emplace(pair.output, pair.output); fresh) {
      if (own_outputs.count(pair.output)) {
        // The model's own output (h_n) is its interface: it stays, and the state leaves through a copy.
        const std::string kind = pair.variable.empty() ? pair.kind : pair.variable;
        at->second = names.Allocate(ExpandNameTemplate(output_template, NodeStem(pair.node), kind, OpOf(main, pair)));
        plan.outputs.push_back({at->second, pair.output, node_names.Allocate(at->second + ".batch_first"),
                                to_batch_first, to_batch_first, "", /*copy=*/true});
      } else {
        plan.outputs.push_back({pair.output, names.Allocate(pair.output + ".node_layout"),
                                node_names.Allocate(pair.output + ".batch_first"), to_batch_first, to_batch_first, ""});
      }
    }
    pair.output = planned_outputs[pair.output];
    pair.shape = Permuted(pair.shape, to_batch_first);
    pair.batch_axis = 0;
    pair.layout = kLayoutBatchFirst;
  }
  return plan;
}

void ApplyBatchFirst(const LayoutPlan& plan, onnx::ModelProto& model) {
  onnx::GraphProto& main = *model.mutable_graph();
  std::vector<onnx::NodeProto> before, after;
  auto transpose = [](const std::string& from, const std::string& to, const std::string& name,
                      const std::vector<int64_t>& perm) {
    onnx::NodeProto node = MakeNode("Transpose", {from}, {to});
    node.set_name(name);
    SetIntsAttribute(node, "perm", perm);
    return node;
  };
  auto rename_value_info = [&](const std::string& from, const std::string& to) {
    for (auto& info : *main.mutable_value_info()) {
      if (info.name() == from) info.set_name(to);
    }
  };
  for (const LayoutChange& change : plan.inputs) {
    RenameReads(main, change.name, change.internal);
    rename_value_info(change.name, change.internal);
    before.push_back(transpose(change.name, change.internal, change.node, change.perm));
    for (auto& input : *main.mutable_input()) {
      if (input.name() != change.name) continue;
      PermuteDeclared(input, change.to_batch_first);
      auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
      if (!change.own_batch.empty() && shape->dim_size() > 0) shape->mutable_dim(0)->set_dim_param(change.own_batch);
    }
    if (onnx::TensorProto* tensor = FindInitializer(main, change.name)) {
      std::vector<int64_t> dims(tensor->dims().begin(), tensor->dims().end());
      tensor->clear_dims();
      for (int64_t d : Permuted(dims, change.to_batch_first)) tensor->add_dims(d);
    }
  }
  for (const LayoutChange& change : plan.outputs) {
    if (change.copy) {
      after.push_back(transpose(change.internal, change.name, change.node, change.perm));
      onnx::ValueInfoProto info = *FindInfo(main.output(), change.internal);
      info.set_name(change.name);
      PermuteDeclared(info, change.to_batch_first);
      *main.add_output() = std::move(info);
      continue;
    }
    for (auto& node : *main.mutable_node()) {
      for (auto& output : *node.mutable_output()) {
        if (output == change.name) output = change.internal;
      }
    }
    RenameReads(main, change.name, change.internal);
    rename_value_info(change.name, change.internal);
    after.push_back(transpose(change.internal, change.name, change.node, change.perm));
    for (auto& output : *main.mutable_output()) {
      if (output.name() == change.name) PermuteDeclared(output, change.to_batch_first);
    }
  }
  SurroundNodes(main, std::move(before), std::move(after));
}

}  // namespace rnnstate
