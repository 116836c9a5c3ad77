#pragma once
/// \file
/// Internal: a run of bytes in some buffer (a span of a mapped input file, a literal, serialized
/// structure), the unit in which model files are written.

#include <cstdint>

namespace rnnstate {

/// `size` bytes at `data`; the buffer outlives the piece.
struct BytePiece {
  const uint8_t* data;
  uint64_t size;
};

}  // namespace rnnstate
