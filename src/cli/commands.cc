// Each command on one file: open it (io/), run the façade (rnnstate/pipeline.h) or read its metadata
// contract (contract/), and turn the outcome into a FileResult. Nothing here reaches the analysis stages.

#include "cli/commands.h"

#include <algorithm>
#include <filesystem>

#include "contract/export_openvino.h"
#include "contract/export_triton.h"
#include "contract/first_feeds.h"
#include "contract/packed_first_feeds.h"
#include "io/data_placement.h"
#include "io/file_output.h"
#include "io/model_io.h"
#include "rnnstate/error.h"
#include "rnnstate/pipeline.h"

namespace rnnstate {

namespace {

std::string PairCount(size_t pairs) { return std::to_string(pairs) + " state pair" + (pairs == 1 ? "" : "s"); }

/// --dry-run: the plan, one line per state, then what a real run would do. The whole rewrite runs on a
/// copy, so that a dry run reaches every verdict and warning a real run reaches (--strict, a rewrite that
/// fails validation, "full validation skipped"), and so that layout and packing, planned from the
/// rewritten model, can be shown.
void DryRun(const std::string& input, const std::string& output, const RewriteSettings& settings,
            const OpenedModel& opened, FileResult& result) {
  onnx::ModelProto copy = opened.file.model();
  RewriteResult outcome = Timed(&result.timings.process_ms, [&] {
    return RewriteForStreaming(copy, settings.plan, settings.strict, opened.directory);
  });
  result.warnings = WarningTexts(outcome.warnings);
  result.states = outcome.pairs;
  std::string prefix = settings.label_lines ? input + ": " : "";
  for (const auto& line : outcome.plan_lines) result.text += prefix + line + "\n";
  const bool changes = outcome.changed;
  result.status = changes ? kStatusOk : kStatusUnchanged;
  result.changed = changes;
  if (changes || !settings.in_place) result.output = output;
  result.text += prefix + (changes ? "would write " + output : "nothing to do") + "\n";
}

void Write(const OpenedModel& opened, const std::string& output, const RewriteSettings& settings, FileResult& result) {
  try {
    Timed(&result.timings.write_ms, [&] {
      // Directories made for this output go again if it cannot be written (a full disk, a name too long).
      PlacedData directories = settings.create_directories
                                   ? CreateOutputDirectories(std::filesystem::path(output).parent_path().string())
                                   : PlacedData();
      WriteModel(opened, output, settings.defer_sync ? ModelFile::Durability::kDeferred : ModelFile::Durability::kSync);
      directories.Keep();
    });
  } catch (Error& e) {
    e.AppendContext(output);
    throw;
  }
}

}  // namespace

FileResult RewriteFile(const std::string& input, const std::string& output, const RewriteSettings& settings) {
  return ProcessGuarded(input, [&](FileResult& result) {
    OpenedModel opened = Timed(&result.timings.load_ms, [&] { return OpenModel(input); });
    // Only known once the model is open: an output that would destroy its external data is refused, as
    // an output that would replace an input is before any file is processed (OutputConflict).
    if (std::string conflict = OutputDataConflict(opened.external_data, opened.directory, output); !conflict.empty()) {
      throw Error(ExitCode::kUsage, conflict);
    }
    onnx::ModelProto& model = opened.file.model();
    if (settings.dry_run) return DryRun(input, output, settings, opened, result);
    RewriteResult outcome = Timed(&result.timings.process_ms, [&] {
      return RewriteForStreaming(model, settings.plan, settings.strict, opened.directory);
    });
    result.warnings = WarningTexts(outcome.warnings);
    result.states = outcome.pairs;
    result.changed = outcome.changed;
    result.status = outcome.changed ? kStatusOk : kStatusUnchanged;
    if (!outcome.changed && settings.in_place) {
      result.text = input + ": nothing to do\n";
      return;
    }
    Write(opened, output, settings, result);
    result.output = output;
    result.text = input + " -> " + output + ": " +
                  (!outcome.has_recurrent_nodes && outcome.pairs.empty()
                       ? std::string("no recurrent nodes, written unchanged")
                       : PairCount(outcome.pairs.size()) + (outcome.changed ? "" : " (unchanged)")) +
                  "\n";
  });
}

FileResult ReportFile(const std::string& input, ReportFormat format) {
  FileResult report = ProcessGuarded(input, [&](FileResult& result) {
    OpenedModel opened = Timed(&result.timings.load_ms, [&] { return OpenModel(input); });
    const onnx::ModelProto& model = opened.file.model();
    Timed(&result.timings.process_ms, [&] {
      Report reported = ReportModel(model, input, format);
      result.states = std::move(reported.recorded);
      if (format == ReportFormat::kJson) {
        result.details["report"] = std::move(reported.json);
      } else {
        result.text = std::move(reported.text);
      }
    });
  });
  // Records of one command share their members: a failed file has "report": null.
  if (format == ReportFormat::kJson && !report.details.contains("report")) report.details["report"] = nullptr;
  return report;
}

FileResult CheckFile(const std::string& input, bool streamable_only) {
  FileResult check = ProcessGuarded(input, [&](FileResult& result) {
    OpenedModel opened = Timed(&result.timings.load_ms, [&] { return OpenModel(input); });
    const onnx::ModelProto& model = opened.file.model();
    CheckResult checked = Timed(&result.timings.process_ms, [&] {
      CheckOptions options;
      options.streamable_only = streamable_only;
      return CheckForStreaming(model, options);
    });
    result.states = std::move(checked.recorded);
    result.warnings = WarningTexts(checked.warnings);
    const std::vector<CheckProblem>& problems = checked.problems;
    Json list = Json::array();
    for (const auto& problem : problems) {
      list.push_back({{"kind", CheckProblemKindName(problem.kind)}, {"message", problem.message}});
      result.text += input + ": " + problem.message + "\n";
    }
    result.details["problems"] = std::move(list);
    if (checked.unlisted_problems > 0) {
      result.text += input + ": ... and " + std::to_string(checked.unlisted_problems) + " more problems (the first " +
                     std::to_string(kMaxListedProblems) + " of each kind are listed)\n";
      result.details["unlisted_problems"] = checked.unlisted_problems;
    }
    if (problems.empty()) return;
    const size_t total = problems.size() + checked.unlisted_problems;
    result.status = kStatusFailed;
    result.exit_code = static_cast<int>(ExitCode::kCheckFailed);
    result.error = "check failed: " + std::to_string(total) + " problem" + (total == 1 ? "" : "s");
  });
  if (!check.details.contains("problems")) check.details["problems"] = Json::array();
  return check;
}

FileResult InitFile(const std::string& input, const InitSettings& settings) {
  FileResult init = ProcessGuarded(input, [&](FileResult& result) {
    OpenedModel opened = Timed(&result.timings.load_ms, [&] { return OpenModel(input); });
    // The metadata is untrusted: feeds for inputs the model lacks, or of an unknown dtype, are refused.
    result.states = ValidStatePairs(opened.file.model());
    if (result.states.empty()) result.warnings.push_back("no state pairs recorded (run rnnstate rewrite first)");
    // A packed model is fed its packed values (and the pairs packing left out).
    std::vector<FirstFeed> feeds = FirstFeedsOf(opened.file.model(), result.states, settings.batch, settings.dims);
    result.text = FirstFeedsText(feeds);
    result.details["feeds"] = FirstFeedsJson(feeds);
    // A --dim no state has is most likely a typo, which must not pass as a default of 1.
    for (const auto& dim : settings.dims) {
      const std::string& name = dim.first;  // not a structured binding: C++17 lambdas cannot capture one
      const bool used = std::any_of(result.states.begin(), result.states.end(), [&](const StatePair& pair) {
        return std::any_of(pair.shape.begin(), pair.shape.end(), [&](const MetaDim& d) { return d.symbol == name; });
      });
      if (!used && !result.states.empty()) {
        result.warnings.push_back("--dim " + name + "=" + std::to_string(dim.second) +
                                  ": no state has a dimension of that name (ignored)");
      }
    }
  });
  if (!init.details.contains("feeds")) init.details["feeds"] = Json::array();
  return init;
}

}  // namespace rnnstate

