// The sweep of model_sweep.h: every command's library call on one model, with the fuzzing oracles.

#include "model_sweep.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/checker.h>

#include <optional>
#include <utility>

#include "contract/export_openvino.h"
#include "contract/export_triton.h"
#include "contract/first_feeds.h"
#include "contract/packed_first_feeds.h"
#include "io/external_data.h"
#include "io/tensor_data.h"
#include "rnnstate/error.h"
#include "rnnstate/pipeline.h"

namespace rnnstate::fuzz {

namespace {

/// The sweep of one model: the problems found so far.
class Sweep {
 public:
  explicit Sweep(std::string data_dir) : data_dir_(std::move(data_dir)) {}

  /// Runs `step`; an Error the CLI reports with a documented code (not 6) is an answer, anything else a
  /// problem. True when `step` returned normally.
  template <typename Step>
  bool Answers(const std::string& what, Step&& step) {
    try {
      step();
      return true;
    } catch (const Error& e) {
      if (e.code() == ExitCode::kInternal) problems.push_back(what + ": internal error: " + e.what());
    } catch (const std::exception& e) {
      problems.push_back(what + ": exception (the CLI's exit 6): " + e.what());
    } catch (...) {
      problems.push_back(what + ": unknown exception (the CLI's exit 6)");
    }
    return false;
  }

  void UseContract(const onnx::ModelProto& model, const std::string& of);
  void Rewrite(const onnx::ModelProto& model, const std::string& what, const PlanOptions& options,
               bool checker_accepts);

  std::vector<std::string> problems;

 private:
  std::string data_dir_;
};

bool PassesChecker(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
    return true;
  } catch (...) {
    return false;
  }
}

/// `init` (batch 1, and 3 with --dim values) and both exports of `model`, as the CLI runs them.
void Sweep::UseContract(const onnx::ModelProto& model, const std::string& of) {
  std::vector<StatePair> pairs;
  if (!Answers("init" + of, [&] { pairs = ValidStatePairs(model); })) return;
  Answers("init" + of, [&] { FirstFeedsText(FirstFeedsOf(model, pairs, std::nullopt, {})); });
  Answers("init --batch 3 --dim seq=5" + of,
          [&] { FirstFeedsJson(FirstFeedsOf(model, pairs, 3, {{"seq", 5}, {"batch", 2}})); });
  Answers("export openvino" + of, [&] { OpenVinoStatePairs(model); });
  std::vector<std::string> warnings;
  Answers("export triton" + of, [&] { TritonModelConfig(model, "m", 8, &warnings); });
}

/// The rewrite modes of the CLI; `pick` chooses the --time-axis input and axis.
std::vector<std::pair<std::string, PlanOptions>> Modes(const onnx::ModelProto& model, size_t pick) {
  std::vector<std::pair<std::string, PlanOptions>> modes(5);
  modes[0].first = "rewrite";
  modes[1].first = "rewrite --state-inputs required";
  modes[1].second.mode = StateInputMode::kRequired;
  modes[2].first = "rewrite --pack tensor";
  modes[2].second.pack = PackKind::kTensor;
  modes[3].first = "rewrite --pack sequence --state-inputs required";
  modes[3].second.pack = PackKind::kSequence;
  modes[3].second.mode = StateInputMode::kRequired;
  modes[4].first = "rewrite --state-layout batch-first --streamable-only";
  modes[4].second.layout = StateLayout::kBatchFirst;
  modes[4].second.streamable_only = true;
  if (model.graph().input_size() > 0) {
    const auto& input = model.graph().input(static_cast<int>(pick % model.graph().input_size()));
    const int rank = input.type().tensor_type().shape().dim_size();
    PlanOptions time_axis;
    time_axis.time_axes.push_back({input.name(), rank > 0 ? static_cast<int64_t>(pick / 7 % rank) : 0});
    modes.emplace_back("rewrite --time-axis " + input.name() + ":" + std::to_string(time_axis.time_axes[0].axis),
                       time_axis);
  }
  return modes;
}

void Sweep::Rewrite(const onnx::ModelProto& model, const std::string& what, const PlanOptions& options,
                    bool checker_accepts) {
  onnx::ModelProto rewritten = model;
  RewriteResult result;
  if (!Answers(what, [&] { result = RewriteForStreaming(rewritten, options, false, data_dir_); })) return;
  if (!result.changed) return;
  if (checker_accepts && !PassesChecker(rewritten)) problems.push_back(what + ": the output fails onnx's checker");
  onnx::ModelProto again = rewritten;
  // A packed model is not packed again (exit 4, "packed already"): its second rewrite is without --pack.
  PlanOptions again_options = options;
  again_options.pack = PackKind::kNone;
  const std::string what_again = what + ", again on its output";
  std::string refusal;
  if (!Answers(what_again, [&] {
        try {
          RewriteForStreaming(again, again_options, false, data_dir_);
        } catch (const Error& e) {
          if (e.code() == ExitCode::kInternal) throw;
          refusal = e.what();
        }
      })) {
    return;  // the internal error is the problem
  }
  if (!refusal.empty()) {
    problems.push_back(what_again + ": refused: " + refusal);
  } else if (Bytes(again) != Bytes(rewritten)) {
    problems.push_back(what_again + ": changed the model");
  }
  UseContract(rewritten, " (of the " + what + ")");
  Answers("check (of the " + what + ")", [&] { CheckForStreaming(rewritten); });
}

}  // namespace

std::string Bytes(const onnx::ModelProto& model) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    model.SerializeToCodedStream(&coded);
  }
  return bytes;
}

std::vector<std::string> SweepModel(const onnx::ModelProto& model, size_t pick, const std::string& data_dir) {
  // What OpenModel does before any command (io/model_io.cc): a model it refuses goes no further.
  if (model.opset_import_size() == 0) return {};
  Sweep sweep(data_dir);
  bool opens = true;
  sweep.Answers("open", [&] {
    try {
      CheckExternalData(model, data_dir);
    } catch (const Error& e) {
      if (e.code() != ExitCode::kBadInput) throw;
      opens = false;
    }
  });
  const auto raw_size = [](const onnx::TensorProto& t) { return std::optional<uint64_t>(t.raw_data().size()); };
  if (!opens || !sweep.problems.empty() || !FirstInlineDataProblem(model, raw_size).empty()) return sweep.problems;

  sweep.Answers("check", [&] { CheckForStreaming(model); });
  sweep.Answers("check --streamable-only", [&] { CheckForStreaming(model, {/*streamable_only=*/true}); });
  sweep.Answers("report", [&] { ReportModel(model, "m.onnx", ReportFormat::kText); });
  sweep.Answers("report --json", [&] { ReportModel(model, "m.onnx", ReportFormat::kJson); });
  sweep.Answers("report --format dot", [&] { ReportModel(model, "m.onnx", ReportFormat::kDot); });
  sweep.UseContract(model, "");
  const bool checker_accepts = PassesChecker(model);
  for (const auto& [what, options] : Modes(model, pick)) sweep.Rewrite(model, what, options, checker_accepts);
  return sweep.problems;
}

}  // namespace rnnstate::fuzz
