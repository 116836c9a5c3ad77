#!/usr/bin/env bash
# The README's first command as a newcomer runs it: tools/demo.sh, the real script, in a copy of the
# source tree with no build directory (the Debian packages and tests/e2e's onnxruntime-node present, as
# after tools/setup.sh). Fails when it is silent for longer than the limit at any point, prints compiler
# command lines, fails, or does not reach its last command; and checks what its end says: where the
# binary is, and a PATH line that makes `rnnstate` that binary. Prints how long the demo took.
# Usage: demo_test.sh SOURCE_DIR [SILENCE_LIMIT_SECONDS]   (limit default 30, times RNNSTATE_TEST_TIME_SCALE)
set -uo pipefail
src=$(cd "$1" && pwd)
limit=$((${2:-30} * ${RNNSTATE_TEST_TIME_SCALE:-1}))
source "$(dirname "$0")/lib.sh"
clone=$work/clone

# The source tree as a fresh clone has it: what git tracks (and new files not ignored), no build/.
mkdir -p "$clone"
if git -C "$src" rev-parse --show-toplevel >/dev/null 2>&1; then
  (cd "$src" && git ls-files -z --cached --others --exclude-standard |
    tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -C "$clone" -xf -
else
  tar -C "$src" --exclude='./build*' --exclude=node_modules --exclude=./.git -cf - . | tar -C "$clone" -xf -
fi
check "the copy has tools/demo.sh and no build/" bash -c "test -x '$clone/tools/demo.sh' && test ! -e '$clone/build'"
# onnxruntime-node as tools/setup.sh leaves it (a download is not what this test is about).
[ -d "$src/tests/e2e/node_modules" ] && ln -s "$src/tests/e2e/node_modules" "$clone/tests/e2e/node_modules"

# Run it in a session of its own (stopped as a whole when silent too long), reading its output as it comes.
mkfifo "$work/output"
start=$SECONDS
setsid bash -c 'cd "$1" && exec tools/demo.sh' - "$clone" >"$work/output" 2>&1 &
demo=$!
exec 3<"$work/output"
: >"$work/log"
longest=0
silent_after=""
pending=""
while true; do
  before=$SECONDS
  if IFS= read -r -t "$limit" line <&3; then
    printf '%s%s\n' "$pending" "$line" >>"$work/log"
    pending=""
    ((SECONDS - before > longest)) && longest=$((SECONDS - before))
  elif (($? > 128)); then  # silent for the whole limit
    pending+=$line
    longest=$((SECONDS - before))
    silent_after=$(tail -1 "$work/log")
    kill -- -"$demo" 2>/dev/null
    break
  else  # the demo closed its output
    [ -z "$pending$line" ] || printf '%s%s\n' "$pending" "$line" >>"$work/log"
    break
  fi
done
exec 3<&-
wait "$demo"
status=$?
elapsed=$((SECONDS - start))
sed 's/^/  | /' "$work/log"

check "never silent for more than $limit s (longest: $longest s)" test -z "$silent_after"
[ -z "$silent_after" ] || echo "  silent for more than $limit s after: $silent_after"
check "exit 0" test "$status" -eq 0
check "each step announced" bash -c "grep -q '^== \[1/3\] packages' '$work/log' && grep -q '^== \[2/3\] build' '$work/log' &&
  grep -q '^== \[3/3\] run' '$work/log'"
check "the build shows how far it is ([NN%])" grep -qE '^\[ *[0-9]+%\]' "$work/log"
check "no compiler command lines" bash -c "! grep -qE '(c\+\+|g\+\+|clang\+\+|cc1plus) .* -c ' '$work/log'"
check "reaches its last command: verify" grep -q '^\$ build/rnnstate verify ' "$work/log"
check "the last command passes" grep -q '^PASS: ' "$work/log"
check "its end says where the binary is" grep -q '^== done in [0-9]* s\. The binary is build/rnnstate' "$work/log"
check "its end says what to try next" grep -q '^Next: tools/test.sh' "$work/log"
check "only the tool was built (no unit tests)" test ! -e "$clone/build/tests/rnnstate_unit_tests"
path_line=$(grep -m1 -E '^  export PATH=' "$work/log")
path_works() ( eval "$path_line" && [ "$(command -v rnnstate)" = "$clone/build/rnnstate" ] && rnnstate --version >/dev/null )
check "its PATH line makes rnnstate the built binary" path_works
echo "demo: $elapsed s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
finish
