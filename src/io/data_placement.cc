#include "io/data_placement.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>

#include "graph/proto_access.h"
#include "io/external_data.h"
#include "io/file_output.h"
#include "io/regular_file.h"
#include "io/system_error.h"
#include "rnnstate/error.h"

namespace rnnstate {

namespace fs = std::filesystem;

namespace {

/// True when the descriptor `fd` and the path `path` are the same file.
bool SameFile(int fd, const fs::path& path) {
  struct stat open_file {
  }, named{};
  return fstat(fd, &open_file) == 0 && stat(path.c_str(), &named) == 0 && open_file.st_dev == named.st_dev &&
         open_file.st_ino == named.st_ino;
}

/// A path as a rename onto it would treat it: the directory entry it names (its directory resolved, its
/// last component as given), what it resolves to through symlinks, and the file there, if any.
struct Named {
  fs::path entry;
  fs::path resolved;
  std::optional<std::pair<dev_t, ino_t>> file;

  explicit Named(const fs::path& path) {
    std::error_code error;
    const fs::path name = path.filename();
    if (name.empty() || name == "." || name == "..") {
      entry = fs::weakly_canonical(path, error);
    } else {
      const fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
      entry = fs::weakly_canonical(parent, error) / name;
    }
    if (error) entry = path.lexically_normal();
    resolved = fs::weakly_canonical(path, error);
    if (error) resolved = entry;
    struct stat info {};
    if (stat(path.c_str(), &info) == 0) file = std::make_pair(info.st_dev, info.st_ino);
  }

  /// True when writing over `this` (a rename onto its entry, or onto the file a symlink there names)
  /// replaces `other`'s file, under whatever name.
  bool Replaces(const Named& other) const {
    return entry == other.entry || entry == other.resolved || resolved == other.resolved ||
           (file && other.file && *file == *other.file);
  }
};

/// Copies the bytes of `data` to `target` through a temporary file and a rename.
void CopyAtomically(const input::RegularFile& data, const fs::path& target) {
  const uint64_t size = data.size();
  void* mapped = size == 0 ? nullptr : mmap(nullptr, size, PROT_READ, MAP_PRIVATE, data.fd(), 0);
  if (mapped == MAP_FAILED) {
    throw Error(ExitCode::kCannotWrite,
                SystemError("cannot map external data to copy it to '" + target.string() + "'"));
  }
  const auto* bytes = static_cast<const uint8_t*>(mapped);
  try {
    std::vector<BytePiece> pieces;
    if (size > 0) pieces.push_back({bytes, size});
    output::WriteFileAtomically(target.string(), pieces, output::InputFile{data.fd(), bytes, size, /*mapped=*/true},
                                false);
  } catch (Error& e) {
    if (mapped != nullptr) munmap(mapped, size);
    e.AppendContext("cannot copy external data to '" + target.string() + "'");
    throw;
  }
  if (mapped != nullptr) munmap(mapped, size);
}

/// Makes the opened, checked `data` (at the resolved path `source`) available at `target`: a hard link,
/// else a copy of its bytes.
void LinkOrCopy(const input::RegularFile& data, const fs::path& source, const fs::path& target) {
  if (link(source.c_str(), target.c_str()) == 0) {
    // The path may name another file by now: keep the link only to the file that was checked.
    if (SameFile(data.fd(), target)) return;
    unlink(target.c_str());
  }
  CopyAtomically(data, target);  // another filesystem, links not allowed, or the path changed
}

/// What this process placed and not yet kept, with how many placements rely on each path. A path placed
/// by one output and found by another (outputs in one directory share their data files) stays while
/// any of them is pending, and for good once one of them is kept. Worker threads share it: every
/// placement and every removal happens under its lock.
struct Registry {
  struct Entry {
    int users = 0;
    bool kept = false;
    bool directory = false;
  };
  std::mutex mutex;
  std::map<std::string, Entry> entries;

