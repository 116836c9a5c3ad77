#!/usr/bin/env bash
# README command 2 (and CI): set up, build, and run every test: unit tests, the CLI contract and the
# ONNX Runtime end-to-end checks (Release build, warnings as errors), then the unit and CLI tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh
(cd build && ctest --output-on-failure -j "$(nproc)")

echo "== sanitizers (ASan + UBSan): unit and CLI tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DRNNSTATE_WERROR=ON -DRNNSTATE_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$(nproc)" >/dev/null
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --output-on-failure -j "$(nproc)" -E '^e2e_')
