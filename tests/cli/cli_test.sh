#!/usr/bin/env bash
# Command-line behaviour that scripts rely on: exit codes, error messages, atomic output, input never
# touched. Usage: cli_test.sh RNNSTATE_BINARY MODELS_DIR
set -uo pipefail
bin=$1
models=$2
testdata=/usr/share/libonnx-testdata/data/node
source "$(dirname "$0")/lib.sh"
start_runner

err_has() { grep -q -- "$1" "$work/err" || { echo "  stderr lacks '$1':"; sed 's/^/  /' "$work/err"; return 1; }; }
no_stray_files() { [ -z "$(find "$1" -name '*.tmp' -print -quit)" ]; }

model=$models/torch/lstm2_bf_dyn.onnx
cp "$model" "$work/in.onnx"
sum_before=$(sha256sum <"$work/in.onnx")

check "version" run 0 --version
check "no subcommand is a usage error (2)" run 2
check "unknown option is a usage error (2)" run 2 rewrite "$work/in.onnx" --bogus
check "help exits 0 and shows examples" bash -c "'$bin' rewrite --help | grep -q 'Examples'"

check "missing file: exit 3" run 3 report "$work/missing.onnx"
check "missing file: message names the file" err_has "missing.onnx"
: >"$work/empty.onnx"
check "empty file: exit 3" run 3 rewrite "$work/empty.onnx" -o "$work/o1.onnx"
check "empty file: no output written" test ! -e "$work/o1.onnx"
head -c 3000 "$model" >"$work/truncated.onnx"
check "truncated model: exit 3" run 3 rewrite "$work/truncated.onnx" -o "$work/o2.onnx"
check "truncated model: clear message" err_has "truncated"
check "truncated model: no output written" test ! -e "$work/o2.onnx"
printf 'this is not a model\n' >"$work/text.onnx"
check "text file: exit 3" run 3 report "$work/text.onnx"
check "directory: exit 3" run 3 report "$work"

check "unwritable output: exit 5" run 5 rewrite "$work/in.onnx" -o /etc/passwd/out.onnx
check "unwritable output: message names the output" err_has "/etc/passwd/out.onnx"
check "-o with --in-place: exit 2" run 2 rewrite "$work/in.onnx" -o "$work/x.onnx" --in-place
check "bad --nodes regex: exit 2" run 2 rewrite "$work/in.onnx" --nodes "(" -o "$work/x.onnx"
check "bad name template: exit 2" run 2 rewrite "$work/in.onnx" --input-names "{oops}" -o "$work/x.onnx"

check "dry run: exit 0" run 0 rewrite "$work/in.onnx" --dry-run
check "dry run: prints the plan" grep -q "new input" "$work/out"
check "dry run: writes nothing" test ! -e "$work/in.streaming.onnx"

check "rewrite to default path" run 0 rewrite "$work/in.onnx"
check "default output beside the input" test -s "$work/in.streaming.onnx"
check "input untouched" test "$(sha256sum <"$work/in.onnx")" = "$sum_before"
check "no temporary files left" no_stray_files "$work"
check "report --json is valid JSON with pairs" bash -c "'$bin' report --json '$work/in.streaming.onnx' |
  node -e 'const r=JSON.parse(require(\"fs\").readFileSync(0)); process.exit(r.pairs.length===4?0:1)'"

cp "$work/in.onnx" "$work/inplace.onnx"
check "in place: exit 0" run 0 rewrite "$work/inplace.onnx" --in-place
check "in place equals -o output" cmp -s "$work/inplace.onnx" "$work/in.streaming.onnx"
check "in place again: nothing to do" run 0 rewrite "$work/inplace.onnx" --in-place
check "in place again: says so" grep -q "nothing to do" "$work/out"

for name in test_if test_scan_sum; do
  check "$name (no recurrent state): exit 0" run 0 rewrite "$testdata/$name/model.onnx" -o "$work/$name.onnx"
  check "$name: written unchanged" cmp -s "$testdata/$name/model.onnx" "$work/$name.onnx"
  check "$name: report says nothing to do" bash -c "'$bin' report '$testdata/$name/model.onnx' | grep -q 'nothing to do'"
done
check "test_scan_sum: check passes" run 0 check "$testdata/test_scan_sum/model.onnx"
check "test_scan_sum: check warns about the Scan-8 state it cannot classify" err_has "Scan 'Scan_0' carried 'sum_in'"
# A running sum carried by a Loop / Scan-9 is a loop-carried state (issue 10). Already a graph input and
# output, it is only recorded (kind "state"); the Loop reads the iteration number: not streamable.
for name in test_loop11 test_scan9_sum; do
  check "$name (loop-carried sum): exit 0" run 0 rewrite "$testdata/$name/model.onnx" -o "$work/$name.onnx"
  check "$name: one pair of kind state, the existing input and output" bash -c "'$bin' report --json '$work/$name.onnx' |
    node -e 'const p=JSON.parse(require(\"fs\").readFileSync(0)).pairs; process.exit(p.length===1&&p[0].kind===\"state\"&&p[0].variable?0:1)'"
  check "$name: original passes check (exposed as it is)" run 0 check "$testdata/$name/model.onnx"
  check "$name: rewrite passes check" run 0 check "$work/$name.onnx"
done
check "test_loop11: not streamable (the body reads the iteration number)" bash -c "'$bin' report '$testdata/test_loop11/model.onnx' |
  grep -q 'streamable: no (the body uses the iteration number'"

