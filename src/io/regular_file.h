#pragma once
/// \file
/// Internal: opening input files — a model, an external data file — without ever blocking on, or reading
/// from, anything but a regular file.

#include <cstdint>
#include <string>

namespace rnnstate::input {

/// A read-only descriptor of a regular file, closed when destroyed.
class RegularFile {
 public:
  /// Opens `path` (following symlinks) for reading. Anything but a regular file is refused from its stat,
  /// before any open: opening a FIFO would wait for a writer, a device may act on being opened. The open
  /// itself is non-blocking, so a path swapped for a FIFO in between cannot hang it, and the descriptor
  /// must be the file that was checked. Throws Error(kBadInput, problem), the problem one of
  /// "cannot open: <reason>", "is a directory", "not a regular file (a FIFO)" (a character device, a block
  /// device, a socket).
  static RegularFile Open(const std::string& path);

  RegularFile(RegularFile&& other) noexcept : fd_(other.fd_), size_(other.size_) { other.fd_ = -1; }
  RegularFile& operator=(RegularFile&& other) = delete;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  int fd() const { return fd_; }
  /// The file's size when it was opened.
  uint64_t size() const { return size_; }
  /// Gives up the descriptor: the caller closes it.
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  RegularFile(int fd, uint64_t size) : fd_(fd), size_(size) {}

  int fd_;
  uint64_t size_;
};

/// What `mode` is, in words ("a FIFO", "a directory", ...), or "" for a regular file.
std::string FileKind(unsigned mode);

}  // namespace rnnstate::input
