// The metadata document's writing: each state pair's entry, the document's text (states streamed into it),
// and the model's metadata entry — what metadata.h declares beside the reading (metadata.cc).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "contract/metadata_bound.h"
#include "rnnstate/metadata.h"

namespace rnnstate {

namespace {

/// The most keys a state entry has: the 7 every entry has, the 7 StatePairsJson adds where they apply
/// (carried, rows, region, axes, view, variable, context) and WriteContractFields's 6.
constexpr size_t kMaxEntryKeys = 20;

/// The entry's "path": the graph of its node, step by step.
Json PathJson(const std::vector<PathStep>& steps) {
  Json path = Json::array();
  for (const PathStep& step : steps) {
    Json json = {{"node", step.node}, {"attribute", step.attribute}};
    if (step.index >= 0) json["index"] = step.index;
    path.push_back(std::move(json));
  }
  return path;
}

/// The entry's "context".
Json ContextJson(const ContextSpec& context) {
  Json json = {{"value", context.value}, {"axis", context.axis}, {"frames", context.frames}};
  if (!context.window.empty()) json["window"] = context.window;
  if (context.lookahead > 0) json["lookahead"] = context.lookahead;
  if (!context.pad.empty()) json["pad"] = context.pad;
  if (context.valid) json["valid"] = true;
  return json;
}

/// Whether a pair has the fields of the grown contract (it has all of them or none).
bool HasContractFields(const StatePair& pair) { return !pair.dtype.empty() || !pair.init.empty(); }

/// Writes the fields of the grown contract (all of them, or none for a pair that lacks them).
void WriteContractFields(const StatePair& pair, Json& entry) {
  if (!HasContractFields(pair)) return;
  entry["dtype"] = pair.dtype;
  entry["shape"] = MetaShapeJson(pair.shape);
  entry["batch_axis"] = pair.batch_axis;
  entry["init"] = pair.init;
  entry["path"] = PathJson(pair.path);
  if (!pair.layout.empty()) entry["layout"] = pair.layout;
}

/// The metadata entry of one state pair (an element of StatePairsJson).
Json StateEntryJson(const StatePair& pair) {
  Json entry = Json::object();
  // Room for every key up front: an object's keys and values sit in one vector whose elements (pairs
  // with a const key) are copied, not moved, each time it grows.
  entry.get_ref<Json::object_t&>().reserve(kMaxEntryKeys);
  entry["input"] = pair.input;
  entry["output"] = pair.output;
  entry["node"] = pair.node;
  entry["graph"] = pair.graph;
  entry["kind"] = pair.kind;
  entry["optional"] = pair.optional;
  entry["streamable"] = pair.streamable;
  // Written where it says more than `streamable` (a recurrence that carries its state in a model whose
  // chunked runs differ from one run): readers take `streamable` when it is absent.
  if (pair.carried != pair.streamable) entry["carried"] = pair.carried;
  if (pair.rows) entry["rows"] = RowRangeJson(*pair.rows);
  if (!pair.region.empty()) {
    entry["region"] = RegionJson(pair.region);
    entry["axes"] = pair.axes;
    if (!pair.view.empty()) entry["view"] = MetaShapeJson(pair.view);
  }
  if (!pair.variable.empty()) entry["variable"] = pair.variable;
  if (pair.context) entry["context"] = ContextJson(*pair.context);
  WriteContractFields(pair, entry);
  return entry;
}

/// Appends `token`, a member's separator, quoted key and colon (",\"output\":"), and returns `out` for its
/// value: one append a member (three, separator, key and colon, took a third of the entries' time).
std::string& Member(std::string& out, std::string_view token) { return out.append(token); }

void AppendBool(bool value, std::string& out) { out += value ? "true" : "false"; }

/// Appends DumpJson(StateEntryJson(pair)) to `out`, written member by member: building each entry's
/// document only to dump it cost more than the dump (10,000 LSTMs, 20,000 entries: the metadata's text took
/// 430M instructions that way, 121M this way). The keys and their order are StateEntryJson's; its unit test
/// holds the two texts equal for every optional member.
void AppendStateEntry(const StatePair& pair, std::string& out) {
  AppendJsonString(pair.input, Member(out, "{\"input\":"));
  AppendJsonString(pair.output, Member(out, ",\"output\":"));
  AppendJsonString(pair.node, Member(out, ",\"node\":"));
  AppendJsonString(pair.graph, Member(out, ",\"graph\":"));
  AppendJsonString(pair.kind, Member(out, ",\"kind\":"));
  AppendBool(pair.optional, Member(out, ",\"optional\":"));
  AppendBool(pair.streamable, Member(out, ",\"streamable\":"));
  if (pair.carried != pair.streamable) AppendBool(pair.carried, Member(out, ",\"carried\":"));
  if (pair.rows) AppendJson(RowRangeJson(*pair.rows), Member(out, ",\"rows\":"));
  if (!pair.region.empty()) {
    AppendJson(RegionJson(pair.region), Member(out, ",\"region\":"));
    AppendJson(Json(pair.axes), Member(out, ",\"axes\":"));
    if (!pair.view.empty()) AppendJson(MetaShapeJson(pair.view), Member(out, ",\"view\":"));
  }
  if (!pair.variable.empty()) AppendJsonString(pair.variable, Member(out, ",\"variable\":"));
  if (pair.context) AppendJson(ContextJson(*pair.context), Member(out, ",\"context\":"));
  if (HasContractFields(pair)) {
    AppendJsonString(pair.dtype, Member(out, ",\"dtype\":"));
    AppendJson(MetaShapeJson(pair.shape), Member(out, ",\"shape\":"));
    AppendJson(Json(pair.batch_axis), Member(out, ",\"batch_axis\":"));
    AppendJsonString(pair.init, Member(out, ",\"init\":"));
    if (pair.path.empty()) {
      Member(out, ",\"path\":") += "[]";
    } else {
      AppendJson(PathJson(pair.path), Member(out, ",\"path\":"));
    }
    if (!pair.layout.empty()) AppendJsonString(pair.layout, Member(out, ",\"layout\":"));
  }
  out += '}';
}

/// DumpJson of `document` with the states' entries, StatePairsJson(pairs), as the value of its "states"
/// key: the same text (a compact dump is each member's key and value text), without the states' whole
/// document in memory (at 20,000 states it takes 19 MB, their text 4 MB), allocated once.
std::string DumpWithStates(const Json& document, const std::vector<StatePair>& pairs) {
  std::vector<std::string> entries;
  entries.reserve(pairs.size());
  // The other members' text, with "null" where the states go, and a comma or a bracket an entry: at most
  // what the text takes.
  size_t size = DumpJson(document).size() + pairs.size() + 2;
  // Each entry written into one scratch text that keeps its room, then copied at its exact size: a string grown
  // from empty copies itself at each doubling and keeps up to twice the room it needs.
  std::string scratch;
  for (const StatePair& pair : pairs) {
    scratch.clear();
    AppendStateEntry(pair, scratch);
    entries.push_back(scratch);
    size += scratch.size();
  }
  std::string text;
  text.reserve(size);
  text += '{';
  for (const auto& [key, value] : document.items()) {
    if (text.size() > 1) text += ',';
    text += DumpJson(Json(key));
    text += ':';
    if (key != "states") {
      text += DumpJson(value);
      continue;
    }
    text += '[';
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) text += ',';
      text += entries[i];
    }
    text += ']';
  }
  text += '}';
  return text;
}

}  // namespace

