#pragma once
/// \file
/// The time flow: what every value of a model is along the time axis of a streamed run (time_fact.h),
/// computed forward from the chunked inputs' time axes through every node — the operator table's rules
/// (time_rules.h), the recurrent operators, `If` branches, and `Loop`/`Scan` nodes as their own verdict
/// (loops/loop_streaming.h) says. Pure analysis.
///
///   x [seq, batch, 3]  --Conv k=1-->  frames 2  --LSTM-->  Y: frames 0, Y_h: final  --Gather -1-->  final
///
/// A recurrent operator meets time in one of two ways the flow tells its callers: over time (X's
/// sequence axis holds it: the recurrence whose state streams) or per frame (X's batch axis holds it: a
/// dual-path model's RNN over frequency, restarting in every frame, with no state between calls).

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "exposure/branch_facts.h"
#include "graph/model_index.h"
#include "loops/axis_trace.h"
#include "time/time_fact.h"

namespace rnnstate {

/// What the flow needs to know of a recurrent operator's node beyond its attributes.
struct OwnerTime {
  /// Its states are fed between calls (rnnstate promotes them, or the authors expose them); false for a
  /// recurrence left to restart on every call.
  bool carried = true;
  /// Its initial states are read from the model's own state inputs (the authors expose them): steady,
  /// whatever else the tensor they are read from holds (a cache updated in place by an earlier layer).
  bool fed_initial = false;
};

/// Main-graph values that hold frames of the previous call in front of the chunk's own: a data input a
/// planned --input-context prepends them to, or the Concat a recorded context pair makes. Value -> frames.
using ContextFrames = std::map<std::string, int64_t>;

/// Main-graph nodes (by index) whose time padding a planned context replaces (time/causal_windows.h): a
/// window that then sees the frames it needs in front of the chunk, and the Pad in front of one. Each
/// passes its input's frames through, one per `stride` (node -> its stride over time; 1 for a Pad).
using StreamedNodes = std::map<int, int64_t>;

/// The owner facts of the recurrent operator at (graph, node), or nullopt for the defaults above.
using OwnerLookup = std::function<std::optional<OwnerTime>(const GraphPath&, int)>;

/// How a recurrent operator meets the time axis.
struct RecurrenceTime {
  enum class Way {
    kOverTime,  ///< X's sequence axis holds time: its state carries from call to call
    kPerFrame,  ///< X's batch axis holds time: it runs within each frame
    kOther,     ///< time reaches it otherwise (folded into its features, a final state as X): no streaming
  };
  GraphPath graph;
  int node = -1;
  Way way = Way::kOther;
};

/// The time flow of one model from `sources` (main-graph input axes that chunked runs cut).
class TimeFlow {
 public:
  /// `length`: the sources' fixed length when the export has one (-1: symbolic).
  TimeFlow(const ModelIndex& index, std::vector<InputAxis> sources, OwnerLookup owners = {}, int64_t length = -1,
           ContextFrames contexts = {}, StreamedNodes streamed = {});

  /// The fact of `name` as seen from the graph at `path` (steady for a value time does not reach).
  const TimeFact& Of(const GraphPath& path, const std::string& name) const;
  /// The fact of output `slot` of node `n` of the graph at `path`, named or not: a recurrent operator's
  /// Y_h or Y_c the model leaves out is one a rewrite adds.
  const TimeFact& OutputOf(const GraphPath& path, int n, int slot) const;
  /// The fact a new carried variable of the Loop or Scan `n` would have at its output: what a rewrite
  /// threading a state out through the container adds (steady for a container time does not reach).
  const TimeFact& ThreadedOutOf(const GraphPath& path, int n) const;
  /// The recurrent operators time reaches, in the order the flow met them.
  const std::vector<RecurrenceTime>& recurrences() const { return recurrences_; }
  const std::vector<InputAxis>& sources() const { return sources_; }
  /// The chunk length every value asks a multiple of (TimeFact::multiple): their least common multiple.
  int64_t chunk_multiple() const { return chunk_multiple_; }

 private:
  void RunGraph(const GraphPath& path);
  std::vector<TimeFact> NodeFacts(const GraphPath& path, int n, const onnx::NodeProto& node);
  std::vector<TimeFact> RecurrentFacts(const GraphPath& path, int n, const onnx::NodeProto& node,
                                       const std::vector<const TimeFact*>& in);
  std::vector<TimeFact> IfFacts(const GraphPath& path, int n, const onnx::NodeProto& node);
  std::vector<TimeFact> LoopFacts(const GraphPath& path, int n, const onnx::NodeProto& node,
                                  const std::vector<const TimeFact*>& in);
  /// The facts of the outer-scope names `node`'s subgraphs read.
  std::vector<const TimeFact*> OuterFacts(const GraphPath& path, int n) const;
  void Set(const GraphPath& path, const std::string& name, TimeFact fact);

  const ModelIndex& index_;
  std::vector<InputAxis> sources_;
  OwnerLookup owners_;
  int64_t length_ = -1;
  ContextFrames contexts_;
  StreamedNodes streamed_;
  int64_t chunk_multiple_ = 1;
  /// The facts of values that are not steady, by graph and name (names are views into the model).
  std::map<GraphPath, std::unordered_map<std::string_view, TimeFact>> facts_;
  /// The facts of node outputs without a name, by graph, node and slot (not steady ones).
  std::map<std::tuple<GraphPath, int, int>, TimeFact> unnamed_;
  /// ThreadedOutOf's facts, by graph and container node (not steady ones).
  std::map<std::pair<GraphPath, int>, TimeFact> threaded_;
  std::vector<RecurrenceTime> recurrences_;
  /// The If branches that cannot run (PyTorch's rank tests), found on the first If met.
  std::optional<BranchFacts> branch_facts_;
};

}  // namespace rnnstate
