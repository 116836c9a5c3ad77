#pragma once
/// \file
/// Huge pages for the heap, on request. A large model's analysis is hash tables and graphs over hundreds of MB,
/// read in no order a 4 KiB page helps with. glibc (2.35 and later) backs malloc's memory with transparent huge
/// pages when told at start-up, through the environment only (GLIBC_TUNABLES=glibc.malloc.hugetlb=1): so, when
/// RNNSTATE_HUGE_PAGES asks for it, the executable starts itself again once, with it set, when its files are large
/// enough to gain (a huge page's first touch zeroes 2 MiB: on a small model the restart and that cost about 10 ms,
/// as much as the run). Whether it gains depends on the machine, not on rnnstate: on one VM of this project
/// (2026-12-07) it cut `rewrite` of 10,000 LSTMs from 3.0 to 1.5 s of CPU; on another (2026-12-08, whose host
/// takes back free 2 MiB blocks: virtio-balloon free page reporting) each huge page's first touch cost
/// milliseconds of kernel time, and `report` of a 300,000-node chain took 3.8 s instead of 2.7 s. Hence not
/// by default.

#include <cstdint>
#include <string>

namespace rnnstate::cli {

/// From how large a model file the restart is made.
inline constexpr std::uintmax_t kHugePagesFromBytes = 2u << 20;

/// The size of the largest model file among `argv`'s arguments (argv[1] on): each regular file named, and
/// each `*.onnx` regular file below a directory named (what the commands' file discovery reads), as soon as
/// one reaches `enough` (a large tree is not walked to its end). Other arguments (options, missing paths)
/// count nothing; an unreadable directory, what could be read of it. The largest, not the total: the heap a
/// file's work builds is freed before the next file's, so a directory of many small models gains no more from
/// huge pages than one of them (500 models of 5.6 kB: the restart cost about what the pages saved).
std::uintmax_t LargestModelBytes(int argc, char** argv, std::uintmax_t enough);

/// GLIBC_TUNABLES' value with glibc.malloc.hugetlb=1 added to `current` (the variable's value, or nullptr
/// when it is unset); "" when `current` already says anything about glibc.malloc.hugetlb (the user's
/// word, or this program's own restart), so that there is nothing to do.
std::string TunablesWithHugePages(const char* current);

/// Whether RNNSTATE_HUGE_PAGES' value (nullptr when unset) asks for huge pages: set, not empty and not "0".
bool HugePagesRequested(const char* value);

/// When RNNSTATE_HUGE_PAGES asks for it (HugePagesRequested), starts the running executable (/proc/self/exe) again
/// with `argv` and malloc on huge pages when a model file it names, or one below a directory it names, reaches
/// kHugePagesFromBytes (LargestModelBytes), unless GLIBC_TUNABLES sets glibc.malloc.hugetlb already,
/// RNNSTATE_NO_HUGE_PAGES is set (the opt-out of the releases that restarted by default, still obeyed), or the
/// program runs under valgrind (whose tools follow no exec by default). Returns only when it did not restart (also
/// when the exec failed, with the environment as it was): the program then goes on as it is.
void RestartWithHugePages(int argc, char** argv);

}  // namespace rnnstate::cli
