#!/usr/bin/env bash
# Configures and builds rnnstate in build/ (Release, warnings as errors), showing how far it is: one line
# per folder compiled with CMake's [NN%], a line every 15 s while a folder compiles, no compiler command
# lines (VERBOSE=1 shows them). The build/ of one configuration serves every target: tools/demo.sh builds
# the binary alone, tools/test.sh then adds the tests and reuses every object file.
# Usage: tools/build.sh [--target NAME] [CMAKE_OPTION...]
#   --target NAME   build only NAME (e.g. rnnstate: the command-line tool)
#   CMAKE_OPTION    passed to cmake's configure step (tools/test.sh: -DBUILD_TESTING=ON)
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/progress.sh
targets=()
options=()
while (($#)); do
  case $1 in
    --target) targets=(--target "${2:?--target needs a target name}"); shift 2 ;;
    -h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) options+=("$1"); shift ;;
  esac
done
start=$SECONDS
echo "build: configuring build/ (cmake, Release, warnings as errors)"
mkdir -p build
if ! cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DRNNSTATE_WERROR=ON "${options[@]}" >build/configure.log 2>&1; then
  cat build/configure.log >&2
  echo "build: cmake's configure step failed (its output above, and in build/configure.log)" >&2
  exit 1
fi
what=${targets[1]:-everything}
echo "build: compiling $what with $(nproc) jobs"
cmake --build build -j "$(nproc)" "${targets[@]}" 2>&1 | cmake_build_lines | heartbeat "still compiling"
echo "build: $what built in $((SECONDS - start)) s"
