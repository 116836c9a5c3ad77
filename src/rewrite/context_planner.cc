#include "rewrite/context_planner.h"

#include <algorithm>
#include <functional>
#include <set>

#include "graph/node_builder.h"
#include "graph/proto_access.h"
#include "loops/axis_trace.h"
#include "rewrite/context_fill.h"
#include "rnnstate/error.h"
#include "time/pad_fill.h"
#include "time/stream_verdict.h"

namespace rnnstate {

namespace {

[[noreturn]] void Refuse(const InputContextOption& option, const std::string& why) {
  throw Error(ExitCode::kUsage, "--input-context " + option.Text() + ": " + why);
}

/// The recorded context of `value` that holds, or nullptr.
const StatePair* RecordedContextOf(const Analysis& analysis, const std::string& value) {
  for (const ContextFinding& finding : analysis.contexts) {
    const StatePair& pair = analysis.recorded_pairs[finding.pair];
    if (finding.holds() && pair.context->value == value) return &pair;
  }
  return nullptr;
}

/// The batch axis of a context of `rank` along `axis`: the first other axis (batch-first [B, T, ...] and
/// time-major [T, B, ...] layouts alike); -1 for a rank-1 value, which has no batch.
int64_t ContextBatchAxis(int64_t rank, int64_t axis) {
  if (rank < 2) return -1;
  return axis == 0 ? 1 : 0;
}

/// Plans one context state (a new one, or the recorded one kept).
class ContextPlanner {
 public:
  ContextPlanner(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options, NameAllocator& names,
                 Plan& plan)
      : index_(index),
        analysis_(analysis),
        options_(options),
        names_(names),
        dim_names_(index.used_dim_params()),
        plan_(plan),
        required_(options.mode == StateInputMode::kRequired) {
    for (const auto& [input, axis, name] : plan.input_dim_names) dim_names_.Reserve(name);
  }

  /// Keeps a recorded context whose wiring holds (also beside metadata that breaks a rule elsewhere: the
  /// graph carries it, and nothing else would record it again); notes one that does not.
  void KeepRecorded(const ContextFinding& finding) {
    StatePair pair = analysis_.recorded_pairs[finding.pair];
    if (!finding.holds()) {
      plan_.notes.push_back("context pair '" + pair.input + "' -> '" + pair.output +
                            "' is not recorded again: " + finding.problem);
      return;
    }
    ContextEdit edit = EditOf(pair);
    edit.change = KeepContext{};
    if (required_ && index_.graph(GraphPath{}).initializers.count(pair.input)) {
      edit.change = DropContextDefault{};
      pair.optional = false;
    }
    plan_.contexts.push_back(std::move(edit));
    plan_.pairs.push_back(std::move(pair));
  }

  /// Plans the context `option` asks for, unless it is recorded already.
  void PlanOption(const InputContextOption& option) {
    const onnx::TypeProto_Tensor& tensor = DataInput(option);
    if (const StatePair* recorded = RecordedContextOf(analysis_, option.input)) {
      if (recorded->context->axis == option.axis && recorded->context->frames == option.frames) return;
      Refuse(option, "'" + option.input + "' already carries a context of " +
                         std::to_string(recorded->context->frames) + " frames along axis " +
                         std::to_string(recorded->context->axis) + " (pair '" + recorded->input +
                         "'): rewrite the model it came from");
    }
    ContextEdit edit;
    edit.value = option.input;
    edit.axis = option.axis;
    edit.frames = option.frames;
    const int64_t batch_axis = ContextBatchAxis(tensor.shape().dim_size(), option.axis);
    edit.shape = ContextShape(option.input, option.axis, option.frames, tensor.shape(), batch_axis, true);
    AddNew(std::move(edit), tensor.elem_type(), NodeStem(option.input), "Concat", Readers(option), batch_axis,
           [&](ExitCode code, const std::string& why) {
             if (code == ExitCode::kUsage) Refuse(option, why);
             throw Error(code, "--input-context " + option.Text() + ": " + why);
           });
  }