# --time-axis: a usage error when malformed; the tf2onnx-style fixed-length Loop becomes streamable.
check "--time-axis without an axis: exit 2" run 2 rewrite "$models/loops/tf_lstm_loop_fixed.onnx" --time-axis x -o "$work/ta.onnx"
check "--time-axis: malformed value named" err_has "expected INPUT:AXIS"
# Found by the structure-aware fuzzer on a bundled model: --time-axis on a scalar input (no axis 0) crashed
# the stream verdict (exit 139); the axis is now left alone with a warning.
check "--time-axis on a scalar input: exit 0" run 0 rewrite "$models/loops/ar_gru_cell.onnx" --time-axis steps:0 -o "$work/ta0.onnx"
check "--time-axis on a scalar input: the axis named" err_has "'steps' has no declared axis 0; nothing changed for it"
# Found by the structure-aware fuzzer: an LSTM whose outputs reach no graph output, its initial state read
# from the input given as time. The first rewrite recorded it streamable, a rewrite of that output (where its
# final state is an output) not: the first verdict now judges the state outputs it adds.
dead=$(dirname "$0")/../data/fuzz/time_axis_dead_lstm_not_idempotent.onnx
check "--time-axis, a dead LSTM: exit 0" run 0 rewrite "$dead" --time-axis state:1 -o "$work/dead1.onnx"
check "--time-axis, a dead LSTM: the added output named why it does not stream" \
  err_has "the final h state of LSTM '/lstm/LSTM' (an output a rewrite adds): LSTM '/lstm/LSTM' runs over the chunk's length"
check "--time-axis, a dead LSTM: a second rewrite changes no byte" bash -c \
  "'$bin' -q rewrite '$work/dead1.onnx' -o '$work/dead2.onnx' && cmp -s '$work/dead1.onnx' '$work/dead2.onnx'"
check "--time-axis, a dead LSTM: check passes on the rewrite" run 0 check "$work/dead1.onnx"
# Found by the fuzzers: a causal Conv before a GRU at ai.onnx opset 1. report exited 4 (the default of the
# window's context needed Expand) where check listed problems: report and check now judge the model as it is
# (no window's context is planned for an opset rnnstate cannot rewrite), and rewrite says why it cannot.
old_opset=$(dirname "$0")/../data/fuzz/report_refuses_window_context_opset7.onnx
check "opset 1 with a causal Conv: report exits 0" run 0 report "$old_opset"
check "opset 1 with a causal Conv: report says why it cannot be rewritten" \
  bash -c "grep -q 'cannot rewrite: ai.onnx opset 1 is not supported (rnnstate needs opset 7 or newer)' '$work/out'"
check "opset 1 with a causal Conv: check exits 1" run 1 check "$old_opset"
check "opset 1 with a causal Conv: rewrite exits 4" run 4 rewrite "$old_opset" -o "$work/old_opset.onnx"
check "opset 1 with a causal Conv: rewrite names the opset" err_has "ai.onnx opset 1 is not supported"
check "--time-axis x:1: exit 0" run 0 rewrite "$models/loops/tf_lstm_loop_fixed.onnx" --time-axis x:1 -o "$work/ta.onnx"
check "--time-axis x:1: the Loop streams" bash -c "'$bin' report '$work/ta.onnx' | grep -q 'streamable: yes'"
check "--time-axis on an axis no recurrence runs along: warned" run 0 rewrite "$models/loops/tf_lstm_loop_fixed.onnx" --time-axis x:2 -o "$work/ta2.onnx"
check "--time-axis x:2: says why nothing changed" err_has "no recurrent node or loop runs along x:2"
check "--time-axis before the path takes one value (the path stays a path)" \
  run 0 rewrite --time-axis x:1 "$models/loops/tf_lstm_loop_fixed.onnx" -o "$work/ta3.onnx"
check "DynamicQuantizeLSTM: rewritten" run 0 rewrite "$models/quantized/dqlstm_fwd.onnx" -o "$work/dq.onnx"
check "DynamicQuantizeLSTM: checked with ONNX Runtime's schema (no 'no schema' warning)" \
  bash -c "! grep -q 'no schema' '$work/err'"

# A causal convolution over time (F.pad + Conv1d, dilation 2) before an LSTM: its context becomes a state pair
# by default, and the model streams; --no-conv-context leaves it, and the model does not.
causal=$models/stream/conv_causal_front.onnx
check "causal conv: report names the context a rewrite carries" bash -c "'$bin' report '$causal' |
  grep -q \"context: Conv '/convs.0/Conv' slides a window of 3 frames .*carries the last 4 frames of\""
check "causal conv: rewrite exits 0" run 0 rewrite "$causal" -o "$work/cc.onnx"
check "causal conv: 3 state pairs, the context's among them" bash -c "'$bin' report '$work/cc.onnx' --json |
  grep -q '\"kind\":\"context\"'"
check "causal conv: the rewrite streams" bash -c "'$bin' report '$work/cc.onnx' | grep -q '  yes: chunked runs'"
check "causal conv: check passes" run 0 check "$work/cc.onnx"
check "--no-conv-context: exit 0" run 0 rewrite "$causal" --no-conv-context -o "$work/cn.onnx"
check "--no-conv-context: warned that chunked runs differ" err_has "chunked runs will not equal one full run"
check "--no-conv-context: no context pair" bash -c "! '$bin' report '$work/cn.onnx' --json | grep -q '\"kind\":\"context\"'"

