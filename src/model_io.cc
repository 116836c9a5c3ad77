#include "rnnstate/model_io.h"

#include <filesystem>

#include "rnnstate/error.h"
#include "rnnstate/external_data.h"

namespace rnnstate {

namespace {

std::string DirectoryOf(const std::string& path) { return std::filesystem::path(path).parent_path().string(); }

}  // namespace

OpenedModel OpenModel(const std::string& path) {
  OpenedModel opened{ModelFile::Open(path), DirectoryOf(path), {}};
  // opset_import is serialized after the graph: a file cut right after the graph parses but lacks it.
  if (opened.file.model().opset_import_size() == 0) {
    throw Error(ExitCode::kBadInput, "not a complete ONNX model (no opset_import: truncated?)");
  }
  opened.external_data = CheckExternalData(opened.file.model(), opened.directory);
  return opened;
}

void WriteModel(const OpenedModel& opened, const std::string& output) {
  ProvideExternalData(opened.external_data, opened.directory, DirectoryOf(output));
  opened.file.Write(output);
}

}  // namespace rnnstate
