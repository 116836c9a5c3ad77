#pragma once
/// \file
/// Stage 5: decide, as plain data, every edit a rewrite makes — which input feeds each initial state and
/// how its default reproduces the original model, which output exposes each final state, every new
/// name — and what is skipped and why. Nothing is modified here; apply.h executes a Plan.

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "rnnstate/analysis.h"
#include "rnnstate/metadata.h"
#include "rnnstate/model_index.h"

namespace rnnstate {

/// The largest zero initializer a default may add (1 MiB). A fixed-batch state larger than this gets a
/// [D,1,H] zero initializer broadcast to the batch of X instead, so that a model of batch 4096 does not
/// grow by megabytes of zeros per state (nor a malformed one by petabytes).
inline constexpr uint64_t kMaxZeroDefaultBytes = uint64_t{1} << 20;

/// How new state inputs behave when not fed.
enum class StateInputMode {
  kDefaults,  ///< each state input has a default reproducing the original model (overridable initializer)
  kRequired,  ///< plain required inputs: the caller feeds the initial state (zeros on the first call)
};

/// What the user asked for.
struct PlanOptions {
  StateInputMode mode = StateInputMode::kDefaults;
  std::string input_template = "{node}.{kind}_in";
  std::string output_template = "{node}.{kind}_out";
  /// When set, only nodes whose name or `graph/name` matches (regex search) are rewritten.
  std::optional<std::regex> node_filter;
};

/// What happens on the input side of a state.
enum class InputAction {
  kKeep,         ///< already exposed and recorded: nothing changes
  kReuseInput,   ///< the slot is already fed by a graph input used nowhere else
  kDropDefault,  ///< already exposed; required mode removes the input's default initializer
  kNewInput,     ///< a new graph input feeds the slot
};

/// How a new input reproduces the original initial state when it is not fed.
enum class DefaultKind {
  kNone,             ///< required input (or unchanged)
  kZeros,            ///< zero initializer of the full state shape (fixed batch, at most kMaxZeroDefaultBytes)
  kBroadcastZeros,   ///< [.., 1, ..] zero initializer, expanded to the runtime batch of X
  kMoveInitializer,  ///< the original initializer, renamed (it was used by this state only)
  kCopyInitializer,  ///< a copy of the original initializer (it is shared)
  kSelectOriginal,   ///< empty default; an If selects the original computation when the input is empty
};

/// What happens on the output side of a state.
enum class OutputAction {
  kKeep,         ///< already exposed
  kReuseOutput,  ///< Y_h / Y_c is already a graph output: record it
  kNameSlot,     ///< the slot is empty: give it the new output name
  kIdentity,     ///< Y_h / Y_c is used inside the graph: an Identity exposes it under the new name
  kThreaded,     ///< the site is in a subgraph: threaded out through its containers (StateEdit::threads)
};

/// One level of threading a final state out of a subgraph: the container gets a new output; a Loop or
/// Scan a new carried variable (its initial value is the state input, so zero iterations return it);
/// an If a new output of both branches, the branch without the node passing the state input through.
struct ThreadStep {
  ThreadLevel level;
  std::string inner_value;     ///< the subgraph's new output (an Identity of the state inside it)
  std::string carried_input;   ///< Loop/Scan: the body's new input
  std::string other_value;     ///< If: the other branch's new output (an Identity of the state input)
  std::string other_attribute; ///< If: the other branch's attribute name
  std::string outer_value;     ///< the container's new output, in the enclosing graph
};

/// Names of the nodes that compute the runtime state shape from X (shared by a node's h and c).
struct BroadcastShapeNames {
  GraphPath graph;        ///< graph defining X, where the nodes go
  int node = -1;          ///< the recurrent node
  std::string x;          ///< X input of the recurrent node
  int64_t batch_axis = 1; ///< axis of X holding the batch
  int64_t batch_position = 1;  ///< position of the batch in the state shape
  int64_t num_directions = 1, hidden_size = 0;
  std::string shape_of_x, batch_index, batch, directions, hidden, state_shape;  ///< value names
};

/// Every edit for one state of one recurrent node.
struct StateEdit {
  GraphPath graph;        ///< the recurrent node's graph
  int node = -1;          ///< the recurrent node
  std::string node_name;  ///< after renaming of unnamed nodes
  std::string graph_name;
  StateKind kind = StateKind::kHidden;
  /// Where the state is promoted: the recurrent node, or the Loop/Scan carrying the state.
  StateSite site;

  InputAction input_action = InputAction::kKeep;
  DefaultKind default_kind = DefaultKind::kNone;
  std::string input;       ///< graph input carrying the state
  std::string original;    ///< value in the initial-state slot before the rewrite ("" when absent)
  std::string slot_value;  ///< value the slot reads after the rewrite: the effective initial state
  /// Graph where the default's nodes (Expand, If) go: the outermost graph that sees what they read
  /// (X, the original value), so that the effective state is also what an If branch or a Loop that
  /// does not run the node passes through.
  GraphPath default_graph;
  int32_t elem_type = 0;
  std::vector<Dim> shape;  ///< declared shape of the input and output
  std::vector<int64_t> default_dims;  ///< dims of the default initializer
  GraphPath default_source;  ///< graph holding the original initializer (kMove/kCopyInitializer)
  int broadcast = -1;      ///< index into Plan::broadcasts (kBroadcastZeros)
  /// kSelectOriginal: value names of the selection chain.
  std::string size_value, zero_value, is_empty_value, then_value, else_value;

  OutputAction output_action = OutputAction::kKeep;
  std::string final_value;  ///< the site's final state before the rewrite ("" when absent)
  std::string site_value;   ///< the site's final state after the rewrite (named when it was absent)
  std::string output;       ///< graph output carrying the final state
  /// Nested sites: how the final state reaches the main graph, innermost first; the last step's
  /// outer_value is `output`.
  std::vector<ThreadStep> threads;

  bool optional = true;
  bool streamable = true;
  /// Rows of `input` and `output` that are this state's, for a state the model exposes stacked.
  std::optional<RowRange> rows;

  /// One line for reports and --dry-run: what the rewrite does to this state.
  std::string Describe() const;
};

/// A state (or a whole node) that will not be rewritten.
struct SkippedState {
  std::string graph, node, kind;  ///< kind is "" for a whole node
  std::string reason;
};

/// The complete rewrite, as data.
struct Plan {
  std::vector<StateEdit> edits;
  std::vector<BroadcastShapeNames> broadcasts;
  std::vector<SkippedState> skipped;
  /// Unnamed recurrent nodes get a stable name so that metadata can refer to them.
  std::vector<std::pair<std::pair<GraphPath, int>, std::string>> node_names;
  /// The metadata to record (existing pairs that are still valid, then new ones, in node order).
  std::vector<StatePair> pairs;
  bool metadata_changes = false;

  /// True when applying the plan changes the model.
  bool ChangesModel() const;

  /// The edit of state `kind` of `node`, or nullptr.
  const StateEdit* FindEdit(const RecurrentNode& node, StateKind kind) const;
  /// Why state `kind` of `node` (or the whole node) is skipped, or nullptr.
  const SkippedState* FindSkip(const RecurrentNode& node, StateKind kind) const;
};

/// Plans the rewrite of the analyzed model. Throws Error(kUsage) for bad name templates.
Plan MakePlan(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options);

}  // namespace rnnstate
