#!/usr/bin/env bash
# What a newcomer meets in the first ten minutes (issue 33), each as the README and --help promise it:
# a mistyped command answers "did you mean", `export triton --help` shows export's own options and
# examples, `rnnstate verify` is listed and runs the Node checker (its refusals keep their exit codes, a
# missing onnxruntime-node names the one install step), the exit-code table has verify's codes, every
# `npm install onnxruntime-node` in the docs works offline, the README says how to put rnnstate on PATH,
# the Silero VAD counts the README gives are what rnnstate prints, and the JavaScript helper's
# `stream.state` is null before the first call, as documented.
# Usage: first_run_test.sh RNNSTATE_BINARY SOURCE_DIR
set -uo pipefail
bin=$1
src=$2
source "$(dirname "$0")/lib.sh"
model=$src/models/torch/lstm2_bf_dyn.onnx
out_has() { grep -qF -- "$1" "$work/out" || { echo "  stdout lacks '$1':"; head -20 "$work/out" | sed 's/^/  /'; return 1; }; }
out_lacks() { ! grep -qF -- "$1" "$work/out" || { echo "  stdout has '$1'"; return 1; }; }

# A mistyped command: what was meant, exit 2 (not "A subcommand is required").
check "rewirte: exit 2" run 2 rewirte "$model"
check "rewirte: did you mean 'rewrite'?" err_has_text "unknown command 'rewirte'; did you mean 'rewrite'?"
check "-q reprot: exit 2" run 2 -q reprot "$model"
check "-q reprot: did you mean 'report'?" err_has_text "did you mean 'report'?"
check "frobnicate: exit 2" run 2 frobnicate "$model"
check "frobnicate: the commands listed" err_has_text "unknown command 'frobnicate' (the commands: rewrite, report, check, init, export, verify)"
check "a file named like a typo after a command is a file (exit 3)" run 3 report rewirte.onnx

# export triton --help: export's options and examples, not every command's.
check "export triton --help: exit 0" run 0 export triton --help
check "export triton --help: --max-batch-size" out_has "--max-batch-size"
check "export triton --help: --name" out_has "--name"
check "export triton --help: export's examples" out_has "rnnstate export triton packed.onnx -o repo"
check "export triton --help: no other command's examples" out_lacks "rnnstate rewrite model.onnx"
check "report --help: report's examples only" bash -c "'$bin' report --help | grep -q 'report model.onnx --json' &&
  ! '$bin' report --help | grep -q 'export triton'"

# verify: listed, its --help is the checker's, it runs, its refusals keep their codes.
check "--help lists verify" run 0 --help
check "--help: verify's line" grep -qE '^  verify +Prove a rewrite streams' "$work/out"
check "verify --help: exit 0" run 0 verify --help
check "verify --help: the checker's options" out_has "--chunks"
"$bin" -q rewrite "$model" -o "$work/lstm2.streaming.onnx" >/dev/null
check "verify MODEL REWRITE: exit 0" run 0 verify "$model" "$work/lstm2.streaming.onnx"
check "verify: PASS" out_has "PASS: 7 outputs and final states"
check "verify --json -: one JSON result" bash -c "'$bin' verify '$model' '$work/lstm2.streaming.onnx' --json - |
  node -e 'process.exit(JSON.parse(require(\"fs\").readFileSync(0)).ok === true ? 0 : 1)'"
check "verify without arguments: exit 2" run 2 verify
check "verify of a model without metadata: exit 3" run 3 verify "$model" "$model"
"$bin" -q rewrite "$src/models/torch/lstm_bidir.onnx" -o "$work/bidir.onnx" >/dev/null
check "verify of states not streamable: exit 4" run 4 verify "$src/models/torch/lstm_bidir.onnx" "$work/bidir.onnx"
"$bin" -q rewrite "$src/models/torch/lstm2_bf_static.onnx" -o "$work/static.onnx" >/dev/null
check "verify on a fixed-length export: exit 4" run 4 verify "$src/models/torch/lstm2_bf_static.onnx" "$work/static.onnx"
check "verify on a fixed-length export: says how to open it" err_has_text "rewrite --time-axis x:1"
# One frame per call (no time axis inside one call, as Silero VAD): the calls are checked, exit 0, and the
# checks that do not apply say why.
"$bin" -q rewrite "$src/models/frame/frame_lstm_state.onnx" -o "$work/frame.onnx" >/dev/null
echo '{"x": {"dims": [1, 64]}}' >"$work/frame.json"
check "verify, one frame per call: exit 0" run 0 verify "$src/models/frame/frame_lstm_state.onnx" "$work/frame.onnx" \
  --inputs "$work/frame.json"
