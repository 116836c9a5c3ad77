// The metadata's "stream" object (contract/stream_record.h): written with only what differs from the
// defaults, read back to the same record, and refused with a reason when malformed.

#include "contract/stream_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::stream_record_test {
namespace {

using namespace test_names;

/// A record of every field: a Conv that looks ahead, a lookahead's delay flushed at another rate.
StreamRecord Full() {
  StreamRecord record;
  record.time = {{"x", 1}, {"aux", 2}};
  record.fixed_length = 20;
  record.chunk_multiple = 4;
  record.chunk_exact = false;
  record.delay = 3;
  record.flush = 6;
  record.flush_exact = true;
  record.first_chunk_min = 2;
  record.reason = "output 'y': Conv 'c' slides a window";
  StreamOutputRecord differs;
  differs.output = "y";
  differs.chunked = "differs";
  differs.node = "Conv 'c'";
  differs.why = "slides a window";
  differs.past = 4;
  differs.future = 1;
  differs.whole = true;
  StreamOutputRecord frames;
  frames.output = "z";
  frames.chunked = "frames";
  frames.axis = 1;
  StreamOutputRecord last;
  last.output = "h_n";
  last.chunked = "last";
  record.outputs = {differs, frames, last};
  return record;
}

/// The record read from `text`, or the reason it is refused.
std::string Refusal(const std::string& text) {
  try {
    StreamRecordFromJson(Json::parse(text));
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(StreamRecordJson, WritesOnlyWhatDiffersFromTheDefaults) {
  EXPECT_EQ(StreamRecordJson(Full()).dump(),
            R"({"version":1,"time":[{"input":"x","axis":1},{"input":"aux","axis":2}],"fixed_length":20,)"
            R"("chunk_multiple":4,"chunk_exact":false,"delay":3,"flush":6,"flush_exact":true,"first_chunk_min":2,)"
            R"("reason":"output 'y': Conv 'c' slides a window","outputs":[{"output":"y","chunked":"differs",)"
            R"("node":"Conv 'c'","why":"slides a window","past":4,"future":1,"whole":true},)"
            R"({"output":"z","chunked":"frames","axis":1},{"output":"h_n","chunked":"last"}]})");
  StreamRecord plain;
  plain.time = {{"x", 0}};
  plain.chunk_exact = true;
  EXPECT_EQ(StreamRecordJson(plain).dump(),
            R"({"version":1,"time":[{"input":"x","axis":0}],"chunk_exact":true,"outputs":[]})");
  // A flush as long as the delay is not written: the reader takes the delay.
  StreamRecord same_flush = plain;
  same_flush.delay = 2;
  same_flush.flush = 2;
  EXPECT_FALSE(StreamRecordJson(same_flush).contains("flush"));
  EXPECT_EQ(StreamRecordFromJson(StreamRecordJson(same_flush)).FlushFrames(), 2);
}

TEST(StreamRecordJson, WithoutATimeAxisIsTheVersionAlone) {
  StreamRecord record = Full();
  record.time.clear();
  EXPECT_EQ(StreamRecordJson(record).dump(), R"({"version":1,"time":[]})");
}

TEST(StreamRecordFromJson, ReadsBackWhatWasWritten) {
  const StreamRecord back = StreamRecordFromJson(StreamRecordJson(Full()));
  EXPECT_EQ(StreamRecordJson(back), StreamRecordJson(Full()));
  EXPECT_EQ(back.time, Full().time);
  EXPECT_EQ(back.FlushFrames(), 6);
  ASSERT_EQ(back.outputs.size(), 3u);
  EXPECT_EQ(back.outputs[0].past, 4);
  EXPECT_TRUE(back.outputs[0].whole);
  EXPECT_EQ(back.outputs[1].axis, 1);
  EXPECT_EQ(back.outputs[2].chunked, "last");
  const StreamRecord defaults = StreamRecordFromJson(Json::parse(R"({"version":1,"time":[{"input":"x","axis":0}]})"));
  EXPECT_EQ(defaults.chunk_multiple, 1);
  EXPECT_EQ(defaults.fixed_length, -1);
  EXPECT_FALSE(defaults.chunk_exact);
  EXPECT_TRUE(defaults.outputs.empty());
}

TEST(StreamRecordFromJson, RefusesAMalformedObjectSayingWhy) {
  EXPECT_EQ(Refusal("[]"), "'stream' is not an object");
  EXPECT_EQ(Refusal(R"({"time":[]})"), "'stream' has no 'version' 1");
  EXPECT_EQ(Refusal(R"({"version":2,"time":[]})"), "'stream' has no 'version' 1");
  EXPECT_EQ(Refusal(R"({"version":1})"), "missing 'time'");
  EXPECT_EQ(Refusal(R"({"version":1,"time":{}})"), "'stream.time' is not an array");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[1]})"), "'stream.time' holds a value that is not an object");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[{"axis":1}]})"), "missing 'input'");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[{"input":"x"}]})"), "'stream.time' axis of 'x' is missing or negative");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[{"input":"x","axis":1.5}]})"), "'axis' is not an integer");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[],"chunk_multiple":0})"),
            "'stream.chunk_multiple' is not a positive integer");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[],"chunk_exact":"yes"})"), "'chunk_exact' is not true or false");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[],"delay":-1})"), "'stream.delay' is negative");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[],"flush":2})"), "'stream.flush' is negative or without a 'delay'");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[],"first_chunk_min":-3})"), "'stream.first_chunk_min' is negative");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[],"reason":7})"), "'reason' is not a string");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[],"outputs":{}})"), "'stream.outputs' is not an array");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[],"outputs":["y"]})"),
            "'stream.outputs' holds a value that is not an object");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[],"outputs":[{"output":"y"}]})"), "missing 'chunked'");
  EXPECT_EQ(Refusal(R"({"version":1,"time":[],"outputs":[{"output":"y","chunked":"some"}]})"),
            "'stream.outputs' chunked 'some' is not same, frames, last or differs");
}

}  // namespace
}  // namespace rnnstate::stream_record_test