Json StatePairsJson(const std::vector<StatePair>& pairs) {
  Json states = Json::array();
  states.get_ref<Json::array_t&>().reserve(pairs.size());
  for (const auto& pair : pairs) states.push_back(StateEntryJson(pair));
  return states;
}

std::string StateMetadataValue(const std::vector<StatePair>& pairs) {
  return DumpWithStates(Json{{"version", kMetadataVersion}, {"states", nullptr}}, pairs);
}

namespace {

/// WriteStateDocument of a document already dumped.
void WriteStateText(onnx::ModelProto& model, std::string value) {
  auto* props = model.mutable_metadata_props();
  // The first entry takes the value; later entries of the key (a model given two) would be stale pairs
  // that contradict it: they go.
  bool written = false;
  auto kept = std::remove_if(props->begin(), props->end(), [&](onnx::StringStringEntryProto& prop) {
    if (prop.key() != kMetadataKey) return false;
    if (written) return true;
    prop.set_value(std::move(value));  // once: `written` guards it
    written = true;
    return false;
  });
  props->erase(kept, props->end());
  if (written) return;
  auto* prop = model.add_metadata_props();
  prop->set_key(kMetadataKey);
  prop->set_value(std::move(value));
}

}  // namespace

void WriteStateDocument(onnx::ModelProto& model, const Json& document) { WriteStateText(model, DumpJson(document)); }

void WriteStatePairs(onnx::ModelProto& model, const std::vector<StatePair>& pairs, const Json& stream) {
  // The states take their place now (first after the version); their entries go straight into the text.
  Json document = {{"version", kMetadataVersion}, {"states", nullptr}};
  // Its other keys are kept; its states are not even read (a hostile document lists a million).
  if (std::optional<Json> old = ReadDocumentBesideStates(model, kMetadataKey)) {
    for (const auto& [key, value] : old->items()) {
      if (key != "version" && key != "states") document[key] = value;
    }
  }
  if (!stream.is_null()) document[kStreamKey] = stream;
  WriteStateText(model, DumpWithStates(document, pairs));
}

}  // namespace rnnstate