namespace rnnstate {

namespace {

/// Writes `text` to `path` atomically (a temporary renamed into place), flushed to disk.
void WriteTextFile(const std::string& path, const std::string& text) {
  const BytePiece piece{reinterpret_cast<const uint8_t*>(text.data()), text.size()};
  output::WriteFileAtomically(path, {piece}, output::InputFile{-1, nullptr, 0, /*mapped=*/false}, true);
}

}  // namespace

FileResult ExportFile(const std::string& input, const ExportSettings& settings) {
  return ProcessGuarded(input, [&](FileResult& result) {
    OpenedModel opened = Timed(&result.timings.load_ms, [&] { return OpenModel(input); });
    const onnx::ModelProto& model = opened.file.model();
    // The metadata is untrusted: a runtime configured from pairs the model contradicts fails at serving time.
    result.states = ValidStatePairs(model);
    if (settings.target == ExportTarget::kOpenVino) {
      Timed(&result.timings.process_ms, [&] {
        OpenVinoPairs pairs = OpenVinoStatePairs(model);
        result.warnings = std::move(pairs.warnings);
        result.text = settings.json ? DumpJson(pairs.json) + "\n" : pairs.text;
        result.details["openvino"] = std::move(pairs.json);
      });
      return;
    }
    const std::string name =
        settings.name.empty() ? std::filesystem::path(input).filename().replace_extension().string() : settings.name;
    const std::string config = Timed(&result.timings.process_ms, [&] {
      return TritonModelConfig(model, name, settings.max_batch_size, &result.warnings);
    });
    if (settings.repository.empty()) {
      result.text = config;
      return;
    }
    const std::filesystem::path entry = std::filesystem::path(settings.repository) / name;
    const std::string model_path = (entry / "1" / "model.onnx").string();
    if (std::string conflict = OutputDataConflict(opened.external_data, opened.directory, model_path);
        !conflict.empty()) {
      throw Error(ExitCode::kUsage, conflict);
    }
    Timed(&result.timings.write_ms, [&] {
      PlacedData directories = CreateOutputDirectories((entry / "1").string());
      WriteModel(opened, model_path);
      WriteTextFile((entry / "config.pbtxt").string(), config);
      directories.Keep();
    });
    result.output = entry.string();
    result.text = input + " -> " + entry.string() + ": config.pbtxt, 1/model.onnx\n";
  });
}

}  // namespace rnnstate
