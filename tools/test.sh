#!/usr/bin/env bash
# README command 2 (and CI): set up, build, and run every test (unit tests and ONNX Runtime end-to-end).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh
cd build
ctest --output-on-failure -j "$(nproc)"