check "verify, one frame per call: the round trip ran" out_has "ran   state round trip: calls 2..3"
check "verify, one frame per call: chunked does not apply" out_has "n/a   chunked = whole: the rewrite records no time axis inside one call"
check "verify, one frame per call: PASS" out_has "PASS: 6 values of 3 calls"

# Where the checker lives: a binary with no helper beside it says where it looked (exit 3); installed
# without onnxruntime-node, the error names `npm install` with the variable; in a clone, tools/setup.sh.
# code_in DIR CMD...: CMD's exit code, run in DIR (stderr in $work/err).
code_in() { (cd "$1" && shift && "$@" >/dev/null 2>"$work/err"); echo $?; }
mkdir -p "$work/bare" "$work/empty" && cp "$bin" "$work/bare/rnnstate"
check "no checker beside the binary: exit 3" test "$(code_in "$work/empty" "$work/bare/rnnstate" verify a b)" -eq 3
check "no checker: where it looked" err_has_text "$work/bare/rnnstate-stream/cli.mjs"
mkdir -p "$work/usr/bin" "$work/usr/share/rnnstate/rnnstate-stream"
cp "$bin" "$work/usr/bin/rnnstate" && cp "$src"/tools/js/rnnstate-stream/*.mjs "$work/usr/share/rnnstate/rnnstate-stream/"
check "installed, no onnxruntime-node: exit 3" \
  test "$(code_in "$work/empty" "$work/usr/bin/rnnstate" verify "$model" "$work/lstm2.streaming.onnx")" -eq 3
check "installed, no onnxruntime-node: the one install step" err_has_text \
  "install it where you run verify, with \`ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node\`"
mkdir -p "$work/clone/tools/js" "$work/clone/build" && touch "$work/clone/tools/setup.sh"
cp -r "$src/tools/js/rnnstate-stream" "$work/clone/tools/js/" && cp "$bin" "$work/clone/build/rnnstate"
ln -s ../tools/js/rnnstate-stream "$work/clone/build/rnnstate-stream"
check "a clone without onnxruntime-node: exit 3" test "$(code_in "$work/empty" "$work/clone/build/rnnstate" verify a b)" -eq 3
check "a clone without onnxruntime-node: run tools/setup.sh" err_has_text "run $work/clone/tools/setup.sh"

# The exit-code table has verify's codes: --help, the README, the man page.
"$bin" --help >"$work/help"
check "--help: exit 4 includes verify's refusal" grep -q "4 unsupported model (verify: refused, e.g. a fixed-length time axis" "$work/help"
check "--help: exit 1 includes verify" grep -q "1 check or verify failed" "$work/help"
readme=$src/README.md
readme_has() { tr '\n' ' ' <"$readme" | grep -qE -- "$1"; }
check "README exit codes: verify's 4" readme_has "4 unsupported \(\`verify\`: refused — [^)]*fixed-length time axis"
check "man page: verify's 4" bash -c "sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' '$src/share/man/man1/rnnstate.1' | grep -q 'fixed\\\\-length time axis'"

# Every command installing onnxruntime-node in the docs works offline: the variable skips the postinstall
# download of GPU binaries (the CPU runtime is in the package).
docs=("$readme" "$src"/docs/*.md "$src/tools/js/rnnstate-stream/README.md")
offline_installs() {
  local bad
  bad=$(grep -nE 'npm (install|i|ci)\b.*onnxruntime-node' "${docs[@]}" | grep -vE 'ONNXRUNTIME_NODE_INSTALL=skip|--ignore-scripts')
  [ -z "$bad" ] || { echo "  without ONNXRUNTIME_NODE_INSTALL=skip: $bad"; return 1; }
}
check "docs: npm install onnxruntime-node lines set ONNXRUNTIME_NODE_INSTALL=skip" offline_installs
check "docs: some npm install onnxruntime-node line exists" grep -qE 'npm install.*onnxruntime-node' "$readme"

# rnnstate on PATH: the README says how, before its first `rnnstate ...` example; that line, run in the
# clone, makes `rnnstate` the built binary.
path_line=$(grep -m1 -oE 'export PATH="\$PWD/build:\$PATH"' "$readme")
check "README: export PATH=\"\$PWD/build:\$PATH\"" test -n "$path_line"
first_example=$(grep -nE '^rnnstate [a-z]' "$readme" | head -1 | cut -d: -f1)
path_line_no=$(grep -nF 'export PATH="$PWD/build:$PATH"' "$readme" | head -1 | cut -d: -f1)
check "README: the PATH line comes before the first rnnstate example" test "${path_line_no:-99999}" -lt "${first_example:-0}"
path_line_finds_binary() ( cd "$src" && eval "$path_line" && [ "$(command -v rnnstate)" = "$src/build/rnnstate" ] )
if [ "$(cd "$(dirname "$bin")" && pwd -P)" = "$(cd "$src" && pwd -P)/build" ]; then
  check "README's PATH line, run in the clone, finds build/rnnstate" path_line_finds_binary
fi

# Silero VAD v5: what the README says the user sees is what rnnstate prints (the published model is
# test data outside the repository: checked when ../shared/real-models has it).
silero_section=$(sed -n '/^## Quick start: Silero VAD/,/^## /p' "$readme")
check "README Silero: 4 LSTM nodes" grep -q "4 LSTM nodes" <<<"$silero_section"
check "README Silero: 8 state pairs" grep -q "8 state pairs" <<<"$silero_section"
check "README Silero: no 'two LSTMs'" bash -c '! grep -q "two LSTMs"' <<<"$silero_section"
silero=$src/../shared/real-models/silero_vad_v5.onnx
if [ -f "$silero" ]; then
  check "Silero: report shows 4 recurrent nodes" bash -c "'$bin' report '$silero' | head -1 | grep -q ': 4 recurrent nodes'"
  check "Silero: rewrite records 8 state pairs" bash -c "'$bin' rewrite '$silero' --state-inputs required -o '$work/silero.js.onnx' |
    grep -q ': 8 state pairs$'"
elif [ "${RNNSTATE_REQUIRE_REAL_MODELS:-0}" = 1 ]; then
  check "Silero VAD v5 present (RNNSTATE_REQUIRE_REAL_MODELS=1)" false
else
  echo "skip  Silero counts: $silero absent"
fi

# stream.state: null before the first call and after reset(), the tensors the next call feeds between;
# the README and the helper's README say so.
"$bin" -q rewrite "$model" --state-inputs required -o "$work/lstm2.js.onnx" >/dev/null
state_null_before_first_call() {
  node --input-type=module -e "
    import { createRequire } from 'node:module';
    const ort = createRequire('$src/tests/e2e/x.js')('onnxruntime-node');
    const { StreamingSession } = await import('$src/tools/js/rnnstate-stream/index.mjs');
    const stream = await StreamingSession.create('$work/lstm2.js.onnx', { ort });
    const x = new ort.Tensor('float32', new Float32Array(2 * 3), [1, 2, 3]);
    const before = stream.state;
    await stream.run({ x });
    const after = stream.state;
    await stream.reset();
    const ok = before === null && after !== null && Object.keys(after).length === 4 && stream.state === null;
    if (!ok) console.log('  before', before, 'after', after && Object.keys(after), 'after reset', stream.state);
    process.exit(ok ? 0 : 1);"
}
check "JS helper: stream.state is null before the first call, set after, null after reset()" state_null_before_first_call
says_state_null() { tr '\n' ' ' <"$1" | grep -q '`stream.state`[^.]*`null` before the first call'; }
check "README: stream.state is null before the first call" says_state_null "$readme"
check "helper README: stream.state is null before the first call" says_state_null "$src/tools/js/rnnstate-stream/README.md"
finish
