#!/usr/bin/env bash
# Byte-for-byte regression guard for what rnnstate prints: for every model under models/, the stdout,
# stderr and exit code of `report` (text, JSON, DOT), `check`, `rewrite --dry-run` (both modes) and, on
# the defaults rewrite, `report` and `check` again. Each is hashed into one line of the committed list;
# a change that alters a message or a report shows up here. Run from inside models/ with relative paths,
# so that no absolute path of the checkout enters the output. When a change is meant to alter what is
# printed, regenerate with --update and say why in the commit.
# Usage: golden_report_test.sh RNNSTATE_BINARY MODELS_DIR GOLDEN_FILE [--update]
set -uo pipefail
bin=$(realpath "$1")
models=$2
golden=$(realpath "$3")
update=${4:-}
source "$(dirname "$0")/lib.sh"

actual=$work/actual.sha256
runs=$work/runs
mkdir -p "$runs"
printf -- '--stderr\n' >"$runs/stderr-mark"
n=0
# record LABEL MODEL ARGS...: keeps what `rnnstate ARGS` printed, as the text its line hashes: stdout,
# "--stderr", stderr, "--exit CODE". One cat per run, one sha256sum at the end: the 1,300 runs' hashing
# (a pipeline of five processes each) cost more CPU than rnnstate itself.
record() {
  local label=$1 rel=$2; shift 2
  n=$((n + 1))
  "$bin" "$@" >"$runs/out" 2>"$runs/err"
  local code=$?
  [ -f "$runs/exit-$code" ] || printf -- '--exit %s\n' "$code" >"$runs/exit-$code"
  cat "$runs/out" "$runs/stderr-mark" "$runs/err" "$runs/exit-$code" >"$runs/$n"
  printf '%s %s\n' "$rel" "$label" >>"$runs/names"
}
start_dir=$PWD
cd "$models" || exit 2
models_dir=$PWD
while IFS= read -r rel; do
  record report "$rel" report "$rel"
  record report-json "$rel" report "$rel" --json
  record report-dot "$rel" report "$rel" --format dot
  record check "$rel" check "$rel"
  record dry-run "$rel" rewrite "$rel" --dry-run
  record dry-run-required "$rel" rewrite "$rel" --dry-run --state-inputs required
  # The defaults rewrite under a fixed name beside the work files (its name is part of the messages).
  dir=${rel%/*}
  [ "$dir" != "$rel" ] || dir=.
  mkdir -p "$work/rewritten/$dir"
  out=$work/rewritten/$rel
  if "$bin" -q rewrite "$rel" -o "$out" >/dev/null 2>&1 && [ -f "$out" ]; then
    # In the parent shell (record counts the runs): into the work folder and back.
    cd "$work/rewritten" && record rewritten-report "$rel" report "$rel" && record rewritten-check "$rel" check "$rel"
    cd "$models_dir" || exit 2
  fi
done < <(find . -name '*.onnx' | sed 's|^\./||' | LC_ALL=C sort)
cd "$start_dir" || exit 2
# The hashes in run order, each line "HASH MODEL LABEL" as the committed list has them.
(cd "$runs" && seq 1 "$n" | xargs sha256sum) | cut -c1-64 | paste -d' ' - "$runs/names" >"$actual"

if [ "$update" = "--update" ]; then
  cp "$actual" "$golden"
  echo "updated $golden ($(wc -l <"$golden") lines)"
  exit 0
fi
check "every report, check and dry run of models/ prints what $(basename "$golden") recorded" diff -u "$golden" "$actual"
finish
