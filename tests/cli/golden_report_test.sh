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
: >"$actual"
# record LABEL MODEL ARGS...: one line, the hash of stdout, stderr and the exit code of `rnnstate ARGS`.
record() {
  local label=$1 rel=$2; shift 2
  "$bin" "$@" >"$work/o" 2>"$work/e"
  local code=$?
  printf '%s %s %s\n' "$({ cat "$work/o"; echo "--stderr"; cat "$work/e"; echo "--exit $code"; } | sha256sum | cut -c1-64)" \
    "$rel" "$label" >>"$actual"
}
cd "$models" || exit 2
while IFS= read -r rel; do
  record report "$rel" report "$rel"
  record report-json "$rel" report "$rel" --json
  record report-dot "$rel" report "$rel" --format dot
  record check "$rel" check "$rel"
  record dry-run "$rel" rewrite "$rel" --dry-run
  record dry-run-required "$rel" rewrite "$rel" --dry-run --state-inputs required
  # The defaults rewrite under a fixed name beside the work files (its name is part of the messages).
  mkdir -p "$work/rewritten/$(dirname "$rel")"
  out=$work/rewritten/$rel
  if "$bin" -q rewrite "$rel" -o "$out" >/dev/null 2>&1 && [ -f "$out" ]; then
    (cd "$work/rewritten" && record rewritten-report "$rel" report "$rel" && record rewritten-check "$rel" check "$rel")
  fi
done < <(find . -name '*.onnx' | sed 's|^\./||' | LC_ALL=C sort)
cd - >/dev/null || exit 2

if [ "$update" = "--update" ]; then
  cp "$actual" "$golden"
  echo "updated $golden ($(wc -l <"$golden") lines)"
  exit 0
fi
check "every report, check and dry run of models/ prints what $(basename "$golden") recorded" diff -u "$golden" "$actual"
finish
