#include "cli/closest_name.h"

#include <algorithm>

namespace rnnstate {

size_t EditDistance(const std::string& a, const std::string& b) {
  // distance[i][j]: from the first i characters of a to the first j of b (optimal string alignment).
  std::vector<std::vector<size_t>> distance(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) distance[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) distance[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = distance[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      distance[i][j] = std::min({distance[i - 1][j] + 1, distance[i][j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        distance[i][j] = std::min(distance[i][j], distance[i - 2][j - 2] + 1);
      }
    }
  }
  return distance[a.size()][b.size()];
}

std::optional<std::string> ClosestName(const std::string& typed, const std::vector<std::string>& names) {
  std::optional<std::string> closest;
  size_t best = 0;
  for (const std::string& name : names) {
    const size_t distance = EditDistance(typed, name);
    if (distance > std::max<size_t>(1, name.size() / 3)) continue;
    if (!closest || distance < best) {
      closest = name;
      best = distance;
    }
  }
  return closest;
}

}  // namespace rnnstate
