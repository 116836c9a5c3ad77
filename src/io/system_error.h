#pragma once
/// \file
/// The text of a failed system call, for the messages of reading and writing files alike.

#include <cerrno>
#include <cstring>
#include <string>

namespace rnnstate {

/// "what: strerror(errno)" (errno as the failed call left it).
inline std::string SystemError(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace rnnstate
