#!/usr/bin/env bash
# `cmake --install` into a temporary prefix: the installed binary runs from there (--version, --version --json,
# report, rewrite, check and verify on a bundled model); the man page, bash completion, headers, library and package
# config are where they belong; and a CMake project builds and runs against the installed library with
# find_package(rnnstate) (not in sanitizer builds: the library is instrumented there).
# Usage: install_test.sh BUILD_DIR SOURCE_DIR SANITIZED(0|1)
set -uo pipefail
build=$1
src=$2
sanitized=$3
source "$(dirname "$0")/../cli/lib.sh"
prefix=$work/prefix
bin=$prefix/bin/rnnstate
model=$src/models/torch/lstm2_bf_dyn.onnx

installs() { cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; return 1; }; }
check "cmake --install --prefix" installs
for file in bin/rnnstate share/man/man1/rnnstate.1.gz share/bash-completion/completions/rnnstate \
            share/doc/rnnstate/copyright include/rnnstate/pipeline.h include/rnnstate/error.h lib/librnnstate.a \
            lib/cmake/rnnstate/rnnstate-config.cmake lib/cmake/rnnstate/rnnstate-config-version.cmake \
            lib/cmake/rnnstate/rnnstate-targets.cmake share/rnnstate/rnnstate-stream/cli.mjs \
            share/rnnstate/rnnstate-stream/verify.mjs share/rnnstate/rnnstate-stream/index.mjs; do
  check "installed: $file" test -s "$prefix/$file"
done
check "nothing installed outside the prefix's bin, include, lib, share" \
  test -z "$(ls "$prefix" | grep -vx -e bin -e include -e lib -e share)"
# The library is what include/ declares: the command line's own units (src/cli: files, workers, results,
# `verify`'s Node.js run), whose headers are not installed, are the executable's.
cli_symbols() { nm -C --defined-only "$prefix/lib/librnnstate.a" 2>/dev/null |
  grep -E 'rnnstate::(FindModelFiles|RunBatch|FindVerifyScript|RunNodeVerify|ClosestName|DiscoveryErrorResult)\('; }
check "the library defines none of the command line's functions" test -z "$(cli_symbols)"

# --version: the release version, the source revision, the onnx and protobuf versions compiled against.
check "--version" run 0 --version
version_text=$(cat "$work/out")
version_form=$'^rnnstate [0-9]+\\.[0-9]+\\.[0-9]+\nrevision [^ ]+\nonnx [0-9]+\\.[0-9]+\\.[0-9]+\nprotobuf [0-9]+\\.[0-9]+\\.[0-9]+$'
has_version_form() { [[ $version_text =~ $version_form ]]; }
check "--version: four lines NAME VALUE" has_version_form
check "--version: the project's version" grep -qx "rnnstate $(sed -n 's/^project(rnnstate VERSION \([^ ]*\) .*/\1/p' "$src/CMakeLists.txt")" "$work/out"
# The revision of the tree the binary was built from: this tree, unless it changed since the build.
expected=unknown
if command -v git >/dev/null && [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$src" && pwd -P)" ]; then
  expected=$(git -C "$src" describe --tags --always --dirty --abbrev=12 --match 'v[0-9]*')
fi
check "--version: revision $expected" grep -qx "revision $expected" "$work/out"
check "--version --json" run 0 --version --json
check "--version --json: one JSON object with the same values" node -e '
  const fs = require("fs");
  const text = process.argv[1].split("\n").map((line) => line.split(" "));
  const json = fs.readFileSync(process.argv[2], "utf8");
  const v = JSON.parse(json);
  const expected = {name: "rnnstate", version: text[0][1], revision: text[1][1], onnx: text[2][1], protobuf: text[3][1]};
  if (json.split("\n").length !== 2 || JSON.stringify(v) !== JSON.stringify(expected)) {
    console.log("  got " + json + "  expected " + JSON.stringify(expected)); process.exit(1);
  }' "$version_text" "$work/out"
check "--json without --version: usage error" run 2 --json

# The installed binary does the work.
check "report" run 0 report "$model"
check "report names the LSTMs" grep -q LSTM "$work/out"
check "rewrite" run 0 rewrite "$model" -o "$work/streaming.onnx"
check "check passes on the rewrite" run 0 check "$work/streaming.onnx"
check "verify --help: the installed checker's help" run 0 verify --help
check "verify --help: its options" grep -q -- '--chunks' "$work/out"
check "no test of the helper installed" test ! -e "$prefix/share/rnnstate/rnnstate-stream/test"
ort=$src/tests/e2e/node_modules/onnxruntime-node
if [ -d "$ort" ]; then
  check "verify runs the installed checker" run 0 verify "$model" "$work/streaming.onnx" --ort "$ort"
  check "verify: PASS" grep -q '^PASS: ' "$work/out"
fi

if [ "$sanitized" = 1 ]; then
  echo "sanitizer build: find_package(rnnstate) consumer skipped"
  finish; exit
fi
# A CMake project using the installed library.
mkdir "$work/consumer"
cat >"$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(consumer CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(rnnstate 0.1 REQUIRED)
add_executable(consumer main.cc)
target_link_libraries(consumer PRIVATE rnnstate::rnnstate)
CMAKE
cat >"$work/consumer/main.cc" <<'CC'
#include <fstream>
#include <iostream>

#include "rnnstate/pipeline.h"

int main(int, char** argv) {
  onnx::ModelProto model;
  std::ifstream in(argv[1], std::ios::binary);
  if (!model.ParseFromIstream(&in)) return 1;
  rnnstate::RewriteResult result = rnnstate::RewriteForStreaming(model, rnnstate::PlanOptions{}, /*strict=*/true);
  std::cout << result.pairs.size() << " state pairs, changed " << result.changed << "\n";
}
CC
builds() {
  cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
    >"$work/consumer.log" 2>&1 && cmake --build "$work/consumer/build" >>"$work/consumer.log" 2>&1 ||
    { tail -30 "$work/consumer.log"; return 1; }
}
check "find_package(rnnstate): a project builds against the installed library" builds
check "find_package(rnnstate): it runs" \
  test "$("$work/consumer/build/consumer" "$model")" = "4 state pairs, changed 1"
finish
