#!/usr/bin/env bash
# Published models kept outside the repository (../shared/real-models, test data that must not be copied
# in): what rnnstate says about them and, rewritten, that they stream in ONNX Runtime (tests/e2e/verify.mjs
# on tests/e2e/real_models.manifest.json). Skips with one line (exit 77) when the directory is absent.
# Usage: real_models_test.sh RNNSTATE_BINARY REAL_MODELS_DIR REPO_ROOT
set -uo pipefail
bin=$(realpath "$1")
dir=$2
repo=$3
model=$dir/tf2onnx_keras_lstm_as_loop.onnx
if [ ! -f "$model" ]; then
  echo "SKIP  real models: $model not found"
  exit 77
fi
source "$(dirname "$0")/lib.sh"

# tf2onnx_keras_lstm_as_loop (issue 22): three Keras LSTMs as Loops of a fixed length 60.
check "report runs" run 0 report "$model"
check "report names the one --time-axis option" grep -q "every loop would stream with --time-axis args_0:1" "$work/out"
check "rewrite --time-axis args_0:1" run 0 rewrite "$model" --time-axis args_0:1 -o "$work/streamed.onnx"
check "report of the rewrite" run 0 report "$work/streamed.onnx" --json
streamable_pairs() {
  /usr/bin/python3 -c 'import json,sys; print(sum(p["streamable"] for p in json.load(open(sys.argv[1]))["pairs"]))' "$work/out"
}
check "6 streamable states recorded (h, c of each layer)" test "$(streamable_pairs)" = 6
check "check --streamable-only accepts the rewrite" run 0 check "$work/streamed.onnx" --streamable-only
node "$repo/tests/e2e/verify.mjs" --rnnstate "$bin" --models "$dir" --manifest "$repo/tests/e2e/real_models.manifest.json" \
  >"$work/verify" 2>&1
code=$?
grep -E '^(PASS|FAIL)' "$work/verify" | grep -E 'FAIL|\(2\)' | head -20
tail -1 "$work/verify"
check "ONNX Runtime: chunked streaming equals one run (chunks of 1, 7, 1+59, 7+13+40)" test "$code" -eq 0
finish
