#include "cli/node_verify.h"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

#include "rnnstate/error.h"

extern char** environ;

namespace rnnstate {

std::vector<std::filesystem::path> VerifyScriptCandidates(const std::filesystem::path& executable) {
  const std::filesystem::path dir = executable.parent_path();
  return {dir / "rnnstate-stream" / "cli.mjs",
          (dir / ".." / "share" / "rnnstate" / "rnnstate-stream" / "cli.mjs").lexically_normal()};
}

std::filesystem::path FindVerifyScript(const std::filesystem::path& executable) {
  std::string looked;
  for (const std::filesystem::path& candidate : VerifyScriptCandidates(executable)) {
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate, error)) return candidate;
    looked += (looked.empty() ? "" : ", ") + candidate.string();
  }
  const std::string missing = "verify runs the rnnstate-stream helper's cli.mjs, which is not beside this binary";
  throw Error(ExitCode::kBadInput, missing + " (looked for " + looked + ")");
}

int RunNodeVerify(const std::filesystem::path& script, const std::vector<std::string>& arguments) {
  std::vector<std::string> words = {"node", script.string(), "verify"};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  pid_t child = 0;
  const int spawned = posix_spawnp(&child, "node", nullptr, nullptr, argv.data(), environ);
  if (spawned == ENOENT) {
    throw Error(ExitCode::kBadInput,
                "verify runs in Node.js (18 or newer), which is not on PATH: install it "
                "(Debian: apt-get install nodejs)");
  }
  if (spawned != 0) throw Error(ExitCode::kBadInput, std::string("cannot start node: ") + std::strerror(spawned));
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) throw Error(ExitCode::kInternal, std::string("waiting for node: ") + std::strerror(errno));
  }
  if (WIFSIGNALED(status)) {
    throw Error(ExitCode::kInternal, "node ended on signal " + std::to_string(WTERMSIG(status)));
  }
  return WEXITSTATUS(status);
}

}  // namespace rnnstate
