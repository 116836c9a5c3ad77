#pragma once
/// \file
/// The in-memory stand-in for a large tensor payload that io/model_file.h leaves in the input file: a
/// `TensorProto.raw_data` of kPlaceholderSize bytes, kPlaceholderMagic followed by the payload's index
/// (8 bytes, little endian). Readers of tensor values (values/constant_value.h) must recognize it as "the
/// value is not here"; only the model file reads and writes its index.

#include <cstddef>
#include <cstring>
#include <string>

namespace rnnstate {

/// The 16 bytes that start every placeholder.
inline constexpr unsigned char kPlaceholderMagic[16] = {'r',  'n',  'n',  's',  't',  'a',  't',  'e',
                                                        0x00, 0xd7, 0x3a, 0x91, 0x5c, 0xe2, 0x08, 0xb4};
/// Size of a placeholder: 16 magic bytes + 8-byte index.
inline constexpr size_t kPlaceholderSize = sizeof(kPlaceholderMagic) + 8;

/// True when `raw` (a TensorProto's raw_data) is a placeholder for a payload left in the file.
inline bool IsPayloadPlaceholder(const std::string& raw) {
  return raw.size() == kPlaceholderSize && std::memcmp(raw.data(), kPlaceholderMagic, sizeof(kPlaceholderMagic)) == 0;
}

}  // namespace rnnstate
