#include "rnnstate/metadata.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <utility>

#include "contract/metadata_bound.h"

namespace rnnstate {

namespace {

/// The fields added to the contract after its first version: optional when reading, checked when present.
void ReadContractFields(const Json& entry, StatePair& pair) {
  auto optional_text = [&](const char* key) -> std::string {
    auto value = entry.find(key);
    if (value == entry.end()) return "";
    if (!value->is_string()) throw std::runtime_error(std::string("'") + key + "' is not a string");
    return value->get<std::string>();
  };
  pair.dtype = optional_text("dtype");
  pair.init = optional_text("init");
  pair.layout = optional_text("layout");
  if (auto axis = entry.find("batch_axis"); axis != entry.end()) {
    if (!axis->is_number_integer()) throw std::runtime_error("'batch_axis' is not an integer");
    pair.batch_axis = axis->get<int64_t>();
  }
  if (auto shape = entry.find("shape"); shape != entry.end()) pair.shape = MetaShapeFromJson(*shape, "shape");
  if (auto path = entry.find("path"); path != entry.end()) {
    if (!path->is_array()) throw std::runtime_error("'path' is not an array");
    for (const auto& step : *path) {
      if (!step.is_object() || !step.contains("node") || !step["node"].is_string() || !step.contains("attribute") ||
          !step["attribute"].is_string()) {
        throw std::runtime_error("a 'path' step is not {\"node\": name, \"attribute\": name}");
      }
      PathStep parsed{step["node"].get<std::string>(), step["attribute"].get<std::string>(), -1};
      if (auto index = step.find("index"); index != step.end()) {
        if (!index->is_number_integer()) throw std::runtime_error("a 'path' step's index is not an integer");
        parsed.index = index->get<int64_t>();
      }
      pair.path.push_back(std::move(parsed));
    }
  }
}

/// The region of a state exposed in its authors' own tensors (optional).
void ReadRegion(const Json& entry, StatePair& pair) {
  auto region = entry.find("region");
  if (region == entry.end() || region->is_null()) return;
  if (!region->is_array()) throw std::runtime_error("'region' is not an array");
  for (const auto& item : *region) {
    if (item.is_null()) {
      pair.region.push_back(RegionAxis{});
    } else if (item.is_number_integer() && item.get<int64_t>() >= 0) {
      pair.region.push_back(RegionAxis{RegionAxis::Kind::kIndex, item.get<int64_t>(), 0});
    } else if (item.is_array() && item.size() == 2 && item[0].is_number_integer() && item[1].is_number_integer() &&
               item[0].get<int64_t>() >= 0 && item[1].get<int64_t>() > item[0].get<int64_t>()) {
      pair.region.push_back(RegionAxis{RegionAxis::Kind::kRange, item[0].get<int64_t>(), item[1].get<int64_t>()});
    } else {
      throw std::runtime_error("a 'region' item is not an index, [begin, end] or null");
    }
  }
  if (auto axes = entry.find("axes"); axes != entry.end()) {
    if (!axes->is_array()) throw std::runtime_error("'axes' is not an array");
    for (const auto& axis : *axes) {
      if (!axis.is_string()) throw std::runtime_error("an 'axes' item is not a string");
      pair.axes.push_back(axis.get<std::string>());
    }
  }
}

/// The view a region is on (optional): sizes and names, one per axis of the region, splitting the axes
/// of `shape` (when given) into the same elements.
void ReadView(const Json& entry, StatePair& pair) {
  auto view = entry.find("view");
  if (view == entry.end() || view->is_null()) return;
  if (!view->is_array()) throw std::runtime_error("'view' is not an array");
  for (const auto& dim : *view) {
    if (dim.is_number_integer() && dim.get<int64_t>() > 0) {
      pair.view.push_back(MetaDim{dim.get<int64_t>(), ""});
    } else if (dim.is_string()) {
      pair.view.push_back(MetaDim{-1, dim.get<std::string>()});
    } else {
      throw std::runtime_error("'view' holds something other than sizes and names");
    }
  }
  if (pair.region.size() != pair.view.size()) {
    throw std::runtime_error("'view' " + MetaShapeText(pair.view) + " has " + std::to_string(pair.view.size()) +
                             " axes, its 'region' " + std::to_string(pair.region.size()));
  }
  if (!pair.shape.empty() && !ViewSplit(pair.view, pair.shape)) {
    throw std::runtime_error("'view' " + MetaShapeText(pair.view) + " is not the elements of 'shape' " +
                             MetaShapeText(pair.shape) + " (its axes must split the shape's, row-major)");
  }
}

/// The "context" object of a context state (optional): {"value": name, "axis": k >= 0, "frames": n > 0,
/// "window": node name (optional), "lookahead": 1 <= n <= frames (optional, with a window), "valid": true
/// (optional, with a window and no lookahead)}.
void ReadContext(const Json& entry, StatePair& pair) {
  auto context = entry.find("context");
  if (context == entry.end() || context->is_null()) return;
  auto integer = [&](const char* key, int64_t least) {
    auto value = context->find(key);
    if (value == context->end() || !value->is_number_integer() || value->get<int64_t>() < least) {
      throw std::runtime_error(std::string("'context' has no integer '") + key + "' >= " + std::to_string(least));
    }
    return value->get<int64_t>();
  };
  if (!context->is_object()) throw std::runtime_error("'context' is not an object");
  auto value = context->find("value");
  if (value == context->end() || !value->is_string() || value->get<std::string>().empty()) {
    throw std::runtime_error("'context' has no value name");
  }
  pair.context = ContextSpec{value->get<std::string>(), integer("axis", 0), integer("frames", 1), "", 0, "", false};
  if (auto window = context->find("window"); window != context->end()) {
    if (!window->is_string() || window->get<std::string>().empty()) {
      throw std::runtime_error("'context' has a 'window' that is not a node name");
    }
    pair.context->window = window->get<std::string>();
  }
  if (context->contains("lookahead")) {
    pair.context->lookahead = integer("lookahead", 1);
    if (pair.context->lookahead > pair.context->frames || pair.context->window.empty()) {
      throw std::runtime_error("'context' has a 'lookahead' beyond its 'frames' or without its 'window'");
    }
  }
  if (auto pad = context->find("pad"); pad != context->end()) {
    const bool known = pad->is_string() && (*pad == "constant" || *pad == "edge" || *pad == "reflect");
    if (!known || pair.context->window.empty() || pair.context->lookahead > 0) {
      throw std::runtime_error("'context' has a 'pad' other than \"constant\", \"edge\" or \"reflect\", or "
                               "without its 'window', or beside a 'lookahead'");
    }
    pair.context->pad = pad->get<std::string>();
  }
  if (auto valid = context->find("valid"); valid != context->end()) {
    if (!valid->is_boolean() || pair.context->window.empty() || pair.context->lookahead > 0 ||
        !pair.context->pad.empty()) {
      throw std::runtime_error("'context' has a 'valid' that is not a boolean, or without its 'window', or with a "
                               "'lookahead' or a 'pad'");
    }
    pair.context->valid = valid->get<bool>();
  }
}

StatePair PairFromJson(const Json& entry) {
  if (!entry.is_object()) throw std::runtime_error("a state entry is not an object");
  auto text = [&](const char* key) {
    auto value = entry.find(key);
    if (value == entry.end() || !value->is_string())
      throw std::runtime_error(std::string("missing string '") + key + "'");
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
  if (pair.kind.empty()) throw std::runtime_error("kind is empty");  // any other kind is accepted (see check)
  if (auto variable = entry.find("variable"); variable != entry.end() && !variable->is_null()) {
    if (!variable->is_string()) throw std::runtime_error("'variable' is not a string");
    pair.variable = variable->get<std::string>();
  }
  pair.optional = flag("optional", false);
  pair.streamable = flag("streamable", false);
  pair.carried = flag("carried", pair.streamable);
  if (auto rows = entry.find("rows"); rows != entry.end() && !rows->is_null()) {
    const bool bounded =
        rows->is_array() && rows->size() == 2 && (*rows)[0].is_number_integer() && (*rows)[1].is_number_integer();
    const int64_t begin = bounded ? (*rows)[0].get<int64_t>() : -1, end = bounded ? (*rows)[1].get<int64_t>() : -1;
    if (!bounded || begin < 0 || end <= begin)
      throw std::runtime_error("rows must be [begin, end] with 0 <= begin < end");
    pair.rows = std::make_pair(begin, end);
  }
  ReadContractFields(entry, pair);
  ReadRegion(entry, pair);
  ReadView(entry, pair);
  ReadContext(entry, pair);
  return pair;
}

}  // namespace

std::vector<StatePair> ReadStatePairs(const onnx::ModelProto& model, std::string* error,
                                      std::optional<Json>* document_out, bool bounded) {
  std::vector<StatePair> pairs;
  if (document_out) document_out->reset();
  const std::string key = std::string("metadata '") + kMetadataKey + "'";
  int entries = 0;
  for (const auto& prop : model.metadata_props()) {
    if (prop.key() != kMetadataKey || ++entries > 1) continue;
    // The pairs are read as the parser completes each one, so the document never holds them all.
    std::vector<StatePair> read;
    std::string pair_error;  // the first entry that is not a pair: "states[N]: ..."
    size_t at = 0;
    const size_t most = bounded ? MostStateEntries(model) : std::numeric_limits<size_t>::max();
    struct TooManyEntries {};
    const JsonElementSink to_pair = [&](Json& entry) {
      // Refused at the first entry past the bound, before the rest is parsed: linear in the model, not
      // in the document.
      if (at == most) {
        pair_error = "states: more than " + std::to_string(most) + " entries, more than the model has states " +
                     "to pair (one per node input and graph input)";
        throw TooManyEntries{};
      }
      if (pair_error.empty()) {
        try {
          read.push_back(PairFromJson(entry));
        } catch (const std::exception& e) {
          pair_error = "states[" + std::to_string(at) + "]: " + e.what();
        }
      }
      ++at;
    };
    Json document;
    try {
      document = ParseJson(prop.value(), "states", to_pair);
    } catch (const TooManyEntries&) {
      if (error) *error = key + " is invalid: " + pair_error;
      continue;
    } catch (const std::exception& e) {
      if (error) *error = key + " is " + e.what();
      continue;
    }
    try {
      if (!document.is_object()) throw std::runtime_error("not a JSON object");
      auto version = document.find("version");
      if (version == document.end() || !version->is_number_integer() || version->get<int64_t>() != kMetadataVersion) {
        throw std::runtime_error("unsupported or missing \"version\"");
      }
      auto states = document.find("states");
      if (states == document.end() || !states->is_array()) throw std::runtime_error("missing \"states\"");
      pairs = std::move(read);
      if (!pair_error.empty()) throw std::runtime_error(pair_error);
    } catch (const std::exception& e) {
      if (error) *error = key + " is invalid: " + e.what();
    }
    if (document_out && document.is_object()) *document_out = std::move(document);
  }
  if (entries > 1 && error) {
    // Two values of one key: which one a reader takes is arbitrary (onnx's checker refuses duplicate keys).
    *error = key + " is given " + std::to_string(entries) + " times; a model carries one";
  }
  return pairs;
}

std::optional<Json> ReadStateDocument(const onnx::ModelProto& model) {
  for (const auto& prop : model.metadata_props()) {
    if (prop.key() != kMetadataKey) continue;
    try {
      Json document = ParseJson(prop.value());
      if (document.is_object()) return document;
    } catch (const std::exception&) {
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace rnnstate