  static Registry& Instance() {
    static Registry registry;
    return registry;
  }
};

/// Drops one placement's reliance on each of `paths` (newest first: files before their directories) and
/// removes what no one relies on any more and no one kept. The caller holds the registry's lock.
void ReleaseLocked(Registry& registry, std::vector<std::string>& paths) {
  for (auto path = paths.rbegin(); path != paths.rend(); ++path) {
    auto found = registry.entries.find(*path);
    if (found == registry.entries.end() || --found->second.users > 0) continue;
    if (!found->second.kept) {
      // A directory goes only when empty: a user's file put there meanwhile keeps it.
      if (found->second.directory) {
        rmdir(path->c_str());
      } else {
        unlink(path->c_str());
      }
    }
    registry.entries.erase(found);
  }
  paths.clear();
}

/// Counts `path` on one placement (`paths`): one it created, or one another placement of this run created;
/// a path the user had is never counted, so never removed. The caller holds the registry's lock.
void RelyLocked(Registry& registry, std::vector<std::string>& paths, const fs::path& path, bool created,
                bool directory) {
  auto found = registry.entries.find(path.string());
  if (!created && found == registry.entries.end()) return;
  if (found == registry.entries.end()) found = registry.entries.emplace(path.string(), Registry::Entry{}).first;
  found->second.users++;
  found->second.directory = directory;
  paths.push_back(path.string());
}

}  // namespace

std::string OutputDataConflict(const std::vector<std::string>& locations, const std::string& model_dir,
                               const std::string& output) {
  // Most models have no external data: no path to resolve then.
  if (locations.empty()) return "";
  const Named out{fs::path(output)};
  const fs::path from = model_dir.empty() ? fs::path(".") : fs::path(model_dir);
  const fs::path to = fs::path(output::DirectoryOf(output));
  for (const std::string& location : locations) {
    if (out.Replaces(Named(from / location))) {
      return "the output '" + output + "' would replace the model's external data file '" + Printable(location) + "'";
    }
    if (out.Replaces(Named(to / location))) {
      return "the output '" + output + "' is where its own external data file '" + Printable(location) + "' must go";
    }
  }
  return "";
}

PlacedData::PlacedData(PlacedData&& other) noexcept : paths_(std::move(other.paths_)), kept_(other.kept_) {
  other.paths_.clear();
}

void PlacedData::Keep() {
  Registry& registry = Registry::Instance();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const std::string& path : paths_) {
    auto found = registry.entries.find(path);
    if (found == registry.entries.end()) continue;
    // A kept path is the user's from now on: forgotten, as if it had been there before the run.
    if (--found->second.users == 0) {
      registry.entries.erase(found);
    } else {
      found->second.kept = true;
    }
  }
  paths_.clear();
  kept_ = true;
}

PlacedData::~PlacedData() {
  if (kept_ || paths_.empty()) return;
  Registry& registry = Registry::Instance();
  std::lock_guard<std::mutex> lock(registry.mutex);
  ReleaseLocked(registry, paths_);
}

PlacedData ProvideExternalData(const std::vector<std::string>& locations, const std::string& from_dir,
                               const std::string& to_dir) {
  PlacedData placed;
  if (locations.empty()) return placed;
  std::error_code error;
  fs::path from = fs::canonical(from_dir.empty() ? "." : from_dir, error);
  fs::path to = error ? fs::path() : fs::canonical(to_dir.empty() ? "." : to_dir, error);
  if (error) throw Error(ExitCode::kCannotWrite, "cannot resolve the output directory: " + error.message());
  if (from == to) return placed;
  Registry& registry = Registry::Instance();
  auto rely_on = [&](const fs::path& path, bool created, bool directory) {
    RelyLocked(registry, placed.paths_, path, created, directory);
  };
  std::lock_guard<std::mutex> lock(registry.mutex);
  try {
    for (const auto& location : locations) {
      // Resolved and opened as CheckExternalData did: the file must still be inside and regular.
      fs::path source;
      std::optional<input::RegularFile> data;
      try {
        source = ResolveLocation(location, from);
        data.emplace(input::RegularFile::Open(source.string()));
      } catch (Error& e) {
        e.AppendContext("external data '" + Printable(location) + "'");
        throw;
      }
      const fs::path target = to / location;
      // The directories a nested location needs, outermost first.
      fs::path directory = to;
      for (const auto& part : fs::path(location).parent_path()) {
        directory /= part;
        const bool created = fs::create_directory(directory, error);
        if (error)
          throw Error(ExitCode::kCannotWrite, "cannot create '" + directory.string() + "': " + error.message());
        rely_on(directory, created, true);
      }
      if (fs::exists(target, error)) {
        if (!SameFile(data->fd(), target)) {
          throw Error(ExitCode::kCannotWrite, "external data file '" + Printable(target.string()) +
                                                  "' already exists and is not the model's; not overwriting it");
        }
        rely_on(target, false, false);
        continue;
      }
      LinkOrCopy(*data, source, target);
      rely_on(target, true, false);
    }
  } catch (...) {
    ReleaseLocked(registry, placed.paths_);  // under the lock held here: ~PlacedData would take it again
    throw;
  }
  return placed;
}

PlacedData CreateOutputDirectories(const std::string& directory) {
  PlacedData placed;
  Registry& registry = Registry::Instance();
  std::lock_guard<std::mutex> lock(registry.mutex);
  // Usually the directory is there already (an earlier output put it there): one stat instead of a mkdir
  // and a stat per component. Then every ancestor exists too, so none would be created, and when no
  // placement of this run is pending, none is counted either.
  struct stat info {};
  if (registry.entries.empty() && !directory.empty() && stat(directory.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    return placed;
  }
  try {
    fs::path path;
    for (const auto& part : fs::path(directory)) {  // outermost first
      path /= part;
      std::error_code error;
      const bool created = fs::create_directory(path, error);
      if (error) {
        throw Error(ExitCode::kCannotWrite, "cannot create directory '" + path.string() + "': " + error.message());
      }
      RelyLocked(registry, placed.paths_, path, created, true);
    }
  } catch (...) {
    ReleaseLocked(registry, placed.paths_);
    throw;
  }
  return placed;
}

}  // namespace rnnstate
