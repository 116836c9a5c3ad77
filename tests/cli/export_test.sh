#!/usr/bin/env bash
# Golden test of `rnnstate export`: the Triton config.pbtxt fragments and OpenVINO MakeStateful pairs of
# models of models/ rewritten the ways serving runtimes need (packed, batch-first, required inputs), and
# the refusals of what a runtime cannot carry — stdout, stderr (paths cut to file names) and exit code of
# each, compared with the committed file. Regenerate with --update when a change is meant to alter them.
# Usage: export_test.sh RNNSTATE_BINARY MODELS_DIR GOLDEN_FILE [--update]
set -uo pipefail
source "$(dirname "$0")/lib.sh"
golden_arguments "$@"

# case MODEL NAME REWRITE-ARGS... -- EXPORT-ARGS...: rewrite MODEL, then export it; record what is printed.
case_() {
  local model=$1 name=$2; shift 2
  local rewrite=() export=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do rewrite+=("$1"); shift; done
  shift
  export=("$@")
  local out=$work/$name.onnx
  [ -f "$out" ] || "$bin" -q rewrite "$models/$model" -o "$out" "${rewrite[@]}" >/dev/null 2>&1 ||
    { echo "== $name: rewrite ${rewrite[*]} failed" >>"$actual"; return; }
  "$bin" export "${export[@]}" "$out" >"$work/stdout" 2>"$work/stderr"
  local code=$?
  {
    echo "== $model (rewrite ${rewrite[*]}): export ${export[*]} -> exit $code"
    sed "s|$work/||g" "$work/stdout"
    sed "s|$work/||g; s|^|stderr: |" "$work/stderr"
  } >>"$actual"
}

case_ torch/lstm2_bf_dyn.onnx lstm2-tensor --pack tensor --state-inputs required -- triton
case_ torch/lstm2_bf_dyn.onnx lstm2-tensor --pack tensor --state-inputs required -- openvino
case_ torch/lstm2_bf_dyn.onnx lstm2-tensor --pack tensor --state-inputs required -- openvino --json
case_ torch/lstm2_bf_dyn.onnx lstm2-bf --state-layout batch-first --state-inputs required -- triton
case_ torch/lstm2_bf_dyn_op11.onnx lstm2-op11 --pack tensor --state-inputs required -- triton --name lstm --max-batch-size 32
case_ torch/lstm2_bf_static.onnx lstm2-static --pack tensor --state-inputs required -- triton
case_ torch/lstm2_bf_dyn.onnx lstm2-node --state-inputs required -- triton
case_ torch/lstm2_bf_dyn.onnx lstm2-node --state-inputs required -- openvino
case_ torch/lstm2_bf_dyn.onnx lstm2-defaults --pack tensor -- triton
case_ torch/lstm2_bf_dyn.onnx lstm2-sequence --pack sequence -- triton
case_ torch/lstm2_bf_dyn.onnx lstm2-sequence --pack sequence -- openvino
case_ torch/lstm_h0.onnx h0-tensor --pack tensor --state-inputs required -- triton
case_ torch/lstm_gru_dyn.onnx lstm-gru-bf --state-layout batch-first --state-inputs required -- triton
case_ control/hb_loop_ar_lstm.onnx ar-bf --state-layout batch-first --state-inputs required -- triton
case_ control/hb_loop_ar_lstm.onnx ar-tensor --pack tensor --state-inputs required -- triton
case_ handbuilt/gru_nonzero_default.onnx nonzero-tensor --pack tensor --state-inputs required -- triton
case_ handbuilt/gru_nonzero_default.onnx nonzero-tensor --pack tensor --state-inputs required -- openvino
case_ handbuilt/lstm_big_fixed_batch.onnx big-tensor --pack tensor --state-inputs required -- triton
case_ torch/lstm_h0.onnx h0-bf --state-layout batch-first --state-inputs required -- triton
case_ handbuilt/gru_reverse.onnx reverse-tensor --pack tensor --state-inputs required -- triton
case_ handbuilt/gru_reverse.onnx reverse-tensor --pack tensor --state-inputs required -- openvino

# -o REPOSITORY writes the entry Triton loads: NAME/config.pbtxt (what is printed without -o) and
# NAME/1/model.onnx (the model as it is); -o and --name are usage errors with openvino.
repo=$work/repository
"$bin" export triton "$work/lstm2-tensor.onnx" -o "$repo" --name lstm2 >"$work/entry.out" 2>"$work/entry.err"
check "export triton -o writes an entry (exit 0)" test $? -eq 0
check "the entry's model is the rewritten model" cmp "$work/lstm2-tensor.onnx" "$repo/lstm2/1/model.onnx"
"$bin" export triton "$work/lstm2-tensor.onnx" --name lstm2 >"$work/config.stdout" 2>/dev/null
check "the entry's config.pbtxt is what is printed" cmp "$work/config.stdout" "$repo/lstm2/config.pbtxt"
check "config.pbtxt names the model" grep -qx 'name: "lstm2"' "$repo/lstm2/config.pbtxt"
check "the entry is named on stdout" grep -q "lstm2-tensor.onnx -> $repo/lstm2: config.pbtxt, 1/model.onnx" "$work/entry.out"
"$bin" export triton "$work/lstm2-tensor.onnx" -o "$repo" --name lstm2 >/dev/null 2>&1
check "exporting again replaces the entry (exit 0)" test $? -eq 0
"$bin" export triton "$work/lstm2-node.onnx" -o "$work/refused" >/dev/null 2>&1
check "a refused export writes nothing (exit 4)" test $? -eq 4 -a ! -e "$work/refused"
"$bin" export openvino "$work/lstm2-tensor.onnx" -o "$repo" >/dev/null 2>&1
check "-o with openvino is a usage error" test $? -eq 2
"$bin" export triton "$work/lstm2-tensor.onnx" --name a/b >/dev/null 2>&1
check "--name with a slash is a usage error" test $? -eq 2

golden_check "every export is as in $(basename "$golden")"