  /// Plans the context of a causal window over time (time/causal_windows.h), named after the window
  /// (`new_name` when it has none), unless the window's value has no known type (then it stays as it is:
  /// a note says so).
  void PlanWindow(const CausalWindow& window, const std::string& new_name) {
    const onnx::NodeProto& node = index_.model().graph().node(window.window);
    const std::string name = node.name().empty() ? new_name : node.name();
    const std::string label = node.op_type() + (name.empty() ? "" : " '" + name + "'");
    const onnx::TypeProto* type = index_.TypeOf(GraphPath{}, window.value);
    const onnx::NodeProto& reader = index_.model().graph().node(window.Reader());
    // Its sizes as onnx infers them, completed where a computed Pad lost them (time/causal_windows.h).
    const std::optional<SymShape> shape = CompletedShape(index_, window.value);
    const int32_t elem_type = type != nullptr && type->has_tensor_type() ? type->tensor_type().elem_type() : 0;
    const int rank = shape ? static_cast<int>(shape->size()) : -1;
    // A cut or a lookahead: the padding after time goes too.
    std::optional<std::vector<int64_t>> pads =
        PadsWithoutTimeBefore(index_, reader, window.axis, rank, /*and_after=*/window.cut >= 0 || window.lookahead > 0);
    std::optional<std::vector<int64_t>> ends;
    if (window.cut >= 0) ends = SliceEndsToTheEnd(index_, index_.model().graph().node(window.cut), window.axis, rank);
    if (rank <= window.axis || (!pads && !window.valid) || (window.cut >= 0 && !ends) ||
        ElementTypeName(elem_type).empty()) {
      plan_.notes.push_back(label + ": its context is not carried: the type of '" + window.value +
                            "' or its padding cannot be read");
      return;
    }
    ContextEdit edit;
    edit.value = window.value;
    edit.axis = window.axis;
    edit.frames = window.frames;
    edit.window = name;
    edit.lookahead = window.lookahead;
    edit.valid = window.valid;
    const std::string stem = NodeStem(name.empty() ? window.value : name);
    const bool pads_input = IsOnnxOp(reader, {"Pad"}) && index_.onnx_opset() >= kPadAmountsInputOpset;
    if (!window.fill.empty()) {
      // Padded in another way than zeros: the Pad pads what the context lacks (context_fill.h).
      edit.fill = PlanContextFill(window, std::move(*pads), names_, stem);
      edit.operands.push_back(OperandEdit{window.pad, "pads", 1, {}, edit.fill->amounts, /*computed=*/true});
    } else if (!window.valid) {  // a valid window has no padding to remove
      edit.operands.push_back(OperandEdit{window.Reader(), "pads", 1, std::move(*pads),
                                          pads_input ? names_.Allocate(stem + ".context_pads") : ""});
    }
    if (window.cut >= 0) {
      const bool ends_input = index_.onnx_opset() >= kSliceInputsOpset;
      edit.operands.push_back(OperandEdit{window.cut, "ends", 2, std::move(*ends),
                                          ends_input ? names_.Allocate(stem + ".context_cut_ends") : ""});
    }
    const int64_t batch_axis = ContextBatchAxis(rank, window.axis);
    onnx::TensorShapeProto declared;
    for (const SymDim& d : *shape) {
      auto* dim = declared.add_dim();
      if (d.fixed()) dim->set_dim_value(d.value);
      if (!d.fixed() && !d.name.empty()) dim->set_dim_param(d.name);
    }
    edit.shape = ContextShape(window.value, window.axis, window.frames, declared, batch_axis, false);
    const bool starts_short = edit.lookahead > 0 || edit.fill || edit.valid;  // its first call: fewer frames
    if (starts_short) edit.shape[window.axis] = Dim{-1, dim_names_.Allocate(stem + ".context_frames")};
    AddNew(
        std::move(edit), elem_type, stem, node.op_type(), {ContextReader{GraphPath{}, window.Reader()}}, batch_axis,
        [&](ExitCode, const std::string& why) {
          throw Error(ExitCode::kUnsupported, label + ": its context state cannot be added: " + why +
                                                  " (--no-conv-context leaves the windows as they are)");
        },
        /*broadcast_required=*/true);
  }

