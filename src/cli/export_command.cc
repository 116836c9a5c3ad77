// `rnnstate export`: its arguments and the state wiring of one model for a serving runtime, read from its
// `rnnstate` metadata (contract/): a Triton model-repository entry or OpenVINO's MakeStateful pairs.

#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>

#include "cli/command.h"
#include "cli/file_runs.h"
#include "contract/export_openvino.h"
#include "contract/export_triton.h"
#include "io/data_placement.h"
#include "io/file_output.h"
#include "io/model_io.h"
#include "rnnstate/error.h"
#include "rnnstate/pipeline.h"

namespace rnnstate::cli {

namespace {

constexpr const char* kExportExamples = R"(
  rnnstate export triton packed.onnx -o repo  Triton model repository entry repo/packed/ (config.pbtxt,
                                              1/model.onnx) with the states as implicit state
  rnnstate export openvino stream.onnx --json the pairs for OpenVINO's MakeStateful)";

/// `export`'s arguments.
struct ExportOptions {
  std::string target;          ///< triton or openvino
  std::string model;
  bool json = false;           ///< openvino: the JSON form
  std::string repository;      ///< triton: -o, write the entry under this directory ("": print config.pbtxt)
  std::string name;            ///< triton: --name, the model's name in the repository ("": the file's stem)
  /// triton: --max-batch-size, the config's max_batch_size; none: 8 where Triton can batch the model, else 0
  std::optional<int64_t> max_batch_size;
};

void AddExportOptions(CLI::App& command, ExportOptions& exports) {
  command
      .add_option("target", exports.target,
                  "triton: a model-repository entry (config.pbtxt, 1/model.onnx); openvino: MakeStateful's pairs")
      ->required()
      ->check(CLI::IsMember({"triton", "openvino"}));
  command.add_option("model", exports.model, "A rewritten ONNX model (its rnnstate metadata)")->required();
  command.add_flag("--json", exports.json, "openvino: {\"param_res_names\": {...}, \"states\": [...]}");
  command.add_option("-o,--output", exports.repository,
                     "triton: the model repository to write NAME/config.pbtxt and NAME/1/model.onnx into "
                     "(default: print config.pbtxt)");
  command.add_option("--name", exports.name, "triton: the model's name in the repository (default: the file's stem)");
  command
      .add_option_function<int64_t>(
          "--max-batch-size", [&exports](const int64_t& n) { exports.max_batch_size = n; },
          "triton: max_batch_size of the config (default 8, or 0 when Triton cannot batch the model: "
          "its data time-major or its batch fixed)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
}

/// Writes `text` to `path` atomically (a temporary renamed into place), flushed to disk.
void WriteTextFile(const std::string& path, const std::string& text) {
  const BytePiece piece{reinterpret_cast<const uint8_t*>(text.data()), text.size()};
  output::WriteFileAtomically(path, {piece}, output::InputFile{-1, nullptr, 0, /*mapped=*/false}, true);
}

/// The state wiring of `input` for the target (from its metadata): `text` what is printed (with `json`,
/// details["openvino"] holds the JSON form for OpenVINO). For Triton with a repository, writes
/// REPOSITORY/NAME/config.pbtxt and REPOSITORY/NAME/1/model.onnx (the model as it is, external data
/// beside it) and `output` names the entry. A model the runtime cannot serve as recorded is an error with
/// the reason (exit code 4).
FileResult ExportFile(const std::string& input, const ExportOptions& exports) {
  return ProcessGuarded(input, [&](FileResult& result) {
    OpenedModel opened = Timed(&result.timings.load_ms, [&] { return OpenModel(input); });
    const onnx::ModelProto& model = opened.file.model();
    // The metadata is untrusted: a runtime configured from pairs the model contradicts fails at serving time.
    result.states = ValidStatePairs(model);
    if (exports.target == "openvino") {
      Timed(&result.timings.process_ms, [&] {
        OpenVinoPairs pairs = OpenVinoStatePairs(model);
        result.warnings = std::move(pairs.warnings);
        result.text = exports.json ? DumpJson(pairs.json) + "\n" : pairs.text;
        result.details["openvino"] = std::move(pairs.json);
      });
      return;
    }
    const std::string name =
        exports.name.empty() ? std::filesystem::path(input).filename().replace_extension().string() : exports.name;
    const std::string config = Timed(&result.timings.process_ms, [&] {
      return TritonModelConfig(model, name, exports.max_batch_size, &result.warnings);
    });
    if (exports.repository.empty()) {
      result.text = config;
      return;
    }
    const std::filesystem::path entry = std::filesystem::path(exports.repository) / name;
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

int RunExport(const ExportOptions& exports, bool quiet) {
  if (IsDirectory(exports.model)) throw Error(ExitCode::kUsage, "export takes one model file, not a directory");
  if (exports.json && exports.target != "openvino") throw Error(ExitCode::kUsage, "--json is for export openvino");
  if (exports.target != "triton" && (!exports.repository.empty() || !exports.name.empty())) {
    throw Error(ExitCode::kUsage, "-o and --name are for export triton");
  }
  if (exports.name.find('/') != std::string::npos || exports.name == "." || exports.name == "..") {
    throw Error(ExitCode::kUsage, "--name '" + exports.name + "' is not a directory name");
  }
  FilesOptions files;
  files.paths = {exports.model};
  std::vector<InputFile> inputs = FindModelFiles(files.paths, {});
  return RunFiles(inputs, files, Printing::kText, quiet,
                  [&](size_t i) { return ExportFile(inputs[i].path, exports); });
}

}  // namespace

Command ExportCommand() {
  return {"export", "State wiring for a serving runtime: a Triton model-repository entry, OpenVINO's MakeStateful pairs",
          kExportExamples, Declare<ExportOptions, AddExportOptions, RunExport>};
}

}  // namespace rnnstate::cli
