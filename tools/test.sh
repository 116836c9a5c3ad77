#!/usr/bin/env bash
# README command 2: set up, build (Release, warnings as errors; the tests added to the build/ that
# tools/demo.sh made, its object files reused) and run every test suite through ctest — unit tests, the
# CLI contract, the golden outputs, the ONNX Runtime end-to-end checks, install and packaging. With
# --sanitize (what CI runs, .ci/run), also the demo test (tools/demo.sh from nothing), then the unit and
# CLI tests again under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/). Prints the counts of
# passed and failed tests and how long each part took.
# Usage: tools/test.sh [--sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/progress.sh
sanitize=0
for arg in "$@"; do
  case $arg in
    --sanitize) sanitize=1 ;;
    -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "tools/test.sh: unknown argument '$arg' (usage: tools/test.sh [--sanitize])" >&2; exit 2 ;;
  esac
done
jobs=$(nproc)
start=$SECONDS
tools/setup.sh
tools/build.sh -DBUILD_TESTING=ON
built=$SECONDS
status=0
# The demo test (label demo) builds rnnstate again from nothing in a copy of the tree: with --sanitize only.
skip_demo=(-LE '^demo$')
[ "$sanitize" -eq 0 ] || skip_demo=()
(cd build && ctest --output-on-failure -j "$jobs" "${skip_demo[@]}") | tee build/ctest.log || status=$?
# ctest's "97% tests passed, 3 tests failed out of 120" as the summary line: "117 passed, 3 failed".
summary=$(sed -n 's/^[0-9]*% tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\)$/\1 \2/p' build/ctest.log)
if [ -n "$summary" ]; then
  read -r failed total <<<"$summary"
  counts="$((total - failed)) passed, $failed failed"
else
  counts="no ctest summary (its output is above)"
fi
echo "== Release: $counts; setup + build $((built - start)) s, tests $((SECONDS - built)) s"
[ "$status" -eq 0 ] || exit "$status"
[ "$sanitize" -eq 1 ] || exit 0

echo "== sanitizers (ASan + UBSan): unit and CLI tests"
asan_start=$SECONDS
# -Og -g1 (line tables only): stack traces keep files and lines, the suite runs as fast as at -O1, and the
# build takes 409 s instead of 1123 s at "-g -O1" (measured on a 2-core machine, 2026-12-04).
# Unity build by folder as in Release: compiled file by file, this build took 835 s of CI's 37 minutes.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -Og" -DRNNSTATE_WERROR=ON \
  -DRNNSTATE_SANITIZE=ON -DBUILD_TESTING=ON >/dev/null
cmake --build build-asan -j "$jobs" 2>&1 | cmake_build_lines | heartbeat "still compiling build-asan"
asan_built=$SECONDS
# The published models' suites (label real_models) ran in the Release pass: ONNX Runtime on large graphs is
# not what the sanitizers check. Nor are golden_reports and cli rerun here: they compare the bytes and exit
# codes of about 2,000 runs the Release pass checked already (over 10 minutes under ASan, which start-up
# dominates); the code they run runs here in cli_hostile (hostile input through every command),
# golden_rewrites (every bundled model through rewrite, both modes) and the unit tests.
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  RNNSTATE_TEST_TIME_SCALE=5 ctest --output-on-failure -j "$jobs" -E '^(e2e_|golden_reports$|cli$)' -LE 'real_models|demo')
echo "== sanitizers: build $((asan_built - asan_start)) s, tests $((SECONDS - asan_built)) s"