 private:
  /// Names the new context `edit` (its value, axis, frames and shape set), adds its default and records it
  /// with its pair. `refuse` throws for a default the model cannot have. `broadcast_required`: required
  /// mode keeps the default's broadcast (ContextZerosDefault::initializer).
  void AddNew(ContextEdit edit, int32_t elem_type, const std::string& stem, const std::string& op,
              std::vector<ContextReader> readers, int64_t batch_axis,
              const std::function<void(ExitCode, const std::string&)>& refuse, bool broadcast_required = false) {
    edit.elem_type = elem_type;
    edit.input = names_.Allocate(ExpandNameTemplate(options_.input_template, stem, kKindContext, op));
    edit.output = names_.Allocate(ExpandNameTemplate(options_.output_template, stem, kKindContext, op));
    NewContext added;
    added.with_context = names_.Allocate(stem + ".with_context");
    added.starts = names_.Allocate(stem + ".context_starts");
    added.ends = names_.Allocate(stem + ".context_ends");
    added.axes = names_.Allocate(stem + ".context_axes");
    added.readers = std::move(readers);
    if (!required_ || broadcast_required) {
      ContextZerosDefault zeros = ZerosDefault(edit, stem, refuse);
      zeros.initializer = !required_;
      // The padding before time alone: the window's first outputs are those the original's start with.
      if (edit.lookahead > 0) zeros.dims[edit.axis] = edit.frames - edit.lookahead;
      // Empty: the Pad fills as the original does; a valid window's first call has no frames before it.
      if (edit.fill || edit.valid) zeros.dims[edit.axis] = 0;
      added.default_value = std::move(zeros);
    }
    edit.change = std::move(added);
    plan_.pairs.push_back(PairOf(edit, batch_axis));
    plan_.contexts.push_back(std::move(edit));
  }

  /// The declared tensor type of the option's input, which must be a data input of the main graph.
  const onnx::TypeProto_Tensor& DataInput(const InputContextOption& option) const {
    const GraphIndex& main = index_.graph(GraphPath{});
    if (!main.inputs.count(option.input)) Refuse(option, "'" + option.input + "' is not an input of the model");
    if (main.initializers.count(option.input)) {
      Refuse(option, "'" + option.input + "' is not a data input: it has an initializer (a weight or a default)");
    }
    auto is_state = [&](const StatePair& pair) { return pair.input == option.input; };
    if (std::any_of(plan_.pairs.begin(), plan_.pairs.end(), is_state) ||
        std::any_of(analysis_.recorded_pairs.begin(), analysis_.recorded_pairs.end(), is_state)) {
      Refuse(option, "'" + option.input + "' is a state input, not a data input");
    }
    const onnx::TypeProto* type = index_.TypeOf(GraphPath{}, option.input);
    if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) {
      Refuse(option, "'" + option.input + "' declares no tensor shape: its axes are unknown");
    }
    const onnx::TypeProto_Tensor& tensor = type->tensor_type();
    if (option.axis >= tensor.shape().dim_size()) {
      Refuse(option, "'" + option.input + "' has no axis " + std::to_string(option.axis) + " (rank " +
                         std::to_string(tensor.shape().dim_size()) + ")");
    }
    if (ElementTypeName(tensor.elem_type()).empty()) {
      Refuse(option, "'" + option.input + "' is of element type " + DataTypeName(tensor.elem_type()) +
                         ", which a state cannot carry");
    }
    return tensor;
  }

  /// The nodes reading the input (directly, or in their subgraphs).
  std::vector<ContextReader> Readers(const InputContextOption& option) const {
    std::set<int> nodes;
    for (const Consumer& use : index_.graph(GraphPath{}).ConsumersOf(option.input)) nodes.insert(use.node);
    if (nodes.empty()) Refuse(option, "nothing in the model reads '" + option.input + "'");
    std::vector<ContextReader> readers;
    for (int node : nodes) readers.push_back(ContextReader{GraphPath{}, node});
    return readers;
  }

