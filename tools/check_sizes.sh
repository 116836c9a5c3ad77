#!/usr/bin/env bash
# Checks issue 34's size rule on the library and CLI sources: no file over 400 lines, no function over 80.
#
#   tools/check_sizes.sh [DIR...]     (default: src include, relative to this checkout)
#
# A function is found the way clang-format (the project's .clang-format) lays one out: its signature starts
# at its scope's indentation (column 0 in a namespace, two more than its class's line in a class body), the
# line that opens its body ends with `{`, and its body closes with `}` at the signature's indentation.
# Lambdas and local classes count in the function around them.
# Prints each violation as `path:line: what` and exits 1 if there is any.
set -euo pipefail

max_file_lines=400
max_function_lines=80
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -eq 0 ]; then set -- "$root/src" "$root/include"; fi

status=0
while IFS= read -r -d '' file; do
  lines=$(wc -l <"$file")
  if [ "$lines" -gt "$max_file_lines" ]; then
    echo "$file:1: $lines lines (at most $max_file_lines)"
    status=1
  fi
  awk -v file="$file" -v limit="$max_function_lines" '
    function indent_of(line) { match(line, /^ */); return RLENGTH }
    {
      ind = indent_of($0); text = substr($0, ind + 1)
      level = depth == 0 ? 0 : classes[depth] + 2   # where a declaration starts: namespace or class scope
    }
    in_body {
      if (ind == body_indent && text ~ /^\}/) {
        n = FNR - start + 1
        if (n > limit) { printf "%s:%d: function of %d lines (at most %d)\n", file, start, n, limit; bad = 1 }
        in_body = 0; sig = ""
      }
      next
    }
    depth > 0 && ind == classes[depth] && text ~ /^\};/ { depth--; sig = ""; next }
    text == "" || text ~ /^(\/\/|#)/ { next }
    ind < level { sig = ""; next }   # an access specifier, or the end of a scope
    ind == level {
      sig = ""
      if (text ~ /^((enum|class|struct|union)[ {]|enum class )/ && text ~ /\{[ \t]*$/) {
        classes[++depth] = ind; next
      }
      if (text ~ /^(namespace|using|extern|typedef|static_assert|public:|private:|protected:)/ || text ~ /[;}][ \t]*$/) next
      sig = text; start = FNR
    }
    ind > level && sig != "" { sig = sig " " text }
    sig != "" && text ~ /\{[ \t]*$/ {
      if (sig ~ /\(/ && sig !~ /=[ \t]*\{[ \t]*$/) { in_body = 1; body_indent = level } else sig = ""
      next
    }
    sig != "" && text ~ /;[ \t]*$/ { sig = "" }
    END { exit bad }
  ' "$file" || status=1
done < <(find "$@" -type f \( -name '*.cc' -o -name '*.h' \) -print0 | sort -z)
exit $status
