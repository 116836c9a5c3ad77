#include "io/model_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>

#include "io/data_placement.h"
#include "io/external_data.h"
#include "io/file_output.h"
#include "io/tensor_data.h"
#include "rnnstate/error.h"

namespace rnnstate {

using output::DirectoryOf;

OpenedModel OpenModel(const std::string& path) {
  OpenedModel opened{ModelFile::Open(path), DirectoryOf(path), {}};
  // opset_import is serialized after the graph: a file cut right after the graph parses but lacks it.
  if (opened.file.model().opset_import_size() == 0) {
    throw Error(ExitCode::kBadInput, "not a complete ONNX model (no opset_import: truncated?)");
  }
  // Inline values too, before any command reads them: ONNX Runtime loads no tensor whose data does not
  // fit its dims (the payloads left in the file count by their length there). Judged in the external data
  // checks' walk, one walk over the tensors instead of two; a refused external tensor anywhere is still
  // named first (it throws during the walk), the first refused inline one after it.
  std::string inline_problem;
  opened.external_data = CheckExternalData(
      opened.file.model(), opened.directory, [&](const onnx::TensorProto& tensor, const places::TensorPath& at) {
        if (inline_problem.empty()) inline_problem = InlineDataProblemAt(tensor, at, opened.file.RawDataSize(tensor));
      });
  if (!inline_problem.empty()) throw Error(ExitCode::kBadInput, inline_problem);
  return opened;
}

void WriteModel(const OpenedModel& opened, const std::string& output, ModelFile::Durability durability) {
  output::RequireReplaceable(output);  // before any data file is placed beside it
  PlacedData placed = ProvideExternalData(opened.external_data, opened.directory, DirectoryOf(output));
  opened.file.Write(output, durability);  // on failure, `placed` removes the data files it put there
  placed.Keep();
}

void SyncOutputs(const std::vector<std::string>& outputs) {
  std::set<dev_t> synced;
  for (const auto& output : outputs) {
    std::string dir = DirectoryOf(output);
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) continue;  // nothing was written there
    struct stat info {};
    bool fresh = ::fstat(fd, &info) == 0 && synced.insert(info.st_dev).second;
    int failed = fresh ? ::syncfs(fd) : 0;
    ::close(fd);
    if (failed != 0) throw Error(ExitCode::kCannotWrite, "cannot flush the outputs in '" + dir + "' to disk");
  }
}

}  // namespace rnnstate
