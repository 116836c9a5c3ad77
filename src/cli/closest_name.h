#pragma once
/// \file
/// "Did you mean ...?": the known name a mistyped one most likely meant.

#include <optional>
#include <string>
#include <vector>

namespace rnnstate {

/// The number of single-character edits — insertions, deletions, substitutions, and swaps of two
/// neighbouring characters — that turn `a` into `b` (no substring edited twice).
size_t EditDistance(const std::string& a, const std::string& b);

/// The name of `names` closest to `typed` when it is close enough to be a typo of it (at most one edit
/// per three characters of the name, and at least one), the first of equally close ones; nullopt when
/// none is.
std::optional<std::string> ClosestName(const std::string& typed, const std::vector<std::string>& names);

}  // namespace rnnstate
