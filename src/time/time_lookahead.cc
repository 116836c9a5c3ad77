#include "time/time_lookahead.h"

#include <algorithm>
#include <string_view>

#include "graph/graph_path.h"
#include "graph/proto_access.h"
#include "time/time_window.h"

namespace rnnstate {

namespace {

std::string FramesLate(int64_t frames) {
  if (frames == 0) return "frames on time";
  return "frames " + std::to_string(frames) + " late";
}

/// Follows the delays through the main graph, node by node (in the graph's topological order).
class LookaheadWalk {
 public:
  LookaheadWalk(const ModelIndex& index, const TimeFlow& flow, const std::map<int, WindowDelay>& delays,
                const std::map<std::string, WindowDelay>& delayed)
      : index_(index), flow_(flow), delays_(delays), delayed_(delayed) {}

  /// Walks every node; the first place where frames of different delays meet goes to `problem`.
  void Walk(Lookahead& result) {
    const onnx::GraphProto& main = index_.model().graph();
    for (int n = 0; n < main.node_size(); ++n) {
      const onnx::NodeProto& node = main.node(n);
      // A window carried with its lookahead (now, or by the rewrite that made its context's Concat).
      WindowDelay own;
      if (const auto window = delays_.find(n); window != delays_.end()) own = window->second;
      if (const auto concat = node.output_size() == 1 ? delayed_.find(node.output(0)) : delayed_.end();
          concat != delayed_.end()) {
        own = concat->second;
      }
      int64_t in = 0, flush = 0;
      std::string first;  // the first input carrying frames, for the message
      for (const std::string& name : node.input()) {
        if (name.empty() || !flow_.Of(GraphPath{}, name).frames()) continue;
        const int64_t late = LateOf(name);
        // (A context's Concat joins the previous call's frames in front of its value: no path of its own.)
        if (!first.empty() && late != in && result.problem.empty() && own.frames == 0) {
          result.problem = DescribeNode(index_.model(), GraphPath{}, n) + " joins " + FramesLate(std::max(late, in)) +
                           " with " + FramesLate(std::min(late, in)) + ": a path without the same lookahead";
        }
        if (first.empty()) first = name;
        if (late >= in) flush = std::max(flush, FlushOf(name));
        in = std::max(in, late);
      }
      if (in > 0 && result.problem.empty() && Restrides(n, first)) {
        // The delay is counted in frames at one rate: a stride over time would change it on the way.
        result.problem = DescribeNode(index_.model(), GraphPath{}, n) + " takes " + FramesLate(in) +
                         " at another rate: a lookahead before a window with a stride over time is not carried";
      }
      if (own.frames > 0) {
        result.windows.push_back(DescribeNode(index_.model(), GraphPath{}, n) + " " + std::to_string(own.frames));
        in += own.frames;
        flush += own.flush;
      }
      for (const std::string& name : node.output()) {
        if (name.empty()) continue;
        Record(late_, name, in);
        Record(flush_, name, flush);
      }
    }
  }

  int64_t LateOf(const std::string& name) const {
    const auto found = late_.find(name);
    return found == late_.end() ? 0 : found->second;
  }
  int64_t FlushOf(const std::string& name) const {
    const auto found = flush_.find(name);
    return found == flush_.end() ? 0 : found->second;
  }

 private:
  /// True when node `n` is a window (Conv, ConvTranspose, pooling) with a stride over the time axis of its
  /// input `input`.
  bool Restrides(int n, const std::string& input) const {
    const onnx::NodeProto& node = index_.model().graph().node(n);
    if (!IsOnnxOp(node, {"Conv", "ConvTranspose", "AveragePool", "MaxPool", "LpPool"}) || input.empty() ||
        node.input(0) != input) {
      return false;
    }
    const std::optional<TimeWindow> window =
        ReadTimeWindow(index_, GraphPath{}, node, flow_.Of(GraphPath{}, input).axis, -1);
    return window && window->stride > 1;
  }

