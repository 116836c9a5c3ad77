#include "find/analysis.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "exposure/default_path.h"
#include "exposure/packed_state.h"
#include "find/loop_recurrence.h"
#include "find/owner_nodes.h"
#include "find/stateful_ops.h"
#include "rules/metadata_rules.h"
#include "states/wiring.h"

namespace rnnstate {

namespace {

/// A producer of recurrent states: appends the nodes owning states (described for reports), their states
/// and notes on what looked state-like but is not a state. A new kind of owner is one more producer in
/// kStateProducers; they run in order (loops leave the variables carrying an operator's state to it).
/// `recorded`: the pairs of the model's metadata (read once, before the producers run).
using StateProducer = void (*)(const ModelIndex&, const AnalysisOptions&, const std::vector<StatePair>& recorded,
                               Findings*);

constexpr StateProducer kStateProducers[] = {
    [](const ModelIndex& index, const AnalysisOptions& options, const std::vector<StatePair>&, Findings* found) {
      FindOpStates(index, &found->nodes, &found->states, options.owner_types_checked);
    },
    [](const ModelIndex& index, const AnalysisOptions& options, const std::vector<StatePair>& recorded,
       Findings* found) { FindLoopStates(index, options.refused_time_axes, recorded, found); },
    [](const ModelIndex& index, const AnalysisOptions&, const std::vector<StatePair>&, Findings* found) {
      FindStatefulOps(index, found);
    },
};

/// The tensor an initial state reads, used to detect sharing (states reading the very same tensor).
std::set<std::string> SharingKeys(const StateAnalysis& state) {
  std::set<std::string> keys;
  std::string scope;
  for (const auto& step : state.origin.value_graph) {
    scope += std::to_string(step.node) + ":" + step.attribute + ":" + std::to_string(step.list_index) + "/";
  }
  if (!state.origin.value.empty()) keys.insert(scope + "|v|" + state.origin.value);
  return keys;
}

void FindSharing(std::vector<StateAnalysis>& states) {
  std::vector<std::pair<StateAnalysis*, std::set<std::string>>> entries;
  for (auto& state : states) {
    // An exposed state has its own input: helper nodes it shares (a batch shape) are no sharing of state.
    if (!state.exposed) entries.emplace_back(&state, SharingKeys(state));
  }
  // The entries holding each key: comparing every entry with every other would cost states².
  std::map<std::string, std::vector<size_t>> holders;
  for (size_t i = 0; i < entries.size(); ++i) {
    for (const std::string& key : entries[i].second) holders[key].push_back(i);
  }
  for (size_t a = 0; a < entries.size(); ++a) {
    std::set<size_t> sharing;  // in entry order, as the states are listed
    for (const std::string& key : entries[a].second) {
      for (size_t b : holders[key]) {
        if (b != a) sharing.insert(b);
      }
    }
    for (size_t b : sharing) entries[a].first->shared_with.push_back(entries[b].first->state.Label());
  }
}

/// The recorded pairs by the state they name (graph, owner, kind, variable), looked up once per state.
class RecordedPairs {
 public:
  explicit RecordedPairs(const std::vector<StatePair>& pairs) {
    for (size_t i = 0; i < pairs.size(); ++i) {
      const StatePair& pair = pairs[i];
      first_.emplace(Key{pair.graph, pair.node, pair.kind, pair.variable}, static_cast<int>(i));
    }
  }
  /// The index of the first pair naming `state`, or -1.
  int Find(const RecurrentState& state) const {
    auto found = first_.find(Key{state.owner.graph_name, state.owner.name, state.kind_name(), state.variable});
    return found == first_.end() ? -1 : found->second;
  }

