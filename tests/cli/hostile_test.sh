#!/usr/bin/env bash
# The second hostile suite (issue 23): what rnnstate reads from a model — its `rnnstate` metadata, its
# graph, its names — and the paths it writes to are untrusted. Metadata that is malformed, contradicts
# the model or is huge gets one verdict from every command (init and export refuse it with exit 3, check
# fails with exit 1, report warns, rewrite writes the pairs anew and its output passes check); deep and
# wide graphs and hostile names neither crash nor hang; outputs that are not regular files are refused
# (exit 5) and left as they were. Every command runs under a time limit, so that a hang fails the test.
# Models come from hostile_models.mjs (Node.js with tests/e2e's protobufjs).
# Usage: hostile_test.sh RNNSTATE_BINARY MODELS_DIR
set -uo pipefail
bin=$1
models=$2
here=$(dirname "$0")
source "$here/lib.sh"

# Seconds per command: the 100,000-pair metadata takes about 1.5 s in a Release build; a hang never ends.
# RNNSTATE_TEST_TIME_SCALE stretches it for slower builds (tools/test.sh gives the sanitizer run 5: ASan's
# allocator makes that metadata's million small JSON values about 8 times slower).
limit=$((20 * ${RNNSTATE_TEST_TIME_SCALE:-1}))
start_runner "$limit"  # the runner, or timeout(1) for a run it cannot carry: 124 when the limit expires
timed() {  # timed EXPECTED ARGS...: `run` under the time limit (exit 124 when it expires)
  local expected=$1; shift
  run_to "$work/out" "$work/err" "$@"
  local code=$?
  [ "$code" -eq "$expected" ] && return 0
  echo "  expected exit $expected, got $code (124: timed out): rnnstate $*"; head -c 600 "$work/err" | sed 's/^/  stderr: /'
  return 1
}
no_library_text() { ! grep -q 'json.exception\|\[json' "$work/err" "$work/out"; }

"$bin" -q rewrite "$models/torch/gru2_dyn.onnx" -o "$work/base.onnx" >/dev/null
"$bin" -q rewrite "$models/torch/gru2_dyn.onnx" -o "$work/packed.onnx" --pack tensor --state-inputs required >/dev/null
# A packed model Triton can serve (batch first in its data too), the control of the export checks.
"$bin" -q rewrite "$models/torch/lstm2_bf_dyn.onnx" -o "$work/servable.onnx" --pack tensor --state-inputs required >/dev/null
mkdir -p "$work/m"
node "$here/hostile_models.mjs" "$work/m" "$work/base.onnx" "$work/packed.onnx" >/dev/null ||
  { echo "FAIL  hostile_models.mjs could not write the models"; exit 1; }