  /// Sets `name`'s entry of `frames` to `value`. Most values are on time: only the others are held
  /// (LateOf and FlushOf answer 0 for a value without an entry).
  static void Record(std::map<std::string_view, int64_t>& frames, std::string_view name, int64_t value) {
    if (value == 0) {
      frames.erase(name);
    } else {
      frames[name] = value;
    }
  }

  const ModelIndex& index_;
  const TimeFlow& flow_;
  const std::map<int, WindowDelay>& delays_;
  const std::map<std::string, WindowDelay>& delayed_;
  // Keyed by views of the model's names: the model outlives the walk.
  std::map<std::string_view, int64_t> late_;   ///< the frames each value lags by (when it does)
  std::map<std::string_view, int64_t> flush_;  ///< the data frames a flush feeds to bring them (when any)
};

/// True when main-graph value `name` is a graph input, or computed from one by views, zero Pads and
/// functions that keep zero (Relu, Tanh, ...) alone: what is zeros there is zeros here.
bool ZerosReachAsZeros(const ModelIndex& index, std::string name) {
  const GraphIndex& graph = index.graph(GraphPath{});
  for (int depth = 0; depth < 64; ++depth) {
    const Producer producer = graph.ProducerOf(name);
    if (producer.kind == Producer::Kind::kGraphInput) return true;
    if (producer.kind != Producer::Kind::kNode) return false;
    const onnx::NodeProto& node = index.model().graph().node(producer.index);
    const bool zero_pad = IsOnnxOp(node, {"Pad"}) && StringAttribute(node, "mode", "constant") == "constant" &&
                          (node.input_size() < 3 || node.input(2).empty());
    const bool keeps = IsOnnxOp(node, {"Transpose", "Reshape", "Squeeze", "Unsqueeze", "Identity", "Flatten", "Relu",
                                       "LeakyRelu", "Tanh", "Abs", "Neg", "Erf"});
    if (!zero_pad && !keeps) {
      return false;
    }
    name = node.input(0);
  }
  return false;
}

}  // namespace

Lookahead MeasureLookahead(const ModelIndex& index, const TimeFlow& flow, const std::map<int, WindowDelay>& delays,
                           const std::map<std::string, WindowDelay>& delayed,
                           const std::set<std::string>& state_outputs) {
  Lookahead result;
  LookaheadWalk walk(index, flow, delays, delayed);
  walk.Walk(result);
  // The data outputs that change with time must lag alike: a caller aligns them all by one delay.
  std::string first;
  for (const auto& output : index.model().graph().output()) {
    const std::string& name = output.name();
    if (state_outputs.count(name) || flow.Of(GraphPath{}, name).steady()) continue;
    const int64_t late = walk.LateOf(name);
    if (!first.empty() && late != result.frames && result.problem.empty()) {
      result.problem = "output '" + name + "' comes " + std::to_string(late) + " frames late and output '" + first +
                       "' " + std::to_string(result.frames) + ": the outputs do not lag alike";
    }
    if (first.empty()) first = name;
    if (late >= result.frames) result.flush = std::max(result.flush, walk.FlushOf(name));
    result.frames = std::max(result.frames, late);
  }
  if (result.windows.size() == 1) {
    for (const auto& [node, delay] : delays) result.flush_exact = ZerosReachAsZeros(index, delay.input);
    for (const auto& [value, delay] : delayed) result.flush_exact = ZerosReachAsZeros(index, delay.input);
  }
  // A value computed from the last frame (not frames) would be the last call's minus the lookahead.
  for (const auto& output : index.model().graph().output()) {
    const std::string& name = output.name();
    if (state_outputs.count(name) || !flow.Of(GraphPath{}, name).exact() || walk.LateOf(name) == 0) continue;
    if (flow.Of(GraphPath{}, name).kind == TimeFact::Kind::kFinal && result.problem.empty()) {
      result.problem = "output '" + name + "' is computed from the last frame, which comes " +
                       std::to_string(walk.LateOf(name)) + " frames late: the last call's value is not the whole run's";
    }
  }
  return result;
}

}  // namespace rnnstate
