#include "io/file_output.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <random>

#include "io/regular_file.h"
#include "io/system_error.h"
#include "rnnstate/error.h"

namespace rnnstate::output {

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

namespace {

/// Writes `iov` completely, resuming after partial writes.
void WriteIovecs(int fd, std::vector<iovec>* iov) {
  size_t first = 0;
  while (true) {
    // Empty pieces are skipped: writev of nothing but empty ones returns 0, which is no failure to write.
    while (first < iov->size() && (*iov)[first].iov_len == 0) ++first;
    if (first == iov->size()) return;
    const int count = static_cast<int>(std::min<size_t>(iov->size() - first, IOV_MAX));
    const ssize_t written = writev(fd, iov->data() + first, count);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) throw Error(ExitCode::kCannotWrite, SystemError("write failed"));
    for (size_t done = written; done > 0;) {
      iovec& head = (*iov)[first];
      const size_t step = std::min(done, head.iov_len);
      head.iov_base = static_cast<char*>(head.iov_base) + step;
      head.iov_len -= step;
      done -= step;
      if (head.iov_len == 0) ++first;
    }
  }
}

/// Streams output pieces to a file. Small pieces are gathered into writev calls. Large spans of the input
/// file are copied by the kernel (copy_file_range) without passing through this process; where the kernel
/// cannot (another file system, an old kernel), they are written by writev straight from the mapping, a
/// slice at a time.
class PieceWriter {
 public:
  PieceWriter(int out_fd, const InputFile& input) : out_fd_(out_fd), input_(input) {}

  void Write(const std::vector<BytePiece>& pieces) {
    for (const BytePiece& piece : pieces) {
      if (piece.size >= kKernelCopyMin && IsInInput(piece)) {
        if (!KernelCopy(piece.data - input_.data, piece.size)) WriteFromMapping(piece);
        continue;
      }
      pending_.push_back({const_cast<uint8_t*>(piece.data), piece.size});
      if (pending_.size() == IOV_MAX) Flush();
    }
    Flush();
  }

 private:
  static constexpr uint64_t kKernelCopyMin = 64 << 10;
  static constexpr uint64_t kMappingSlice = 64 << 20;

  /// Writes a large span of the input in slices; of a mapping, each slice's pages are dropped once written,
  /// so that the process never holds more than a slice of the file (the pages stay in the page cache).
  void WriteFromMapping(const BytePiece& piece) {
    Flush();
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    for (uint64_t done = 0; done < piece.size;) {
      const uint8_t* slice = piece.data + done;
      const uint64_t size = std::min(kMappingSlice, piece.size - done);
      pending_.push_back({const_cast<uint8_t*>(slice), size});
      Flush();
      done += size;
      // Never on the process's own memory: MADV_DONTNEED zeroes private anonymous pages, the heap's
      // bookkeeping and other objects on them included.
      if (!input_.mapped) continue;
      const uintptr_t first_page = reinterpret_cast<uintptr_t>(slice) & ~(page - 1);
      madvise(reinterpret_cast<void*>(first_page), reinterpret_cast<uintptr_t>(slice) + size - first_page,
              MADV_DONTNEED);
    }
  }

  bool IsInInput(const BytePiece& piece) const {
    const auto begin = reinterpret_cast<uintptr_t>(input_.data), at = reinterpret_cast<uintptr_t>(piece.data);
    return at >= begin && piece.size <= input_.size && at - begin <= input_.size - piece.size;
  }

  /// Copies input bytes [offset, offset + size) to the output; false if the kernel cannot do it at all.
  bool KernelCopy(uint64_t offset, uint64_t size) {
    if (!kernel_copy_works_) return false;
    Flush();
    auto in_offset = static_cast<loff_t>(offset);
    for (uint64_t left = size; left > 0;) {
      const ssize_t copied = copy_file_range(input_.fd, &in_offset, out_fd_, nullptr, left, 0);
      if (copied < 0 && errno == EINTR) continue;
      if (copied < 0 && left == size && KernelCannotCopy(errno)) return kernel_copy_works_ = false;
      if (copied < 0) throw Error(ExitCode::kCannotWrite, SystemError("write failed"));
      if (copied == 0) throw Error(ExitCode::kCannotWrite, "the input file shrank while it was being copied");
      left -= static_cast<uint64_t>(copied);
    }
    return true;
  }

