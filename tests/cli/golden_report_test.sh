#!/usr/bin/env bash
# Byte-for-byte regression guard for what rnnstate prints: for every model under models/, the stdout,
# stderr and exit code of `report` (text, JSON, DOT), `check`, `rewrite --dry-run` (both modes) and, on
# the defaults rewrite, `report` and `check` again. Each is hashed into one line of the committed list;
# a change that alters a message or a report shows up here. Run from inside models/ with relative paths,
# so that no absolute path of the checkout enters the output. When a change is meant to alter what is
# printed, regenerate with --update and say why in the commit.
# Usage: golden_report_test.sh RNNSTATE_BINARY MODELS_DIR GOLDEN_FILE [--update]
set -uo pipefail
source "$(dirname "$0")/lib.sh"
golden_arguments "$@"

runs=$work/runs
mkdir -p "$runs"
printf -- '--stderr\n' >"$runs/stderr-mark"
# The runs are written as jobs first and made by run_jobs (lib.sh): in one process start under ctest.
n=0
# job LABEL MODEL DIR ARGS...: the next run, `rnnstate ARGS` in DIR; its name line "MODEL LABEL".
job() {
  local label=$1 rel=$2 dir=$3; shift 3
  n=$((n + 1))
  job_line "$dir" "$runs/$n.out" "$runs/$n.err" "$bin" "$@" >>"$runs/jobs"
  printf '%s %s\n' "$rel" "$label" >>"$runs/names"
}
models_dir=$(cd "$models" && pwd) || exit 2
: >"$runs/jobs"
mapfile -t rels < <(cd "$models_dir" && find . -name '*.onnx' | sed 's|^\./||' | LC_ALL=C sort)
# The defaults rewrite of every model under a fixed name beside the work files (its name is part of the
# messages), first: what the rewritten model prints is recorded after each model's own runs.
for rel in "${rels[@]}"; do
  dir=${rel%/*}
  [ "$dir" != "$rel" ] || dir=.
  mkdir -p "$work/rewritten/$dir"
  job_line "$models_dir" /dev/null /dev/null "$bin" -q rewrite "$rel" -o "$work/rewritten/$rel" >>"$runs/jobs"
done
run_jobs "$runs/jobs" /dev/null
: >"$runs/jobs"
for rel in "${rels[@]}"; do
  job report "$rel" "$models_dir" report "$rel"
  job report-json "$rel" "$models_dir" report "$rel" --json
  job report-dot "$rel" "$models_dir" report "$rel" --format dot
  job check "$rel" "$models_dir" check "$rel"
  job dry-run "$rel" "$models_dir" rewrite "$rel" --dry-run
  job dry-run-required "$rel" "$models_dir" rewrite "$rel" --dry-run --state-inputs required
  if [ -f "$work/rewritten/$rel" ]; then
    job rewritten-report "$rel" "$work/rewritten" report "$rel"
    job rewritten-check "$rel" "$work/rewritten" check "$rel"
  fi
done
run_jobs "$runs/jobs" "$runs/codes"
# Each run as the text its line hashes: stdout, "--stderr", stderr, "--exit CODE".
mapfile -t codes <"$runs/codes"
for ((i = 1; i <= n; i++)); do
  code=${codes[i - 1]}
  [ -f "$runs/exit-$code" ] || printf -- '--exit %s\n' "$code" >"$runs/exit-$code"
  cat "$runs/$i.out" "$runs/stderr-mark" "$runs/$i.err" "$runs/exit-$code" >"$runs/$i"
done
# The hashes in run order, each line "HASH MODEL LABEL" as the committed list has them.
(cd "$runs" && seq 1 "$n" | xargs sha256sum) | cut -c1-64 | paste -d' ' - "$runs/names" >"$actual"

golden_check "every report, check and dry run of models/ prints what $(basename "$golden") recorded"
