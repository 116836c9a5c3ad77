#pragma once
/// \file
/// Reading and writing ONNX model files of any size. The rewrite only touches graph structure, so large
/// tensor payloads are never handed to protobuf: they stay in a read-only memory mapping of the input file
/// and are written straight from it to the output. This keeps memory low and lifts protobuf's 2 GiB
/// single-message ceiling from the file (only the model *without* its large payloads must fit).

#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/payload_placeholder.h"

namespace rnnstate {

/// An ONNX model file opened for rewriting: the ModelProto without large tensor payloads, which stay in
/// the read-only memory mapping of the input file. (A file under 256 KiB is read into memory instead of
/// mapped; the rest is the same.)
///
/// A deferred payload is a `TensorProto.raw_data` of at least the threshold's size, found on the paths
/// from ModelProto to every TensorProto that onnx 1.12 defines (graph initializers, sparse initializers,
/// node attributes, nested graphs, functions, training info). In model() its bytes are replaced by a
/// placeholder: kPlaceholderMagic followed by the payload's index (8 bytes, little endian). Code that
/// edits model() may move, copy or drop such tensors, but must not copy raw_data into other fields.
/// Tensors in fields that onnx 1.12 does not know (kept by protobuf as unknown fields) are not deferred.
///
/// The input file must not be truncated or rewritten in place by another process while a ModelFile is
/// open on it (replacing it by rename, as Write does, is fine). Write may be called any number of times.
class ModelFile {
 public:
  /// Size of a placeholder (graph/payload_placeholder.h).
  static constexpr size_t kPlaceholderSize = rnnstate::kPlaceholderSize;
  /// Smallest payload_threshold: a payload is always longer than a placeholder, so a kept payload can
  /// never be mistaken for one.
  static constexpr size_t kMinPayloadThreshold = kPlaceholderSize + 1;
  static constexpr size_t kDefaultPayloadThreshold = 1024;
  /// A payload of zeros up to this size is never deferred: readers of model() must see that a state's
  /// default is zeros (rnnstate's own zero defaults are at most 1 MiB), or a rewrite of a rewrite would
  /// take it for a learned value.
  static constexpr size_t kMaxInlineZeros = size_t{1} << 20;

  /// Opens and parses `path`. Payloads (TensorProto.raw_data, field 9) of at least `payload_threshold`
  /// bytes (raised to kMinPayloadThreshold if lower) are left out of the parse and replaced by a
  /// placeholder, except payloads of zeros up to kMaxInlineZeros. Throws Error(kBadInput) with a message starting with `path: ` and naming the problem:
  /// missing or unreadable file, directory, not a regular file (a FIFO, a device, a socket: refused from
  /// its stat, never opened for a blocking read), empty file, not an ONNX ModelProto, truncated (a length prefix
  /// running past the end, an invalid or group wire type, a bad varint), nesting deeper than 100 messages,
  /// a ModelProto with no graph, a model whose non-deferred part exceeds protobuf's 2 GiB limit, or a file
  /// that already contains kPlaceholderMagic.
  static ModelFile Open(const std::string& path, size_t payload_threshold = kDefaultPayloadThreshold);

  ModelFile(ModelFile&&) noexcept;
  ModelFile& operator=(ModelFile&&) noexcept;
  ~ModelFile();

  /// The parsed model, with placeholders in place of deferred payloads.
  onnx::ModelProto& model() { return *model_; }
  const onnx::ModelProto& model() const { return *model_; }

  /// Serializes model() deterministically to `out_path`, splicing every placeholder back to its original
  /// bytes straight from the mapping (a placeholder may have moved inside the message tree, been copied or
  /// been dropped) and recomputing the enclosing length prefixes. An unchanged model written by protobuf
  /// comes out byte-identical. Writes a temporary file in out_path's directory, fsyncs it, then renames it
  /// over out_path (keeping the permission bits of an existing out_path): on any failure out_path is
  /// neither created nor changed and the temporary is removed. out_path may be the input path. A symlink
  /// at out_path is replaced, not followed. Large payloads are copied file to file by the kernel
  /// (copy_file_range) where it can, else written from the mapping.
  /// Throws Error(kCannotWrite), also when a placeholder was copied outside TensorProto.raw_data.
  void Write(const std::string& out_path) const { Write(out_path, Durability::kSync); }

  /// When the written file reaches the disk.
  enum class Durability {
    kSync,      ///< fsync the file and its directory before returning (one file)
    kDeferred,  ///< leave flushing to the caller (batches: one syncfs at the end, see SyncOutputs)
  };
  /// Write with a chosen durability; the rename is atomic either way.
  void Write(const std::string& out_path, Durability durability) const;

  /// The byte length of `tensor`'s raw_data as the file holds it: for a placeholder (a payload left in the
  /// mapping), the payload's; else raw_data().size().
  uint64_t RawDataSize(const onnx::TensorProto& tensor) const;

  /// Total bytes of payloads left in the mapping (for reports).
  uint64_t deferred_bytes() const { return deferred_bytes_; }
  /// Number of payloads left in the mapping.
  size_t deferred_count() const { return payloads_.size(); }
  /// The path given to Open.
  const std::string& path() const { return path_; }

 private:
  /// Where a deferred payload lies in the mapping.
  struct Payload {
    uint64_t offset;
    uint64_t size;
  };

  class Mapping;

  ModelFile();
  /// Replaces large payloads by placeholders in a copy of the mapping and parses that copy into model_.
  void Load(size_t payload_threshold);

  std::string path_;
  std::unique_ptr<Mapping> mapping_;
  std::vector<Payload> payloads_;
  uint64_t deferred_bytes_ = 0;
  // The model lives on an arena: parsing a million nodes allocates from a few large blocks instead of
  // millions of small ones, and freeing it is freeing those blocks (0.52 s -> 0.15 s to parse and
  // 0.20 s -> 0.02 s to free a 1M-node chain, measured). Code that edits model() keeps using protobuf's
  // ordinary API; moving a message between this arena and the heap copies it.
  std::unique_ptr<google::protobuf::Arena> arena_;
  onnx::ModelProto* model_ = nullptr;  ///< owned by arena_
};

}  // namespace rnnstate
