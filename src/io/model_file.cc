#include "io/model_file.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "io/file_output.h"
#include "io/regular_file.h"
#include "io/system_error.h"
#include "io/wire_splice.h"
#include "rnnstate/error.h"

namespace rnnstate {

namespace {

using wire::CountMagic;
using wire::DecodeIndex;
using wire::EncodeIndex;
using wire::kMaxProtobufMessage;
using wire::SplicePlan;
using wire::WireRewriter;

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

/// True for a payload of zero bytes only, up to ModelFile::kMaxInlineZeros: kept in the parse so that
/// the rewrite can see that a default is zeros (a placeholder's value is unknown to it). A weight stops
/// the scan at its first non-zero byte.
bool SmallZeros(const uint8_t* value, uint64_t size) {
  if (size > ModelFile::kMaxInlineZeros) return false;
  return std::all_of(value, value + size, [](uint8_t byte) { return byte == 0; });
}

}  // namespace

// ---------------------------------------------------------------------------------------------------

namespace {

/// Opens `path` for reading and returns the descriptor; throws Error(kBadInput) unless it is a non-empty
/// regular file (a FIFO or a device is refused without being opened, see RegularFile).
int OpenNonEmptyFile(const std::string& path, uint64_t* size) {
  input::RegularFile file = input::RegularFile::Open(path);
  if (file.size() == 0) throw Error(ExitCode::kBadInput, "empty file");
  *size = file.size();
  return file.Release();
}

}  // namespace

/// The input file's bytes, open and mapped read-only (small files: read into memory) for the lifetime of
/// the ModelFile. Both keep the file's contents alive when the file is renamed over (an in-place write).
class ModelFile::Mapping {
 public:
  /// Below this size a file is read, not mapped: unmapping costs every other thread of the process a TLB
  /// flush, which a batch of small models pays per file.
  static constexpr uint64_t kReadBelow = 256 * 1024;

  /// Maps or reads `path`; throws Error(kBadInput) if it is missing, not a regular file, empty or
  /// unreadable.
  explicit Mapping(const std::string& path) : fd_(OpenNonEmptyFile(path, &size_)) {
    if (size_ < kReadBelow) {
      ReadAll();
      return;
    }
    void* data = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (data == MAP_FAILED) Fail(SystemError("cannot map"));
    data_ = static_cast<const uint8_t*>(data);
    mapped_ = true;
    // Where the kernel cannot copy file to file, the write streams the mapping in order.
    madvise(data, size_, MADV_SEQUENTIAL);
  }

  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (mapped_) munmap(const_cast<uint8_t*>(data_), size_);
    close(fd_);
  }

  int fd() const { return fd_; }
  const uint8_t* data() const { return data_; }
  /// True for a mapping of the file; false for a small file read into memory.
  bool mapped() const { return mapped_; }
  uint64_t size() const { return size_; }

 private:
  [[noreturn]] void Fail(const std::string& problem) {
    close(fd_);
    throw Error(ExitCode::kBadInput, problem);
  }

  void ReadAll() {
    // Not value-initialized: the reads below fill every byte, or the constructor throws.
    buffer_.reset(new uint8_t[size_]);
    uint64_t done = 0;
    while (done < size_) {
      const ssize_t n = pread(fd_, buffer_.get() + done, size_ - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) Fail(SystemError("cannot read"));
      if (n == 0) Fail("the file shrank while it was read");
      done += static_cast<uint64_t>(n);
    }
    data_ = buffer_.get();
  }

  uint64_t size_ = 0;
  int fd_ = -1;
  const uint8_t* data_ = nullptr;
  bool mapped_ = false;
  std::unique_ptr<uint8_t[]> buffer_;
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
                       if (size < payload_threshold || SmallZeros(value, size)) return std::optional<uint64_t>();
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
  google::protobuf::ArenaOptions options;
  // Blocks grow to 1 MiB (protobuf's default stops at 8 KiB), from a first block sized to the file.
  options.max_block_size = size_t{1} << 20;
  options.start_block_size = std::clamp<size_t>(reduced_size, 4096, options.max_block_size);
  arena_ = std::make_unique<google::protobuf::Arena>(options);
  model_ = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(arena_.get());
  if (!model_->ParseFromArray(data, static_cast<int>(reduced_size))) {
    throw Error(ExitCode::kBadInput, "not a valid ONNX model: protobuf cannot parse it as a ModelProto");
  }
  if (!model_->has_graph()) throw Error(ExitCode::kBadInput, "not an ONNX model: the ModelProto has no graph");
}

void ModelFile::Write(const std::string& out_path, Durability durability) const {
  // Errors do not repeat the path: callers name the file.
  const std::string serialized = SerializeDeterministic(*model_);
  const auto* const bytes = reinterpret_cast<const uint8_t*>(serialized.data());
  const output::InputFile input{mapping_->fd(), mapping_->data(), mapping_->size(), mapping_->mapped()};
  const bool sync = durability == Durability::kSync;
  if (payloads_.empty()) {
    // Nothing to splice back, and no placeholder can have appeared: Load verified that the input holds
    // no marker, and the rewrite only adds names and small tensors of its own.
    output::WriteFileAtomically(out_path, {BytePiece{bytes, serialized.size()}}, input, sync);
    return;
  }
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
  output::WriteFileAtomically(out_path, plan.pieces(), input, sync);
}

uint64_t ModelFile::RawDataSize(const onnx::TensorProto& tensor) const {
  const std::string& raw = tensor.raw_data();
  if (raw.size() != kPlaceholderSize || std::memcmp(raw.data(), kPlaceholderMagic, sizeof(kPlaceholderMagic)) != 0) {
    return raw.size();
  }
  const uint64_t index = DecodeIndex(reinterpret_cast<const uint8_t*>(raw.data()) + sizeof(kPlaceholderMagic));
  return index < payloads_.size() ? payloads_[index].size : raw.size();
}

}  // namespace rnnstate
