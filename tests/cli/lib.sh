# Shared helpers of the CLI test scripts (sourced). Expects $bin (a golden suite sets it with golden_arguments);
# sets $work (removed on exit), the counters, and prints nothing until `finish`.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

check() {  # check NAME CONDITION-COMMAND...
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "PASS  $name"; else failed=$((failed + 1)); echo "FAIL  $name"; fi
}

# start_runner [SECONDS]: with $RNNSTATE_FORK_RUNNER set (ctest sets it in Release builds), keeps
# tests/cli/fork_runner.cc as a coprocess that `run_to` sends its command lines to, ended after SECONDS.
# With SECONDS, a run that goes to the binary itself runs under timeout(1) with the same limit.
direct=()
start_runner() {
  [ -z "${1:-}" ] || direct=(timeout "$1")
  [ -n "${RNNSTATE_FORK_RUNNER:-}" ] || return 0
  coproc RUNNER { exec "$RNNSTATE_FORK_RUNNER" ${1:+--time-limit "$1"}; }
}
# run_to OUT ERR ARGS...: `$bin ARGS` with stdout in OUT and stderr in ERR (absolute paths); its exit
# code. Through the runner when one runs (a forked child of a process that loaded the
# libraries once: the executable's own code, the same bytes, about a third of the CPU of a process start;
# stdin /dev/null), unless an argument is empty or holds a tab or a newline (a job line cannot carry it).
run_to() {
  local out=$1 err=$2 arg code; shift 2
  if [ -n "${RUNNER_PID:-}" ]; then
    for arg in "$@"; do [[ -n $arg && $arg != *[$'\t\n']* ]] || { "${direct[@]}" "$bin" "$@" >"$out" 2>"$err"; return; }; done
    job_line "$PWD" "$out" "$err" "$bin" "$@" >&"${RUNNER[1]}"
    read -r code <&"${RUNNER[0]}" || { echo "  $RNNSTATE_FORK_RUNNER ended: no exit code for rnnstate $*"; return 125; }
    return "$code"
  fi
  "${direct[@]}" "$bin" "$@" >"$out" 2>"$err"
}

# run EXPECTED_CODE ARGS...: runs the binary, keeps stdout/stderr in $work/out, $work/err
run() {
  local expected=$1; shift
  run_to "$work/out" "$work/err" "$@"
  local code=$?
  if [ "$code" -ne "$expected" ]; then
    echo "  expected exit $expected, got $code: $bin $*"; sed 's/^/  stderr: /' "$work/err" | head -5
    return 1
  fi
}

# err_has_text TEXT: the last run's stderr ($work/err) holds TEXT (a fixed string); else shows its start.
err_has_text() { grep -qF -- "$1" "$work/err" || { echo "  stderr lacks '$1':"; head -c 600 "$work/err" | sed 's/^/  /'; return 1; }; }

# golden_arguments "$@": a golden suite's arguments, RNNSTATE_BINARY MODELS_DIR GOLDEN_FILE [--update], as
# $bin and $golden (absolute: a suite may run from another directory), $models and $update; $actual is the
# empty file the suite writes what it sees into, which golden_check compares with $golden.
golden_arguments() {
  if [ $# -lt 3 ]; then echo "usage: $0 RNNSTATE_BINARY MODELS_DIR GOLDEN_FILE [--update]" >&2; exit 2; fi
  bin=$(realpath "$1")
  models=$2
  golden=$(realpath "$3")
  update=${4:-}
  actual=$work/actual
  : >"$actual"
}

# golden_check WHAT: the golden suites' last step. With $update = --update, the file $actual becomes the
# committed $golden (and the suite ends, passing); else the check "WHAT" that they are the same, then finish.
golden_check() {
  if [ "$update" = "--update" ]; then
    cp "$actual" "$golden"
    echo "updated $golden ($(wc -l <"$golden") lines)"
    exit 0
  fi
  check "$1" diff -u "$golden" "$actual"
  finish
}

# finish: the closing line test runners read, and the exit status.
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

# run_jobs JOBS CODES: runs the command lines of the file JOBS in order, one a line, tab-separated: DIR,
# STDOUT_FILE, STDERR_FILE, then the command (argv[0] first); appends each exit code to the file CODES.
# Through $RNNSTATE_FORK_RUNNER when set (ctest sets it for the golden tests: tests/cli/fork_runner.cc
# runs each in a forked child of one process that loaded onnx once — the executable's own code, the same
# bytes — about a third of the CPU of a process each); else as processes of their own.
# job_line DIR STDOUT_FILE STDERR_FILE COMMAND...: one line of a run_jobs file (fields joined by tabs).
job_line() {
  local IFS=$'\t'
  printf '%s\n' "$*"
}
run_jobs() {
  if [ -n "${RNNSTATE_FORK_RUNNER:-}" ]; then
    "$RNNSTATE_FORK_RUNNER" <"$1" >>"$2" || { echo "run_jobs: $RNNSTATE_FORK_RUNNER failed" >&2; exit 2; }
  else
    local argv
    while IFS=$'\t' read -r -a argv; do
      (cd "${argv[0]}" && "${argv[@]:3}" >"${argv[1]}" 2>"${argv[2]}")
      echo $?
    done <"$1" >>"$2"
  fi
}
