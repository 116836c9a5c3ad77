#pragma once
/// \file
/// Internal to model_file: the ONNX protobuf wire format as far as the lazy reader needs it — varints,
/// the fields on the paths from ModelProto to every TensorProto (from tensor_places), and a rewriter that
/// copies a serialized model into a SplicePlan (pieces of existing buffers plus small literals) while a
/// hook replaces TensorProto.raw_data values.

#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/byte_piece.h"
#include "io/tensor_places.h"
#include "rnnstate/error.h"

namespace rnnstate::wire {

constexpr uint64_t kMaxProtobufMessage = INT_MAX;  // protobuf parses and serializes at most 2 GiB - 1
constexpr int kMaxNesting = 100;                   // protobuf's own default recursion limit
constexpr int kWireVarint = 0, kWireFixed64 = 1, kWireLength = 2, kWireFixed32 = 5;

// Where tensors live: the fields on the paths from ModelProto to every TensorProto (tensor_places, shared
// with the proto-level walk of external data checks). Every other field is copied as it is.

using places::ChildMessage;
using places::Msg;

constexpr uint32_t kRawDataField = 9;  // TensorProto.raw_data

// ---------------------------------------------------------------------------------------------------
// Wire format.

/// Reads a varint at `*pos`, advancing it. False if it runs past `end` or is longer than 10 bytes.
bool ReadVarint(const uint8_t** pos, const uint8_t* end, uint64_t* value);
/// Encodes `value` as a varint into `out` (at least 10 bytes); returns its size.
size_t EncodeVarint(uint64_t value, uint8_t* out);

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
  using Piece = BytePiece;
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
  SplicePlan Run(const uint8_t* data, uint64_t size);

 private:
  /// Appends the rewritten content of a `kind` message to the plan; returns its new size.
  uint64_t RewriteMessage(Msg kind, const uint8_t* begin, const uint8_t* end, int depth);
  /// Appends one field, rewritten if a replacement happened inside; returns its new size.
  uint64_t RewriteField(Msg kind, const Field& field, int depth);
  /// Appends a raw_data value or a message on a path to one with a new length prefix, if its content
  /// changed, and returns the field's new size; otherwise appends nothing and returns nullopt.
  std::optional<uint64_t> RewriteLengthDelimited(Msg kind, const Field& field, int depth);
  /// Reads and bounds-checks the field starting at `pos`.
  Field ReadField(const uint8_t* pos, const uint8_t* end, bool top_level) const;

  [[noreturn]] void Fail(const Field& field, const std::string& before, const std::string& after = "") const;
  [[noreturn]] void Fail(const uint8_t* at, const std::string& problem) const;

  ExitCode code_;
  std::string problem_;
  PayloadHook hook_;
  const uint8_t* base_ = nullptr;
  SplicePlan plan_;
  uint64_t replaced_ = 0;
};

/// Number of (possibly overlapping) occurrences of ModelFile's placeholder magic in `data`.
uint64_t CountMagic(const uint8_t* data, uint64_t size);
/// The 8 little-endian bytes of a placeholder's payload index, and back.
std::array<uint8_t, 8> EncodeIndex(uint64_t index);
uint64_t DecodeIndex(const uint8_t* bytes);

}  // namespace rnnstate::wire
