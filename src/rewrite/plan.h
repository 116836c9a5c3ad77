#pragma once
/// \file
/// The plan as data: every edit a rewrite makes — which input feeds each initial state and how its
/// default reproduces the original model, which output exposes each final state, every new name — and
/// what is skipped and why. planner.h decides a Plan, apply.h executes it. Edits are variants: describing
/// and applying a plan visit them, so every case is handled.

#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "exposure/boxed_optional.h"
#include "find/analysis.h"
#include "graph/model_index.h"
#include "rewrite/context_plan.h"
#include "rnnstate/metadata.h"
#include "rnnstate/options.h"
#include "states/recurrent_state.h"

namespace rnnstate {

/// The largest zero initializer a default may add (1 MiB). A fixed-batch state larger than this gets a
/// [D,1,H] zero initializer broadcast to the batch of X instead, so that a model of batch 4096 does not
/// grow by megabytes of zeros per state (nor a malformed one by petabytes).
inline constexpr uint64_t kMaxZeroDefaultBytes = uint64_t{1} << 20;

// ---------------------------------------------------------------------------------------------------
// The default of a new state input: what the slot sees when the input is not fed.

/// No default: a required input.            input ──> slot
struct NoDefault {};

/// A zero initializer of the full state shape (fixed batch, at most kMaxZeroDefaultBytes).
///                                           input (= zeros [D,B,H]) ──> slot
struct ZerosDefault {
  std::vector<int64_t> dims;
};

/// [D,1,H] zeros expanded to the runtime batch (read from the owner's X, see BroadcastShapeNames).
///                                           input (= zeros [D,1,H]) ──Expand(state_shape)──> input.expanded ──> slot
struct BroadcastZerosDefault {
  std::vector<int64_t> dims;
  int broadcast = -1;  ///< index into Plan::broadcasts
};

/// The original initializer, renamed to the input (it served this state only) or copied (it is shared).
///                                           before: initializer W0 ──> slot
///                                           after:  input (= W0's values) ──> slot
struct InitializerDefault {
  bool move = false;
  GraphPath source;  ///< graph holding the original initializer
  std::vector<int64_t> dims;
};

/// An empty default (none in required mode); an If selects the original computation when the fed tensor
/// is empty.
///   input (= [D,0,H]) ──Size──> .size ──Equal(0)──> .is_empty ──If(then: original, else: input)──> .selected ──> slot
struct SelectOriginalDefault {
  std::vector<int64_t> dims;
  std::string size_value, zero_value, is_empty_value, then_value, else_value;
  bool empty_default = true;  ///< the input gets the empty tensor as its default (false: required mode)
};

using DefaultEdit =
    std::variant<NoDefault, ZerosDefault, BroadcastZerosDefault, InitializerDefault, SelectOriginalDefault>;

// ---------------------------------------------------------------------------------------------------
// The input side of a state.

/// Already exposed and recorded: nothing changes.
///   before: input ──> slot        after: input ──> slot (the same graph, the same pair)
struct KeepInput {};

/// The slot is already fed by a main-graph input used nowhere else: recorded as it is.
///   before: input ──> slot        after: input ──> slot (now named in the metadata's pair)
struct ReuseInput {};

/// Already exposed; required mode removes the input's default initializer (zeros, or the empty tensor
/// that selects the original default).
///   before: input (+ initializer input) ──> slot        after: input ──> slot
struct DropDefault {
  /// Declare the input anew with the edit's shape: a fixed batch that only a broadcast default had
  /// declared symbolic.
  bool redeclare = false;
};

/// Already exposed through an input whose default is a non-zero tensor (a learned initial state): the
/// default is kept under a new name and selected when the fed tensor is empty, so that the empty tensor
/// means "the model's default" here too; the input's default becomes empty (required mode: none).
///   before: input (= W0) ──> readers
///   after:  input (= [D,0,H]) ──If(Size == 0: default_name (= W0), else: input)──> selected ──> readers
struct DefaultBehindSelect {
  std::string default_name;  ///< the new name of the original default initializer
  std::string selected;      ///< what the input's readers read after the rewrite
  SelectOriginalDefault select;  ///< the selection's names; `dims` is the empty default (defaults mode)
  bool keep_empty_default = true;  ///< false in required mode: the input has no default at all
};

/// A new main-graph input feeds the slot, through the nodes of its default.
///   before: original ──> slot        after: input ──[default]──> slot_value ──> slot
struct NewInput {
  DefaultEdit default_value;
  std::string slot_value;  ///< what the slot reads after the rewrite: the effective initial state
  /// Graph where the default's nodes (Expand, If) go: the outermost graph that sees what they read
  /// (X, the original value), so that the effective state is also what an If branch or a Loop that
  /// does not run the owner passes through. The main graph for defaults without nodes.
  GraphPath default_graph;
};

using InputEdit = std::variant<KeepInput, ReuseInput, DropDefault, DefaultBehindSelect, NewInput>;

// ---------------------------------------------------------------------------------------------------
// The output side of a state.

/// Already exposed and recorded: nothing changes.
///   before: owner ──final──> output        after: owner ──final──> output (the same graph, the same pair)
struct KeepOutput {};

/// The final value is already a main-graph output: recorded as it is.
///   before: owner ──final──> output        after: owner ──final──> output (now named in the metadata's pair)
struct ReuseOutput {};

/// The final slot is empty: it gets the output's name.    owner ──(slot "" → output)──>
struct NameSlot {};

/// The final value is used inside the graph: an Identity exposes it under the output's name.
///   owner ──final──> consumers        after: final ──Identity──> output (consumers untouched)
struct IdentityOutput {};

/// One level of threading a final state out of a subgraph (see AddThreadedValue in control_flow.h):
/// a Loop or Scan gets a new carried variable, an If a new output of both branches.
struct ThreadStep {
  ThreadLevel level;
  std::string inner_value;      ///< the subgraph's new output (an Identity of the state inside it)
  std::string carried_input;    ///< Loop/Scan: the body's new input
  std::string other_value;      ///< If: the other branch's new output (an Identity of the state input)
  std::string other_attribute;  ///< If: the other branch's attribute name
  std::string outer_value;      ///< the container's new output, in the enclosing graph
};

/// The site is in a subgraph: the final value is threaded out through every container, innermost first;
/// the last step's outer value is the output.
///   body: final ──Identity──> inner ═(carried / branch output)═> container output ... ──> output
struct ThreadedOutput {
  std::string site_value;  ///< the site's final value after the rewrite (named when the slot was empty)
  std::vector<ThreadStep> steps;
};

using OutputEdit = std::variant<KeepOutput, ReuseOutput, NameSlot, IdentityOutput, ThreadedOutput>;

// ---------------------------------------------------------------------------------------------------

/// Names of the nodes that compute the runtime state shape from the batch of X, shared by the states
/// whose defaults have one shape expression (an owner's h and c; owners whose X have the batch of one
/// value, see AxisChainRoots): Shape(X) ──Gather(batch axis)──> batch; Concat(fixed dims and batch) ──>
/// state_shape.
struct BroadcastShapeNames {
  GraphPath graph;             ///< graph defining X, where the nodes go
  int anchor = -1;             ///< the node of `graph` they go before: the first of their readers' places
  std::string x;               ///< the value the batch is read from
  int64_t batch_axis = 1;      ///< its axis holding the batch
  int64_t batch_position = 1;  ///< position of the batch in the state shape
  std::string shape_of_x, batch_index, batch;
  std::vector<std::pair<int64_t, std::string>> fixed_dims;  ///< the other dims, in order: value and name
  std::string state_shape;
};

/// Where a state lives in tensors it shares with other states (see StatePair): rows on axis 0 of a
/// stacked tensor (PyTorch's `(h0, c0)`, the form older readers know), or a region of the authors' own
/// packed tensor with the state axis each kept axis of the region is.
struct StatePlace {
  std::optional<RowRange> rows;
  std::vector<RegionAxis> region;
  std::vector<std::string> axes;
  std::vector<MetaDim> view;  ///< the view of the tensor the region is on (empty: the tensor itself)
};

/// The place `named` (a recorded StatePair, or an Exposure) gives its state: none when it names all of
/// its tensors (neither rows nor a region nor its axes).
template <class Named>
BoxedOptional<StatePlace> PlaceNamedBy(const Named& named) {
  if (!named.rows && named.region.empty() && named.axes.empty()) return {};
  return StatePlace{named.rows, named.region, named.axes, named.view};
}

/// Every edit for one state.
struct StateEdit {
  StateKey key;            ///< the state (owner graph + node + initial slot)
  std::string owner_name;  ///< after renaming of unnamed nodes
  std::string graph_name;
  std::string kind;  ///< "h", "c", "state"
  std::string variable;  ///< kind "state": the loop's carried variable (body input name)
  std::string op;    ///< the owner's op (for name templates)
  /// Where the state is promoted: the owner, or the Loop/Scan carrying the state.
  StateSite site;
  int32_t elem_type = 0;
  std::vector<Dim> shape;  ///< declared shape of the state input (and output, unless output_shape is set)
  /// Declared shape of a new state output when it differs from the input's: a fixed batch the input
  /// declares symbolic only so that a broadcast default fits it (the output always has the data's batch).
  std::vector<Dim> output_shape;

