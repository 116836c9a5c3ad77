#include "rnnstate/packed_metadata.h"

#include <stdexcept>

namespace rnnstate {

namespace {

using std::runtime_error;

std::string Text(const Json& object, const char* key) {
  auto value = object.find(key);
  if (value == object.end() || !value->is_string()) throw runtime_error(std::string("missing string '") + key + "'");
  return value->get<std::string>();
}

int64_t Integer(const Json& object, const char* key, int64_t fallback, bool required) {
  auto value = object.find(key);
  if (value == object.end()) {
    if (required) throw runtime_error(std::string("missing integer '") + key + "'");
    return fallback;
  }
  if (!value->is_number_integer()) throw runtime_error(std::string("'") + key + "' is not an integer");
  return value->get<int64_t>();
}

bool Flag(const Json& object, const char* key) {
  auto value = object.find(key);
  if (value == object.end()) return false;
  if (!value->is_boolean()) throw runtime_error(std::string("'") + key + "' is not true or false");
  return value->get<bool>();
}

std::vector<MetaDim> Shape(const Json& object, const char* key) {
  auto value = object.find(key);
  if (value == object.end()) return {};
  return MetaShapeFromJson(*value, key);
}

Json ShapeJson(const std::vector<MetaDim>& shape) { return MetaShapeJson(shape); }

std::vector<int64_t> Integers(const Json& object, const char* key) {
  std::vector<int64_t> out;
  auto value = object.find(key);
  if (value == object.end() || !value->is_array()) throw runtime_error(std::string("missing array '") + key + "'");
  for (const auto& item : *value) {
    if (!item.is_number_integer()) throw runtime_error(std::string("'") + key + "' holds a non-integer");
    out.push_back(item.get<int64_t>());
  }
  return out;
}

PackedMember MemberFromJson(const Json& entry, bool tensor, size_t state_count) {
  if (!entry.is_object()) throw runtime_error("a member is not an object");
  PackedMember member;
  member.states = Integers(entry, "states");
  if (member.states.empty()) throw runtime_error("a member names no state");
  for (int64_t state : member.states) {
    if (state < 0 || static_cast<size_t>(state) >= state_count) {
      throw runtime_error("a member names state " + std::to_string(state) + ", which \"states\" does not have");
    }
  }
  member.input = Text(entry, "input");
  member.output = Text(entry, "output");
  member.shape = Shape(entry, "shape");
  member.batch_axis = Integer(entry, "batch_axis", -1, true);
  if (tensor) {
    member.offset = Integer(entry, "offset", -1, true);
    member.length = Integer(entry, "length", -1, true);
    member.row_shape = Integers(entry, "row_shape");
    if (member.offset < 0 || member.length <= 0) throw runtime_error("a member's offset or length is out of range");
  } else {
    member.position = Integer(entry, "position", -1, true);
    if (member.position < 0) throw runtime_error("a member's position is negative");
  }
  return member;
}

PackedValue ValueFromJson(const Json& entry, bool tensor, size_t state_count) {
  if (!entry.is_object()) throw runtime_error("a packed value is not an object");
  PackedValue value;
  value.input = Text(entry, "input");
  value.output = Text(entry, "output");
  value.dtype = Text(entry, "dtype");
  value.shape = Shape(entry, "shape");
  value.batch_axis = Integer(entry, "batch_axis", -1, false);
  value.init = Text(entry, "init");
  value.optional = Flag(entry, "optional");
  value.streamable = Flag(entry, "streamable");
  auto members = entry.find("members");
  if (members == entry.end() || !members->is_array() || members->empty()) {
    throw runtime_error("a packed value has no \"members\"");
  }
  for (const auto& member : *members) value.members.push_back(MemberFromJson(member, tensor, state_count));
  return value;
}

}  // namespace

std::pair<int, int> PackedStates::MemberOf(int64_t state) const {
  for (size_t v = 0; v < values.size(); ++v) {
    for (size_t m = 0; m < values[v].members.size(); ++m) {
      for (int64_t s : values[v].members[m].states) {
        if (s == state) return {static_cast<int>(v), static_cast<int>(m)};
      }
    }
  }
  return {-1, -1};
}

bool HasPackedStates(const onnx::ModelProto& model) { return HasPackedStates(ReadStateDocument(model)); }

bool HasPackedStates(const std::optional<Json>& document) { return document && document->contains("packed"); }

std::optional<PackedStates> ReadPackedStates(const onnx::ModelProto& model, size_t state_count, std::string* error) {
  std::optional<Json> document = ReadStateDocument(model);
  if (!document) return std::nullopt;
  return ReadPackedStates(*document, state_count, error);
}

std::optional<PackedStates> ReadPackedStates(const Json& document, size_t state_count, std::string* error) {
  auto packed = document.find("packed");
  if (packed == document.end()) return std::nullopt;
  try {
    if (!packed->is_object()) throw runtime_error("not an object");
    PackedStates out;
    out.kind = Text(*packed, "kind");
    if (out.kind != kPackedTensor && out.kind != kPackedSequence)
      throw runtime_error("unknown kind '" + out.kind + "'");
    auto values = packed->find("values");
    if (values == packed->end() || !values->is_array() || values->empty()) throw runtime_error("no \"values\"");
    for (const auto& value : *values)
      out.values.push_back(ValueFromJson(value, out.kind == kPackedTensor, state_count));
    return out;
  } catch (const std::exception& e) {
    if (error) *error = std::string("metadata '") + kMetadataKey + "': \"packed\" is invalid: " + e.what();
    return std::nullopt;
  }
}

Json PackedStatesJson(const PackedStates& packed) {
  const bool tensor = packed.kind == kPackedTensor;
  Json values = Json::array();
  for (const PackedValue& value : packed.values) {
    Json members = Json::array();
    for (const PackedMember& member : value.members) {
      Json entry = {{"states", member.states},
                    {"input", member.input},
                    {"output", member.output},
                    {"shape", ShapeJson(member.shape)},
                    {"batch_axis", member.batch_axis}};
      if (tensor) {
        entry["offset"] = member.offset;
        entry["length"] = member.length;
        entry["row_shape"] = member.row_shape;
        entry["layout"] = kLayoutBatchFirst;
      } else {
        entry["position"] = member.position;
      }
      members.push_back(std::move(entry));
    }
    Json entry = {{"input", value.input}, {"output", value.output}, {"dtype", value.dtype}};
    if (tensor) {
      entry["shape"] = ShapeJson(value.shape);
      entry["batch_axis"] = value.batch_axis;
    }
    entry["init"] = value.init;
    entry["optional"] = value.optional;
    entry["streamable"] = value.streamable;
    entry["members"] = std::move(members);
    values.push_back(std::move(entry));
  }
  return Json{{"kind", packed.kind}, {"values", std::move(values)}};
}

}  // namespace rnnstate
