// The saved finds of fuzzing (tests/data/fuzz/*.onnx) through the structure-aware target's sweep
// (tools/fuzz/model_sweep.h): every command's library call, every rewrite mode, onnx's checker on each
// rewrite and a second rewrite that changes no byte — the same oracles the campaign held them to, in one
// process (tests/cli/cli_test.sh replays them through the CLI too, for its exit codes).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model_sweep.h"

namespace rnnstate::fuzz_replay_test {
namespace {

namespace fs = std::filesystem;

TEST(FuzzReplay, EverySavedFindPassesEveryOracle) {
  const fs::path finds = fs::path(RNNSTATE_SOURCE_DIR) / "tests" / "data" / "fuzz";
  int replayed = 0;
  for (const auto& entry : fs::directory_iterator(finds)) {
    if (entry.path().extension() != ".onnx") continue;
    std::ifstream file(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << file.rdbuf();
    const std::string data = bytes.str();
    onnx::ModelProto model;
    if (!model.ParseFromString(data) || !model.has_graph()) continue;  // the CLI refuses it before any command
    // The file's size chooses the --time-axis input and axis, as the fuzz target's input size did.
    EXPECT_THAT(fuzz::SweepModel(model, data.size(), finds.string()), ::testing::IsEmpty())
        << entry.path().filename();
    ++replayed;
  }
  EXPECT_GE(replayed, 11);
}

}  // namespace
}  // namespace rnnstate::fuzz_replay_test
