#include "rnnstate/model_file.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>
#include <functional>
#include <optional>
#include <random>

#include "rnnstate/error.h"

namespace rnnstate {

const unsigned char ModelFile::kPlaceholderMagic[16] = {'r',  'n',  'n',  's',  't',  'a',  't',  'e',
                                                        0x00, 0xd7, 0x3a, 0x91, 0x5c, 0xe2, 0x08, 0xb4};

namespace {

constexpr uint64_t kMaxProtobufMessage = INT_MAX;  // protobuf parses and serializes at most 2 GiB - 1
constexpr int kMaxNesting = 100;                   // protobuf's own default recursion limit
constexpr int kWireVarint = 0, kWireFixed64 = 1, kWireLength = 2, kWireFixed32 = 5;

std::string SystemError(const std::string& what) { return what + ": " + std::strerror(errno); }

// ---------------------------------------------------------------------------------------------------
// Where tensors live: the message fields (onnx 1.12, onnx.proto) on the paths from ModelProto to every
// TensorProto. Every other field is copied as it is.

enum class Msg { kModel, kTrainingInfo, kGraph, kFunction, kNode, kAttribute, kSparseTensor, kTensor };

struct Edge {
  Msg parent;
  uint32_t field;
  Msg child;
};

constexpr Edge kTensorPaths[] = {
    {Msg::kModel, 7, Msg::kGraph},
    {Msg::kModel, 20, Msg::kTrainingInfo},
    {Msg::kModel, 25, Msg::kFunction},
    {Msg::kTrainingInfo, 1, Msg::kGraph},
    {Msg::kTrainingInfo, 2, Msg::kGraph},
    {Msg::kGraph, 1, Msg::kNode},
    {Msg::kGraph, 5, Msg::kTensor},
    {Msg::kGraph, 15, Msg::kSparseTensor},
    {Msg::kFunction, 7, Msg::kNode},
    {Msg::kNode, 5, Msg::kAttribute},
    {Msg::kAttribute, 5, Msg::kTensor},
    {Msg::kAttribute, 6, Msg::kGraph},
    {Msg::kAttribute, 10, Msg::kTensor},
    {Msg::kAttribute, 11, Msg::kGraph},
    {Msg::kAttribute, 22, Msg::kSparseTensor},
    {Msg::kAttribute, 23, Msg::kSparseTensor},
    {Msg::kSparseTensor, 1, Msg::kTensor},
    {Msg::kSparseTensor, 2, Msg::kTensor},
};
constexpr uint32_t kRawDataField = 9;  // TensorProto.raw_data

/// The message type held by field `field` of a `parent`, if it is on a path to a TensorProto.
std::optional<Msg> ChildMessage(Msg parent, uint32_t field) {
  for (const Edge& edge : kTensorPaths) {
    if (edge.parent == parent && edge.field == field) return edge.child;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------------
// Wire format.

/// Reads a varint at `*pos`, advancing it. False if it runs past `end` or is longer than 10 bytes.
bool ReadVarint(const uint8_t** pos, const uint8_t* end, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64 && *pos < end; shift += 7) {
    const uint8_t byte = *(*pos)++;
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *value = result;
      return true;
    }
  }
  return false;
}

/// Encodes `value` as a varint into `out` (at least 10 bytes); returns its size.
size_t EncodeVarint(uint64_t value, uint8_t* out) {
  size_t size = 0;
  while (value >= 0x80) {
    out[size++] = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  out[size++] = static_cast<uint8_t>(value);
  return size;
}

/// One field of a serialized message. For a length-delimited field, [value, end) is its content.
struct Field {
  const uint8_t* begin;
  const uint8_t* tag_end;
  const uint8_t* value;
  const uint8_t* end;
  uint32_t number;
  int wire_type;
};

// ---------------------------------------------------------------------------------------------------

/// An output assembled from pieces of existing buffers plus small literals (varints, placeholder
/// indices): large payloads are referenced, never copied.
class SplicePlan {
 public:
  struct Piece {
    const uint8_t* data;
    uint64_t size;
  };
  /// A reserved varint, filled in once the size it encodes is known.
  struct VarintSlot {
    size_t piece;
    size_t literal;
  };
  /// The state to return to with Rollback.
  struct Mark {
    size_t pieces;
    uint64_t last_size;
    size_t literals;
    bool last_is_span;
  };

  /// Appends `size` bytes at `data`, merging with the previous span when contiguous.
  void AppendSpan(const uint8_t* data, uint64_t size) {
    if (size == 0) return;
    if (last_is_span_ && pieces_.back().data + pieces_.back().size == data) {
      pieces_.back().size += size;
      return;
    }
    pieces_.push_back({data, size});
    last_is_span_ = true;
  }

  /// Appends a copy of `size` <= 16 bytes.
  void AppendLiteral(const uint8_t* data, size_t size) {
    std::copy(data, data + size, literals_.emplace_back().begin());
    pieces_.push_back({literals_.back().data(), size});
    last_is_span_ = false;
  }

  VarintSlot ReserveVarint() {
    literals_.emplace_back();
    pieces_.push_back({literals_.back().data(), 0});
    last_is_span_ = false;
    return {pieces_.size() - 1, literals_.size() - 1};
  }

  /// Writes `value` into `slot`; returns the varint's size.
  size_t SetVarint(VarintSlot slot, uint64_t value) {
    const size_t size = EncodeVarint(value, literals_[slot.literal].data());
    pieces_[slot.piece].size = size;
    return size;
  }

  Mark GetMark() const {
    return {pieces_.size(), pieces_.empty() ? 0 : pieces_.back().size, literals_.size(), last_is_span_};
  }

  void Rollback(const Mark& mark) {
    pieces_.resize(mark.pieces);
    if (!pieces_.empty()) pieces_.back().size = mark.last_size;
    literals_.resize(mark.literals);  // a deque keeps the addresses of the literals that remain
    last_is_span_ = mark.last_is_span;
  }

  const std::vector<Piece>& pieces() const { return pieces_; }

  uint64_t TotalSize() const {
    uint64_t total = 0;
    for (const Piece& piece : pieces_) total += piece.size;
    return total;
  }

  std::string Materialize() const {
    std::string out;
    out.reserve(TotalSize());
    for (const Piece& piece : pieces_) out.append(reinterpret_cast<const char*>(piece.data), piece.size);
    return out;
  }

 private:
  std::vector<Piece> pieces_;
  std::deque<std::array<uint8_t, 16>> literals_;
  bool last_is_span_ = false;
};

/// Copies a serialized ModelProto into a SplicePlan, letting a hook replace TensorProto.raw_data values and
/// recomputing the length prefix of every message that encloses a replacement. Messages without one are
/// copied byte for byte. Validates the wire format of everything it walks; throws Error(code) if invalid.
class WireRewriter {
 public:
  /// Appends the replacement of a raw_data value to the plan and returns its size, or returns nullopt,
  /// appending nothing, to keep the value.
  using PayloadHook = std::function<std::optional<uint64_t>(const uint8_t* value, uint64_t size, SplicePlan*)>;

  /// Errors are thrown as Error(code, "problem: what is wrong (at byte N)").
  WireRewriter(ExitCode code, std::string problem, PayloadHook hook)
      : code_(code), problem_(std::move(problem)), hook_(std::move(hook)) {}

  /// Rewrites the ModelProto in [data, data + size).
  SplicePlan Run(const uint8_t* data, uint64_t size) {
    base_ = data;
    plan_ = SplicePlan();
    RewriteMessage(Msg::kModel, data, data + size, 0);
    return std::move(plan_);
  }

 private:
  /// Appends the rewritten content of a `kind` message to the plan; returns its new size.
  uint64_t RewriteMessage(Msg kind, const uint8_t* begin, const uint8_t* end, int depth) {
    if (depth > kMaxNesting) Fail(begin, "messages nested deeper than " + std::to_string(kMaxNesting) + " levels");
    uint64_t size = 0;
    for (const uint8_t* pos = begin; pos < end;) {
      const Field field = ReadField(pos, end, depth == 0);
      size += RewriteField(kind, field, depth);
      pos = field.end;
    }
    return size;
  }

  /// Appends one field, rewritten if a replacement happened inside; returns its new size.
  uint64_t RewriteField(Msg kind, const Field& field, int depth) {
    if (field.wire_type == kWireLength) {
      if (const std::optional<uint64_t> size = RewriteLengthDelimited(kind, field, depth)) return *size;
    }
    plan_.AppendSpan(field.begin, field.end - field.begin);
    return field.end - field.begin;
  }

  /// Appends a raw_data value or a message on a path to one with a new length prefix, if its content
  /// changed, and returns the field's new size; otherwise appends nothing and returns nullopt.
  std::optional<uint64_t> RewriteLengthDelimited(Msg kind, const Field& field, int depth) {
    const bool is_payload = kind == Msg::kTensor && field.number == kRawDataField;
    const std::optional<Msg> child = ChildMessage(kind, field.number);
    if (!is_payload && !child) return std::nullopt;
    const SplicePlan::Mark mark = plan_.GetMark();
    const uint64_t replaced_before = replaced_;
    plan_.AppendSpan(field.begin, field.tag_end - field.begin);
    const SplicePlan::VarintSlot slot = plan_.ReserveVarint();
    const std::optional<uint64_t> content = is_payload ? hook_(field.value, field.end - field.value, &plan_)
                                                       : RewriteMessage(*child, field.value, field.end, depth + 1);
    if (is_payload && content) ++replaced_;
    if (replaced_ == replaced_before) {
      // Nothing inside was replaced: the caller keeps the original bytes, even a non-minimal length prefix.
      plan_.Rollback(mark);
      return std::nullopt;
    }
    return (field.tag_end - field.begin) + plan_.SetVarint(slot, *content) + *content;
  }

  /// Reads and bounds-checks the field starting at `pos`.
  Field ReadField(const uint8_t* pos, const uint8_t* end, bool top_level) const {
    Field field{pos, nullptr, nullptr, nullptr, 0, 0};
    uint64_t tag;
    if (!ReadVarint(&pos, end, &tag)) Fail(field.begin, "truncated or bad varint in a field tag");
    if ((tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) Fail(field.begin, "invalid field number");
    field.number = static_cast<uint32_t>(tag >> 3);
    field.wire_type = static_cast<int>(tag & 7);
    field.tag_end = field.value = pos;
    const uint64_t remaining = end - pos;
    uint64_t value;
    switch (field.wire_type) {
      case kWireVarint:
        if (!ReadVarint(&pos, end, &value)) Fail(field, "truncated or bad varint in");
        field.end = pos;
        break;
      case kWireFixed64:
      case kWireFixed32:
        value = field.wire_type == kWireFixed64 ? 8 : 4;
        if (value > remaining) Fail(field, "truncated:", " runs past " + EndName(top_level));
        field.end = pos + value;
        break;
      case kWireLength:
        if (!ReadVarint(&pos, end, &value)) Fail(field, "truncated or bad varint in the length of");
        if (value > static_cast<uint64_t>(end - pos)) {
          Fail(field, "truncated:",
               " has length " + std::to_string(value) + " but only " + std::to_string(end - pos) + " bytes remain in " +
                   EndName(top_level));
        }
        field.value = pos;
        field.end = pos + value;
        break;
      default:
        Fail(field, "invalid wire type " + std::to_string(field.wire_type) + " in");
    }
    return field;
  }

  static std::string EndName(bool top_level) { return top_level ? "the file" : "its enclosing message"; }

  [[noreturn]] void Fail(const Field& field, const std::string& before, const std::string& after = "") const {
    Fail(field.begin, before + " field " + std::to_string(field.number) + after);
  }

  [[noreturn]] void Fail(const uint8_t* at, const std::string& problem) const {
    throw Error(code_, problem_ + ": " + problem + " (at byte " + std::to_string(at - base_) + ")");
  }

  ExitCode code_;
  std::string problem_;
  PayloadHook hook_;
  const uint8_t* base_ = nullptr;
  SplicePlan plan_;
  uint64_t replaced_ = 0;
};

/// Number of (possibly overlapping) occurrences of the placeholder magic in `data`.
uint64_t CountMagic(const uint8_t* data, uint64_t size) {
  const auto* magic = ModelFile::kPlaceholderMagic;
  const uint8_t* const end = data + size;
  uint64_t count = 0;
  for (const uint8_t* pos = data;; ++pos) {
    pos = static_cast<const uint8_t*>(memmem(pos, end - pos, magic, sizeof(ModelFile::kPlaceholderMagic)));
    if (pos == nullptr) return count;
    ++count;
  }
}

std::array<uint8_t, 8> EncodeIndex(uint64_t index) {
  std::array<uint8_t, 8> bytes;
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(index >> (8 * i));
  return bytes;
}

uint64_t DecodeIndex(const uint8_t* bytes) {
  uint64_t index = 0;
  for (int i = 0; i < 8; ++i) index |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return index;
}

// ---------------------------------------------------------------------------------------------------
// Output.

/// Serializes `model` deterministically; throws Error(kCannotWrite) if it exceeds protobuf's limit.
std::string SerializeDeterministic(const onnx::ModelProto& model) {
  const size_t size = model.ByteSizeLong();
  if (size > kMaxProtobufMessage) {
    throw Error(ExitCode::kCannotWrite, "the model without its deferred payloads is " + std::to_string(size) +
                                            " bytes, over protobuf's 2 GiB limit");
  }
  std::string out(size, '\0');
  google::protobuf::io::ArrayOutputStream array(out.data(), static_cast<int>(size));
  google::protobuf::io::CodedOutputStream coded(&array);
  coded.SetSerializationDeterministic(true);
  model.SerializeWithCachedSizes(&coded);
  if (coded.HadError() || coded.ByteCount() != static_cast<int64_t>(size)) {
    throw Error(ExitCode::kCannotWrite, "protobuf failed to serialize the model");
  }
  return out;
}

/// Writes `iov` completely, resuming after partial writes.
void WriteIovecs(int fd, std::vector<iovec>* iov) {
  size_t first = 0;
  while (first < iov->size()) {
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

/// The input file as the source of large output pieces.
struct InputFile {
  int fd;
  const uint8_t* data;
  uint64_t size;
};

/// Streams output pieces to a file. Small pieces are gathered into writev calls. Large spans of the input
/// file are copied by the kernel (copy_file_range) without passing through this process; where the kernel
/// cannot (another file system, an old kernel), they are written by writev straight from the mapping, a
/// slice at a time.
class PieceWriter {
 public:
  PieceWriter(int out_fd, const InputFile& input) : out_fd_(out_fd), input_(input) {}

  void Write(const std::vector<SplicePlan::Piece>& pieces) {
    for (const SplicePlan::Piece& piece : pieces) {
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

  /// Writes a large span of the mapping in slices, unmapping each slice's pages once written so that the
  /// process never holds more than a slice of the file (the pages stay in the page cache).
  void WriteFromMapping(const SplicePlan::Piece& piece) {
    Flush();
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    for (uint64_t done = 0; done < piece.size;) {
      const uint8_t* slice = piece.data + done;
      const uint64_t size = std::min(kMappingSlice, piece.size - done);
      pending_.push_back({const_cast<uint8_t*>(slice), size});
      Flush();
      const uintptr_t first_page = reinterpret_cast<uintptr_t>(slice) & ~(page - 1);
      madvise(reinterpret_cast<void*>(first_page), reinterpret_cast<uintptr_t>(slice) + size - first_page,
              MADV_DONTNEED);
      done += size;
    }
  }

  bool IsInInput(const SplicePlan::Piece& piece) const {
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

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// A file written under a temporary name in its destination's directory and renamed over the destination
/// by Commit. Until then the destination is untouched; destroyed uncommitted, the temporary is removed.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path) : path_(path) {
    const size_t slash = path.find_last_of('/');
    const std::string prefix = (slash == std::string::npos ? "" : path.substr(0, slash + 1)) + "." +
                               path.substr(slash == std::string::npos ? 0 : slash + 1) + ".tmp-";
    std::random_device random;
    for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
      temp_path_ = prefix + std::to_string(random());
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

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

// ---------------------------------------------------------------------------------------------------

namespace {

/// Opens `path` for reading and returns the descriptor; throws Error(kBadInput) unless it is a non-empty
/// regular file.
int OpenNonEmptyFile(const std::string& path, uint64_t* size) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ExitCode::kBadInput, SystemError("cannot open"));
  struct stat info;
  std::string problem;
  if (fstat(fd, &info) != 0) {
    problem = SystemError("cannot stat");
  } else if (S_ISDIR(info.st_mode)) {
    problem = "is a directory, not a model file";
  } else if (!S_ISREG(info.st_mode)) {
    problem = "not a regular file";
  } else if (info.st_size == 0) {
    problem = "empty file";
  }
  if (!problem.empty()) {
    close(fd);
    throw Error(ExitCode::kBadInput, problem);
  }
  *size = static_cast<uint64_t>(info.st_size);
  return fd;
}

}  // namespace

/// The input file, open and mapped read-only for the lifetime of the ModelFile. Both keep the file's
/// contents alive when the file is renamed over (an in-place write).
class ModelFile::Mapping {
 public:
  /// Maps `path`; throws Error(kBadInput) if it is missing, not a regular file, empty or unreadable.
  explicit Mapping(const std::string& path) : fd_(OpenNonEmptyFile(path, &size_)) {
    void* data = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (data == MAP_FAILED) {
      const std::string problem = SystemError("cannot map");
      close(fd_);
      throw Error(ExitCode::kBadInput, problem);
    }
    data_ = static_cast<const uint8_t*>(data);
    // Where the kernel cannot copy file to file, the write streams the mapping in order.
    madvise(data, size_, MADV_SEQUENTIAL);
  }

  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    munmap(const_cast<uint8_t*>(data_), size_);
    close(fd_);
  }

  int fd() const { return fd_; }
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  uint64_t size_ = 0;
  int fd_ = -1;
  const uint8_t* data_ = nullptr;
};

ModelFile::ModelFile() = default;
ModelFile::ModelFile(ModelFile&&) noexcept = default;
ModelFile& ModelFile::operator=(ModelFile&&) noexcept = default;
ModelFile::~ModelFile() = default;

ModelFile ModelFile::Open(const std::string& path, size_t payload_threshold) {
  ModelFile file;
  file.path_ = path;
  file.mapping_ = std::make_unique<Mapping>(path);  // errors do not repeat the path: callers name the file
  file.Load(std::max(payload_threshold, kMinPayloadThreshold));
  return file;
}

void ModelFile::Load(size_t payload_threshold) {
  const uint8_t* const base = mapping_->data();
  WireRewriter defer(ExitCode::kBadInput, "not a valid ONNX model",
                     [&](const uint8_t* value, uint64_t size, SplicePlan* plan) {
                       if (size < payload_threshold) return std::optional<uint64_t>();
                       payloads_.push_back({static_cast<uint64_t>(value - base), size});
                       deferred_bytes_ += size;
                       plan->AppendSpan(kPlaceholderMagic, sizeof(kPlaceholderMagic));
                       plan->AppendLiteral(EncodeIndex(payloads_.size() - 1).data(), 8);
                       return std::optional<uint64_t>(kPlaceholderSize);
                     });
  const SplicePlan plan = defer.Run(base, mapping_->size());
  const uint64_t reduced_size = plan.TotalSize();
  if (reduced_size > kMaxProtobufMessage) {
    throw Error(ExitCode::kBadInput, "the model without payloads of at least " + std::to_string(payload_threshold) +
                                         " bytes is " + std::to_string(reduced_size) +
                                         " bytes, over protobuf's 2 GiB limit");
  }
  // Without deferred payloads the file itself is parsed: no copy of it to make in fresh memory.
  const std::string reduced = payloads_.empty() ? std::string() : plan.Materialize();
  const uint8_t* const data = payloads_.empty() ? base : reinterpret_cast<const uint8_t*>(reduced.data());
  // Every marker must be one of ours, or Write would splice a payload where the input had other bytes.
  if (CountMagic(data, reduced_size) != payloads_.size()) {
    throw Error(ExitCode::kBadInput, "the file contains rnnstate's payload placeholder marker");
  }
  if (!model_.ParseFromArray(data, static_cast<int>(reduced_size))) {
    throw Error(ExitCode::kBadInput, "not a valid ONNX model: protobuf cannot parse it as a ModelProto");
  }
  if (!model_.has_graph()) throw Error(ExitCode::kBadInput, "not an ONNX model: the ModelProto has no graph");
}

void ModelFile::Write(const std::string& out_path, Durability durability) const {
  // Errors do not repeat the path: callers name the file.
  const std::string serialized = SerializeDeterministic(model_);
  const auto* const bytes = reinterpret_cast<const uint8_t*>(serialized.data());
  uint64_t spliced = 0;
  // The walker validated the input; failing on protobuf's own output would be a bug.
  WireRewriter splice(
      ExitCode::kCannotWrite, "internal error: malformed serialization",
      [&](const uint8_t* value, uint64_t size, SplicePlan* plan) {
        if (size != kPlaceholderSize || std::memcmp(value, kPlaceholderMagic, sizeof(kPlaceholderMagic)) != 0) {
          return std::optional<uint64_t>();
        }
        const uint64_t index = DecodeIndex(value + sizeof(kPlaceholderMagic));
        if (index >= payloads_.size()) throw Error(ExitCode::kCannotWrite, "payload placeholder index out of range");
        plan->AppendSpan(mapping_->data() + payloads_[index].offset, payloads_[index].size);
        ++spliced;
        return std::optional<uint64_t>(payloads_[index].size);
      });
  const SplicePlan plan = splice.Run(bytes, serialized.size());
  if (CountMagic(bytes, serialized.size()) != spliced) {
    throw Error(ExitCode::kCannotWrite, "a payload placeholder was copied outside TensorProto.raw_data");
  }
  AtomicFile out(out_path);
  PieceWriter(out.fd(), {mapping_->fd(), mapping_->data(), mapping_->size()}).Write(plan.pieces());
  out.Commit(durability == Durability::kSync);
}

}  // namespace rnnstate
