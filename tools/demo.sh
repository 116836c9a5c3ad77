#!/usr/bin/env bash
# README command 1: set up, build, and run `rnnstate report` and `rnnstate rewrite` on a bundled model.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh >/dev/null
model=models/torch/lstm2_bf_dyn.onnx
out=build/demo/lstm2_bf_dyn.streaming.onnx
mkdir -p build/demo
set -x
build/rnnstate report "$model"
build/rnnstate rewrite "$model" -o "$out"
build/rnnstate report "$out"
