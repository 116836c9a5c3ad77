#pragma once
/// \file
/// Every recurrent state of the model (found by the producers, see Analyze) with
/// the origin and destination of its values, which states share an origin, and which are already
/// exposed. Pure analysis: nothing is modified.

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "contract/stream_record.h"
#include "exposure/exposed_state.h"
#include "find/context_state.h"
#include "find/recurrent_node.h"
#include "find/state_findings.h"
#include "graph/model_index.h"
#include "rnnstate/check_problem.h"
#include "rnnstate/metadata.h"
#include "rnnstate/packed_metadata.h"
#include "states/recurrent_state.h"
#include "states/state_origin.h"

namespace rnnstate {

struct StreamVerdict;  // time/stream_verdict.h: the whole model's verdict, judged after this analysis

/// One recurrent state, traced.
struct StateAnalysis {
  RecurrentState state;
  int node = -1;  ///< index into Analysis::nodes of the owner's description
  /// Where the state is promoted (the owner itself, or the Loop/Scan carrying it).
  StateSite site;
  /// Containers the final state is threaded out through, innermost first (empty in the main graph).
  std::vector<ThreadLevel> levels;
  /// Why the state cannot be threaded out to the main graph ("" when it can).
  std::string thread_problem;
  StateOrigin origin;
  FinalState final_state;
  /// Other states ("node/h") whose initial value comes from the same value or the same computation.
  std::vector<std::string> shared_with;
  /// Index into Analysis::recorded_pairs of this state's pair, or -1.
  int recorded = -1;
  /// Set when the model's authors expose the state in their own tensors: the same region of a graph
  /// input and a graph output (PyTorch's `(h0, c0)` rows, h and c packed in one tensor, caches, ...).
  BoxedOptional<Exposure> exposure;
  /// What the exposure analysis found otherwise: where the state is read from and written to, and why
  /// that is not an exposure ("" when there is nothing to say).
  ExposureFinding finding;
  /// True when the state already has a main-graph input and output that the metadata pairs; or the
  /// slot is fed directly by a graph input used nowhere else and its final value is a graph output; or
  /// its authors expose it; or it is a member of a packed value the metadata records.
  bool exposed = false;
  /// Why the state is left as its authors wrote it, restarting on every call ("" when it is not): a
  /// recurrence that cannot stream and starts from zeros, in a model whose authors carry their streaming
  /// state in their own inputs (a speech enhancer's intra-frame RNN over frequency). Their protocol
  /// is the one to follow.
  std::string within_call;
  /// Why chunked runs of the whole model, this state fed back, do not equal one run ("" when they do, or
  /// when there is no time axis to chunk): an operator around the recurrences (a convolution or a
  /// reduction over time, a final state used as another layer's initial state), or a fixed length. Set
  /// by the stream verdict (time/stream_verdict.h).
  std::string stream_problem;

  /// True when chunked runs with this state fed back equal one run: its recurrence carries it
  /// (`state.streamable`) and the whole model streams.
  bool Streams() const { return state.streamable && stream_problem.empty(); }
};

/// The analysis of a whole model.
struct Analysis {
  std::vector<RecurrentNode> nodes;       ///< the nodes owning states, described for reports
  std::vector<StateAnalysis> states;      ///< every state, grouped by owner in node order
  std::vector<StatePair> recorded_pairs;  ///< from the model's `rnnstate` metadata
  /// The recorded context states (kind "context"), judged against the graph (context_state.h).
  std::vector<ContextFinding> contexts;
  /// What looked state-like but is no rewritable state (carried pass-throughs and counters, loops and
  /// operators rnnstate cannot classify or handle), in the producers' order.
  std::vector<StateNote> notes;
  /// The first of metadata_problems, for warnings ("" when the metadata may be relied on: then a rewrite
  /// keeps the recorded pairs; otherwise it writes them anew).
  std::string metadata_error;
  /// Every rule the metadata breaks (rules/metadata_rules.h, the validation every command shares).
  std::vector<CheckProblem> metadata_problems;
  std::optional<PackedStates> packed;  ///< the metadata's "packed" object (a packed model)
  int64_t onnx_opset = 0;
  int64_t ir_version = 0;
  std::string inference_error;  ///< why onnx shape inference failed, if it did
  /// The metadata's "stream" object (what an earlier rewrite judged).
  std::optional<StreamRecord> recorded_stream;
  /// The whole model's verdict on streaming (time/stream_verdict.h), once judged.
  std::shared_ptr<const StreamVerdict> stream;

  /// Marks every state that is not exposed yet, and its node, as not rewritable for `problem` (an
  /// unsupported opset).
  void MarkUnexposed(const std::string& problem);
  /// The states of `nodes[node]`, in order.
  std::vector<const StateAnalysis*> StatesOf(size_t node) const;
  /// StatesOf every node at once (one pass over the states, not one per node).
  std::vector<std::vector<const StateAnalysis*>> StatesByNode() const;
};

/// What the stages before the analysis tell it.
struct AnalysisOptions {
  /// `--time-axis` options ("x:1") that were given and changed nothing: the reason a fixed-length Loop over
  /// such an axis does not stream points to that option's warning instead of advising it again.
  std::set<std::string> refused_time_axes;
  /// Trace where each computed initial state comes from (StateOrigin's `from_inputs`,
  /// `from_initializers`): `report` shows it; rewrite and check have no use for it, and with many states
  /// the walks are most of their analysis.
  bool origin_sources = true;
  /// The index comes from IndexValidModel (rules/model_rules.h), which refuses a recurrent node breaking
  /// a rule of its operands' types: the analysis does not check those rules again (set by the pipeline's
  /// commands; an unchecked index, as in a test, keeps the check and marks such a node's problem).
  bool owner_types_checked = false;
};

/// Finds every recurrent state of the indexed model with each producer (one per kind of owner: the
/// operators of recurrent_ops.h, loops over hand-written cells, stateful operators outside the table)
/// and traces it.
Analysis Analyze(const ModelIndex& index, const AnalysisOptions& options = {});

}  // namespace rnnstate
