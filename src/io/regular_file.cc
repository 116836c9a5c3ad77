#include "io/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/system_error.h"
#include "rnnstate/error.h"

namespace rnnstate::input {


std::string FileKind(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a FIFO";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    default:
      return "a special file";
  }
}

namespace {

/// Throws unless `info` is a regular file's.
void RequireRegular(const struct stat& info) {
  const std::string kind = FileKind(info.st_mode);
  if (kind.empty()) return;
  throw Error(ExitCode::kBadInput, S_ISDIR(info.st_mode) ? "is a directory" : "not a regular file (" + kind + ")");
}

}  // namespace

RegularFile RegularFile::Open(const std::string& path) {
  struct stat before {};
  if (stat(path.c_str(), &before) != 0) throw Error(ExitCode::kBadInput, SystemError("cannot open"));
  RequireRegular(before);
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw Error(ExitCode::kBadInput, SystemError("cannot open"));
  RegularFile file(fd, 0);
  struct stat info {};
  if (fstat(fd, &info) != 0) throw Error(ExitCode::kBadInput, SystemError("cannot stat"));
  RequireRegular(info);
  if (info.st_dev != before.st_dev || info.st_ino != before.st_ino) {
    throw Error(ExitCode::kBadInput, "changed while it was opened");
  }
  // Non-blocking means nothing for a regular file; clear it so that no later read can see EAGAIN. F_SETFL
  // sets only the file status flags (the access mode and O_LARGEFILE stay), and of those the open above
  // set O_NONBLOCK alone: no F_GETFL needed to keep the others.
  if (fcntl(fd, F_SETFL, 0) != 0) {
    throw Error(ExitCode::kBadInput, SystemError("cannot set the file's flags"));
  }
  file.size_ = static_cast<uint64_t>(info.st_size);
  return file;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace rnnstate::input
