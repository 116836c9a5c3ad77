# Shared helpers of the CLI test scripts (sourced). Expects $bin; sets $work (removed on exit), the
# counters, and prints nothing until `finish`.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

check() {  # check NAME CONDITION-COMMAND...
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "PASS  $name"; else failed=$((failed + 1)); echo "FAIL  $name"; fi
}

# run EXPECTED_CODE ARGS...: runs the binary, keeps stdout/stderr in $work/out, $work/err
run() {
  local expected=$1; shift
  "$bin" "$@" >"$work/out" 2>"$work/err"
  local code=$?
  if [ "$code" -ne "$expected" ]; then
    echo "  expected exit $expected, got $code: $bin $*"; sed 's/^/  stderr: /' "$work/err" | head -5
    return 1
  fi
}

# finish: the closing line test runners read, and the exit status.
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
