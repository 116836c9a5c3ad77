// libFuzzer target: command lines. The bytes are the arguments after `rnnstate`, one per line — the
// seeds (tools/fuzz/cli_seeds/) name commands, the models of the scratch directory and the options whose
// values matter most: --nodes patterns, --time-axis and --input-context specs, -o / --out-dir / --name
// paths, --batch / --dim / --max-batch-size / -j numbers. They go through the CLI's own parser and
// commands (src/cli/entry.cc compiled with its main renamed), in a scratch directory rebuilt for every
// input from build-fuzz/cli_template/. Oracle: the exit code is a documented one (0 to 5) — never 6, a
// crash, a sanitizer report or a hang — and a usage error (2) says what is wrong on stderr.
// Command lines that could reach outside the scratch directory (an absolute path, more `..` than its
// depth) or run Node.js (`verify`) are skipped. Build and run: tools/fuzz/run.sh --cli [SECONDS].

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

int RnnstateCliMain(int argc, char** argv);

namespace {

namespace fs = std::filesystem;

/// The scratch directory's depth below `work`: a command line with more `..` than this is skipped.
constexpr int kDepth = 3;

/// The arguments, one per line; empty when the command line is skipped.
std::vector<std::string> Arguments(const uint8_t* data, size_t size) {
  std::vector<std::string> arguments;
  std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find('\0') != std::string::npos) return {};
  size_t parents = 0;
  for (size_t at = text.find(".."); at != std::string::npos; at = text.find("..", at + 1)) ++parents;
  if (parents > kDepth) return {};
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    arguments.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  for (const std::string& argument : arguments) {
    if (argument == "verify" || (!argument.empty() && (argument[0] == '/' || argument[0] == '~'))) return {};
    // `-o/x`, `--out-dir=/x`: a value glued to its option.
    if (argument.find("=/") != std::string::npos || argument.rfind("-o/", 0) == 0) return {};
  }
  return arguments.size() > 40 ? std::vector<std::string>{} : arguments;
}

/// A fresh scratch directory (the template's models and folders), made the working directory.
void FreshScratch(const fs::path& root) {
  const fs::path work = root / "work";
  fs::current_path(root);
  fs::remove_all(work);
  fs::path scratch = work;
  for (int i = 0; i < kDepth; ++i) scratch /= "d" + std::to_string(i);
  fs::create_directories(scratch);
  fs::copy(root / "../cli_template", scratch, fs::copy_options::recursive);
  fs::current_path(scratch);
}

/// Runs the CLI on `arguments` with stdout discarded; its exit code, its stderr in `error`.
int RunCli(std::vector<std::string> arguments, std::string* error) {
  std::vector<char*> argv;
  static char program[] = "rnnstate";
  argv.push_back(program);
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const int saved_out = dup(1), saved_err = dup(2);
  const int sink = memfd_create("stderr", 0);
  const int null = ::open("/dev/null", O_WRONLY);
  dup2(null, 1);
  dup2(sink, 2);
  spdlog::drop("rnnstate");  // SetUpLogging makes it again on every run
  const int code = RnnstateCliMain(static_cast<int>(argv.size()) - 1, argv.data());
  std::fflush(stdout);
  std::fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  ::close(saved_out);
  ::close(saved_err);
  ::close(null);
  error->assign(static_cast<size_t>(lseek(sink, 0, SEEK_END)), '\0');
  if (pread(sink, error->data(), error->size(), 0) < 0) error->clear();
  ::close(sink);
  return code;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fs::path root = fs::absolute("cli_scratch");
  std::vector<std::string> arguments = Arguments(data, size);
  if (arguments.empty()) return 0;
  FreshScratch(root);
  std::string error;
  const int code = RunCli(arguments, &error);
  fs::current_path(root / "..");
  const bool usage_without_message = code == 2 && error.find_first_not_of(" \n") == std::string::npos;
  if (code >= 0 && code <= 5 && !usage_without_message) return 0;
  std::string line;
  for (const std::string& argument : arguments) line += " '" + argument + "'";
  std::fprintf(stderr, "fuzz_cli: rnnstate%s: exit %d%s\n%s", line.c_str(), code,
               usage_without_message ? " without a message" : "", error.c_str());
  __builtin_trap();
}
