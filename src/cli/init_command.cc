// `rnnstate init`: its options, its run over the files and the first call's feeds of one file, read from
// its `rnnstate` metadata (contract/).

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <optional>

#include "cli/command.h"
#include "cli/file_runs.h"
#include "contract/first_feeds.h"
#include "contract/packed_first_feeds.h"
#include "io/model_io.h"
#include "rnnstate/error.h"
#include "rnnstate/pipeline.h"

namespace rnnstate::cli {

namespace {

constexpr const char* kInitExamples = R"(
  rnnstate init stream.onnx --batch 4         the first call's feed of each state input, for 4 streams)";

/// `init`'s options.
struct InitOptions {
  FilesOptions files;
  std::optional<int64_t> batch;   ///< unset: the batch dimension's value from `dims`, else 1
  std::vector<std::string> dims;  ///< NAME=VALUE
};

void AddInitOptions(CLI::App& command, InitOptions& init) {
  AddFilesOptions(command, init.files);
  command
      .add_option("--batch", init.batch,
                  "Batch size of the first call (default: the value --dim gives the batch dimension, else 1)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  command.add_option("--dim", init.dims, "Value of another symbolic dimension of a state, NAME=VALUE (repeatable)")
      ->allow_extra_args(false);
  command.add_flag("--json", init.files.json, "JSON Lines: one record per file (its \"feeds\"), then a summary");
}

/// The values of the symbolic dimensions --dim names. Throws Error(kUsage) on one that is not NAME=VALUE.
std::map<std::string, int64_t> DimValues(const std::vector<std::string>& dims) {
  std::map<std::string, int64_t> values;
  for (const std::string& dim : dims) {
    const size_t equals = dim.find('=');
    int64_t value = -1;
    try {
      if (equals != std::string::npos && equals > 0) value = std::stoll(dim.substr(equals + 1));
    } catch (const std::exception&) {
    }
    if (value < 0) throw Error(ExitCode::kUsage, "--dim '" + dim + "': expected NAME=VALUE with VALUE >= 0");
    values[dim.substr(0, equals)] = value;
  }
  return values;
}

/// The first call's feed of every state input of `input` (from its `rnnstate` metadata): `text` one line
/// per input, details["feeds"] the JSON list. A model without recorded pairs has no feeds (a warning).
FileResult InitFile(const std::string& input, std::optional<int64_t> batch, const std::map<std::string, int64_t>& dims) {
  FileResult init = ProcessGuarded(input, [&](FileResult& result) {
    OpenedModel opened = Timed(&result.timings.load_ms, [&] { return OpenModel(input); });
    // The metadata is untrusted: feeds for inputs the model lacks, or of an unknown dtype, are refused.
    result.states = ValidStatePairs(opened.file.model());
    if (result.states.empty()) result.warnings.push_back("no state pairs recorded (run rnnstate rewrite first)");
    // A packed model is fed its packed values (and the pairs packing left out).
    std::vector<FirstFeed> feeds = FirstFeedsOf(opened.file.model(), result.states, batch, dims);
    result.text = FirstFeedsText(feeds);
    result.details["feeds"] = FirstFeedsJson(feeds);
    // A --dim no state has is most likely a typo, which must not pass as a default of 1.
    for (const auto& dim : dims) {
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

int RunInit(const InitOptions& init, bool quiet) {
  const std::map<std::string, int64_t> dims = DimValues(init.dims);
  std::vector<InputFile> inputs = FindModelFiles(init.files.paths, {});
  Printing printing = init.files.json ? Printing::kJsonLines : Printing::kText;
  return RunFiles(inputs, init.files, printing, quiet,
                  [&](size_t i) { return InitFile(inputs[i].path, init.batch, dims); });
}

}  // namespace

Command InitCommand() {
  return {"init", "Print the first call's feed of every state input (shape, dtype, zeros or empty) from the metadata",
          kInitExamples, Declare<InitOptions, AddInitOptions, RunInit>};
}

}  // namespace rnnstate::cli
