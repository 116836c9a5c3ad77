#!/usr/bin/env bash
# Byte-for-byte regression guard: rewrites every model under models/ three ways (defaults mode, required
# mode, and defaults output -> required) and compares the SHA-256 of each output with the committed list.
# A change that alters any rewrite shows up here; when a change is meant to alter outputs, regenerate the
# list with --update and say why in the commit.
# Usage: golden_test.sh RNNSTATE_BINARY MODELS_DIR GOLDEN_FILE [--update]
set -uo pipefail
source "$(dirname "$0")/lib.sh"
golden_arguments "$@"

jobs=$work/jobs
# rewrite_jobs MODE: a job per model whose input exists: `rewrite IN -o OUT` (MODE's options), outputs
# under $work/out/MODEL/; the model order in $work/models.
rewrite_jobs() {
  local mode=$1 rel in args
  : >"$jobs"
  while IFS= read -r rel; do
    case $mode in
      defaults) in=$models/$rel; args=() ;;
      required) in=$models/$rel; args=(--state-inputs required) ;;
      defaults-required) in=$work/out/$rel/defaults.onnx; args=(--state-inputs required) ;;
    esac
    [ -f "$in" ] || continue
    mkdir -p "$work/out/$rel"
    job_line "$PWD" /dev/null /dev/null "$bin" -q rewrite "$in" -o "$work/out/$rel/$mode.onnx" "${args[@]}" >>"$jobs"
    printf '%s\n' "$rel" >>"$work/$mode.models"
  done <"$work/models"
  : >"$work/$mode.codes"
  run_jobs "$jobs" "$work/$mode.codes"
}
find "$models" -name '*.onnx' | LC_ALL=C sort | sed "s|^$models/||" >"$work/models"
for mode in defaults required defaults-required; do
  : >"$work/$mode.models"
  rewrite_jobs "$mode"
done
# The list: per model, a failed rewrite as "exit CODE MODEL MODE", then each output's hash.
declare -A code
for mode in defaults required defaults-required; do
  paste -d' ' "$work/$mode.codes" "$work/$mode.models" >"$work/$mode.exits"
  while read -r c rel; do [ "$c" = 0 ] || code[$mode/$rel]=$c; done <"$work/$mode.exits"
done
hashes=$work/hashes
(cd "$work/out" && find . -type f -name '*.onnx' -print0 | xargs -0 -r sha256sum) >"$hashes"
declare -A hash
while read -r h path; do hash[${path#./}]=$h; done <"$hashes"
while IFS= read -r rel; do
  for mode in defaults required defaults-required; do
    [ -z "${code[$mode/$rel]:-}" ] || echo "exit ${code[$mode/$rel]} $rel $mode" >>"$actual"
  done
  for mode in defaults required defaults-required; do
    [ -z "${hash[$rel/$mode.onnx]:-}" ] || echo "${hash[$rel/$mode.onnx]} $rel $mode" >>"$actual"
  done
done <"$work/models"
golden_check "every rewrite of models/ is byte-identical to $(basename "$golden")"