# ---------------------------------------------------------------------------------------------------
# Metadata: one verdict from every command.
metadata() {  # metadata NAME MESSAGE: every command's verdict on meta_NAME.onnx, each naming MESSAGE
  local name=$1 message=$2 model=$work/m/meta_$1.onnx
  check "$name: init refuses it (3)" timed 3 init "$model"
  check "$name: init says what is wrong" err_has_text "$message"
  check "$name: init prints no feeds" test ! -s "$work/out"
  check "$name: export openvino refuses it (3)" timed 3 export openvino "$model"
  check "$name: export openvino says what is wrong" err_has_text "$message"
  check "$name: export triton refuses it (3)" timed 3 export triton "$model"
  check "$name: check fails (1)" timed 1 check "$model"
  check "$name: check says what is wrong" grep -qF -- "$message" "$work/out"
  check "$name: report warns (0)" timed 0 report "$model"
  check "$name: report says what is wrong" grep -qF -- "$message" "$work/out"
  check "$name: rewrite writes the pairs anew (0)" timed 0 rewrite "$model" -o "$work/fixed.onnx"
  check "$name: rewrite warns" err_has_text "(it will be rewritten)"
  check "$name: no library text in any message" no_library_text
  check "$name: the rewrite passes check" timed 0 check "$work/fixed.onnx"
  check "$name: the rewrite has one rnnstate entry, readable" test "$(timed 0 init "$work/fixed.onnx" && grep -c zeros "$work/out")" -ge 1
  check "$name: rewriting the rewrite changes nothing" \
    bash -c "'$bin' -q rewrite '$work/fixed.onnx' -o '$work/again.onnx' >/dev/null 2>&1 && cmp -s '$work/fixed.onnx' '$work/again.onnx'"
}
key="metadata 'rnnstate'"
metadata not_json "$key is not valid JSON at byte 24: syntax error while parsing value - unexpected end of input"
metadata trailing_text "$key is not valid JSON at byte"
metadata deep_nesting "$key is invalid: JSON nested deeper than 64"
metadata key_twice "$key is invalid: key 'input' is given twice in one object"
metadata many_keys "$key is invalid: an object has more than 4096 keys"
metadata integer_2p64 "$key is invalid: the number 18446744073709551615 does not fit a 64-bit integer"
metadata version_2 "$key is invalid: unsupported or missing \"version\""
metadata states_object "$key is invalid: missing \"states\""
metadata pair_without_input "$key is invalid: states[1]: missing string 'input'"
metadata init_bogus "init 'ones' is not \"zeros\" or \"empty\""
metadata dtype_unknown "dtype 'complex128' is not an element type a state has"
metadata dtype_contradicts "dtype 'float64' contradicts input 'rnn.GRU.h_in' of element type float32"
metadata shape_contradicts "shape [3,batch,99] contradicts the declared shape [1,batch,6] of 'rnn.GRU.h_in'"
metadata rank_contradicts "shape [1,batch] contradicts the declared shape [1,batch,6] of 'rnn.GRU.h_in'"
metadata batch_axis_out_of_range "batch_axis 9 is not an axis of shape [1,batch,6]"
metadata path_to_nothing "path step 1 (no_such_loop:body): graph 'main' has no node with that graph attribute"
metadata graph_not_path "graph 'main/elsewhere:body' is not the main graph its empty path names"
metadata input_missing "'no_such_input' is not a main-graph input"
metadata output_missing "'no_such_output' is not a main-graph output"
metadata two_pairs_one_input "input 'rnn.GRU.h_in' is in 2 state pairs"
metadata two_pairs_one_output "output 'rnn.GRU.h_out' is in 2 state pairs"
metadata names_a_data_input "contradicts the declared shape"  # the data input x: not the state's shape
metadata key_twice_in_model "$key is given 2 times; a model carries one"
# More entries than the model has states (100,000; 2,000 on one input): refused at the first entry past the
# bound (one per node input and graph input: 33 here, a two-layer GRU's defaults rewrite whose layers share
# one default shape computation), before the rest is read, by every command alike.
bound="$key is invalid: states: more than 33 entries, more than the model has states to pair"
metadata pairs_100k "$bound"
check "pairs_100k: check names one problem, not one per entry" bash -c "timeout $limit '$bin' check \
  '$work/m/meta_pairs_100k.onnx' 2>'$work/err' >'$work/out'; test \$? -eq 1 && test \$(wc -l <'$work/out') -eq 1"
metadata pairs_2000_one_input "$bound"
metadata string_1mb "' in graph 'main'"
# The packed width that made export triton write dims of 2^62.
packed=$work/m/meta_packed_width.onnx
check "packed width: export triton refuses it (3)" timed 3 export triton "$packed"
check "packed width: says the width contradicts the input" err_has_text "contradicts the declared shape [state_in_batch,12]"
check "packed width: no dims of 2^62 written" test ! -s "$work/out"
check "packed width: init refuses it (3)" timed 3 init "$packed"
check "packed width: check fails (1)" timed 1 check "$packed"
check "control: a servable packed model exports" timed 0 export triton "$work/servable.onnx"
# A time-major model (data [T, B, F], packed state): Triton cannot batch it, so export writes Triton's
# configuration of a model it does not batch (max_batch_size 0); asked to batch it, export refuses and
# names the option that works, which this runs.
"$bin" -q rewrite "$models/torch/lstm_h0.onnx" -o "$work/time_major.onnx" --pack tensor --state-inputs required >/dev/null
check "time-major: export triton exports it (0)" timed 0 export triton "$work/time_major.onnx"
check "time-major: max_batch_size 0" grep -qx "max_batch_size: 0" "$work/out"
check "time-major: says why Triton does not batch it" err_has_text "'x' [seq,batch,5] has its batch on axis 1"
check "time-major, --max-batch-size 8: refused (4)" timed 4 export triton "$work/time_major.onnx" --max-batch-size 8
check "time-major, --max-batch-size 8: advises an option" err_has_text "export it with --max-batch-size 0"
advised=$(grep -o -- 'export it with --max-batch-size [0-9]*' "$work/err" | sed 's/^export it with //')
# shellcheck disable=SC2086  # the advised option is two words
check "time-major: the advised '$advised' writes the entry (0)" \
  timed 0 export triton "$work/time_major.onnx" $advised -o "$work/repository"
