// The rnnstate executable's entry point: the command line is src/cli/command_line.cc's.

#include "cli/command_line.h"

int main(int argc, char** argv) { return rnnstate::cli::RunCommandLine(argc, argv); }
