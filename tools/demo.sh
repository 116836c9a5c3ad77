#!/usr/bin/env bash
# README command 1: installs what is missing, builds build/rnnstate — the tool alone: tools/test.sh adds
# the tests to the same build/ and reuses its object files — then runs rnnstate on a bundled PyTorch
# export of two stacked LSTMs: report, rewrite, report of the rewrite, and verify (the rewrite streamed
# in ONNX Runtime against one whole run). Every step says what it does as it goes.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
step() { printf '\n== %s\n' "$*"; }
run() { printf '\n$ %s\n' "$*"; "$@"; }

step "[1/3] packages: what the build and the tests need, installed only where missing (tools/setup.sh)"
tools/setup.sh
step "[2/3] build: build/rnnstate (tools/build.sh --target rnnstate)"
tools/build.sh --target rnnstate
model=models/torch/lstm2_bf_dyn.onnx
out=build/demo/lstm2_bf_dyn.streaming.onnx
mkdir -p build/demo
step "[3/3] run: rnnstate on $model"
run build/rnnstate report "$model"
run build/rnnstate rewrite "$model" -o "$out"
run build/rnnstate report "$out"
run build/rnnstate verify "$model" "$out"

step "done in $((SECONDS - start)) s. The binary is build/rnnstate; to call it rnnstate, as the README does:"
echo "  export PATH=\"$PWD/build:\$PATH\""
echo "Next: tools/test.sh (every test suite), build/rnnstate --help, or the Silero VAD quick start in README.md."
