#pragma once
/// \file
/// Huge pages for the heap. A large model's analysis is hash tables and graphs over hundreds of MB, read in
/// no order a 4 KiB page helps with: on these VMs a page fault and a TLB miss cost much of the CPU time
/// (10,000 LSTMs: `rewrite` 3.0 s of CPU with 78k faults, 1.5 s with 18k on huge pages). glibc (2.35 and
/// later) backs malloc's memory with transparent huge pages when told at start-up, through the environment
/// only (GLIBC_TUNABLES=glibc.malloc.hugetlb=1): so the executable starts itself again once, with it set,
/// when its files are large enough to gain (a huge page's first touch zeroes 2 MiB: on a small model the
/// restart and that cost about 10 ms, as much as the run; from about 2 MB of model it is even, and at 4 MB
/// and above it pays: 100,000 nodes nested 20 deep, 1.7 -> 1.2 s of CPU).

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

/// Starts the running executable (/proc/self/exe) again with `argv` and malloc on huge pages when a model file
/// it names, or one below a directory it names, reaches kHugePagesFromBytes (LargestModelBytes), unless GLIBC_TUNABLES
/// sets glibc.malloc.hugetlb already, RNNSTATE_NO_HUGE_PAGES is set, or the program runs under valgrind (whose tools
/// follow no exec by default). Returns only when it did not restart (also when the exec failed, with the environment as
/// it was): the program then goes on as it is.
void RestartWithHugePages(int argc, char** argv);

}  // namespace rnnstate::cli