 private:
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, int> first_;
};

/// True when a recorded pair still holds: its input is a main-graph input that reaches the state's
/// initial slot and its output a main-graph output computed from its final slot. Metadata edited or
/// left stale by another tool is not trusted: such a state is rewritten again.
bool RecordHolds(const ModelIndex& index, const RecurrentState& state, const StatePair& pair) {
  const GraphIndex& main = index.graph(GraphPath{});
  if (!main.inputs.count(pair.input) || !main.outputs.count(pair.output)) return false;
  const PairWiring wiring = TracePairWiring(index, state, pair.input, pair.output);
  return wiring.input_reaches_slot && wiring.output_from_final;
}

/// A packed member's pair on the authors' default path (see FindDefaultPaths): its If branch reads no
/// input, its final value leaves through the pair's output, and a state of the If's other branch has a
/// pair of the same region that holds.
bool PackedDefaultPath(const ModelIndex& index, const Analysis& analysis, const StateAnalysis& state) {
  const StatePair& pair = analysis.recorded_pairs[state.recorded];
  if (pair.region.empty() || !TracePairWiring(index, state.state, pair.input, pair.output).output_from_final) {
    return false;
  }
  for (const StateAnalysis& other : analysis.states) {
    if (other.recorded < 0 || other.recorded == state.recorded) continue;
    const StatePair& o = analysis.recorded_pairs[other.recorded];
    if (o.kind == pair.kind && o.input == pair.input && o.output == pair.output && o.region == pair.region &&
        o.view == pair.view && Exclusive(state.state, other.state) &&
        PackedRecordHolds(index, *analysis.packed, other.recorded, other.state, o)) {
      return true;
    }
  }
  return false;
}

bool IsExposed(const ModelIndex& index, const Analysis& analysis, const StateAnalysis& state) {
  if (state.recorded >= 0) {
    const StatePair& pair = analysis.recorded_pairs[state.recorded];
    if (analysis.packed && analysis.packed->MemberOf(state.recorded).first >= 0) {
      return PackedRecordHolds(index, *analysis.packed, state.recorded, state.state, pair) ||
             PackedDefaultPath(index, analysis, state);
    }
    const bool region = pair.rows || !pair.region.empty();
    return region ? RecordsExposure(pair, state.exposure.get()) : RecordHolds(index, state.state, pair);
  }
  if (state.exposure) return true;
  if (!state.site.graph.empty()) return false;
  bool direct_input = (state.origin.kind == StateOrigin::Kind::kGraphInput ||
                       state.origin.kind == StateOrigin::Kind::kDefaultedInput) &&
                      state.origin.other_consumers == 0;
  return direct_input && state.final_state.graph_output;
}

/// When a state lands whole in several outputs, the one to feed back is the output every state read from
/// the same input lands in (the authors' own state output, not another that happens to hold a copy).
void ChooseOutputs(std::vector<StateAnalysis>& states) {
  std::map<std::string, std::map<std::string, int>> votes;  // input -> output -> states landing there
  for (const auto& state : states) {
    for (const Exposure& candidate : state.finding.candidates) ++votes[candidate.input][candidate.output];
  }
  for (auto& state : states) {
    if (state.finding.candidates.size() < 2) continue;
    const auto& counts = votes[state.finding.candidates.front().input];
    const Exposure* best = &state.finding.candidates.front();
    for (const Exposure& candidate : state.finding.candidates) {
      if (counts.at(candidate.output) > counts.at(best->output)) best = &candidate;
    }
    state.exposure = *best;
  }
}

/// Drops exposures that clash with another (see ClaimsConflict), except between states that never run
/// in the same call (the branches of one If).
void DropConflictingExposures(std::vector<StateAnalysis>& states) {
  std::vector<StateAnalysis*> exposed;
  for (auto& state : states) {
    if (state.exposure) exposed.push_back(&state);
  }
  // Only exposures that share a tensor can clash (ClaimsConflict), and only states reading an exposure's
  // input can start from its final value: looked up by tensor, not by comparing every pair of states.
  std::unordered_map<std::string_view, std::vector<size_t>> by_tensor;  // input or output -> exposed
  for (size_t i = 0; i < exposed.size(); ++i) {
    const Exposure& exposure = *exposed[i]->exposure;
    by_tensor[exposure.input].push_back(i);
    if (exposure.output != exposure.input) by_tensor[exposure.output].push_back(i);
  }
  std::unordered_map<std::string_view, std::vector<const StateAnalysis*>> readers;  // unexposed, by tensor read
  for (const auto& other : states) {
    if (!other.exposure && other.finding.read_place) readers[other.finding.read_place->tensor].push_back(&other);
  }
  std::vector<bool> clash(exposed.size(), false);
  for (size_t a = 0; a < exposed.size(); ++a) {
    const Exposure& exposure = *exposed[a]->exposure;
    std::set<size_t> partners;
    for (const std::string* tensor : {&exposure.input, &exposure.output}) {
      for (size_t b : by_tensor[*tensor]) {
        if (b > a) partners.insert(b);
      }
    }
    for (size_t b : partners) {
      if (Exclusive(exposed[a]->state, exposed[b]->state)) continue;
      if (ClaimsConflict(ClaimOf(exposure), ClaimOf(*exposed[b]->exposure)) != ClaimConflict::kNone) {
        clash[a] = clash[b] = true;
      }
    }
    // A state that is not exposed but reads the same elements would start from this state's final value.
    for (const StateAnalysis* other : readers[exposure.input]) {
      if (Exclusive(other->state, exposed[a]->state)) continue;
      const std::vector<RegionAxis>& region = other->finding.read_region;
      if (region.empty() ||
          RegionsOverlap(region, other->finding.read_view, exposure.region, exposure.view, exposure.shape)) {
        clash[a] = true;
      }
    }
  }
  for (size_t i = 0; i < exposed.size(); ++i) {
    if (!clash[i]) continue;
    exposed[i]->finding.why_not = ExposureText(*exposed[i]->exposure) + ", but another state claims the same elements";
    exposed[i]->exposure.reset();
  }
}

/// The axis of `tensor` that holds the state's batch, or -1 (also when it holds it strided, beside other
/// state axes: a view's part of an axis is no axis of the tensor).
int TensorBatchAxis(const Exposure& exposure, const RecurrentState& state) {
  if (state.batch_axis < 0) return -1;
  const size_t batch = static_cast<size_t>(state.batch_axis);
  for (size_t j = 0; j < exposure.map.rank(); ++j) {
    const std::vector<size_t> varying = exposure.map.Varying(j);
    const bool alone = varying.empty() || (varying.size() == 1 && varying[0] == batch);
    if (exposure.map.coef(j, batch) == 1 && alone) return static_cast<int>(j);
  }
  return -1;
}

/// A state of an If branch that starts from zeros and runs only when the fed state is empty, writing
/// its final value where an exposed state of the other branch reads and writes its own: the authors'
/// "empty means start from zeros". It must stand in for a state of its own kind (h for h, the same
/// carried variable) of an owner of its own operator, and all states of its owner for those of one
/// owner: a default branch that swaps h and c, or mixes two layers, does not stream. Its pair is that
/// state's.
void FindDefaultPaths(const ModelIndex& index, std::vector<StateAnalysis>& states) {
  std::map<std::string, size_t> state_inputs;  // the authors' state inputs and their batch axes
  for (const auto& t : states) {
    const int axis = t.exposure ? TensorBatchAxis(*t.exposure, t.state) : -1;
    if (axis >= 0) state_inputs[t.exposure->input] = static_cast<size_t>(axis);
  }
  // The states a default path can stand in for, by the output their exposure writes: a state that gets
  // a default path below is no candidate (it was not exposed before), so the candidates do not change.
  std::unordered_map<std::string_view, std::vector<const StateAnalysis*>> candidates;
  for (const auto& t : states) {
    if (t.exposure && t.exposure->default_path_of.empty()) candidates[t.exposure->output].push_back(&t);
  }
  std::map<std::pair<GraphPath, int>, std::set<std::pair<GraphPath, int>>> stands_for;  // owner -> owners
  for (auto& z : states) {
    if (z.exposure || !z.origin.zero || !z.state.streamable) continue;
    for (const ElementPlace& place : z.finding.writes) {
      auto landing = candidates.find(place.tensor);
      if (landing == candidates.end()) continue;
      for (const StateAnalysis* candidate : landing->second) {
        const StateAnalysis& t = *candidate;
        if (!t.exposure->map.SamePlaces(place.map) || !Exclusive(z.state, t.state)) continue;
        const GraphPath &x = z.state.owner.graph, &y = t.state.owner.graph;
        size_t i = 0;
        while (x[i] == y[i]) ++i;  // Exclusive: they part at an If's branches
        if (!RunsOnlyWhenEmpty(index, GraphPath(x.begin(), x.begin() + i), x[i].node, x[i].attribute, state_inputs)) {
          continue;
        }
        if (z.state.kind != t.state.kind || z.state.variable != t.state.variable ||
            z.state.owner.op != t.state.owner.op) {
          z.finding.why_not =
              "a state of the branch that runs when the fed state is empty, but its final value lands "
              "where " +
              t.state.Label() + " reads, a state of another kind: not its default path";
          continue;
        }
        z.exposure = *t.exposure;
        z.exposure->default_path_of = t.state.Label();
        z.finding.why_not.clear();
        stands_for[{z.state.owner.graph, z.state.owner.node}].insert({t.state.owner.graph, t.state.owner.node});
        break;
      }
      if (z.exposure) break;
    }
  }
  for (auto& z : states) {
    if (!z.exposure || z.exposure->default_path_of.empty()) continue;
    if (stands_for[{z.state.owner.graph, z.state.owner.node}].size() < 2) continue;
    z.finding.why_not =
        "a state of the branch that runs when the fed state is empty, but its owner's states land "
        "where the states of several other owners read: not their default path";
    z.exposure.reset();
  }
}

/// States that restart on every call as their authors wrote them (see StateAnalysis::within_call): the
/// model's authors expose states of their own, and this one cannot stream and starts from zeros. The
/// authors' states are known by their exposure, or, once rnnstate packed or re-laid them, by the rows or
/// region of their authors' tensors that their recorded pairs keep.
void MarkWithinCall(const std::vector<StatePair>& recorded_pairs, std::vector<StateAnalysis>& states) {
  std::string carrier;  // an input the authors carry state in
  // Whether rnnstate can prove that the authors' own state streams chunk by chunk does not matter here: they
  // carry it from call to call (an inter-frame Loop read through an intra-frame one's steps is such a state).
  for (const auto& t : states) {
    if (t.exposure && t.exposure->default_path_of.empty()) {
      carrier = t.exposure->input;
      break;
    }
    if (t.recorded >= 0) {
      const StatePair& pair = recorded_pairs[t.recorded];
      if (pair.rows || !pair.region.empty()) {
        carrier = pair.input;
        break;
      }
    }
  }
  if (carrier.empty()) return;
  for (auto& t : states) {
    if (t.exposed || t.state.streamable || !t.origin.zero) continue;
    t.within_call = "it cannot stream (" + t.state.not_streamable_reason +
                    ") and starts from zeros on every call, while the authors carry their streaming state in "
                    "input '" +
                    carrier + "': it runs within one call, as they wrote it";
  }
}

StateAnalysis Trace(const ModelIndex& index, const RecordedPairs& records, const BranchFacts& facts,
                    RecurrentState state, int node, bool origin_sources) {
  StateAnalysis out;
  out.node = node;
  out.site = LocateSite(index, state);
  out.thread_problem = FindThreadLevels(index, out.site, &out.levels);
  out.origin = TraceInitialState(index, out.site, origin_sources);
  out.final_state = DescribeFinalState(index, out.site);
  out.finding = FindExposure(index, state, out.site, &facts);
  if (!out.finding.candidates.empty()) out.exposure = out.finding.candidates.front();
  out.recorded = records.Find(state);
  out.state = std::move(state);
  return out;
}

}  // namespace

void Analysis::MarkUnexposed(const std::string& problem) {
  for (auto& state : states) {
    if (state.exposed) continue;
    state.state.problem = problem;
    nodes[state.node].problem = problem;
  }
}

std::vector<const StateAnalysis*> Analysis::StatesOf(size_t node) const {
  std::vector<const StateAnalysis*> out;
  for (const auto& state : states) {
    if (state.node == static_cast<int>(node)) out.push_back(&state);
  }
  return out;
}

std::vector<std::vector<const StateAnalysis*>> Analysis::StatesByNode() const {
  std::vector<std::vector<const StateAnalysis*>> by_node(nodes.size());
  for (const auto& state : states) {
    if (state.node >= 0 && static_cast<size_t>(state.node) < nodes.size()) by_node[state.node].push_back(&state);
  }
  return by_node;
}

Analysis Analyze(const ModelIndex& index, const AnalysisOptions& options) {
  Analysis analysis;
  analysis.onnx_opset = index.onnx_opset();
  analysis.ir_version = index.model().ir_version();
  analysis.inference_error = index.inference_error();
  MetadataReading metadata = ReadMetadata(index.model());
  analysis.metadata_error = metadata.Summary();
  analysis.metadata_problems = std::move(metadata.problems);
  // A document that cannot be read has no pairs to trace; pairs that contradict the model are still
  // traced (check names what each of them gets wrong), but a rewrite writes them anew.
  if (metadata.document_valid) {
    analysis.recorded_pairs = std::move(metadata.pairs);
    analysis.packed = std::move(metadata.packed);
    analysis.recorded_stream = std::move(metadata.stream);
  }
  analysis.contexts = FindContextStates(index, analysis.recorded_pairs);
  Findings found;
  for (StateProducer produce : kStateProducers) produce(index, options, analysis.recorded_pairs, &found);
  analysis.nodes = std::move(found.nodes);
  analysis.notes = std::move(found.notes);
  const RecordedPairs records(analysis.recorded_pairs);
  const BranchFacts facts = found.states.empty() ? BranchFacts() : BranchFacts::Find(index);
  analysis.states.reserve(found.states.size());
  OwnerNodes owner_nodes(analysis.nodes);
  for (auto& state : found.states) {
    const int node = owner_nodes.Of(state.owner);
    analysis.states.push_back(Trace(index, records, facts, std::move(state), node, options.origin_sources));
  }
  ChooseOutputs(analysis.states);
  DropConflictingExposures(analysis.states);
  FindDefaultPaths(index, analysis.states);
  for (auto& state : analysis.states) state.exposed = IsExposed(index, analysis, state);
  MarkWithinCall(analysis.recorded_pairs, analysis.states);
  FindSharing(analysis.states);  // after `exposed` is known
  return analysis;
}

}  // namespace rnnstate
