// The rnnstate executable's entry point: the command line is src/cli/command_line.cc's.

#include "cli/command_line.h"
#include "cli/huge_pages.h"

int main(int argc, char** argv) {
  rnnstate::cli::RestartWithHugePages(argc, argv);
  return rnnstate::cli::RunCommandLine(argc, argv);
}