  static bool KernelCannotCopy(int error) {
    return error == EXDEV || error == EINVAL || error == ENOSYS || error == EOPNOTSUPP || error == EBADF;
  }

  void Flush() {
    WriteIovecs(out_fd_, &pending_);
    pending_.clear();
  }

  int out_fd_;
  InputFile input_;
  std::vector<iovec> pending_;
  bool kernel_copy_works_ = true;
};

/// A file written under a temporary name in its destination's directory and renamed over the destination
/// by Commit. Until then the destination is untouched; destroyed uncommitted, the temporary is removed.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path) : path_(path) {
    RequireReplaceable(path);
    const size_t slash = path.find_last_of('/');
    const std::string directory = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    const std::string name = path.substr(slash == std::string::npos ? 0 : slash + 1);
    std::random_device random;
    for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
      temp_path_ = directory + TemporaryName(name, random());
      // O_EXCL: never reuse someone else's file; mode 0666 lets the umask decide, as for any new file.
      fd_ = open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST) break;
    }
    if (fd_ < 0) throw Error(ExitCode::kCannotWrite, SystemError("cannot create a file in " + DirectoryOf(path)));
  }

  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  ~AtomicFile() {
    if (fd_ >= 0) close(fd_);
    if (!committed_) unlink(temp_path_.c_str());
  }

  int fd() const { return fd_; }

  /// The temporary name for the file `name`: ".NAME.tmp-NNNNNNNNNN", and never longer than `name` once
  /// that is over kShortName bytes (the name is cut, its end replaced by the random number), so that it
  /// fits wherever `name` fits (a 255-byte name on a filesystem whose names end at 255).
  static std::string TemporaryName(const std::string& name, uint32_t random) {
    char digits[11];
    std::snprintf(digits, sizeof digits, "%010u", random);
    const std::string suffix = std::string(".tmp-") + digits;
    const std::string full = "." + name + suffix;
    if (full.size() <= std::max(name.size(), kShortName)) return full;
    return "." + name.substr(0, name.size() - 1 - suffix.size()) + suffix;
  }

  /// Renames the file over the destination, first flushing it to disk when `sync` (otherwise the
  /// caller makes it durable later, e.g. with one syncfs for a whole batch).
  void Commit(bool sync) {
    KeepPermissionsOfDestination();
    if (sync && fsync(fd_) != 0) throw Error(ExitCode::kCannotWrite, SystemError("fsync failed"));
    const int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0) throw Error(ExitCode::kCannotWrite, SystemError("close failed"));
    if (rename(temp_path_.c_str(), path_.c_str()) != 0) {
      throw Error(ExitCode::kCannotWrite, SystemError("cannot rename the temporary file over it"));
    }
    committed_ = true;
    if (sync) SyncDirectory();
  }

 private:
  // Replacing a file in place should not change who may read it.
  void KeepPermissionsOfDestination() const {
    struct stat existing;
    if (stat(path_.c_str(), &existing) == 0 && S_ISREG(existing.st_mode)) fchmod(fd_, existing.st_mode & 07777);
  }

  // Makes the rename durable. Best effort: the file is in place already, so a failure here is not reported.
  void SyncDirectory() const {
    const int dir = open(DirectoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return;
    fsync(dir);
    close(dir);
  }

  /// Names up to this length keep their whole name in the temporary's.
  static constexpr size_t kShortName = 64;

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

void RequireReplaceable(const std::string& path) {
  struct stat existing;
  if (lstat(path.c_str(), &existing) != 0 || S_ISREG(existing.st_mode) || S_ISLNK(existing.st_mode)) return;
  throw Error(ExitCode::kCannotWrite,
              "is not a regular file (" + input::FileKind(existing.st_mode) + "): rnnstate writes only regular files");
}

void WriteFileAtomically(const std::string& path, const std::vector<BytePiece>& pieces, const InputFile& input,
                         bool sync) {
  AtomicFile out(path);
  PieceWriter(out.fd(), input).Write(pieces);
  out.Commit(sync);
}

}  // namespace rnnstate::output
