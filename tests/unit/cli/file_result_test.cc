// What one command did with one file: exceptions turned into error results with their exit codes, the
// per-file and summary JSON Lines records (docs/files.md) and the one summary line for humans.

#include "cli/file_result.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

#include "rnnstate/error.h"
#include "test_names.h"

namespace rnnstate::file_result_test {
namespace {

using namespace test_names;

TEST(ProcessGuarded, ABodyThatReturnsKeepsItsResult) {
  const FileResult result = ProcessGuarded("m.onnx", [](FileResult& r) {
    r.text = "done\n";
    r.changed = true;
  });
  EXPECT_EQ(result.path, "m.onnx");
  EXPECT_EQ(result.status, kStatusOk);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.text, "done\n");
  EXPECT_TRUE(result.changed);
}

TEST(ProcessGuarded, AnErrorBecomesAnErrorResultWithItsOwnCodeAndNothingElseOfTheBody) {
  const FileResult result = ProcessGuarded("m.onnx", [](FileResult& r) {
    r.text = "half done\n";
    r.changed = true;
    r.states.push_back(StatePair{});
    r.warnings.push_back("kept");
    throw Error(ExitCode::kUnsupported, "opset 6 is too old");
  });
  EXPECT_EQ(result.status, kStatusError);
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_EQ(result.error, "opset 6 is too old");
  EXPECT_EQ(result.text, "");
  EXPECT_FALSE(result.changed);
  EXPECT_THAT(result.states, IsEmpty());
  EXPECT_THAT(result.warnings, ElementsAre("kept"));  // warnings found before the error still count
}

TEST(ProcessGuarded, AnyOtherExceptionIsAnInternalError) {
  const FileResult standard = ProcessGuarded("m.onnx", [](FileResult&) { throw std::runtime_error("oops"); });
  EXPECT_EQ(standard.status, kStatusError);
  EXPECT_EQ(standard.exit_code, 6);
  EXPECT_EQ(standard.error, "internal error: oops");
  const FileResult other = ProcessGuarded("m.onnx", [](FileResult&) { throw 42; });
  EXPECT_EQ(other.exit_code, 6);
  EXPECT_EQ(other.error, "internal error");
}

TEST(Timed, AddsTheWallTimeAlsoWhenTheBodyThrows) {
  double ms = 1000;
  EXPECT_EQ(Timed(&ms, [] { return 7; }), 7);
  EXPECT_GE(ms, 1000);
  const double before = ms;
  EXPECT_THROW(Timed(&ms,
                     [] {
                       std::this_thread::sleep_for(std::chrono::milliseconds(2));
                       throw std::runtime_error("x");
                     }),
               std::runtime_error);
  EXPECT_GE(ms, before + 2);
}

TEST(FileResultJson, HasTheDocumentedMembersInOrderWithTheDetailsAfterTheStates) {
  FileResult result;
  result.path = "zoo/m.onnx";
  result.details["problems"] = Json::array();
  result.warnings = {"w1"};
  result.timings.load_ms = 1.23456;
  result.timings.write_ms = 0.0004;
  const Json record = FileResultJson(result);
  std::vector<std::string> keys;
  for (const auto& item : record.items()) keys.push_back(item.key());
  EXPECT_THAT(
      keys, ElementsAre("path", "status", "output", "states", "problems", "warnings", "timings", "error", "exit_code"));
  EXPECT_EQ(DumpJson(record),
            R"({"path":"zoo/m.onnx","status":"ok","output":null,"states":[],"problems":[],"warnings":["w1"],)"
            R"("timings":{"load_ms":1.235,"process_ms":0.0,"write_ms":0.0},"error":null,"exit_code":0})");
}

TEST(FileResultJson, AnOutputAndAnErrorAreStrings) {
  FileResult result;
  result.output = "m.streaming.onnx";
  result.error = "not an ONNX model";
  result.exit_code = 3;
  const Json record = FileResultJson(result);
  EXPECT_EQ(record["output"], "m.streaming.onnx");
  EXPECT_EQ(record["error"], "not an ONNX model");
  EXPECT_EQ(record["exit_code"], 3);
}

/// A result with `exit_code` and `changed`.
FileResult Result(int exit_code, bool changed = false) {
  FileResult result;
  result.exit_code = exit_code;
  result.changed = changed;
  return result;
}

TEST(BatchSummary, CountsFilesAndKeepsTheHighestExitCode) {
  BatchSummary summary;
  for (const FileResult& result : {Result(0, true), Result(3), Result(1), Result(0), Result(0, true)}) {
    summary.Add(result);
  }
  EXPECT_EQ(summary.files, 5u);
  EXPECT_EQ(summary.ok, 3u);
  EXPECT_EQ(summary.failed, 2u);
  EXPECT_EQ(summary.changed, 2u);
  EXPECT_EQ(summary.exit_code, 3);  // 3 came before 1: the highest, not the last
}

TEST(SummaryJson, IsTheDocumentedRecord) {
  BatchSummary summary;
  summary.Add(Result(4));
  summary.not_run = 2;
  EXPECT_EQ(DumpJson(SummaryJson(summary)),
            R"({"summary":true,"files":1,"ok":0,"failed":1,"changed":0,"not_run":2,"exit_code":4})");
}

TEST(SummaryText, NamesOnlyTheCountsThatAreNotZeroBeyondOkAndFailed) {
  BatchSummary one;
  one.Add(Result(0));
  EXPECT_EQ(SummaryText(one), "1 file: 1 ok, 0 failed (exit 0)");
  BatchSummary many;
  for (const FileResult& result : {Result(0, true), Result(0), Result(3)}) many.Add(result);
  EXPECT_EQ(SummaryText(many), "3 files: 2 ok, 1 failed, 1 changed (exit 3)");
  many.not_run = 4;
  EXPECT_EQ(SummaryText(many), "3 files: 2 ok, 1 failed, 1 changed, 4 not run (--fail-fast) (exit 3)");
}

}  // namespace
}  // namespace rnnstate::file_result_test
