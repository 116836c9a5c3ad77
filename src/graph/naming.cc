#include "graph/naming.h"

#include "rnnstate/error.h"

namespace rnnstate {

std::string NameAllocator::Allocate(const std::string& wanted) {
  std::string name = wanted;
  for (int suffix = 2; Taken(name); ++suffix) name = wanted + "_" + std::to_string(suffix);
  used_.insert(name);
  return name;
}

std::string NodeStem(const std::string& node_name) {
  std::string stem = node_name;
  while (!stem.empty() && stem.front() == '/') stem.erase(stem.begin());
  for (char& c : stem) {
    if (c == '/' || c == ':') c = '.';
  }
  return stem.empty() ? "node" : stem;
}

std::string ExpandNameTemplate(const std::string& pattern, const std::string& node_stem, const std::string& kind,
                               const std::string& op) {
  std::string out;
  bool has_node = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{') {
      out += pattern[i];
      continue;
    }
    size_t close = pattern.find('}', i);
    if (close == std::string::npos) throw Error(ExitCode::kUsage, "name template '" + pattern + "': unclosed '{'");
    std::string key = pattern.substr(i + 1, close - i - 1);
    if (key == "node") {
      out += node_stem;
      has_node = true;
    } else if (key == "kind") {
      out += kind;
    } else if (key == "op") {
      out += op;
    } else {
      throw Error(ExitCode::kUsage, "name template '" + pattern + "': unknown placeholder {" + key +
                                        "} (use {node}, {kind}, {op})");
    }
    i = close;
  }
  if (!has_node) throw Error(ExitCode::kUsage, "name template '" + pattern + "' must contain {node}");
  return out;
}

}  // namespace rnnstate