# External data: refused when it escapes the model's directory; follows the model elsewhere.
check "external data outside the model's directory: exit 3" run 3 rewrite "$(dirname "$0")/../data/external_escape/escape.onnx" -o "$work/e.onnx"
check "external data escape: clear message" err_has "leaves the model's directory"
mkdir -p "$work/elsewhere"
check "external data model to another directory: exit 0" run 0 rewrite "$models/external/gru_external.onnx" -o "$work/elsewhere/g.onnx"
check "external data file provided beside the output" cmp -s "$models/external/gru_weights.bin" "$work/elsewhere/gru_weights.bin"
check "no checker warning about the external file" bash -c "! grep -q 'validation skipped' '$work/err'"

# Hostile input (issue 13): refused at once with exit 3 and a clear message by rewrite, report and check
# alike (all go through OpenModel), with nothing written and the input untouched. Each command gets 10 s:
# an open that blocks (a FIFO nobody writes to) fails the test instead of hanging it.
run_limited() {  # run_limited EXPECTED ARGS...: `run` with a time limit (exit 124 when it expires)
  local expected=$1; shift
  timeout 10 "$bin" "$@" >"$work/out" 2>"$work/err"
  local code=$?
  [ "$code" -eq "$expected" ] && return 0
  echo "  expected exit $expected, got $code (124: timed out): $bin $*"; sed 's/^/  stderr: /' "$work/err" | head -5
  return 1
}
snapshot() {  # snapshot DIR [GLOB]: names, types, sizes, link counts and contents of what in DIR matches GLOB
  (cd "$1" && find . -name "${2:-*}" -printf '%p %y %s %n\n' | sort && find . -type f -name "${2:-*}" -exec sha256sum {} + | sort)
}
refused() {  # refused NAME MODEL MESSAGE [GLOB]: every command exits 3 saying MESSAGE; no output, no data copied
  # GLOB narrows the check of the model's directory to the names an output or temporary could take, for a
  # directory the system changes under us (/dev).
  local name=$1 model=$2 message=$3 glob=${4:-*} before
  before=$(snapshot "$(dirname "$model")" "$glob")
  rm -rf "$work/refused_out" && mkdir "$work/refused_out"
  check "$name: rewrite -o elsewhere exits 3" run_limited 3 rewrite "$model" -o "$work/refused_out/m.onnx"
  check "$name: rewrite names the problem" err_has_text "$message"
  check "$name: no output and no data file copied beside it" test -z "$(ls -A "$work/refused_out")"
  check "$name: rewrite beside the input exits 3" run_limited 3 rewrite "$model"
  check "$name: report exits 3" run_limited 3 report "$model"
  check "$name: report names the problem" err_has_text "$message"
  check "$name: check exits 3" run_limited 3 check "$model"
  check "$name: check names the problem" err_has_text "$message"
  check "$name: input directory untouched (no output, no temporary)" test "$(snapshot "$(dirname "$model")" "$glob")" = "$before"
}

# An output never replaces the model's external data, under any name (a usage error, exit 2, from --dry-run
# as from a real run), nor lands where its own copy of the data must go; the data stays intact.
mkdir -p "$work/clobber/other" "$work/clobber/hard" && cp "$models/external/gru_external.onnx" "$models/external/gru_weights.bin" "$work/clobber/"
ln "$work/clobber/gru_weights.bin" "$work/clobber/hard/weights_link.bin"
ln -s "$work/clobber" "$work/clobber_alias"
clobbers() {  # clobbers NAME OUTPUT MESSAGE: rewrite -o OUTPUT exits 2 saying MESSAGE, the data untouched
  local before
  before=$(snapshot "$work/clobber")
  check "$1: rewrite exits 2" run 2 rewrite "$work/clobber/gru_external.onnx" -o "$2"
  check "$1: says why" err_has_text "the output '$2' $3"
  check "$1: --dry-run, the same" run 2 rewrite "$work/clobber/gru_external.onnx" -o "$2" --dry-run
  check "$1: nothing changed, the weights intact" test "$(snapshot "$work/clobber")" = "$before"
}
replaces="would replace the model's external data file 'gru_weights.bin'"
clobbers "-o the data file" "$work/clobber/gru_weights.bin" "$replaces"
clobbers "-o the data file through .." "$work/clobber/other/../gru_weights.bin" "$replaces"
clobbers "-o the data file through a symlinked directory" "$work/clobber_alias/gru_weights.bin" "$replaces"
clobbers "-o another hard link of the data file" "$work/clobber/hard/weights_link.bin" "$replaces"
clobbers "-o where its own data file must go" "$work/clobber/other/gru_weights.bin" \
  "is where its own external data file 'gru_weights.bin' must go"
check "-o the data file, relative paths in the model's directory: exit 2" \
  bash -c "cd '$work/clobber' && { '$(realpath "$bin")' rewrite gru_external.onnx -o gru_weights.bin 2>/dev/null; test \$? -eq 2; }"
check "...the weights intact" cmp -s "$work/clobber/gru_weights.bin" "$models/external/gru_weights.bin"
# A write that fails leaves nothing behind: not the output, not the data file placed beside it.
mkdir -p "$work/clobber/fails/dir.onnx"
check "-o an existing directory: exit 2 (use --out-dir)" run 2 rewrite "$work/clobber/gru_external.onnx" -o "$work/clobber/fails/dir.onnx"
check "-o an existing directory: says so" err_has "is a directory"
check "-o an existing directory: no data file placed" test -z "$(ls -A "$work/clobber/fails/dir.onnx")" -a "$(ls "$work/clobber/fails")" = dir.onnx
long=$work/clobber/fails/$(printf 'm%.0s' $(seq 251)).onnx  # 256 bytes, a name too long: the write fails
check "a failed write: exit 5" run 5 rewrite "$work/clobber/gru_external.onnx" -o "$long"
check "a failed write: the data file placed beside it is removed again" test "$(ls "$work/clobber/fails")" = dir.onnx

