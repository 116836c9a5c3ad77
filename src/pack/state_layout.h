#pragma once
/// \file
/// `--state-layout batch-first`: every state input and output of a rewritten model becomes [B, D, H]
/// instead of the node's [D, B, H], for runtimes that batch on axis 0 (Triton's implicit state). The graph
/// input and output keep their names; a Transpose sits between them and the node:
///
///   before:  h_in [D,B,H] ──> LSTM ──> h_out [D,B,H]
///   after:   h_in [B,D,H] ──Transpose──> h_in.node_layout ──> LSTM ──> h_out.node_layout ──Transpose──> h_out [B,D,H]
///
/// A default of the input (an initializer) is given the new layout. Planned as data from the model and
/// its recorded pairs, then applied; a state already batch-first (layout=1 nodes) is left as it is.

#include <onnx/onnx_pb.h>

#include <set>
#include <string>
#include <vector>

#include "graph/naming.h"
#include "rnnstate/metadata.h"

namespace rnnstate {

/// One graph input or output made batch-first.
struct LayoutChange {
  std::string name;           ///< the graph input or output (keeps its name)
  std::string internal;       ///< the value the node side reads (input) or the producer writes (output)
  std::string node;           ///< the Transpose's node name
  std::vector<int64_t> perm;  ///< the Transpose: batch-first -> node layout (input), node -> batch-first (output)
  std::vector<int64_t> to_batch_first;  ///< the permutation giving the new declared shape
  /// Input fed empty on the first call (`init` "empty"): the dim_param its batch declares, its own, as
  /// ONNX Runtime plans buffer reuse assuming that one dim_param is one size ("" otherwise).
  std::string own_batch;
  /// Output only: `internal` is one of the model's own outputs (h_n), which keeps its name and layout;
  /// `name` is a new output, its batch-first copy.
  bool copy = false;
};

/// The layout change of a model, as data.
struct LayoutPlan {
  std::vector<LayoutChange> inputs;
  std::vector<LayoutChange> outputs;
  std::vector<StatePair> pairs;       ///< the pairs as recorded afterwards
  std::vector<std::string> warnings;  ///< states left in their layout, and why

  bool Changes() const { return !inputs.empty() || !outputs.empty(); }
};

/// Plans the batch-first layout of every state pair with a batch axis other than 0. Pairs of a stacked
/// tensor (`rows`) and pairs without a batch axis keep their layout (a warning per tensor). A pair whose
/// output is one of `own_outputs` (the outputs the model had before rnnstate: its interface) keeps that
/// output as it is and gets a batch-first copy, named by `output_template` (see ExpandNameTemplate).
/// Throws Error(kUnsupported) when an input's default would need its values reordered, or an output is
/// not computed by a main-graph node.
/// `names` hands out value names, `node_names` node names, `dim_names` dim_params.
LayoutPlan PlanBatchFirst(const onnx::ModelProto& model, const std::vector<StatePair>& pairs, NameAllocator& names,
                          NameAllocator& node_names, NameAllocator& dim_names,
                          const std::set<std::string>& own_outputs = {},
                          const std::string& output_template = "{node}.{kind}_out");

/// Applies the plan (the only mutation of this stage); the metadata is written by the caller.
void ApplyBatchFirst(const LayoutPlan& plan, onnx::ModelProto& model);

/// The permutation that moves axis `batch_axis` of a rank-`rank` tensor to the front.
std::vector<int64_t> BatchFirstPermutation(size_t rank, int64_t batch_axis);

/// The inverse of a permutation.
std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm);

}  // namespace rnnstate
