#!/usr/bin/env bash
# Checks that src/'s folders are layered as the stages run: each folder includes only itself and the
# folders below it and says so in its README.md, the top of src/ holds only the joiner (pipeline.cc and its
# header), no two units include each other, and the command line reaches the stages through the façade only.
#
#   tools/check_layering.sh [SRC_DIR]      (default: src/ beside this script; run by ctest as `layering`)
#
# The order, lowest first. A new folder goes into this list (and docs/architecture.md) where it belongs, with
# a README.md of its own.
set -euo pipefail

src=${1:-"$(cd "$(dirname "$0")/.." && pwd)/src"}
layers=(contract graph values ops io states rules exposure loops find time rewrite pack validate views TOP cli)
# Files the top of src/ may hold: the one joiner of the stages.
top_files=(pipeline.cc pipeline_stages.h)
# What cli/ may include besides cli/ and the public headers (rnnstate/...): file access, the metadata contract
# and the generated build_info.h; the analysis is reached through rnnstate/pipeline.h only.
cli_allowed=(io contract build_info.h)

# The rank of each folder ("TOP" for a file at the top of src/), looked up without a subshell per include:
# with one, the check took 12 s of CPU.
declare -A rank_of=()
for i in "${!layers[@]}"; do rank_of[${layers[$i]}]=$i; done

problems=0
fail() { echo "layering: $*" >&2; problems=$((problems + 1)); }

cd "$src"
# 1. The top of src/ holds the joiner only; every folder is a known layer.
for entry in *; do
  if [[ -d $entry ]]; then
    [[ ${rank_of[$entry]:--1} -ge 0 ]] || fail "src/$entry/ is not in the layer list of $0"
  elif [[ ! " ${top_files[*]} " == *" $entry "* ]]; then
    fail "src/$entry: the top of src/ holds only ${top_files[*]} (put a unit in its stage's folder)"
  fi
done

# 2. Each folder says in its README.md what it owns and what it may include; for a folder of the order, the
# "May include:" line lists exactly the folders below it, so that the README cannot drift from this list.
for i in "${!layers[@]}"; do
  folder=${layers[$i]}
  [[ $folder == TOP ]] && continue
  readme="$folder/README.md"
  if [[ ! -f $readme ]]; then
    fail "src/$readme is missing (what the folder owns, and a 'May include:' line)"
    continue
  fi
  [[ $folder == cli ]] && continue  # its own rule, cli_allowed above
  expected="May include: \`$folder/\`, the public headers (\`rnnstate/\`)"
  below=()
  for lower in "${layers[@]:0:$i}"; do [[ $lower != TOP ]] && below+=("\`$lower/\`"); done
  if ((${#below[@]})); then
    joined=$(printf '%s, ' "${below[@]}")
    expected+=", and the folders below it: ${joined%, }"
  fi
  expected+="."
  actual=$(grep -m1 '^May include:' "$readme" || true)
  [[ $actual == "$expected" ]] || fail "src/$readme: its line should read: $expected"
done

# 3. Each file includes only its own folder and lower ones (quoted includes; <...> are libraries).
declare -A unit_edges=()  # "a b": unit a (path without extension) includes unit b's header
# The unit behind each public header (include/rnnstate/NAME.h is implemented by src/FOLDER/NAME.cc), so that
# two units including each other through a public header are found too.
declare -A public_units=()
while IFS= read -r file; do
  public_units[$(basename "$file" .cc)]=${file%.cc}
done < <(find . -name '*.cc' | sed 's|^\./||')
while IFS= read -r file; do
  folder=$(dirname "$file")
  [[ $folder == . ]] && folder=TOP
  own=${rank_of[$folder]:--1}
  unit=${file%.*}
  while IFS= read -r included; do
    if [[ $included == rnnstate/* ]]; then  # the public headers (include/rnnstate/) are below everything
      public=${included#rnnstate/}
      behind=${public_units[${public%.h}]:-}
      [[ -n $behind && $behind != "$unit" ]] && unit_edges["$unit $behind"]=1
      continue
    fi
    if [[ $included == */* ]]; then target=${included%%/*}; else target=TOP; fi
    theirs=${rank_of[$target]:--1}
    if [[ $theirs -lt 0 ]]; then
      fail "$file includes \"$included\": not a file of a known folder"
      continue
    fi
    if [[ $theirs -gt $own ]]; then
      fail "$file ($folder) includes \"$included\" ($target), a folder above it"
    fi
    if [[ $folder == cli && $target != cli ]]; then
      allowed=0
      for a in "${cli_allowed[@]}"; do [[ $included == "$a" || $target == "$a" ]] && allowed=1; done
      [[ $allowed == 1 ]] || fail "$file includes \"$included\": the command line calls rnnstate/pipeline.h for analysis"
    fi
    included_unit=${included%.*}
    [[ $included_unit != "$unit" ]] && unit_edges["$unit $included_unit"]=1
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done < <(find . -name '*.h' -o -name '*.cc' | sed 's|^\./||' | sort)

# 4. No two units include each other.
for edge in "${!unit_edges[@]}"; do
  read -r a b <<<"$edge"
  if [[ -n ${unit_edges["$b $a"]:-} && $a < $b ]]; then
    fail "$a and $b include each other"
  fi
done

if [[ $problems -gt 0 ]]; then
  echo "layering: $problems problem(s); the order is ${layers[*]/TOP/(src\/ top)}" >&2
  exit 1
fi
echo "layering: ok (${layers[*]/TOP/(src\/ top)})"