  /// The shape of `value` (`declared`) with `frames` on the context's axis. An unnamed batch gets a name:
  /// a data input's (`input`) is shared with the input, so that a runner resolves it from the data it
  /// feeds; a value inside the graph gets one of its own.
  std::vector<Dim> ContextShape(const std::string& value, int64_t axis, int64_t frames,
                                const onnx::TensorShapeProto& declared, int64_t batch_axis, bool input) {
    std::vector<Dim> shape;
    for (int i = 0; i < declared.dim_size(); ++i) {
      const auto& d = declared.dim(i);
      if (i == axis) {
        shape.push_back(Dim{frames, ""});
      } else if (d.has_dim_value()) {
        shape.push_back(Dim{d.dim_value(), ""});
      } else if (!d.dim_param().empty() && !IsInventedDimName(d.dim_param())) {
        shape.push_back(Dim{-1, d.dim_param()});
      } else if (i != batch_axis) {
        shape.push_back(Dim{-1, ""});
      } else if (input) {
        shape.push_back(Dim{-1, BatchName(value, i)});
      } else {
        shape.push_back(Dim{-1, DataBatchName(value, i)});
      }
    }
    return shape;
  }

  /// The name of the batch axis `axis` of `value`, computed inside the model: the name of the data input's
  /// axis it comes from (axis_trace.h), so that a runner resolves it from the data it feeds; else a new one.
  std::string DataBatchName(const std::string& value, int axis) {
    if (const std::optional<InputAxis> source = TraceAxis(index_, GraphPath{}, value, axis)) {
      const onnx::TypeProto* type = index_.TypeOf(GraphPath{}, source->input);
      if (type != nullptr && type->has_tensor_type() && type->tensor_type().has_shape() &&
          source->axis < type->tensor_type().shape().dim_size()) {
        const auto& d = type->tensor_type().shape().dim(static_cast<int>(source->axis));
        if (!d.dim_param().empty() && !IsInventedDimName(d.dim_param())) return d.dim_param();
        if (!d.has_dim_value()) return BatchName(source->input, static_cast<int>(source->axis));
      }
    }
    return dim_names_.Allocate("batch");
  }

  /// The name of the unnamed batch axis `axis` of `input`: one the state plan gave it, or a new one.
  std::string BatchName(const std::string& input, int axis) {
    for (const auto& [named, at, name] : plan_.input_dim_names) {
      if (named == input && at == axis) return name;
    }
    std::string name = dim_names_.Allocate("batch");
    plan_.input_dim_names.emplace_back(input, axis, name);
    return name;
  }

  ContextZerosDefault ZerosDefault(const ContextEdit& edit, const std::string& stem,
                                   const std::function<void(ExitCode, const std::string&)>& refuse) {
    ContextZerosDefault zeros;
    for (const Dim& d : edit.shape) zeros.dims.push_back(d.fixed() ? d.value : 1);
    const std::optional<uint64_t> bytes = DenseTensorBytes(edit.elem_type, zeros.dims);
    if (!bytes || *bytes > kMaxZeroDefaultBytes) {
      refuse(ExitCode::kUsage,
             "its zero default would take more than " + std::to_string(kMaxZeroDefaultBytes) + " bytes");
    }
    zeros.shape_of_value = names_.Allocate(stem + ".shape");
    zeros.keep = names_.Allocate(stem + ".context_keep");
    zeros.kept = names_.Allocate(stem + ".context_kept");
    zeros.unit = names_.Allocate(stem + ".context_unit");
    zeros.target = names_.Allocate(stem + ".context_target");
    zeros.expanded = names_.Allocate(stem + ".context_expanded");
    if (index_.onnx_opset() < kExpandOpset) {  // no Expand: the zeros are tiled (context_plan.h)
      zeros.shape_of_context = names_.Allocate(stem + ".context_shape");
      zeros.context_kept = names_.Allocate(stem + ".context_shape_kept");
      zeros.ones = names_.Allocate(stem + ".context_ones");
      zeros.repeats = names_.Allocate(stem + ".context_repeats");
    }
    return zeros;
  }

