#pragma once
/// \file
/// Internal to model_file: the ONNX protobuf wire format as far as the lazy reader needs it — the fields
/// on the paths from ModelProto to every TensorProto, varints, and a rewriter that copies a serialized
/// model into a SplicePlan (pieces of existing buffers plus small literals) while a hook replaces
/// TensorProto.raw_data values.

#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "byte_piece.h"
#include "rnnstate/error.h"

namespace rnnstate::wire {

constexpr uint64_t kMaxProtobufMessage = INT_MAX;  // protobuf parses and serializes at most 2 GiB - 1
constexpr int kMaxNesting = 100;                   // protobuf's own default recursion limit
constexpr int kWireVarint = 0, kWireFixed64 = 1, kWireLength = 2, kWireFixed32 = 5;

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
std::optional<Msg> ChildMessage(Msg parent, uint32_t field);

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

/// Number of (possibly overlapping) occurrences of ModelFile's placeholder magic in `data`.
uint64_t CountMagic(const uint8_t* data, uint64_t size);
/// The 8 little-endian bytes of a placeholder's payload index, and back.
std::array<uint8_t, 8> EncodeIndex(uint64_t index);
uint64_t DecodeIndex(const uint8_t* bytes);


}  // namespace rnnstate::wire
