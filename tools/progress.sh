# Progress for the long steps of the scripts in tools/ (sourced by setup.sh, build.sh and demo.sh).

# heartbeat LABEL: copies its input to its output line by line and, after 15 s without a line, prints
# "  ... LABEL: N s" — a step that takes minutes is never silent. Use as a filter: CMD 2>&1 | heartbeat LABEL
# (with pipefail, the pipeline fails when CMD does).
heartbeat() {
  local label=$1 start=$SECONDS pending="" line="" code
  while true; do
    line=""
    if IFS= read -r -t 15 line; then
      printf '%s%s\n' "$pending" "$line"
      pending=""
      continue
    else
      code=$?
    fi
    if [ "$code" -gt 128 ]; then  # timed out; read keeps what it got of an unfinished line
      pending+=$line
      printf '  ... %s: %d s\n' "$label" $((SECONDS - start))
    else  # end of input
      [ -z "$pending$line" ] || printf '%s%s\n' "$pending" "$line"
      return 0
    fi
  done
}

# cmake_build_lines: CMake's build output, readable: a unity file's line ("CMakeFiles/rnnstate_lib.dir/
# Unity/unity_src/graph_cxx.cxx.o") names its folder, a file's line the file, bookkeeping lines are
# dropped. Errors and warnings pass unchanged.
cmake_build_lines() {
  sed -u -e '/Consolidate compiler generated dependencies of target/d' -e '/Scanning dependencies of target/d' \
    -e 's#Building CXX object .*/Unity/unity_\(.*\)_cxx\.cxx\.o$#Compiling \1/#' \
    -e 's#Building CXX object .*\.dir/\(.*\)\.o$#Compiling \1#'
}
