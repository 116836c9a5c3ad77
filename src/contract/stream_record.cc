#include "contract/stream_record.h"

#include <stdexcept>

namespace rnnstate {

namespace {

const Json& RecordMember(const Json& object, const char* key) {
  auto found = object.find(key);
  if (found == object.end()) throw std::runtime_error(std::string("missing '") + key + "'");
  return *found;
}

std::string RecordText(const Json& object, const char* key, bool required) {
  auto found = object.find(key);
  if (found == object.end() && !required) return "";
  const Json& value = found == object.end() ? RecordMember(object, key) : *found;
  if (!value.is_string()) throw std::runtime_error(std::string("'") + key + "' is not a string");
  return value.get<std::string>();
}

int64_t RecordInteger(const Json& object, const char* key, int64_t fallback) {
  auto found = object.find(key);
  if (found == object.end()) return fallback;
  if (!found->is_number_integer()) throw std::runtime_error(std::string("'") + key + "' is not an integer");
  return found->get<int64_t>();
}

bool RecordFlag(const Json& object, const char* key) {
  auto found = object.find(key);
  if (found == object.end()) return false;
  if (!found->is_boolean()) throw std::runtime_error(std::string("'") + key + "' is not true or false");
  return found->get<bool>();
}

}  // namespace

Json StreamRecordJson(const StreamRecord& record) {
  Json time = Json::array();
  for (const StreamRecord::Axis& axis : record.time) time.push_back({{"input", axis.input}, {"axis", axis.axis}});
  Json json = {{"version", kStreamRecordVersion}, {"time", std::move(time)}};
  if (record.time.empty()) return json;
  if (record.fixed_length > 0) json["fixed_length"] = record.fixed_length;
  if (record.chunk_multiple > 1) json["chunk_multiple"] = record.chunk_multiple;
  json["chunk_exact"] = record.chunk_exact;
  if (record.delay > 0) json["delay"] = record.delay;
  if (record.delay > 0 && record.flush > 0 && record.flush != record.delay) json["flush"] = record.flush;
  if (record.delay > 0) json["flush_exact"] = record.flush_exact;
  if (record.first_chunk_min > 0) json["first_chunk_min"] = record.first_chunk_min;
  if (!record.reason.empty()) json["reason"] = record.reason;
  Json outputs = Json::array();
  for (const StreamOutputRecord& out : record.outputs) {
    Json entry = {{"output", out.output}, {"chunked", out.chunked}};
    if (out.chunked == "frames") entry["axis"] = out.axis;
    if (out.chunked == "differs") {
      if (!out.node.empty()) entry["node"] = out.node;
      entry["why"] = out.why;
      if (out.past > 0) entry["past"] = out.past;
      if (out.future > 0) entry["future"] = out.future;
      if (out.whole) entry["whole"] = true;
    }
    outputs.push_back(std::move(entry));
  }
  json["outputs"] = std::move(outputs);
  return json;
}

StreamRecord StreamRecordFromJson(const Json& json) {
  if (!json.is_object()) throw std::runtime_error("'stream' is not an object");
  if (RecordInteger(json, "version", -1) != kStreamRecordVersion) {
    throw std::runtime_error("'stream' has no 'version' " + std::to_string(kStreamRecordVersion));
  }
  StreamRecord record;
  const Json& time = RecordMember(json, "time");
  if (!time.is_array()) throw std::runtime_error("'stream.time' is not an array");
  for (const Json& axis : time) {
    if (!axis.is_object()) throw std::runtime_error("'stream.time' holds a value that is not an object");
    StreamRecord::Axis a{RecordText(axis, "input", true), RecordInteger(axis, "axis", -1)};
    if (a.axis < 0) throw std::runtime_error("'stream.time' axis of '" + a.input + "' is missing or negative");
    record.time.push_back(std::move(a));
  }
  record.fixed_length = RecordInteger(json, "fixed_length", -1);
  record.chunk_multiple = RecordInteger(json, "chunk_multiple", 1);
  if (record.chunk_multiple < 1) throw std::runtime_error("'stream.chunk_multiple' is not a positive integer");
  record.chunk_exact = RecordFlag(json, "chunk_exact");
  record.delay = RecordInteger(json, "delay", 0);
  if (record.delay < 0) throw std::runtime_error("'stream.delay' is negative");
  record.flush = RecordInteger(json, "flush", 0);
  if (record.flush < 0 || (record.flush > 0 && record.delay == 0)) {
    throw std::runtime_error("'stream.flush' is negative or without a 'delay'");
  }
  record.flush_exact = RecordFlag(json, "flush_exact");
  record.first_chunk_min = RecordInteger(json, "first_chunk_min", 0);
  if (record.first_chunk_min < 0) throw std::runtime_error("'stream.first_chunk_min' is negative");
  record.reason = RecordText(json, "reason", false);
  if (auto outputs = json.find("outputs"); outputs != json.end()) {
    if (!outputs->is_array()) throw std::runtime_error("'stream.outputs' is not an array");
    for (const Json& entry : *outputs) {
      if (!entry.is_object()) throw std::runtime_error("'stream.outputs' holds a value that is not an object");
      StreamOutputRecord out;
      out.output = RecordText(entry, "output", true);
      out.chunked = RecordText(entry, "chunked", true);
      if (out.chunked != "same" && out.chunked != "frames" && out.chunked != "last" && out.chunked != "differs") {
        throw std::runtime_error("'stream.outputs' chunked '" + out.chunked + "' is not same, frames, last or differs");
      }
      out.axis = RecordInteger(entry, "axis", -1);
      out.node = RecordText(entry, "node", false);
      out.why = RecordText(entry, "why", false);
      out.past = RecordInteger(entry, "past", 0);
      out.future = RecordInteger(entry, "future", 0);
      out.whole = RecordFlag(entry, "whole");
      record.outputs.push_back(std::move(out));
    }
  }
  return record;
}

}  // namespace rnnstate
