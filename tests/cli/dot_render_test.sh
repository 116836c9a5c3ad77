#!/usr/bin/env bash
# `rnnstate report --format dot` renders with Graphviz (Debian `graphviz`, installed by tools/setup.sh):
# originals and rewritten models, main-graph and nested nodes, not-streamable nodes, no recurrent node.
# Usage: dot_render_test.sh RNNSTATE_BINARY MODELS_DIR
set -uo pipefail
bin=$1
models=$2
source "$(dirname "$0")/lib.sh"

if ! command -v dot >/dev/null; then
  echo "dot (Graphviz) is not installed: run tools/setup.sh"
  exit 1
fi

renders() {  # renders MODEL: the DOT source of MODEL renders to SVG without a warning
  "$bin" report "$1" --format dot >"$work/m.dot" || return 1
  dot -Tsvg "$work/m.dot" -o "$work/m.svg" 2>"$work/dot.err" || { cat "$work/dot.err"; return 1; }
  [ ! -s "$work/dot.err" ] || { echo "  dot warned:"; cat "$work/dot.err"; return 1; }
  grep -q "<svg" "$work/m.svg"
}

for name in torch/lstm2_bf_dyn torch/lstm_bidir torch/lstm_gru_dyn handbuilt/gru_reverse handbuilt/shared_default \
            handbuilt/rnn_seq_lens control/hb_loop_if_lstm control/hb_scan_gru control/ts_lstm_if \
            control/hb_loop_ar_lstm control/hb_no_rnn_loop_if; do
  model=$models/$name.onnx
  if renders "$model"; then passed=$((passed + 1)); echo "PASS  $name"; else failed=$((failed + 1)); echo "FAIL  $name"; fi
  # The rewritten model renders too (its states drawn as exposed inputs and outputs).
  "$bin" -q rewrite "$model" -o "$work/rewritten.onnx" >/dev/null 2>&1
  if renders "$work/rewritten.onnx"; then passed=$((passed + 1)); echo "PASS  $name (rewritten)"
  else failed=$((failed + 1)); echo "FAIL  $name (rewritten)"; fi
done

finish
