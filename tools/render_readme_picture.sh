#!/usr/bin/env bash
# Renders the README's before/after picture: `rnnstate report --format dot` of a bundled PyTorch LSTM
# (models/torch/lstm_gru_dyn.onnx) and of its rewrite, drawn by Graphviz into docs/img/before.svg and
# docs/img/after.svg. Run after a change to the DOT output, and commit the pictures.
# Usage: tools/render_readme_picture.sh [RNNSTATE_BINARY]   (default build/rnnstate)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/rnnstate}")
command -v dot >/dev/null || { echo "render_readme_picture: needs Graphviz (apt-get install graphviz)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp models/torch/lstm_gru_dyn.onnx "$work/model.onnx"
(
  cd "$work"
  "$bin" -q rewrite model.onnx -o model.streaming.onnx >/dev/null
  "$bin" report model.onnx --format dot >before.gv
  "$bin" report model.streaming.onnx --format dot >after.gv
)
dot -Tsvg "$work/before.gv" -o docs/img/before.svg
dot -Tsvg "$work/after.gv" -o docs/img/after.svg
echo "wrote docs/img/before.svg docs/img/after.svg"