mkdir "$work/fifo" && mkfifo "$work/fifo/model.onnx"
refused "FIFO as the model" "$work/fifo/model.onnx" "model.onnx: not a regular file (a FIFO)"
check "FIFO as the only *.onnx of a directory: exit 3" run_limited 3 report "$work/fifo"
check "...named, not passed over" err_has_text "model.onnx: not a regular file (a FIFO)"
# A directory walk lists every *.onnx entry that is not a directory: a FIFO or a symlink to a device is
# refused and counted (exit 3), never skipped unseen, and the regular models beside them are processed.
mkdir -p "$work/walk" && cp "$model" "$work/walk/m.onnx" && mkfifo "$work/walk/f.onnx" && ln -s /dev/zero "$work/walk/z.onnx"
for command in report check "rewrite --dry-run"; do
  check "walk ($command): exit 3" run_limited 3 $command "$work/walk"
  check "walk ($command): the FIFO refused by name" err_has_text "walk/f.onnx: not a regular file (a FIFO)"
  check "walk ($command): the symlink to /dev/zero refused by name" err_has_text "walk/z.onnx: not a regular file (a character device)"
  check "walk ($command): three files counted" err_has_text "rnnstate: 3 files: "
done
refused "character device as the model" /dev/zero "/dev/zero: not a regular file (a character device)" '*zero*'

cp -r "$(dirname "$0")/../data/external_bad" "$work/bad" && mkdir "$work/ok_out"
check "external data control: ok.onnx rewritten elsewhere" run_limited 0 rewrite "$work/bad/ok.onnx" -o "$work/ok_out/ok.onnx"
check "external data control: data file provided" cmp -s "$work/bad/weights.bin" "$work/ok_out/weights.bin"
r="tensor 'R' at graph.initializer[1], external data"
refused "offset past the end" "$work/bad/offset_past_eof.onnx" "$r 'weights.bin': offset 4096 is past the end of the file (120 bytes)"
refused "negative offset" "$work/bad/negative_offset.onnx" "$r 'weights.bin': offset '-8' is not a byte count"
refused "non-numeric offset" "$work/bad/non_numeric_offset.onnx" "$r 'weights.bin': offset '0x48' is not a byte count"
refused "length 2^62" "$work/bad/huge_length.onnx" "offset 72 + length 4611686018427387904 runs past the end of the file"
refused "length the dims do not take" "$work/bad/length_mismatch.onnx" \
  "$r 'weights.bin': length 40 does not match the tensor: FLOAT [1,6,2] takes 48 bytes"
refused "location given twice" "$work/bad/duplicate_location.onnx" "key 'location' is given twice"
refused "escaping location in a function body" "$work/bad/function_escape.onnx" \
  "tensor 'secret' at functions[0].node[0].attribute[0].t, external data '../../../models/external/gru_weights.bin': the location leaves the model's directory"
refused "escaping location in a sparse tensor" "$work/bad/sparse_escape.onnx" \
  "tensor 'S_values' at graph.sparse_initializer[0].values, external data '../external_escape/escape.onnx': the location leaves the model's directory"
special=$work/bad/special.bin
mkfifo "$special"
refused "FIFO as external data" "$work/bad/special_location.onnx" "$r 'special.bin': not a regular file (a FIFO)"
rm "$special" && mkdir "$special"
refused "directory as external data" "$work/bad/special_location.onnx" "$r 'special.bin': is a directory"
rmdir "$special" && /usr/bin/python3 -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$special"
refused "socket as external data" "$work/bad/special_location.onnx" "$r 'special.bin': not a regular file (a socket)"
rm "$special"
if mknod "$special" c 1 5 2>/dev/null; then
  refused "character device (/dev/zero) as external data" "$work/bad/special_location.onnx" \
    "$r 'special.bin': not a regular file (a character device)"
  rm "$special"
else
  echo "SKIP  character device as external data: mknod is not permitted here"
fi
ln -s /dev/zero "$special"
refused "symlink to /dev/zero as external data" "$work/bad/special_location.onnx" "resolves outside the model's directory"
rm "$special"