  std::string input;     ///< graph input carrying the state
  std::string original;  ///< value in the initial-state slot before the rewrite ("" when absent)
  InputEdit input_edit;

  std::string output;       ///< graph output carrying the final state
  std::string final_value;  ///< the site's final state before the rewrite ("" when absent)
  OutputEdit output_edit;

  bool optional = true;
  bool streamable = true;  ///< chunked runs equal one run (the recurrence carries it, the model streams)
  bool carried = true;     ///< the recurrence carries the state from call to call
  /// Set for a state that lives in a part of `input` and `output` (the same part of both) that it shares
  /// with other states: a state the model exposes in its own tensors, or one recorded with rows or a
  /// region. Unset: the state is all of both tensors. Held out of line: most states have none (a
  /// StatePlace is 96 bytes; 20,000 edits of a large model).
  BoxedOptional<StatePlace> place;
  /// The contract fields of the pair (see StatePair): how to make the first feed, and the shape of the
  /// tensor fed as `input` with the batch as the data inputs name it.
  std::string init;
  std::vector<MetaDim> data_shape;
  int64_t batch_axis = -1;

  /// True when applying this edit changes the model.
  bool Changes() const;
  /// One line for reports and --dry-run: what the rewrite does to this state.
  std::string Describe() const;
};

/// A state (or every state of an owner) that will not be rewritten.
struct SkippedState {
  StateKey key;                   ///< slot -1: every state of the owner
  std::string graph, node, kind;  ///< as shown to users; kind is "" for the whole owner
  std::string reason;
};

/// The complete rewrite, as data.
struct Plan {
  std::vector<StateEdit> edits;
  /// Context states (context_plan.h): `--input-context` options and the recorded ones that hold.
  std::vector<ContextEdit> contexts;
  std::vector<BroadcastShapeNames> broadcasts;
  std::vector<SkippedState> skipped;
  /// Unnamed owners (and containers on the way to them) get a stable name so that metadata can refer
  /// to them.
  std::vector<std::pair<std::pair<GraphPath, int>, std::string>> node_names;
  /// Main-graph inputs whose batch dimension is unnamed get a name the state shapes refer to:
  /// (input, axis, name).
  std::vector<std::tuple<std::string, int, std::string>> input_dim_names;
  /// The metadata to record (existing pairs that are still valid, then new ones, in state order).
  std::vector<StatePair> pairs;
  /// What a runtime must do differently, one line per state input (a first feed that is not zeros, a
  /// model input that now feeds the state only when the new input is empty, a state that does not stream).
  std::vector<std::string> notes;
  bool metadata_changes = false;
  /// The metadata's "stream" object to write (the whole model's verdict; null: none).
  Json stream;

  /// True when applying the plan changes the model.
  bool ChangesModel() const;

  /// The edit of the state `key`, or nullptr.
  const StateEdit* FindEdit(const StateKey& key) const;
  /// Why the state `key` (or its whole owner) is skipped, or nullptr.
  const SkippedState* FindSkip(const StateKey& key) const;
};

/// Plan::FindEdit and Plan::FindSkip for a lookup per state (reports): one pass over the plan, not one per
/// lookup. The plan must not change while this is in use.
class PlanLookup {
 public:
  explicit PlanLookup(const Plan& plan);
  /// The same as Plan::FindEdit.
  const StateEdit* FindEdit(const StateKey& key) const;
  /// The same as Plan::FindSkip.
  const SkippedState* FindSkip(const StateKey& key) const;

  /// A key of the plan (pointing into it) and the index of its edit or skip.
  struct Entry {
    const StateKey* key;
    size_t index;
  };

 private:
  const Plan& plan_;
  // Sorted by key, equal keys in plan order: no key copied (a map of 20,000 keys cost more than the report
  // text it served).
  std::vector<Entry> edits_;
  std::vector<Entry> skips_;
};

}  // namespace rnnstate
