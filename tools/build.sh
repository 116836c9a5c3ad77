#!/usr/bin/env bash
# Configures and builds rnnstate in build/ (Release, warnings as errors). Extra args go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DRNNSTATE_WERROR=ON "$@" >/dev/null
cmake --build build -j "$(nproc)"