  StatePair PairOf(const ContextEdit& edit, int64_t batch_axis) const {
    StatePair pair;
    pair.input = edit.input;
    pair.output = edit.output;
    pair.node = std::get<NewContext>(edit.change).with_context;
    pair.graph = "main";
    pair.kind = kKindContext;
    pair.optional = !required_;
    pair.streamable = true;
    pair.dtype = ElementTypeName(edit.elem_type);
    for (const Dim& d : edit.shape) pair.shape.push_back(MetaDim{d.value, d.fixed() ? "" : d.param});
    pair.batch_axis = batch_axis;
    pair.init = kInitZeros;
    pair.context = ContextSpec{edit.value, edit.axis,      edit.frames,
                               edit.window, edit.lookahead, edit.fill ? edit.fill->mode : "", edit.valid};
    return pair;
  }

  /// The edit of a recorded pair, for --dry-run's lines.
  static ContextEdit EditOf(const StatePair& pair) {
    ContextEdit edit;
    edit.value = pair.context->value;
    edit.axis = pair.context->axis;
    edit.frames = pair.context->frames;
    edit.input = pair.input;
    edit.output = pair.output;
    edit.window = pair.context->window;
    return edit;
  }

  const ModelIndex& index_;
  const Analysis& analysis_;
  const PlanOptions& options_;
  NameAllocator& names_;
  NameAllocator dim_names_;
  Plan& plan_;
  bool required_;
};

}  // namespace

std::string InputContextOption::Text() const {
  return input + ":" + std::to_string(axis) + ":" + std::to_string(frames);
}

InputContextOption ParseInputContext(const std::string& text) {
  auto number = [](const std::string& digits) {
    return !digits.empty() && digits.size() <= 9 &&
           std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const size_t last = text.rfind(':');
  const size_t middle = last == std::string::npos || last == 0 ? std::string::npos : text.rfind(':', last - 1);
  const std::string axis = middle == std::string::npos ? "" : text.substr(middle + 1, last - middle - 1);
  const std::string frames = last == std::string::npos ? "" : text.substr(last + 1);
  if (middle == std::string::npos || middle == 0 || !number(axis) || !number(frames)) {
    throw Error(ExitCode::kUsage, "--input-context '" + text + "': expected INPUT:AXIS:N (e.g. input:1:64)");
  }
  InputContextOption option{text.substr(0, middle), std::stoll(axis), std::stoll(frames)};
  if (option.frames <= 0) {
    throw Error(ExitCode::kUsage, "--input-context '" + text + "': N must be at least 1 frame");
  }
  return option;
}

void PlanContexts(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options,
                  const NodeNames& node_names, NameAllocator& names, Plan& plan) {
  ContextPlanner planner(index, analysis, options, names, plan);
  for (const ContextFinding& finding : analysis.contexts) planner.KeepRecorded(finding);
  std::set<std::string> given;
  for (const InputContextOption& option : options.input_contexts) {
    if (!given.insert(option.input).second) Refuse(option, "'" + option.input + "' is given twice");
    planner.PlanOption(option);
  }
  if (options.conv_context && options.lookahead && analysis.stream && !analysis.stream->lookahead.problem.empty()) {
    plan.notes.push_back("--lookahead: the windows that look ahead stay as they are: " +
                         analysis.stream->lookahead.problem);
  }
  if (options.conv_context && analysis.stream) {
    for (const CausalWindow& window : analysis.stream->windows) {
      auto named = node_names.find({GraphPath{}, window.window});
      planner.PlanWindow(window, named == node_names.end() ? "" : named->second);
    }
  }
}

void RequireRecordedContexts(const Analysis& analysis, const std::vector<InputContextOption>& options) {
  for (const InputContextOption& option : options) {
    const StatePair* recorded = RecordedContextOf(analysis, option.input);
    if (recorded == nullptr || recorded->context->axis != option.axis ||
        recorded->context->frames != option.frames) {
      throw Error(ExitCode::kUnsupported, "--input-context " + option.Text() +
                                              ": the model's states were packed or made batch-first; rewrite the " +
                                              "model they came from with --input-context");
    }
  }
}

}  // namespace rnnstate
