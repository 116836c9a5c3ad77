#pragma once
/// \file
/// One malloc heap per worker. glibc gives each new thread that allocates a heap of its own (an "arena",
/// up to 8 per core), and memory freed into a heap serves only the threads on it. rnnstate's helper
/// threads (onnx's checker of the input, the structural copy onnx's inference runs on, the index freed
/// beside the rewrite, the output's structural check) allocate and free much of a big model's memory:
/// each took a heap of its own, and the output's validation on the main thread could reuse none of what
/// they had freed. At 10,000 LSTMs that was 40 MB of `rewrite`'s 260 MB peak, for no time gained (the
/// threads' work is parallel, their allocations mostly come from per-thread caches or a few large blocks).

#include <cstddef>

namespace rnnstate::cli {

/// True when the environment already says how many heaps malloc may make (MALLOC_ARENA_MAX set, or
/// glibc.malloc.arena_max in GLIBC_TUNABLES: `malloc_arena_max` and `tunables` are their values, nullptr when
/// unset): the user's choice, which LimitHeapArenas leaves alone.
bool ArenasChosenBy(const char* malloc_arena_max, const char* tunables);

/// Unless the environment chose already (ArenasChosenBy), lets the process's threads share at most `workers` malloc
/// heaps (1 for 0): one per worker of a batch, which its helper threads share. Takes effect only before the process's
/// first thread other than the main one allocates (glibc fixes the limit then); later calls change nothing. Under the
/// sanitizers, whose allocator is their own, it changes nothing either.
void LimitHeapArenas(std::size_t workers);

}  // namespace rnnstate::cli
