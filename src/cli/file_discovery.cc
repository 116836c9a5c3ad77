#include "cli/file_discovery.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "rnnstate/error.h"

namespace rnnstate {

namespace fs = std::filesystem;

namespace {

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

/// Keys identifying a file however it was named (`a/../m.onnx` and `m.onnx`, a symlink and its
/// target), or the path itself when it cannot be resolved. Resolving a path costs a system call per
/// component, so each directory is resolved once and a file costs one lstat.
class FileKeys {
 public:
  std::string Key(const std::string& path) {
    struct stat info {};
    bool is_link = lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode);
    if (is_link) return Resolve(fs::path(path));
    std::string parent, name;
    if (!SplitPlainly(path, &parent, &name)) {
      fs::path file(path);
      name = file.filename().string();
      if (name.empty() || name == "." || name == "..") return Resolve(file);
      parent = file.parent_path().string();
    }
    auto [it, fresh] = directories_.try_emplace(parent);
    if (fresh) it->second = Resolve(parent.empty() ? fs::path(".") : fs::path(parent));
    return Join(it->second, name);
  }

 private:
  /// `path`'s directory and last component as fs::path's parent_path and filename give them, from the
  /// string itself (a path costs a parse and an allocation per component): when no component is empty
  /// (no "//", no trailing '/') and the last is a name, not "." or "..". False otherwise.
  static bool SplitPlainly(const std::string& path, std::string* parent, std::string* name) {
    if (path.empty() || path.back() == '/' || path.find("//") != std::string::npos) return false;
    const size_t slash = path.rfind('/');
    const size_t start = slash == std::string::npos ? 0 : slash + 1;
    if (path.compare(start, std::string::npos, ".") == 0 || path.compare(start, std::string::npos, "..") == 0) {
      return false;
    }
    *name = path.substr(start);
    *parent = slash == std::string::npos ? "" : slash == 0 ? "/" : path.substr(0, slash);
    return true;
  }

  /// fs::path(directory) / name, for a `name` without a separator.
  static std::string Join(const std::string& directory, const std::string& name) {
    if (directory.empty()) return name;
    return directory.back() == '/' ? directory + name : directory + '/' + name;
  }

  static std::string Resolve(const fs::path& path) {
    std::error_code ec;
    fs::path resolved = fs::weakly_canonical(path, ec);
    return ec ? path.string() : resolved.string();
  }

  std::unordered_map<std::string, std::string> directories_;
};

bool IsSameDirectory(const fs::path& a, const std::string& b) {
  if (b.empty()) return false;
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

/// The `*.onnx` files below `directory`, relative to it, sorted; sets `error` when it cannot be read.
std::vector<std::string> WalkDirectory(const std::string& directory, const DiscoveryOptions& options,
                                       std::string* error) {
  std::vector<std::string> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(directory, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code entry_ec;
    const fs::path& path = it->path();
    if (it->is_directory(entry_ec)) {
      if (IsSameDirectory(path, options.skip_directory)) it.disable_recursion_pending();
      continue;
    }
    std::string name = path.filename().string();
    // Not only regular files: a FIFO, a device, a socket or a dangling symlink named *.onnx is listed
    // too, so that it is refused (exit 3, with the reason) like the same path named on the command line,
    // never skipped unseen. Opening refuses it from its stat, without reading it.
    if (!IsModelFileName(name)) continue;
    if (!options.skip_suffix.empty() && EndsWith(name, options.skip_suffix)) continue;
    found.push_back(path.lexically_relative(directory).generic_string());
  }
  if (ec) *error = "cannot read directory: " + ec.message();
  std::sort(found.begin(), found.end());
  return found;
}

void AddDirectory(const std::string& argument, const DiscoveryOptions& options, std::vector<InputFile>& out) {
  std::string error;
  std::vector<std::string> found = WalkDirectory(argument, options, &error);
  if (error.empty() && found.empty()) error = "no *.onnx files in this directory";
  if (!error.empty()) {
    out.push_back(InputFile{argument, argument, "", error, ""});
    return;
  }
  for (const auto& relative : found) {
    out.push_back(InputFile{(fs::path(argument) / relative).string(), argument, relative, "", ""});
  }
}

}  // namespace

bool IsModelFileName(std::string_view name) { return EndsWith(name, ".onnx"); }

std::vector<InputFile> FindModelFiles(const std::vector<std::string>& arguments, const DiscoveryOptions& options) {
  std::vector<InputFile> expanded;
  for (const auto& argument : arguments) {
    std::error_code ec;
    if (fs::is_directory(argument, ec)) {
      AddDirectory(argument, options, expanded);
    } else {
      expanded.push_back(InputFile{argument, "", fs::path(argument).filename().string(), "", ""});
    }
  }
  std::vector<InputFile> unique;
  std::set<std::string> seen;
  FileKeys keys;
  for (auto& input : expanded) {
    if (input.error.empty()) {
      input.key = keys.Key(input.path);
      if (!seen.insert(input.key).second) continue;
    }
    unique.push_back(std::move(input));
  }
  return unique;
}

std::string SuffixOutputPath(const std::string& input) {
  std::string stem = input;
  const std::string extension = ".onnx";
  if (stem.size() > extension.size() && EndsWith(stem, extension)) stem.resize(stem.size() - extension.size());
  return stem + kStreamingSuffix;
}

std::string OutputPathFor(const InputFile& input, OutputMode mode, const std::string& target) {
  switch (mode) {
    case OutputMode::kSuffix:
      return SuffixOutputPath(input.path);
    case OutputMode::kOutDir:
      return (fs::path(target) / input.relative).string();
    case OutputMode::kInPlace:
      return input.path;
    case OutputMode::kExplicit:
      return target;
  }
  return target;
}

std::string OutputConflict(const std::vector<InputFile>& inputs, const std::vector<std::string>& outputs,
                           bool in_place) {
  std::map<std::string, size_t> input_at;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].error.empty()) input_at.emplace(inputs[i].key, i);
  }
  FileKeys keys;
  std::map<std::string, size_t> output_at;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].error.empty()) continue;
    std::error_code ec;
    if (fs::is_directory(outputs[i], ec)) {
      return "the output '" + outputs[i] + "' is a directory (-o names the output file; --out-dir names a " +
             "directory to write into)";
    }
    std::string key = keys.Key(outputs[i]);
    auto [previous, fresh] = output_at.emplace(key, i);
    if (!fresh) {
      return "'" + outputs[i] + "' would be written twice (from '" + inputs[previous->second].path + "' and '" +
             inputs[i].path + "')";
    }
    auto input = input_at.find(key);
    if (input == input_at.end() || (in_place && input->second == i)) continue;
    if (input->second == i) return "the output of '" + inputs[i].path + "' would replace it (use --in-place)";
    return "the output of '" + inputs[i].path + "' would replace the input '" + inputs[input->second].path + "'";
  }
  return "";
}

FileResult DiscoveryErrorResult(const InputFile& input) {
  return ProcessGuarded(input.path, [&](FileResult&) { throw Error(ExitCode::kBadInput, input.error); });
}

}  // namespace rnnstate
