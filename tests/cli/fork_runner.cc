// rnnstate_fork_runner: runs many rnnstate command lines in one process start. The golden report test
// makes about 1,300 runs; as processes of their own, most of their CPU went to starting them (loading
// onnx and protobuf, registering onnx's operator schemas: about 45 of a small model's 50 ms). Here the
// libraries are loaded and the schemas registered once, then each command line runs in a forked child —
// a process of its own, with its own working directory, stdout, stderr and exit code, running the
// executable's own code (cli::RunCommandLine), so it prints the bytes `rnnstate ARGS...` prints.
//
// Reads jobs from stdin, one per line, fields separated by tabs: DIR, STDOUT_FILE, STDERR_FILE, then the
// command line (argv[0] first, as the messages show it). Writes one line per job to stdout, flushed, so a
// shell can keep the runner as a coprocess and wait for each answer: the job's exit code (128 + the
// signal's number when a signal ended it). A job reads /dev/null as its stdin, never the job stream.
// Exit 2 on a malformed job line.
//
// Usage: rnnstate_fork_runner [--time-limit SECONDS]
//   --time-limit  a job still running after SECONDS is ended (SIGALRM) and answered 124, as timeout(1)
//                 answers: the hostile suites' limit on a command that hangs.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "rnnstate/pipeline.h"

namespace {

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  for (std::string field; std::getline(stream, field, '\t');) fields.push_back(field);
  return fields;
}

/// Points file descriptor `fd` at `path` (created or truncated); false when it cannot be opened.
bool Redirect(int fd, const std::string& path) {
  int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (file < 0) return false;
  bool ok = ::dup2(file, fd) == fd;
  ::close(file);
  return ok;
}

/// Points stdin at /dev/null: a job must never read the runner's job stream.
bool DetachStdin() {
  int file = ::open("/dev/null", O_RDONLY);
  if (file < 0) return false;
  bool ok = ::dup2(file, STDIN_FILENO) == STDIN_FILENO;
  ::close(file);
  return ok;
}

/// The child: its directory, input and output files and time limit (0: none), then the command line;
/// never returns.
[[noreturn]] void RunChild(const std::vector<std::string>& job, unsigned time_limit) {
  if (::chdir(job[0].c_str()) != 0 || !DetachStdin() || !Redirect(STDOUT_FILENO, job[1]) ||
      !Redirect(STDERR_FILENO, job[2])) {
    std::perror("rnnstate_fork_runner: cannot set up the job");
    ::_exit(125);
  }
  if (time_limit > 0) ::alarm(time_limit);
  std::vector<char*> argv;
  for (size_t i = 3; i < job.size(); ++i) argv.push_back(const_cast<char*>(job[i].c_str()));
  argv.push_back(nullptr);
  int code = rnnstate::cli::RunCommandLine(static_cast<int>(job.size() - 3), argv.data());
  // What returning from main flushes; the process's static objects need no destruction here.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(code);
}

/// The seconds of --time-limit (0 without it); exits 2 on anything else.
unsigned TimeLimit(int argc, char** argv) {
  if (argc == 1) return 0;
  char* end = nullptr;
  long seconds = argc == 3 && std::strcmp(argv[1], "--time-limit") == 0 ? std::strtol(argv[2], &end, 10) : 0;
  if (end == nullptr || *end != '\0' || seconds <= 0) {
    std::cerr << "usage: rnnstate_fork_runner [--time-limit SECONDS] <JOBS\n";
    std::exit(2);
  }
  return static_cast<unsigned>(seconds);
}

}  // namespace

int main(int argc, char** argv) {
  unsigned time_limit = TimeLimit(argc, argv);
  // Registered once, before any fork: every child inherits the registry.
  rnnstate::PrepareForWorkers();
  std::string line;
  while (std::getline(std::cin, line)) {
    std::vector<std::string> job = SplitTabs(line);
    if (job.size() < 4) {
      std::cerr << "rnnstate_fork_runner: a job needs DIR, STDOUT, STDERR and a command line: '" << line << "'\n";
      return 2;
    }
    std::cout.flush();
    std::fflush(nullptr);
    pid_t child = ::fork();
    if (child < 0) {
      std::perror("rnnstate_fork_runner: fork");
      return 2;
    }
    if (child == 0) RunChild(job, time_limit);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0) {
      if (errno != EINTR) {
        std::perror("rnnstate_fork_runner: waitpid");
        return 2;
      }
    }
    bool timed_out = time_limit > 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
    std::cout << (WIFEXITED(status) ? WEXITSTATUS(status) : timed_out ? 124 : 128 + WTERMSIG(status)) << std::endl;
  }
  return 0;
}
