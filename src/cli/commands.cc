#include "rnnstate/commands.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <filesystem>

#include "contract/export_openvino.h"
#include "contract/export_triton.h"
#include "contract/first_feeds.h"
#include "contract/packed_first_feeds.h"
#include "graph/contrib_schemas.h"
#include "graph/model_index.h"
#include "io/data_placement.h"
#include "io/model_io.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "rules/metadata_rules.h"
#include "rules/model_rules.h"
#include "views/check.h"
#include "views/dot.h"
#include "views/report.h"

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
  RewriteOutcome outcome = Timed(&result.timings.process_ms,
                                 [&] { return RewriteModel(copy, settings.plan, settings.strict, opened.directory); });
  result.warnings = outcome.warnings;
  result.states = outcome.plan.pairs;
  std::string prefix = settings.label_lines ? input + ": " : "";
  for (const auto& line : outcome.time_axis_changes) result.text += prefix + line + "\n";
  for (const auto& edit : outcome.plan.edits) {
    result.text += prefix + edit.graph_name + " " + edit.owner_name + " " + edit.kind + ": " + edit.Describe() + "\n";
  }
  for (const auto& line : outcome.transform_lines) result.text += prefix + line + "\n";
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

void PrepareForWorkers() {
  // The first lookup registers every schema; later lookups only read. ONNX Runtime's schema is added
  // here too (once): added on a file's first use instead, it was written into onnx's registry while
  // another thread (main.cc's warm-up) read it.
  RegisterContribSchemas();
  onnx::OpSchemaRegistry::Schema("LSTM", kMinOpset, "");
}

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
    RewriteOutcome outcome = Timed(&result.timings.process_ms, [&] {
      return RewriteModel(model, settings.plan, settings.strict, opened.directory);
    });
    result.warnings = outcome.warnings;
    result.states = outcome.plan.pairs;
    result.changed = outcome.changed;
    result.status = outcome.changed ? kStatusOk : kStatusUnchanged;
    if (!outcome.changed && settings.in_place) {
      result.text = input + ": nothing to do\n";
      return;
    }
    Write(opened, output, settings, result);
    result.output = output;
    result.text = input + " -> " + output + ": " +
                  (outcome.analysis.nodes.empty()
                       ? std::string("no recurrent nodes, written unchanged")
                       : PairCount(outcome.plan.pairs.size()) + (outcome.changed ? "" : " (unchanged)")) +
                  "\n";
  });
}

FileResult ReportFile(const std::string& input, ReportFormat format) {
  FileResult report = ProcessGuarded(input, [&](FileResult& result) {
    OpenedModel opened = Timed(&result.timings.load_ms, [&] { return OpenModel(input); });
    const onnx::ModelProto& model = opened.file.model();
    Timed(&result.timings.process_ms, [&] {
      RewriteOutcome outcome = PlanRewrite(model, PlanOptions{});
      result.states = outcome.analysis.recorded_pairs;
      switch (format) {
        case ReportFormat::kText:
          result.text = ReportText(input, model, outcome.analysis, outcome.plan);
          break;
        case ReportFormat::kDot:
          result.text = ReportDot(input, model, outcome.analysis, outcome.plan);
          break;
        case ReportFormat::kJson:
          result.details["report"] = ReportJson(input, model, outcome.analysis, outcome.plan);
          break;
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
    std::vector<CheckProblem> problems = Timed(&result.timings.process_ms, [&] {
      const ModelIndex index = IndexValidModel(model);  // the same verdict as rewrite and report
      Analysis analysis = Analyze(index);
      result.states = analysis.recorded_pairs;
      result.warnings = CheckWarnings(analysis);
      return CheckModel(index, analysis, streamable_only);
    });
    Json list = Json::array();
    for (const auto& problem : problems) {
      list.push_back({{"kind", CheckProblemKindName(problem.kind)}, {"message", problem.message}});
      result.text += input + ": " + problem.message + "\n";
    }
    result.details["problems"] = std::move(list);
    if (problems.empty()) return;
    result.status = kStatusFailed;
    result.exit_code = static_cast<int>(ExitCode::kCheckFailed);
    result.error = "check failed: " + std::to_string(problems.size()) + " problem" + (problems.size() == 1 ? "" : "s");
  });
  if (!check.details.contains("problems")) check.details["problems"] = Json::array();
  return check;
}

FileResult InitFile(const std::string& input, const InitSettings& settings) {
  FileResult init = ProcessGuarded(input, [&](FileResult& result) {
    OpenedModel opened = Timed(&result.timings.load_ms, [&] { return OpenModel(input); });
    // The metadata is untrusted: feeds for inputs the model lacks, or of an unknown dtype, are refused.
    result.states = RequireValidMetadata(opened.file.model()).pairs;
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

FileResult ExportFile(const std::string& input, ExportTarget target, bool json) {
  return ProcessGuarded(input, [&](FileResult& result) {
    OpenedModel opened = Timed(&result.timings.load_ms, [&] { return OpenModel(input); });
    const onnx::ModelProto& model = opened.file.model();
    // The metadata is untrusted: a runtime configured from pairs the model contradicts fails at serving time.
    result.states = RequireValidMetadata(model).pairs;
    Timed(&result.timings.process_ms, [&] {
      if (target == ExportTarget::kTriton) {
        result.text = TritonStateConfig(model, std::filesystem::path(input).filename().string(), &result.warnings);
        return;
      }
      OpenVinoPairs pairs = OpenVinoStatePairs(model);
      result.warnings = std::move(pairs.warnings);
      result.text = json ? DumpJson(pairs.json) + "\n" : pairs.text;
      result.details["openvino"] = std::move(pairs.json);
    });
  });
}

}  // namespace rnnstate
