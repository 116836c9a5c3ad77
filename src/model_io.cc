#include "rnnstate/model_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <vector>

#include "rnnstate/error.h"

namespace rnnstate {

namespace {

/// protobuf refuses messages of 2 GiB and more (and onnx's own loader then returns an empty model).
constexpr uint64_t kMaxMessageBytes = std::numeric_limits<int32_t>::max();

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

onnx::ModelProto LoadModel(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw Error(ExitCode::kBadInput, "cannot open: " + ErrnoText());
  if (S_ISDIR(info.st_mode)) throw Error(ExitCode::kBadInput, "is a directory, not an ONNX file");
  if (info.st_size == 0) throw Error(ExitCode::kBadInput, "empty file, not an ONNX model");
  if (static_cast<uint64_t>(info.st_size) >= kMaxMessageBytes) {
    throw Error(ExitCode::kBadInput, "file is " + std::to_string(info.st_size) +
                                         " bytes; protobuf cannot parse a model of 2 GiB or more in one message");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ExitCode::kBadInput, "cannot open: " + ErrnoText());
  std::string bytes(static_cast<size_t>(info.st_size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    throw Error(ExitCode::kBadInput, "cannot read: " + ErrnoText());
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    throw Error(ExitCode::kBadInput, "not an ONNX model (protobuf parse failed: truncated or another format)");
  }
  if (!model.has_graph()) throw Error(ExitCode::kBadInput, "not an ONNX model (no graph)");
  // opset_import is serialized after the graph: a file cut right after the graph parses but lacks it.
  if (model.opset_import_size() == 0) {
    throw Error(ExitCode::kBadInput, "not a complete ONNX model (no opset_import: truncated?)");
  }
  return model;
}

void WriteModelAtomically(const onnx::ModelProto& model, const std::string& path) {
  size_t size = model.ByteSizeLong();
  if (size >= kMaxMessageBytes) {
    throw Error(ExitCode::kCannotWrite, "the rewritten model is 2 GiB or more; protobuf cannot serialize it");
  }
  std::string temp = path + ".rnnstate-" + std::to_string(::getpid()) + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) throw Error(ExitCode::kCannotWrite, "cannot create '" + temp + "': " + ErrnoText());
  bool ok = model.SerializeToFileDescriptor(fd);
  std::string error = ok ? "" : "serialization failed: " + ErrnoText();
  if (ok && ::fsync(fd) != 0) {
    ok = false;
    error = "fsync failed: " + ErrnoText();
  }
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = "close failed: " + ErrnoText();
  }
  if (ok && ::rename(temp.c_str(), path.c_str()) != 0) {
    ok = false;
    error = "cannot rename into place: " + ErrnoText();
  }
  if (!ok) {
    ::unlink(temp.c_str());
    throw Error(ExitCode::kCannotWrite, error);
  }
}

}  // namespace rnnstate
