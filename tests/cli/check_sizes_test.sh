#!/usr/bin/env bash
# tools/check_sizes.sh finds what it is for: a function over 80 lines at namespace scope and in a class body,
# a file over 400 lines; and passes a function of exactly 80 lines, one-line functions and tables.
set -euo pipefail
script="$1/tools/check_sizes.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# body N: a function whose definition spans exactly N lines (signature, N-2 statements, closing brace)
body() { local indent=$2; echo "${indent}int F$3(int a,"; echo "${indent}      int b) {"
         for ((i = 0; i < $1 - 3; i++)); do echo "${indent}  a += b;"; done; echo "${indent}}"; }

mkdir "$dir/ok" "$dir/long_function" "$dir/long_method" "$dir/long_file"
{ echo "namespace x {"; echo "int One() { return 1; }"; echo "const int kTable[] = {"; echo "    1, 2};"
  body 80 "" 1; echo "class C {"; echo " public:"; body 80 "  " 2; echo "};"; echo "}  // namespace x"; } >"$dir/ok/a.cc"
{ echo "namespace x {"; body 81 "" 1; echo "}  // namespace x"; } >"$dir/long_function/a.cc"
{ echo "struct S {"; body 81 "  " 1; echo "};"; } >"$dir/long_method/a.h"
{ for ((i = 0; i < 401; i++)); do echo "// line"; done; } >"$dir/long_file/a.cc"

fail() { echo "check_sizes_test: $*" >&2; exit 1; }
bash "$script" "$dir/ok" || fail "flagged a file within the limits"
for case in long_function long_method long_file; do
  if out=$(bash "$script" "$dir/$case"); then fail "$case passed"; fi
  echo "$out"
done
out=$(bash "$script" "$dir/long_function" || true)
[[ $out == *"a.cc:2: function of 81 lines"* ]] || fail "long_function reported as: $out"
out=$(bash "$script" "$dir/long_method" || true)
[[ $out == *"a.h:2: function of 81 lines"* ]] || fail "long_method reported as: $out"
# and the project itself keeps the rule
bash "$script"
echo "check_sizes_test: ok"
