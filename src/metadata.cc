#include "rnnstate/metadata.h"

#include <algorithm>
#include <stdexcept>

namespace rnnstate {

namespace {

StatePair PairFromJson(const Json& entry) {
  auto text = [&](const char* key) {
    const Json* value = entry.Find(key);
    if (value == nullptr || !value->is_string()) throw std::runtime_error(std::string("missing string '") + key + "'");
    return value->AsString();
  };
  auto flag = [&](const char* key, bool fallback) {
    const Json* value = entry.Find(key);
    return value == nullptr ? fallback : value->AsBool();
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
  if (const Json* rows = entry.Find("rows"); rows != nullptr && !rows->is_null()) {
    const std::vector<Json>& bounds = rows->Items();
    if (bounds.size() != 2 || bounds[0].AsInt() < 0 || bounds[1].AsInt() <= bounds[0].AsInt()) {
      throw std::runtime_error("rows must be [begin, end] with 0 <= begin < end");
    }
    pair.rows = std::make_pair(bounds[0].AsInt(), bounds[1].AsInt());
  }
  return pair;
}

}  // namespace

std::string RowRangeText(const std::optional<RowRange>& rows) {
  if (!rows) return "";
  return "[" + std::to_string(rows->first) + ":" + std::to_string(rows->second) + "]";
}

Json RowRangeJson(const RowRange& rows) {
  Json json = Json::Array();
  json.Push(rows.first);
  json.Push(rows.second);
  return json;
}

bool RowsOverlap(const RowRange& a, const RowRange& b) {
  return std::max(a.first, b.first) < std::min(a.second, b.second);
}

std::vector<StatePair> ReadStatePairs(const onnx::ModelProto& model, std::string* error) {
  std::vector<StatePair> pairs;
  for (const auto& prop : model.metadata_props()) {
    if (prop.key() != kMetadataKey) continue;
    try {
      Json document = Json::Parse(prop.value());
      const Json* version = document.Find("version");
      if (version == nullptr || version->AsInt() != kMetadataVersion) {
        throw std::runtime_error("unsupported or missing \"version\"");
      }
      const Json* states = document.Find("states");
      if (states == nullptr) throw std::runtime_error("missing \"states\"");
      for (const auto& entry : states->Items()) pairs.push_back(PairFromJson(entry));
    } catch (const std::exception& e) {
      if (error) *error = std::string("metadata '") + kMetadataKey + "' is invalid: " + e.what();
    }
  }
  return pairs;
}

Json StatePairsJson(const std::vector<StatePair>& pairs) {
  Json states = Json::Array();
  for (const auto& pair : pairs) {
    Json entry = Json::Object();
    entry.Set("input", pair.input);
    entry.Set("output", pair.output);
    entry.Set("node", pair.node);
    entry.Set("graph", pair.graph);
    entry.Set("kind", pair.kind);
    entry.Set("optional", pair.optional);
    entry.Set("streamable", pair.streamable);
    if (pair.rows) entry.Set("rows", RowRangeJson(*pair.rows));
    states.Push(std::move(entry));
  }
  return states;
}

std::string StateMetadataValue(const std::vector<StatePair>& pairs) {
  Json document = Json::Object();
  document.Set("version", kMetadataVersion);
  document.Set("states", StatePairsJson(pairs));
  return document.Dump();
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
