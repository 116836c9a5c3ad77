#include "cli/heap_arenas.h"

#include <malloc.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string_view>

namespace rnnstate::cli {

bool ArenasChosenBy(const char* malloc_arena_max, const char* tunables) {
  return malloc_arena_max != nullptr ||
         (tunables != nullptr && std::string_view(tunables).find("glibc.malloc.arena_max") != std::string_view::npos);
}

void LimitHeapArenas(std::size_t workers) {
  if (ArenasChosenBy(std::getenv("MALLOC_ARENA_MAX"), std::getenv("GLIBC_TUNABLES"))) return;
  const std::size_t heaps = std::clamp<std::size_t>(workers, 1, INT_MAX);
  mallopt(M_ARENA_MAX, static_cast<int>(heaps));
}

}  // namespace rnnstate::cli