# Invalid models (issue 13, README "Validation"; made by tools/gen_invalid_models.py): every command
# refuses each with exit 3 and the same one-line message naming the graph, the node and the rule, before
# reading anything else; nothing is written and stdout stays empty.
verdict() {  # verdict ARGS...: "EXIT MESSAGE" of `rnnstate ARGS...`, the message without "rnnstate: error: PATH: "
  run_to "$work/out" "$work/err" "$@"
  echo "$? $(sed -n 's/^rnnstate: error: [^:]*: //p' "$work/err")"
}
# json_later NAME FILE CONDITION EXPECTED: the check NAME, that CONDITION holds for the first JSON Lines
# record `r` of FILE, run with every other such check by one node process at the end (json_checks_run):
# one node start per check cost most of this script's time.
json_later() {
  local n=${#json_names[@]}
  cp "$2" "$work/json_later.$n"
  json_names+=("$1")
  printf '%s\n%s\n' "$3" "$4" >"$work/json_later.$n.cond"
}
json_names=()
json_checks_run() {
  local line
  while IFS= read -r line; do
    check "${json_names[${line%% *}]}" test "${line#* }" = ok
  done < <(node -e 'const fs = require("fs");
    const [dir, count] = process.argv.slice(1);
    for (let n = 0; n < Number(count); n++) {
      const [condition, expected] = fs.readFileSync(`${dir}/json_later.${n}.cond`, "utf8").split("\n");
      let ok = false;
      try {
        const r = JSON.parse(fs.readFileSync(`${dir}/json_later.${n}`, "utf8").split("\n")[0]);
        ok = Boolean(new Function("r", "expected", "return " + condition)(r, expected));
      } catch (err) {}
      console.log(`${n} ${ok ? "ok" : "failed"}`);
    }' "$work" "${#json_names[@]}")
}
invalid() {  # invalid NAME MESSAGE: tests/data/invalid/NAME.onnx is refused with "invalid model: MESSAGE"
  local name=$1 expected="3 invalid model: $2" dir=$work/invalid_$1
  mkdir "$dir" && cp "$(dirname "$0")/../data/invalid/$name.onnx" "$dir/"
  local model=$dir/$name.onnx before
  before=$(snapshot "$dir")
  check "$name: rewrite exits 3 naming the rule" test "$(verdict rewrite "$model" -o "$dir/out.onnx")" = "$expected"
  check "$name: rewrite beside the input, the same" test "$(verdict rewrite "$model")" = "$expected"
  check "$name: rewrite --dry-run, the same" test "$(verdict rewrite "$model" --dry-run)" = "$expected"
  check "$name: report, the same" test "$(verdict report "$model")" = "$expected"
  check "$name: report prints nothing" test ! -s "$work/out"
  check "$name: report --format dot, the same" test "$(verdict report "$model" --format dot)" = "$expected"
  check "$name: check, the same" test "$(verdict check "$model")" = "$expected"
  check "$name: check prints nothing on stdout" test ! -s "$work/out"
  run_to "$work/json" /dev/null check "$model" --json
  json_later "$name: check --json: the record carries it" "$work/json" \
    'r.status === "error" && r.exit_code === 3 && "3 " + r.error === expected' "$expected"
  run_to "$work/json" /dev/null report "$model" "$model" --json
  json_later "$name: report --json (two files): the record carries it" "$work/json" \
    'r.report === null && r.exit_code === 3 && "3 " + r.error === expected' "$expected"
  check "$name: nothing written beside the input" test "$(snapshot "$dir")" = "$before"
}
lstm="main: LSTM 'lstm'"
invalid_dir=$(dirname "$0")/../data/invalid
invalid hidden_size_zero "$lstm: hidden_size 0 is not positive"
invalid hidden_size_negative "$lstm: hidden_size -4 is not positive"
invalid direction_unknown "$lstm: unknown direction 'sideways' (LSTM takes forward, reverse or bidirectional)"
invalid layout_unknown "$lstm: unknown layout 2 (LSTM takes 0 or 1)"
invalid w_empty "$lstm: required input W is empty"
invalid too_few_inputs "$lstm: has 2 inputs, but LSTM requires X, W and R"
invalid x_string "$lstm: input X 'X' has element type STRING; LSTM takes FLOAT, DOUBLE, FLOAT16 or BFLOAT16"
invalid x_complex64 "$lstm: input X 'X' has element type COMPLEX64; LSTM takes FLOAT, DOUBLE, FLOAT16 or BFLOAT16"
invalid if_without_else "main: If 'branch': the If has no else_branch"
invalid dangling_input "$lstm reads 'X_norm', which nothing before it defines"
invalid cycle "main: Identity 'first' reads 'b', which a later node, Identity 'second', defines (nodes must be sorted: a cycle, or nodes out of order)"
invalid defined_twice "main: 'Y' is defined twice (an output of Identity 'again')"
invalid loop_body_output_undefined "main/steps:body: graph output 'h_next' is never defined"
# What onnx's schemas and the operator table require of a node (audit of issue 13): these were rewritten
# with a warning (exit 0) into outputs as broken as their inputs, or refused by `rewrite` alone.
invalid layout_before_opset_14 "$lstm: attribute 'layout' is not defined by LSTM at ai.onnx opset 13 (only from opset 14)"
invalid attribute_unknown "$lstm: attribute 'nonsense' is not defined by LSTM at ai.onnx opset 14"
invalid hidden_size_twice "$lstm: attribute 'hidden_size' is given twice"
invalid hidden_size_untyped "$lstm: attribute 'hidden_size' has no type"
invalid too_many_outputs "$lstm: has 4 outputs, but LSTM takes 0 to 3"
invalid activation_unknown "$lstm: unknown activation 'Bogus' (LSTM takes Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign or Softplus)"
invalid function_hidden_size_zero "function 'local.MyLstm': LSTM 'LSTM_2': hidden_size 0 is not positive"
invalid if_branch_wrong_type "main: If 'branch': attribute 'then_branch' is not a graph"
invalid empty_op_type "main: node 'noop': the node has no op_type"
invalid hidden_size_mismatch "$lstm: input W 'W' has shape [1,16,2], but LSTM with hidden_size 5 takes [1,20,input_size]"
invalid sequence_lens_float "$lstm: input sequence_lens 'lens' has element type FLOAT; LSTM takes INT32"
# View operators next to a state with axes out of range crashed the exposure walks (issue 13's audit).
invalid view_unsqueeze_axes "main: Unsqueeze 'unsqueeze': axis -999 is out of range for an output of rank 4"
invalid view_squeeze_axes "main: Squeeze 'squeeze': axis 999 is out of range for an input of rank 4"
invalid view_transpose_perm "main: Transpose 'transpose': perm [1, 0, -5] is not a permutation of the input's 3 axes"
invalid view_slice_axes "main: Slice 'slice': axis 256 is out of range for an input of rank 3"
invalid view_gather_axis "main: Gather 'gather': axis 99 is out of range for an input of rank 3"
invalid view_gather_index "main: Gather 'gather': index 1000000 is out of range for axis 0 of size 2"
invalid view_concat_axis "main: Concat 'concat': axis 99 is out of range for an input of rank 3"
invalid view_split_axis "main: Split 'split': axis -99 is out of range for an input of rank 3"
invalid view_reshape_shape "main: Reshape 'reshape': shape [-1, -1, -1] has more than one -1"
invalid view_scatternd_index "main: ScatterND 'scatternd': index 5 is out of range for axis 0 of size 2"
# An adversarial audit's finds: accepted with exit 0 (or crashing every command: the recursive functions)
# before, refused by ONNX Runtime.
invalid function_recursive "function 'local.F' calls itself (local.F -> local.G -> local.F): a model's functions must not be recursive"
invalid function_recursive_unused "function 'local.F' calls itself (local.F -> local.F): a model's functions must not be recursive"
invalid clip_negative "$lstm: clip -1 is not positive"
invalid initial_h_double "$lstm: input initial_h 'h0' has element type DOUBLE, but input X 'X' has FLOAT (LSTM takes one element type for X, W, R, B, initial_h, initial_c and P)"
invalid if_branch_input "main: If 'branch': the If's else_branch has 1 input (an If branch takes none)"
invalid if_branch_outputs "main: If 'branch': the If's then_branch has 1 output, but its else_branch 2"
invalid if_output_count "main: If 'branch': the If has 3 outputs, but its branches have 1"
invalid loop_output_count "main: Loop 'steps': the Loop has 3 outputs, but its body returns 1 after its condition (one Loop output for each)"
# In many-files mode a recursive function crashed the whole batch: now one record fails, the next is read.
"$bin" report "$invalid_dir/function_recursive.onnx" "$invalid_dir/clip_negative.onnx" "$models/handbuilt/lstm_init_state.onnx" --json >"$work/json" 2>"$work/err"
check "batch with a recursive function: exit 3, not a crash" test $? -eq 3
check "batch with a recursive function: the valid model is still reported" test "$(grep -c '"status":"ok"' "$work/json")" = 1
# Inline values that do not fit their dims: refused when the file is opened, as external data is.
refused "raw_data too short" "$invalid_dir/h0_raw_short.onnx" "tensor 'h0' at graph.initializer[2]: raw_data has 3 bytes, but FLOAT [1,1,4] takes 16 bytes"
refused "float_data too short" "$invalid_dir/h0_float_data_short.onnx" "tensor 'h0' at graph.initializer[2]: float_data has 1 value, but FLOAT [1,1,4] takes 4"
refused "negative dim" "$invalid_dir/h0_dims_negative.onnx" "tensor 'h0' at graph.initializer[2]: dim -1 is negative (FLOAT [1,-1,4])"
refused "dims of 2^46 bytes on 128" "$invalid_dir/w_dims_2p40.onnx" "tensor 'W' at graph.initializer[0]: raw_data has 128 bytes, but FLOAT [1,16,1099511627776] takes 70368744177664 bytes"
check "raw_data too short: --dry-run exits 3 too" run 3 rewrite "$invalid_dir/h0_raw_short.onnx" --dry-run
# Valid but not (fully) supported stays a warning: an LSTM of another domain is not judged (nothing to
# do), an opset newer than onnx 1.12 knows is rewritten without onnx's full checks.
controls=$(dirname "$0")/../data/invalid
check "LSTM of another domain: rewrite exits 0" run 0 rewrite "$controls/unknown_domain_lstm.onnx" -o "$work/c1.onnx"
check "LSTM of another domain: nothing to do" grep -q "no recurrent nodes" "$work/out"
check "LSTM of another domain: report exits 0" run 0 report "$controls/unknown_domain_lstm.onnx"
check "LSTM of another domain: check passes" run 0 check "$controls/unknown_domain_lstm.onnx"
check "opset 18: rewrite exits 0" run 0 rewrite "$controls/opset_18.onnx" -o "$work/c2.onnx"
check "opset 18: a warning says full validation was skipped" err_has "full validation skipped"
check "opset 18: report exits 0" run 0 report "$controls/opset_18.onnx"
check "opset 18: check finds the state not exposed (1, not 3)" run 1 check "$controls/opset_18.onnx"
# --dry-run reaches every verdict of a real run: it runs the whole rewrite on a copy.
unknown_size=$controls/hidden_size_unknown.onnx
check "hidden size unknown: rewrite exits 0 with a warning" run 0 rewrite "$unknown_size" -o "$work/c3.onnx"
check "hidden size unknown: says why" err_has "not rewritten: hidden size unknown"
strict_verdict="4 --strict: main lstm: not rewritten: hidden size unknown: no hidden_size attribute and no shape for R or W"
check "hidden size unknown --strict: rewrite exits 4" test "$(verdict rewrite "$unknown_size" --strict -o "$work/c4.onnx")" = "$strict_verdict"
check "hidden size unknown --strict: nothing written" test ! -e "$work/c4.onnx"
check "hidden size unknown --strict: --dry-run, the same" test "$(verdict rewrite "$unknown_size" --strict --dry-run)" = "$strict_verdict"
check "opset 18: --dry-run warns as the real run does" run 0 rewrite "$controls/opset_18.onnx" --dry-run
check "opset 18: ...that full validation is skipped" err_has "full validation skipped"

# Malformed models found by fuzzing (tools/fuzz/run.sh): a clear error or a partial rewrite with
# warnings, never a crash and never an internal error.
for fuzzed in "$(dirname "$0")"/../data/fuzz/*.onnx; do
  for mode in defaults required; do
    run_to "$work/out" "$work/err" rewrite "$fuzzed" -o "$work/fuzzed.onnx" --state-inputs "$mode"
    code=$?
    check "$(basename "$fuzzed") ($mode): exit 0, 3 or 4 (got $code)" test "$code" -eq 0 -o "$code" -eq 3 -o "$code" -eq 4
  done
  # One verdict: what rewrite refuses as invalid, report and check refuse with the same message.
  rewritten=$(verdict rewrite "$fuzzed" --dry-run)
  if [ "${rewritten%% *}" = 3 ]; then
    check "$(basename "$fuzzed"): report, the same verdict as rewrite" test "$(verdict report "$fuzzed")" = "$rewritten"
    check "$(basename "$fuzzed"): check, the same verdict as rewrite" test "$(verdict check "$fuzzed")" = "$rewritten"
  fi
done
# The issue makes these fuzz inputs invalid models (they were rewritten with warnings, exit 0).
# Its first violation: a mangled attribute name where else_branch should be.
check "fuzz if_without_else: exit 3" test "$(verdict rewrite "$(dirname "$0")/../data/fuzz/if_without_else.onnx" --dry-run)" = \
  "3 invalid model: main: If 'branch': attribute 'els\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x0f' is not defined by If at ai.onnx opset 14"
# The audit's crashes (issue 13): exit 3 from every command, and rewrite leaves no output behind (it
# used to write the output of transpose_perm_negative and then abort).
for crashed in unsqueeze_axes_out_of_range transpose_perm_negative slice_axes_256; do
  fuzzed=$(dirname "$0")/../data/fuzz/$crashed.onnx
  rm -f "$work/crashed.onnx"
  check "fuzz $crashed: rewrite exits 3" run 3 rewrite "$fuzzed" -o "$work/crashed.onnx"
  check "fuzz $crashed: no output written" test ! -e "$work/crashed.onnx"
  check "fuzz $crashed: report exits 3" run 3 report "$fuzzed"
  check "fuzz $crashed: check exits 3" run 3 check "$fuzzed"
done
check "fuzz transpose_perm_negative: the rule named" test "$(verdict check "$(dirname "$0")/../data/fuzz/transpose_perm_negative.onnx")" = \
  "3 invalid model: main: Transpose 'tp': perm [1, 0, -5] is not a permutation of the input's 3 axes"
scan_verdict=$(verdict check "$(dirname "$0")/../data/fuzz/scan_without_num_scan_inputs.onnx")
check "fuzz scan_without_num_scan_inputs: exit 3 (its first violation: a mangled operator name)" \
  test "${scan_verdict%%:*}" = "3 invalid model"

# A PyTorch export called with (h0, c0) already streams its state stacked: check passes without metadata.
check "check: (h0, c0) export passes (stacked states)" run 0 check "$models/torch/lstm_h0.onnx"
check "report names the stacked rows" grep -q "exposed as rows \[1:2\] of input 'h0', axis 0 -> rows \[1:2\] of output 'h_n'" \
  <("$bin" report "$models/torch/lstm_h0.onnx")

# Durability: an output that replaces the input (--in-place) or that the user asks for (--fsync) is
# flushed to disk before it is renamed into place; a new output is left to the kernel, like cp's.
check "--fsync with --no-fsync: exit 2" run 2 rewrite "$work/in.onnx" -o "$work/d0.onnx" --fsync --no-fsync
if strace -f -qq -o /dev/null true 2>/dev/null; then
  syncs() {  # syncs ARGS...: how many fsync/fdatasync/syncfs calls `rnnstate ARGS...` makes
    strace -f -qq -e trace=fsync,fdatasync,syncfs -o "$work/strace" "$bin" "$@" >/dev/null 2>&1
    grep -c -E '(fsync|fdatasync|syncfs)\(' "$work/strace"
  }
  check "new output: not flushed" test "$(syncs rewrite "$work/in.onnx" -o "$work/d1.onnx")" -eq 0
  check "new output with --fsync: file and directory flushed" test "$(syncs rewrite "$work/in.onnx" -o "$work/d2.onnx" --fsync)" -ge 2
  cp "$work/in.onnx" "$work/d3.onnx"
  check "--in-place: flushed by default" test "$(syncs rewrite "$work/d3.onnx" --in-place)" -ge 2
  cp "$work/in.onnx" "$work/d4.onnx"
  check "--in-place --no-fsync: not flushed" test "$(syncs rewrite "$work/d4.onnx" --in-place --no-fsync)" -eq 0
  mkdir -p "$work/two" && cp "$work/in.onnx" "$work/two/a.onnx" && cp "$work/in.onnx" "$work/two/b.onnx"
  check "several files with --fsync: one syncfs at the end" \
    test "$(syncs rewrite "$work/two" --out-dir "$work/two_out" --fsync)" -eq 1
  check "...and the outputs are complete" cmp -s "$work/two_out/a.onnx" "$work/d2.onnx"
else
  echo "SKIP  durability checks: strace cannot trace processes on this machine"
fi

# Huge pages (src/cli/huge_pages.h), on request (RNNSTATE_HUGE_PAGES): from a model file of 2 MiB, named or
# below a directory named, rnnstate starts itself again once, with glibc's malloc on huge pages; never for
# small files (however many), nor when the user set the tunable or opted out; never when not asked.
if strace -f -qq -o /dev/null true 2>/dev/null; then
  head -c 3000000 /dev/zero > "$work/big.bin"
  execs() {  # execs ARGS...: the execve calls of `rnnstate ARGS...`, with the environments they pass
    strace -f -qq -v -s 100 -e trace=execve -o "$work/strace" "$bin" "$@" >/dev/null 2>&1
    grep -c 'execve(' "$work/strace"
  }
  unset RNNSTATE_HUGE_PAGES  # the caller's word does not decide this test
  check "3 MB named, not asked for: no restart" test "$(execs report "$work/big.bin")" -eq 1
  check "...nor with RNNSTATE_HUGE_PAGES=0" test "$(RNNSTATE_HUGE_PAGES=0 execs report "$work/big.bin")" -eq 1
  export RNNSTATE_HUGE_PAGES=1
  check "3 MB named, asked for: one restart" test "$(execs report "$work/big.bin")" -eq 2
  check "...with malloc on huge pages" grep -q '"GLIBC_TUNABLES=glibc.malloc.hugetlb=1"' "$work/strace"
  check "...and the restarted process's answer (not a model: exit 3)" \
    bash -c '"$0" report "$1" 2>/dev/null; test $? -eq 3' "$bin" "$work/big.bin"
  check "a small model: no restart" test "$(execs report "$work/in.onnx")" -eq 1
  mkdir -p "$work/hp_big/sub" "$work/hp_small"
  cp "$work/big.bin" "$work/hp_big/sub/big.onnx"
  head -c 1200000 /dev/zero > "$work/hp_small/a.onnx"
  head -c 1200000 /dev/zero > "$work/hp_small/b.onnx"
  check "a 3 MB model below a directory named: one restart" test "$(execs check "$work/hp_big")" -eq 2
  check "...with malloc on huge pages" grep -q '"GLIBC_TUNABLES=glibc.malloc.hugetlb=1"' "$work/strace"
  check "two 1.2 MB models: no restart" test "$(execs check "$work/hp_small")" -eq 1
  check "RNNSTATE_NO_HUGE_PAGES: no restart" test "$(RNNSTATE_NO_HUGE_PAGES=1 execs report "$work/big.bin")" -eq 1
  check "the user's own tunable: no restart" \
    test "$(GLIBC_TUNABLES=glibc.malloc.hugetlb=0 execs report "$work/big.bin")" -eq 1
  unset RNNSTATE_HUGE_PAGES
else
  echo "SKIP  huge pages checks: strace cannot trace processes on this machine"
fi

# init: the first call's feeds, from the metadata alone.
"$bin" -q rewrite "$models/handbuilt/lstm_init_state.onnx" -o "$work/init_req.onnx" --state-inputs required >/dev/null
check "init: --batch other than the model's fixed batch is a usage error" run 2 init "$work/init_req.onnx" --batch 5
check "...naming the state and its batch" grep -q "state input 'lstm.h_in' has a fixed batch of 2" "$work/err"
check "init: exit 0" run 0 init "$work/init_req.onnx" --batch 2
check "init: a zero default is fed as zeros of the data's shape" grep -qx "lstm.h_in  float32  \[1,2,4\]  zeros" "$work/out"
check "init: a learned default is fed empty (batch 0)" grep -qx "lstm.c_in  float32  \[1,0,4\]  empty" "$work/out"
check "rewrite: --packed-input naming a data input is a usage error" \
  run 2 rewrite "$models/handbuilt/lstm_init_state.onnx" -o "$work/collide.onnx" --pack tensor --packed-input x
check "...and writes nothing" test ! -e "$work/collide.onnx"
"$bin" -q rewrite "$models/torch/gru2_dyn.onnx" -o "$work/init_dyn.onnx" >/dev/null
check "init: a dynamic batch takes --batch" run 0 init "$work/init_dyn.onnx" --batch 3
check "init: ...for every layer" test "$(grep -c '  float32  \[1,3,6\]  zeros$' "$work/out")" -eq 2
check "init: without --batch, --dim gives the batch by its name" run 0 init "$work/init_dyn.onnx" --dim batch=4
check "init: ...for every layer" test "$(grep -c '  float32  \[1,4,6\]  zeros$' "$work/out")" -eq 2
check "init: --batch wins over --dim" run 0 init "$work/init_dyn.onnx" --dim batch=4 --batch 2
check "init: ...for every layer" test "$(grep -c '  float32  \[1,2,6\]  zeros$' "$work/out")" -eq 2
check "init --json: feeds in the record" run 0 init "$work/init_dyn.onnx" --json
check "init --json: shape and init" grep -q '"feeds":\[{"input":"[^"]*","dtype":"float32","shape":\[1,1,6\],"init":"zeros"}' "$work/out"
check "init: a model without pairs warns" run 0 init "$models/torch/gru2_dyn.onnx"
check "init: ...saying to rewrite first" err_has "run rnnstate rewrite first"
check "init: a bad --dim is a usage error" run 2 init "$work/init_dyn.onnx" --dim batch
check "init: a --dim no state has: exit 0" run 0 init --dim nosuch=3 "$work/init_dyn.onnx"
check "init: ...warned as ignored" err_has "no state has a dimension of that name (ignored)"

json_checks_run
finish
