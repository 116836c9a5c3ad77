#include "io/wire_splice.h"

#include "graph/payload_placeholder.h"

namespace rnnstate::wire {

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

/// Number of (possibly overlapping) occurrences of the placeholder magic in `data`.
uint64_t CountMagic(const uint8_t* data, uint64_t size) {
  const auto* magic = kPlaceholderMagic;
  const uint8_t* const end = data + size;
  uint64_t count = 0;
  for (const uint8_t* pos = data;; ++pos) {
    pos = static_cast<const uint8_t*>(memmem(pos, end - pos, magic, sizeof(kPlaceholderMagic)));
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
// WireRewriter

namespace {

std::string EndName(bool top_level) { return top_level ? "the file" : "its enclosing message"; }

}  // namespace

SplicePlan WireRewriter::Run(const uint8_t* data, uint64_t size) {
  base_ = data;
  plan_ = SplicePlan();
  replaced_ = 0;
  RewriteMessage(Msg::kModel, data, data + size, 0);
  return std::move(plan_);
}

uint64_t WireRewriter::RewriteMessage(Msg kind, const uint8_t* begin, const uint8_t* end, int depth) {
  if (depth > kMaxNesting) Fail(begin, "messages nested deeper than " + std::to_string(kMaxNesting) + " levels");
  uint64_t size = 0;
  for (const uint8_t* pos = begin; pos < end;) {
    const Field field = ReadField(pos, end, depth == 0);
    size += RewriteField(kind, field, depth);
    pos = field.end;
  }
  return size;
}

uint64_t WireRewriter::RewriteField(Msg kind, const Field& field, int depth) {
  if (field.wire_type == kWireLength) {
    if (const std::optional<uint64_t> size = RewriteLengthDelimited(kind, field, depth)) return *size;
  }
  plan_.AppendSpan(field.begin, field.end - field.begin);
  return field.end - field.begin;
}

std::optional<uint64_t> WireRewriter::RewriteLengthDelimited(Msg kind, const Field& field, int depth) {
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

Field WireRewriter::ReadField(const uint8_t* pos, const uint8_t* end, bool top_level) const {
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

void WireRewriter::Fail(const Field& field, const std::string& before, const std::string& after) const {
  Fail(field.begin, before + " field " + std::to_string(field.number) + after);
}

void WireRewriter::Fail(const uint8_t* at, const std::string& problem) const {
  throw Error(code_, problem_ + ": " + problem + " (at byte " + std::to_string(at - base_) + ")");
}

}  // namespace rnnstate::wire
