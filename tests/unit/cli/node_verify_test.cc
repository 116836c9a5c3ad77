// `rnnstate verify` finds the helper's checker beside the binary (build tree and installed layouts) and
// runs it with Node.js: its arguments passed on in order, its exit code returned, a missing checker or
// Node.js named in the error, a checker killed by a signal reported as such.

#include "cli/node_verify.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <functional>
#include <iterator>

#include "cli/scoped_env.h"
#include "rnnstate/error.h"

namespace rnnstate::node_verify_test {
namespace {

namespace fs = std::filesystem;

class NodeVerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "node_verify_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Writes `text` to `relative` under the test's directory; returns its path.
  fs::path Write(const fs::path& relative, const std::string& text) const {
    const fs::path path = dir_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path;
  }

  /// The ExitCode and message of the Error `action` throws.
  static std::pair<ExitCode, std::string> Thrown(const std::function<void()>& action) {
    try {
      action();
    } catch (const Error& error) {
      return {error.code(), error.what()};
    }
    ADD_FAILURE() << "no Error thrown";
    return {ExitCode::kOk, ""};
  }

  fs::path dir_;
};

TEST_F(NodeVerifyTest, LooksBesideTheBinaryThenInTheInstalledShareFolder) {
  EXPECT_EQ(
      VerifyScriptCandidates("/opt/x/build/rnnstate"),
      (std::vector<fs::path>{"/opt/x/build/rnnstate-stream/cli.mjs", "/opt/x/share/rnnstate/rnnstate-stream/cli.mjs"}));
  EXPECT_EQ(VerifyScriptCandidates("/usr/bin/rnnstate"),
            (std::vector<fs::path>{"/usr/bin/rnnstate-stream/cli.mjs", "/usr/share/rnnstate/rnnstate-stream/cli.mjs"}));
}

TEST_F(NodeVerifyTest, FindsTheInstalledCheckerAndPrefersTheBuildTreeOne) {
  const fs::path installed = Write("share/rnnstate/rnnstate-stream/cli.mjs", "");
  EXPECT_EQ(FindVerifyScript(dir_ / "bin" / "rnnstate"), installed);
  const fs::path beside = Write("bin/rnnstate-stream/cli.mjs", "");
  EXPECT_EQ(FindVerifyScript(dir_ / "bin" / "rnnstate"), beside);
}

TEST_F(NodeVerifyTest, NoCheckerIsAnErrorNamingWhereItLooked) {
  Write("bin/rnnstate-stream/cli.mjs/not-a-file", "");  // a directory of that name is not the checker
  const auto [code, message] = Thrown([&] { FindVerifyScript(dir_ / "bin" / "rnnstate"); });
  EXPECT_EQ(code, ExitCode::kBadInput);
  EXPECT_NE(message.find((dir_ / "bin/rnnstate-stream/cli.mjs").string()), std::string::npos) << message;
  EXPECT_NE(message.find((dir_ / "share/rnnstate/rnnstate-stream/cli.mjs").string()), std::string::npos) << message;
}

TEST_F(NodeVerifyTest, RunsVerifyWithTheArgumentsInOrderAndReturnsItsExitCode) {
  const fs::path out = dir_ / "argv.json";
  std::string program = "import { writeFileSync } from 'node:fs';\n";
  program += "writeFileSync('" + out.string() + "', JSON.stringify(process.argv.slice(2)));\n";
  program += "process.exitCode = 4;\n";
  const fs::path script = Write("cli.mjs", program);
  EXPECT_EQ(RunNodeVerify(script, {"a b.onnx", "--chunks", "1,2", "--help"}), 4);
  std::ifstream in(out);
  const std::string argv((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(argv, R"(["verify","a b.onnx","--chunks","1,2","--help"])");
  EXPECT_EQ(RunNodeVerify(Write("ok.mjs", ""), {}), 0);
}

TEST_F(NodeVerifyTest, ACheckerKilledByASignalIsAnInternalError) {
  const fs::path script = Write("cli.mjs", "process.kill(process.pid, 'SIGKILL');\n");
  const auto [code, message] = Thrown([&] { RunNodeVerify(script, {}); });
  EXPECT_EQ(code, ExitCode::kInternal);
  EXPECT_NE(message.find("signal 9"), std::string::npos) << message;
}

TEST_F(NodeVerifyTest, NoNodeOnPathIsAnErrorSayingWhatToInstall) {
  const auto [code, message] = [&] {
    const testing::ScopedEnv empty_path("PATH", dir_);  // an empty directory: no node in it
    return Thrown([&] { RunNodeVerify(Write("cli.mjs", ""), {}); });
  }();
  EXPECT_EQ(code, ExitCode::kBadInput);
  EXPECT_NE(message.find("Node.js"), std::string::npos) << message;
  EXPECT_NE(message.find("apt-get install nodejs"), std::string::npos) << message;
}

}  // namespace
}  // namespace rnnstate::node_verify_test
