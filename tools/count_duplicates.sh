#!/usr/bin/env bash
# Counts the repeated code issue 34 tracks: the pairs the library's `duplicates` tool reports over the whole
# tree (`--most 200 --seconds 60`) whose both sides are in src/ or tests/ and that it does not mark
# boilerplate. With a folder, only the pairs with both sides in that folder (e.g. tests/unit/).
#
#   tools/count_duplicates.sh [--list] [FOLDER]     (run from anywhere; reads this checkout's working tree)
#
# Prints the count (with --list, the pairs themselves first). Fails when `duplicates` did not read the whole
# tree, or cut its list at 200 rows before the boilerplate ones (it lists those last), since the count would
# then be short.
set -euo pipefail

list=false
if [ "${1:-}" = --list ]; then list=true; shift; fi
scope=${1:-}
root="$(cd "$(dirname "$0")/.." && pwd)"
report=$(duplicates --repo "$root" --most 200 --seconds 60)
last_row=$(grep -E '^D[0-9]+ ' <<<"$report" | tail -n 1)
if grep -q '^incomplete:' <<<"$report" ||
   { grep -qE '^\(\+[0-9]+ more pairs\)' <<<"$report" && [[ $last_row != *" boilerplate"* ]]; }; then
  echo "count_duplicates: the duplicates tool did not list every pair:" >&2
  grep -E '^incomplete:|more pairs' <<<"$report" >&2
  exit 1
fi
# A row: `D12 a.cc:1-9 ~ b.cc:40-48 [shape] [boilerplate] [(+N more runs)]`.
pairs=$(awk -v scope="$scope" '
  /^D[0-9]+ / && !/ boilerplate/ {
    a = $2; b = $4
    if (scope == "") { if (a ~ /^(src|tests)\// && b ~ /^(src|tests)\//) print }
    else if (index(a, scope) == 1 && index(b, scope) == 1) print
  }' <<<"$report")
if $list && [ -n "$pairs" ]; then echo "$pairs"; fi
if [ -z "$pairs" ]; then echo 0; else wc -l <<<"$pairs"; fi