check "time-major: the entry's config is the unbatched one" grep -qx "max_batch_size: 0" "$work/repository/time_major/config.pbtxt"

# ---------------------------------------------------------------------------------------------------
# Deep and wide graphs.
for name in graph_wide graph_chain graph_if_depth_8; do
  model=$work/m/$name.onnx
  check "$name: report (0)" timed 0 report "$model"
  check "$name: rewrite (0)" timed 0 rewrite "$model" -o "$work/$name.out.onnx"
  check "$name: the rewrite passes check" timed 0 check "$work/$name.out.onnx"
  check "$name: rewriting the rewrite changes nothing" \
    bash -c "'$bin' -q rewrite '$work/$name.out.onnx' -o '$work/$name.again.onnx' >/dev/null 2>&1 && cmp -s '$work/$name.out.onnx' '$work/$name.again.onnx'"
done
check "graph_if_depth_8: the state is threaded out of 7 Ifs" \
  bash -c "'$bin' report '$work/m/graph_if_depth_8.onnx' | grep -q 'main/if_1:then_branch/if_2:then_branch'"
check "graph_if_depth_40: refused (3), not a crash" timed 3 report "$work/m/graph_if_depth_40.onnx"
check "graph_if_depth_40: says why" err_has_text "nested deeper than 100"

# ---------------------------------------------------------------------------------------------------
# Hostile names: --nodes is matched in linear time (RE2), names are quoted in JSON and never expand.
long=$work/m/name_100k.onnx
check "100,000-character name: --nodes '.*' (0, no crash)" timed 0 rewrite "$long" --nodes '.*' -o "$work/long1.onnx"
check "...the node is rewritten" grep -q "2 state pairs" "$work/out"
check "100,000-character name: --nodes '(a|aa)*c' finishes (0)" timed 0 rewrite "$long" --nodes '(a|aa)*c' -o "$work/long2.onnx"
check "...and matches nothing: no pairs" grep -q "0 state pairs\|no recurrent nodes\|written unchanged" "$work/out"
check "100,000-character name: --nodes '^(a+)+\$' (0)" timed 0 rewrite "$long" --nodes '^(a+)+$' --dry-run
check "a backreference is not RE2 syntax: usage error (2)" timed 2 rewrite "$long" --nodes '(a)\1' --dry-run
check "...saying so" err_has_text "is not a valid regular expression (RE2 syntax)"
check "100,000-character name: report --json is valid JSON" \
  bash -c "timeout $limit '$bin' report --json '$long' | node -e 'JSON.parse(require(\"fs\").readFileSync(0))'"
quoted=$work/m/name_quotes_braces.onnx
check "quotes, braces, newline in a name: rewrite (0)" timed 0 rewrite "$quoted" -o "$work/q.onnx"
check "...the rewrite passes check" timed 0 check "$work/q.onnx"
check "...report --json is valid JSON" \
  bash -c "'$bin' report --json '$work/q.onnx' | node -e 'JSON.parse(require(\"fs\").readFileSync(0))'"
check "...init --json is valid JSON" \
  bash -c "'$bin' init --json '$work/q.onnx' | node -e 'JSON.parse(require(\"fs\").readFileSync(0).toString().split(\"\\n\")[0])'"
check "...export openvino refuses a name MakeStateful cannot write (4)" timed 4 export openvino "$work/q.onnx"
check "a name the rewrite would give is taken: rewrite (0)" timed 0 rewrite "$work/m/name_collides.onnx" -o "$work/c.onnx"
check "...the new input gets a suffix" bash -c "'$bin' report '$work/c.onnx' | grep -q \"input 'lstm.h_in_2'\""

