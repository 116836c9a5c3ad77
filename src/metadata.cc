#include "rnnstate/metadata.h"

#include <algorithm>
#include <stdexcept>

namespace rnnstate {

namespace {

StatePair PairFromJson(const Json& entry) {
  if (!entry.is_object()) throw std::runtime_error("a state entry is not an object");
  auto text = [&](const char* key) {
    auto value = entry.find(key);
    if (value == entry.end() || !value->is_string()) throw std::runtime_error(std::string("missing string '") + key + "'");
    return value->get<std::string>();
  };
  auto flag = [&](const char* key, bool fallback) {
    auto value = entry.find(key);
    if (value == entry.end()) return fallback;
    if (!value->is_boolean()) throw std::runtime_error(std::string("'") + key + "' is not true or false");
    return value->get<bool>();
  };
  StatePair pair;
  pair.input = text("input");
  pair.output = text("output");
  pair.node = text("node");
  pair.graph = text("graph");
  pair.kind = text("kind");
  if (pair.kind != "h" && pair.kind != "c") throw std::runtime_error("kind must be \"h\" or \"c\"");
  pair.optional = flag("optional", false);
  pair.streamable = flag("streamable", false);
  if (auto rows = entry.find("rows"); rows != entry.end() && !rows->is_null()) {
    const bool bounded = rows->is_array() && rows->size() == 2 && (*rows)[0].is_number_integer() &&
                         (*rows)[1].is_number_integer();
    const int64_t begin = bounded ? (*rows)[0].get<int64_t>() : -1, end = bounded ? (*rows)[1].get<int64_t>() : -1;
    if (!bounded || begin < 0 || end <= begin) throw std::runtime_error("rows must be [begin, end] with 0 <= begin < end");
    pair.rows = std::make_pair(begin, end);
  }
  return pair;
}

}  // namespace

std::string RowRangeText(const std::optional<RowRange>& rows) {
  if (!rows) return "";
  return "[" + std::to_string(rows->first) + ":" + std::to_string(rows->second) + "]";
}

Json RowRangeJson(const RowRange& rows) { return Json::array({rows.first, rows.second}); }

bool RowsOverlap(const RowRange& a, const RowRange& b) {
  return std::max(a.first, b.first) < std::min(a.second, b.second);
}

std::vector<StatePair> ReadStatePairs(const onnx::ModelProto& model, std::string* error) {
  std::vector<StatePair> pairs;
  for (const auto& prop : model.metadata_props()) {
    if (prop.key() != kMetadataKey) continue;
    try {
      Json document = ParseJson(prop.value());
      if (!document.is_object()) throw std::runtime_error("not a JSON object");
      auto version = document.find("version");
      if (version == document.end() || !version->is_number_integer() || version->get<int64_t>() != kMetadataVersion) {
        throw std::runtime_error("unsupported or missing \"version\"");
      }
      auto states = document.find("states");
      if (states == document.end() || !states->is_array()) throw std::runtime_error("missing \"states\"");
      for (const auto& entry : *states) pairs.push_back(PairFromJson(entry));
    } catch (const std::exception& e) {
      if (error) *error = std::string("metadata '") + kMetadataKey + "' is invalid: " + e.what();
    }
  }
  return pairs;
}

Json StatePairsJson(const std::vector<StatePair>& pairs) {
  Json states = Json::array();
  for (const auto& pair : pairs) {
    Json entry = {{"input", pair.input},   {"output", pair.output},   {"node", pair.node},
                  {"graph", pair.graph},   {"kind", pair.kind},       {"optional", pair.optional},
                  {"streamable", pair.streamable}};
    if (pair.rows) entry["rows"] = RowRangeJson(*pair.rows);
    states.push_back(std::move(entry));
  }
  return states;
}

std::string StateMetadataValue(const std::vector<StatePair>& pairs) {
  Json document = {{"version", kMetadataVersion}, {"states", StatePairsJson(pairs)}};
  return DumpJson(document);
}

void WriteStatePairs(onnx::ModelProto& model, const std::vector<StatePair>& pairs) {
  std::string value = StateMetadataValue(pairs);
  for (auto& prop : *model.mutable_metadata_props()) {
    if (prop.key() == kMetadataKey) {
      prop.set_value(value);
      return;
    }
  }
  auto* prop = model.add_metadata_props();
  prop->set_key(kMetadataKey);
  prop->set_value(value);
}

}  // namespace rnnstate
