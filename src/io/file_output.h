#pragma once
/// \file
/// Internal to model_file and model_io: writing a file from pieces — large spans of the mapped input are copied by the
/// kernel — under a temporary name that is renamed over the destination only when complete.

#include <cstdint>
#include <string>
#include <vector>

#include "io/byte_piece.h"

namespace rnnstate::output {

/// The input file, the source of large output pieces.
struct InputFile {
  int fd;
  const uint8_t* data;
  uint64_t size;
  /// `data` is a read-only mapping of the file, whose pages may be dropped once written (MADV_DONTNEED);
  /// false for bytes in the process's own memory (a small file read whole), which dropping would zero.
  bool mapped;
};

/// Writes the concatenation of `pieces` to `path`: into a new temporary file in the same directory
/// (permissions of an existing `path` kept), flushed to disk when `sync`, then renamed over `path` (and
/// the directory flushed when `sync`). On any failure `path` is untouched and the temporary removed.
/// The temporary's name is never longer than `path`'s own when that is long. RequireReplaceable first.
/// Throws Error(kCannotWrite).
void WriteFileAtomically(const std::string& path, const std::vector<BytePiece>& pieces, const InputFile& input,
                         bool sync);

/// Throws Error(kCannotWrite) when `path` exists and is neither a regular file nor a symlink (which is
/// replaced, not followed): renaming over a device node (`-o /dev/full` as root) replaces the device.
void RequireReplaceable(const std::string& path);

/// The directory holding the file `path`: "." for a bare file name.
std::string DirectoryOf(const std::string& path);

}  // namespace rnnstate::output