# ---------------------------------------------------------------------------------------------------
# Output paths.
model=$models/torch/gru2_dyn.onnx
special() {  # special NAME PATH: rewrite -o PATH exits 5 naming PATH, and PATH is what it was
  local name=$1 path=$2 before
  before=$(stat -c '%F %t:%T %i' "$path")
  check "-o $name: exit 5" timed 5 rewrite "$model" -o "$path"
  check "-o $name: says it is not a regular file" err_has_text "is not a regular file"
  check "-o $name: left as it was" test "$(stat -c '%F %t:%T %i' "$path")" = "$before"
  check "-o $name: --dry-run does not write either (0)" timed 0 rewrite "$model" -o "$path" --dry-run
}
# Device nodes of our own (the numbers of /dev/full and /dev/null), never the machine's: a binary with
# the bug this guards against replaces the node it is given.
if mknod "$work/full.onnx" c 1 7 2>/dev/null && mknod "$work/null.onnx" c 1 3 2>/dev/null; then
  special "a character device node (/dev/full's)" "$work/full.onnx"
  special "a character device node (/dev/null's)" "$work/null.onnx"
else
  echo "SKIP  -o a character device node: mknod is not permitted here"
fi
mkfifo "$work/fifo.onnx"
special "a FIFO" "$work/fifo.onnx"
/usr/bin/python3 -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$work/socket.onnx"
special "a socket" "$work/socket.onnx"
if [ -c "$work/null.onnx" ]; then
  ln -s "$work/null.onnx" "$work/to_null.onnx"
  check "-o a symlink to a device node: the link is replaced, not followed (0)" timed 0 rewrite "$model" -o "$work/to_null.onnx"
  check "...by a regular file" test -f "$work/to_null.onnx" -a ! -L "$work/to_null.onnx"
  check "...and the device node is still one" test -c "$work/null.onnx"
fi
name255=$(printf 'n%.0s' $(seq 250)).onnx
check "a 255-byte output name: written (0)" timed 0 rewrite "$model" -o "$work/$name255"
check "...the file is there" test -s "$work/$name255"
check "...no temporary left" test -z "$(find "$work" -maxdepth 1 -name '.*tmp-*' -print -quit)"
check "a 255-byte name in --out-dir: written (0)" bash -c "mkdir -p '$work/tree' && cp '$model' '$work/tree/$name255' &&
  timeout $limit '$bin' -q rewrite '$work/tree' --out-dir '$work/tree_out' >/dev/null 2>&1 && test -s '$work/tree_out/$name255'"
name256=$(printf 'n%.0s' $(seq 251)).onnx
check "a 256-byte output name: exit 5" timed 5 rewrite "$model" -o "$work/$name256"
check "-o in a missing directory: exit 5" timed 5 rewrite "$model" -o "$work/no/such/dir/out.onnx"

# ---------------------------------------------------------------------------------------------------
# The limit itself: the fork runner ends a job that hangs and answers 124 within its --time-limit. The job is
# `verify`, which waits for Node.js: here a `node` first on PATH that sleeps, run by a copy of the runner with
# a stand-in helper beside it (verify looks for rnnstate-stream/cli.mjs beside the running binary).
answers_hang_in_time() {  # answers_hang_in_time RUNNER
  local dir=$work/hang answer start=$SECONDS
  mkdir -p "$dir/bin" "$dir/rnnstate-stream" && : >"$dir/rnnstate-stream/cli.mjs" && cp "$1" "$dir/runner" || return 1
  printf '#!/bin/sh\necho $$ >"%s"\nexec sleep 60\n' "$dir/node.pid" >"$dir/bin/node" && chmod +x "$dir/bin/node"
  answer=$(job_line "$dir" "$dir/out" "$dir/err" rnnstate verify a.onnx b.onnx |
    PATH="$dir/bin:$PATH" "$dir/runner" --time-limit 2)
  local took=$((SECONDS - start))
  [ -s "$dir/node.pid" ] && kill "$(cat "$dir/node.pid")" 2>/dev/null  # the sleeping `node` outlives its parent
  [ "$answer" = 124 ] && [ "$took" -lt 10 ] && [ -s "$dir/node.pid" ] && return 0
  echo "  answered '$answer' after $took s; the job's node started: $([ -s "$dir/node.pid" ] && echo yes || echo no)"
  return 1
}
if [ -n "${RNNSTATE_FORK_RUNNER:-}" ]; then
  check "the runner's --time-limit 2: a job that hangs is answered 124 within 10 s" answers_hang_in_time "$RNNSTATE_FORK_RUNNER"
else
  echo "SKIP  the runner's --time-limit: no RNNSTATE_FORK_RUNNER (a Release build's ctest sets it)"
fi

finish
