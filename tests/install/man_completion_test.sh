#!/usr/bin/env bash
# The man page and the bash completion stay in step with the binary: every command and every option that
# `rnnstate --help` and `rnnstate COMMAND --help` list is documented in the man page and offered by the
# completion (with the allowed values of options that have a fixed set); every exit code of the help
# footer and every key of the `rnnstate` metadata is in the man page; the man page renders without warnings.
# Usage: man_completion_test.sh RNNSTATE_BINARY SOURCE_DIR
set -uo pipefail
bin=$1
src=$2
source "$(dirname "$0")/../cli/lib.sh"
page=$src/share/man/man1/rnnstate.1
completion=$src/share/bash-completion/completions/rnnstate

# The page's text: roff escapes for '-' and fonts removed.
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$page" >"$work/page.txt"
in_page() { grep -qE -- "(^|[^-[:alnum:]_])$1([^-[:alnum:]_]|$)" "$work/page.txt" || { echo "  '$1' is not in the man page"; return 1; }; }

# options HELP_FILE: one option per line (-j and --jobs from "  -j,--jobs INT ..."). `verify --help` is the
# checker's own (rnnstate-stream verify): "options:", then "  --atol X, --rtol X    description".
options() {
  if grep -q '^Options:' "$1"; then
    awk '/^Options:/ { on = 1; next } /^[^ ]/ { on = 0 } on && /^  -/ { print $1 }' "$1" | tr ',' '\n'
  else
    awk '/^options:/ { on = 1; next } /^[^ ]/ { on = 0 } on && /^  -/' "$1" | sed 's/   .*//' |
      grep -oE -- '(^| )--?[a-z][-a-z]*' | tr -d ' '
  fi
}
# completions WORD...: what the completion offers after `rnnstate WORD...` (the last word being completed)
completions() {
  bash -c 'source "$1"; shift; COMP_WORDS=(rnnstate "$@"); COMP_CWORD=$#; _rnnstate; printf "%s\n" "${COMPREPLY[@]}"' \
    - "$completion" "$@"
}
offered() {  # offered OPTION WORD...: OPTION is among the completions of WORD...
  local option=$1; shift
  local offers
  offers=$(completions "$@")  # not piped into grep -q: with pipefail, an early exit would fail the pipe
  grep -qxF -- "$option" <<<"$offers" || { echo "  '$option' not offered after: rnnstate $*"; return 1; }
}

"$bin" --help >"$work/help" 2>&1
commands=$(awk '/^Subcommands:/ { on = 1; next } /^[^ ]/ { on = 0 } on && /^  [a-z]/ { print $1 }' "$work/help")
check "--help lists the commands" test -n "$commands"
for option in $(options "$work/help"); do
  check "man page: $option" in_page "$option"
  check "completion: $option" offered "$option" -
done
for command in $commands; do
  check "man page: command $command" grep -qx "\.B $command" "$page"
  check "completion: command $command" offered "$command" ""
  "$bin" "$command" --help >"$work/help.$command" 2>&1
  check "$command --help lists options" test -n "$(options "$work/help.$command")"
  for option in $(options "$work/help.$command"); do
    check "man page: $command $option" in_page "$option"
    check "completion: $command $option" offered "$option" "$command" -
  done
  # Options with a fixed set of values ("--format TEXT:{text,json,dot}"): each value documented and offered.
  while read -r option values; do
    for value in ${values//,/ }; do
      check "man page: $command $option $value" grep -qE -- "^\.B $option .*\b$value\b" "$work/page.txt"
      check "completion: $command $option $value" offered "$value" "$command" "$option" ""
    done
  done < <(sed -n 's/^  \(--[a-z-]*\) TEXT:{\([^}]*\)}.*/\1 \2/p' "$work/help.$command")
done
check "completion: paths are *.onnx files" offered "$src/models/torch/lstm_h0.onnx" report "$src/models/torch/lstm_h"

# Exit codes: the help footer's "Exit codes: 0 ok, 1 check failed, ..." and the man page's EXIT STATUS.
codes=$(sed -n '/^Exit codes:/,/^$/p' "$work/help" | grep -oE '\b[0-9]+ [a-z]' | cut -d' ' -f1)
check "--help lists exit codes" test -n "$codes"
exit_status=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$page")
for code in $codes; do
  check "man page: exit code $code" grep -qx "\.B $code" <<<"$exit_status"
done

# Metadata keys: every key of the recorded pairs (a stacked PyTorch export has them all) is documented.
metadata=$(sed -n '/^\.SH METADATA/,/^\.SH /p' "$page")
check "man page: metadata key rnnstate" grep -q "^\.BR rnnstate ,$" <<<"$metadata"
"$bin" -q rewrite "$src/models/torch/lstm_h0.onnx" -o "$work/h0.onnx" >/dev/null && "$bin" report "$work/h0.onnx" --json >"$work/h0.json"
keys=$(node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log([...new Set(r.pairs.flatMap(Object.keys))].join("\n"))' "$work/h0.json")
check "the rewritten model has metadata pairs" test -n "$keys"
for key in $keys; do
  check "man page: metadata key $key" grep -qx "\.B $key" <<<"$metadata"
done

# Rendering: no warnings from groff (-ww: all of them) or man.
if command -v groff >/dev/null; then
  renders() { groff -man -ww -z -Tutf8 "$page" 2>"$work/groff.err" && [ ! -s "$work/groff.err" ] || { cat "$work/groff.err"; return 1; }; }
  check "groff renders the man page without warnings" renders
else
  echo "groff is not installed: rendering not checked"
fi
if command -v man >/dev/null; then
  man_renders() {
    MANWIDTH=80 man --warnings -l "$page" >"$work/man.txt" 2>"$work/man.err" && [ ! -s "$work/man.err" ] &&
      grep -q "EXIT STATUS" "$work/man.txt" || { cat "$work/man.err"; return 1; }
  }
  check "man -l renders the man page without warnings" man_renders
fi
finish
