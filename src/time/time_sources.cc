#include "time/time_sources.h"

#include <algorithm>
#include <map>
#include <set>

#include "graph/dim.h"
#include "time/causal_windows.h"
#include "time/time_flow.h"

namespace rnnstate {

namespace {

/// At most this many fixed axes are followed to find the one the recurrences run along.
constexpr size_t kMaxFollowed = 8;

/// The dimension names that are a batch: every recurrent node's and every state's.
std::set<std::string> BatchNames(const Analysis& analysis) {
  std::set<std::string> names;
  for (const RecurrentNode& node : analysis.nodes) {
    if (!node.batch.param.empty()) names.insert(node.batch.param);
  }
  for (const StateAnalysis& t : analysis.states) {
    const RecurrentState& s = t.state;
    if (s.batch_axis >= 0 && static_cast<size_t>(s.batch_axis) < s.shape.size() &&
        !s.shape[s.batch_axis].param.empty()) {
      names.insert(s.shape[s.batch_axis].param);
    }
  }
  return names;
}

/// The dims of main-graph input `name`, as declared.
const onnx::TensorShapeProto* DeclaredShape(const ModelIndex& index, const std::string& name) {
  for (const auto& input : index.model().graph().input()) {
    if (input.name() == name && input.type().has_tensor_type() && input.type().tensor_type().has_shape()) {
      return &input.type().tensor_type().shape();
    }
  }
  return nullptr;
}

/// Whether `axes` are valid for the model: each a main-graph input with that axis.
bool Valid(const ModelIndex& index, const std::vector<InputAxis>& axes) {
  for (const InputAxis& a : axes) {
    const onnx::TensorShapeProto* shape = DeclaredShape(index, a.input);
    if (shape == nullptr || a.axis < 0 || a.axis >= shape->dim_size()) return false;
  }
  return !axes.empty();
}

int64_t FixedLength(const ModelIndex& index, const std::vector<InputAxis>& axes) {
  for (const InputAxis& a : axes) {
    const onnx::TensorShapeProto* shape = DeclaredShape(index, a.input);
    // A given axis need not be declared (--time-axis on a scalar input): it has no fixed length.
    if (shape != nullptr && a.axis >= 0 && a.axis < shape->dim_size() &&
        shape->dim(static_cast<int>(a.axis)).has_dim_value()) {
      return shape->dim(static_cast<int>(a.axis)).dim_value();
    }
  }
  return -1;
}

/// How well the model's recurrences run along `axis` when it is the time axis: one point for each
/// forward recurrent operator over it, minus many for each that would see it where no time can be
/// (in its features, a final state as its sequence). Bidirectional ones over frequency say nothing.
int Score(const ModelIndex& index, const Analysis& analysis, const InputAxis& axis) {
  const TimeFlow flow(index, {axis}, {}, FixedLength(index, {axis}));
  std::map<std::pair<GraphPath, int>, const RecurrentNode*> nodes;
  for (const RecurrentNode& node : analysis.nodes) nodes[{node.graph, node.node}] = &node;
  int score = 0;
  for (const RecurrenceTime& r : flow.recurrences()) {
    auto found = nodes.find({r.graph, r.node});
    const bool forward = found != nodes.end() && found->second->direction == "forward";
    if (r.way == RecurrenceTime::Way::kOverTime && forward) score += 1;
    if (r.way == RecurrenceTime::Way::kOther) score -= 100;
  }
  return score;
}

/// Every data-input axis whose dimension is `name`.
std::vector<InputAxis> AxesNamed(const ModelIndex& index, const std::vector<std::string>& inputs,
                                 const std::string& name) {
  std::vector<InputAxis> axes;
  for (const std::string& input : inputs) {
    const onnx::TensorShapeProto* shape = DeclaredShape(index, input);
    for (int a = 0; shape != nullptr && a < shape->dim_size(); ++a) {
      if (shape->dim(a).dim_param() == name) {
        axes.push_back(InputAxis{input, a});
        break;  // one time axis per input
      }
    }
  }
  return axes;
}

/// A model with no recurrent node streams through its causal windows (a TCN, a keyword spotter): its time
/// axis is the one named dimension of the data along which a window over time slides causally (the
/// batch never qualifies: windows slide along spatial axes). Several such dimensions: a note, no choice.
TimeAxes WindowedAxes(const ModelIndex& index, const std::vector<std::string>& inputs) {
  std::set<std::string> names;
  for (const std::string& input : inputs) {
    const onnx::TensorShapeProto* shape = DeclaredShape(index, input);
    for (int a = 0; shape != nullptr && a < shape->dim_size(); ++a) {
      const std::string& name = shape->dim(a).dim_param();
      if (!name.empty() && !IsInventedDimName(name)) names.insert(name);
    }
  }
  TimeAxes out;
  if (names.size() > kMaxFollowed) return out;
  std::vector<std::string> winners;
  for (const std::string& name : names) {
    const std::vector<InputAxis> axes = AxesNamed(index, inputs, name);
    if (!FindCausalWindows(index, TimeFlow(index, axes)).empty()) winners.push_back(name);
  }
  if (winners.size() == 1) {
    out.axes = AxesNamed(index, inputs, winners.front());
    out.source = TimeAxes::Source::kWindowed;
  } else if (winners.size() > 1) {
    out.note = "causal windows slide along several dimensions of the data (" + winners[0] + ", " + winners[1] +
               "): pass --time-axis INPUT:AXIS";
  }
  return out;
}

}  // namespace

std::vector<std::string> DataInputs(const ModelIndex& index, const Analysis& analysis) {
  std::set<std::string> states;
  // Metadata that breaks a rule is not relied on (a rewrite writes it anew): it may name a data input.
  if (analysis.metadata_error.empty()) {
    for (const StatePair& pair : analysis.recorded_pairs) states.insert(pair.input);
    if (analysis.packed) {
      for (const PackedValue& value : analysis.packed->values) states.insert(value.input);
    }
  }
  for (const StateAnalysis& t : analysis.states) {
    if (t.exposure) states.insert(t.exposure->input);
    if (t.origin.kind == StateOrigin::Kind::kGraphInput && t.origin.value_graph.empty()) states.insert(t.origin.value);
  }
  const GraphIndex& main = index.graph(GraphPath{});
  std::vector<std::string> inputs;
  for (const auto& input : index.model().graph().input()) {
    if (main.initializers.count(input.name()) || states.count(input.name())) continue;
    inputs.push_back(input.name());
  }
  return inputs;
}

TimeAxes ChooseTimeAxes(const ModelIndex& index, const Analysis& analysis, const std::vector<InputAxis>& given,
                        const std::optional<std::vector<InputAxis>>& recorded) {
  TimeAxes out;
  if (given.empty() && recorded && recorded->empty()) {
    // What the rewrite found stands; only its advice ("several dimensions could be ...") is given again.
    out.note = ChooseTimeAxes(index, analysis, given, std::nullopt).note;
    out.source = TimeAxes::Source::kRecorded;
    return out;
  }
  if (!given.empty() || (recorded && Valid(index, *recorded))) {
    out.axes = given.empty() ? *recorded : given;
    out.source = given.empty() ? TimeAxes::Source::kRecorded : TimeAxes::Source::kGiven;
    out.fixed_length = FixedLength(index, out.axes);
    return out;
  }
  const std::vector<std::string> inputs = DataInputs(index, analysis);
  if (analysis.nodes.empty()) return WindowedAxes(index, inputs);
  const std::set<std::string> batch = BatchNames(analysis);
  std::set<std::string> names;   // symbolic dims of the data besides the batch
  std::vector<InputAxis> fixed;  // fixed axes longer than one frame
  for (const std::string& input : inputs) {
    const onnx::TensorShapeProto* shape = DeclaredShape(index, input);
    for (int a = 0; shape != nullptr && a < shape->dim_size(); ++a) {
      const auto& d = shape->dim(a);
      if (d.has_dim_param() && !d.dim_param().empty() && !IsInventedDimName(d.dim_param()) &&
          !batch.count(d.dim_param())) {
        names.insert(d.dim_param());
      } else if (d.has_dim_value() && d.dim_value() > 1) {
        fixed.push_back(InputAxis{input, a});
      }
    }
  }
  // The symbolic dimensions the recurrences run along, best first.
  std::vector<std::pair<int, std::string>> named;
  for (const std::string& name : names) {
    const std::vector<InputAxis> axes = AxesNamed(index, inputs, name);
    named.emplace_back(names.size() == 1 ? 1 : Score(index, analysis, axes.front()), name);
  }
  std::sort(named.rbegin(), named.rend());
  if (!named.empty() && named.front().first > 0 && (named.size() == 1 || named[1].first < named[0].first)) {
    out.axes = AxesNamed(index, inputs, named.front().second);
    out.source = names.size() == 1 ? TimeAxes::Source::kNamed : TimeAxes::Source::kFollowed;
    return out;
  }
  if (named.size() > 1) {
    std::string list;
    for (const auto& [score, name] : named) list += (list.empty() ? "" : ", ") + name;
    out.note = "several dimensions of the data could be the time axis (" + list + "): pass --time-axis INPUT:AXIS";
    return out;
  }
  // A fixed length: followed only where the model's authors carry no state of their own (a model called
  // one frame at a time keeps its frequency or sample axes fixed, and those are no time axis).
  const bool authors_state =
      std::any_of(analysis.states.begin(), analysis.states.end(), [](const StateAnalysis& t) { return t.exposed; });
  if (authors_state || fixed.empty() || fixed.size() > kMaxFollowed) return out;
  int best = 0;
  std::vector<InputAxis> winners;
  for (const InputAxis& axis : fixed) {
    const int score = Score(index, analysis, axis);
    if (score > best) winners.clear();
    if (score >= best && score > 0) winners.push_back(axis);
    best = std::max(best, score);
  }
  if (winners.size() == 1) {
    out.axes = winners;
    out.source = TimeAxes::Source::kFollowed;
    out.fixed_length = FixedLength(index, out.axes);
  } else if (winners.size() > 1) {
    out.note = "the recurrences run along several fixed-length axes (" + winners[0].input + ":" +
               std::to_string(winners[0].axis) + ", " + winners[1].input + ":" + std::to_string(winners[1].axis) +
               "): pass --time-axis INPUT:AXIS";
  }
  return out;
}

}  // namespace rnnstate
