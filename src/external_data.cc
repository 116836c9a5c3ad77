#include "external_data.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>

#include "rnnstate/error.h"

namespace rnnstate {

namespace fs = std::filesystem;

namespace {

template <typename Visit>
void ForEachTensor(const onnx::GraphProto& graph, Visit&& visit) {
  for (const auto& tensor : graph.initializer()) visit(tensor);
  for (const auto& sparse : graph.sparse_initializer()) {
    visit(sparse.values());
    visit(sparse.indices());
  }
  for (const auto& node : graph.node()) {
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_t()) visit(attribute.t());
      for (const auto& tensor : attribute.tensors()) visit(tensor);
      if (attribute.has_g()) ForEachTensor(attribute.g(), visit);
      for (const auto& sub : attribute.graphs()) ForEachTensor(sub, visit);
    }
  }
}

std::string LocationOf(const onnx::TensorProto& tensor) {
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "location") return entry.value();
  }
  throw Error(ExitCode::kBadInput, "tensor '" + tensor.name() + "' has external data without a location");
}

/// True when `path` (absolute, normalized) lies inside `dir` (absolute, normalized).
bool Inside(const fs::path& path, const fs::path& dir) {
  auto mismatch = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return mismatch.first == dir.end();
}

void CheckLocation(const std::string& location, const fs::path& model_dir) {
  fs::path relative(location);
  if (location.empty() || relative.is_absolute()) {
    throw Error(ExitCode::kBadInput, "external data location '" + location + "' must be a relative path");
  }
  for (const auto& part : relative) {
    if (part == "..") throw Error(ExitCode::kBadInput, "external data location '" + location + "' leaves the model's directory");
  }
  std::error_code error;
  fs::path dir = fs::canonical(model_dir, error);
  fs::path file = error ? fs::path() : fs::canonical(model_dir / relative, error);
  if (error) throw Error(ExitCode::kBadInput, "external data file '" + location + "' is missing: " + error.message());
  if (!Inside(file, dir)) {
    throw Error(ExitCode::kBadInput, "external data location '" + location + "' resolves outside the model's directory (symlink)");
  }
}

/// Copies `from` to `to` through a temporary file and a rename.
void CopyAtomically(const fs::path& from, const fs::path& to) {
  fs::path temp = to;
  temp += ".rnnstate-" + std::to_string(::getpid()) + ".tmp";
  std::error_code error;
  fs::copy_file(from, temp, fs::copy_options::overwrite_existing, error);
  if (!error) fs::rename(temp, to, error);
  if (error) {
    fs::remove(temp);
    throw Error(ExitCode::kCannotWrite, "cannot copy external data to '" + to.string() + "': " + error.message());
  }
}

}  // namespace

std::vector<std::string> CheckExternalData(const onnx::ModelProto& model, const std::string& model_dir) {
  std::vector<std::string> locations;
  std::set<std::string> seen;
  ForEachTensor(model.graph(), [&](const onnx::TensorProto& tensor) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return;
    std::string location = LocationOf(tensor);
    if (!seen.insert(location).second) return;
    CheckLocation(location, model_dir.empty() ? fs::path(".") : fs::path(model_dir));
    locations.push_back(location);
  });
  return locations;
}

void ProvideExternalData(const std::vector<std::string>& locations, const std::string& from_dir,
                         const std::string& to_dir) {
  if (locations.empty()) return;
  std::error_code error;
  fs::path from = fs::canonical(from_dir.empty() ? "." : from_dir, error);
  fs::path to = error ? fs::path() : fs::canonical(to_dir.empty() ? "." : to_dir, error);
  if (error) throw Error(ExitCode::kCannotWrite, "cannot resolve the output directory: " + error.message());
  if (from == to) return;
  for (const auto& location : locations) {
    fs::path source = from / location, target = to / location;
    if (fs::exists(target)) {
      if (fs::equivalent(source, target)) continue;
      throw Error(ExitCode::kCannotWrite, "external data file '" + target.string() +
                                              "' already exists and is not the model's; not overwriting it");
    }
    fs::create_directories(target.parent_path(), error);
    if (error) throw Error(ExitCode::kCannotWrite, "cannot create '" + target.parent_path().string() + "': " + error.message());
    fs::create_hard_link(source, target, error);
    if (error) CopyAtomically(source, target);  // another filesystem, or links not allowed
  }
}

}  // namespace rnnstate
