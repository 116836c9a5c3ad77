#include "wire_splice.h"

#include "rnnstate/model_file.h"

namespace rnnstate::wire {

/// The message type held by field `field` of a `parent`, if it is on a path to a TensorProto.
std::optional<Msg> ChildMessage(Msg parent, uint32_t field) {
  for (const Edge& edge : kTensorPaths) {
    if (edge.parent == parent && edge.field == field) return edge.child;
  }
  return std::nullopt;
}

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

}  // namespace rnnstate::wire
