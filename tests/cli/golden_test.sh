#!/usr/bin/env bash
# Byte-for-byte regression guard: rewrites every model under models/ three ways (defaults mode, required
# mode, and defaults output -> required) and compares the SHA-256 of each output with the committed list.
# A change that alters any rewrite shows up here; when a change is meant to alter outputs, regenerate the
# list with --update and say why in the commit.
# Usage: golden_test.sh RNNSTATE_BINARY MODELS_DIR GOLDEN_FILE [--update]
set -uo pipefail
bin=$1
models=$2
golden=$3
update=${4:-}
source "$(dirname "$0")/lib.sh"

actual=$work/actual.sha256
: >"$actual"
while IFS= read -r model; do
  rel=${model#"$models"/}
  out=$work/out/$rel
  mkdir -p "$out"
  "$bin" -q rewrite "$model" -o "$out/defaults.onnx" >/dev/null 2>&1 || echo "exit $? $rel defaults" >>"$actual"
  "$bin" -q rewrite "$model" -o "$out/required.onnx" --state-inputs required >/dev/null 2>&1 ||
    echo "exit $? $rel required" >>"$actual"
  if [ -f "$out/defaults.onnx" ]; then
    "$bin" -q rewrite "$out/defaults.onnx" -o "$out/defaults-required.onnx" --state-inputs required \
      >/dev/null 2>&1 || echo "exit $? $rel defaults-required" >>"$actual"
  fi
  for f in defaults required defaults-required; do
    [ -f "$out/$f.onnx" ] && echo "$(sha256sum <"$out/$f.onnx" | cut -c1-64) $rel $f" >>"$actual"
  done
done < <(find "$models" -name '*.onnx' | LC_ALL=C sort)

if [ "$update" = "--update" ]; then
  cp "$actual" "$golden"
  echo "updated $golden ($(wc -l <"$golden") lines)"
  exit 0
fi
check "every rewrite of models/ is byte-identical to $(basename "$golden")" diff -u "$golden" "$actual"
finish
