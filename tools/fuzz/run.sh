#!/usr/bin/env bash
# Builds a libFuzzer target with clang (ASan + UBSan) and runs it. Needs clang and libclang-rt-14-dev
# (`tools/setup.sh --fuzz` installs them; the CI does not fuzz, it replays the saved finds in
# tests/data/fuzz/ through tests/cli/cli_test.sh). The library is compiled once into build-fuzz/obj/
# (through ccache when it is installed); crashes are written to build-fuzz/crash-* (or the target's
# directory given by -artifact_prefix). Extra libFuzzer flags go after the seconds, e.g.
# `tools/fuzz/run.sh --structure 600 -print_final_stats=1`; SECONDS `build` only builds the target.
#
# tools/fuzz/run.sh [SECONDS] (default 60): byte-level. Model bytes through the external data checks, the
#   model rules, check, report and the rewrite (fuzz_rewrite.cc), seeded with models/,
#   tests/data/external_bad/ (their data files go to build-fuzz/fuzz_data/, where the target resolves
#   external data locations), tests/data/invalid/ and the earlier finds in tests/data/fuzz/.
# tools/fuzz/run.sh --structure [SECONDS]: structure-aware (fuzz_structure.cc + structure_mutator.cc). The
#   same seeds, mutated as parsed ModelProtos (nodes inserted, deleted, duplicated and rewired, op types
#   swapped among the operator table's, attributes, dims, dtypes, subgraph bodies and metadata changed);
#   each mutant goes through every rewrite mode, check, report (JSON and DOT), init and both exports.
#   Oracles: no crash, no sanitizer report, no hang, no internal error; a successful rewrite of a model
#   onnx's checker accepts is accepted too, and rewriting it again changes no byte.
# tools/fuzz/run.sh --cli [SECONDS]: command-line values (fuzz_cli.cc): fuzzed --nodes patterns,
#   --time-axis and --input-context specs, -o / --out-dir paths and --batch / --dim / -j numbers through the
#   CLI's parser and command (in a scratch directory under build-fuzz/cli_scratch/). Oracle: the exit code
#   is a documented one and never 6, and a usage error (2) comes with a message.
# tools/fuzz/run.sh --metadata [SECONDS]: the metadata reader and its validation (fuzz_metadata.cc: the
#   bytes are the `rnnstate` metadata value of a rewritten model), seeded with the metadata of the
#   rewrites of models/.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=rewrite
case "${1:-}" in
  --metadata) target=metadata; shift ;;
  --structure) target=structure; shift ;;
  --cli) target=cli; shift ;;
esac
seconds=${1:-60}
shift || true
command -v clang++ >/dev/null || { echo "run.sh: needs clang and libclang-rt-14-dev (tools/setup.sh --fuzz)" >&2; exit 1; }
launcher=""
command -v ccache >/dev/null && launcher=ccache
flags=(-std=c++17 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -DONNX_NAMESPACE=onnx -DONNX_ML=1 -Iinclude -Isrc
       -Ibuild-fuzz/gen)
mkdir -p build-fuzz/corpus build-fuzz/fuzz_data build-fuzz/obj build-fuzz/gen
# version.cc's build facts (cmake/build_info.cmake makes them for the real build).
[ -f build-fuzz/gen/build_info.h ] || printf '%s\n' '#define RNNSTATE_BUILD_VERSION "fuzz"' \
  '#define RNNSTATE_BUILD_REVISION "fuzz"' '#define RNNSTATE_BUILD_ONNX_VERSION "fuzz"' > build-fuzz/gen/build_info.h
# The library once, one translation unit per source folder as the CMake build makes them
# (cmake/unity_build.cmake): every source but the CLI's entry point, which the --cli target compiles
# with its main renamed. A folder is compiled again when a source or any header is newer than its object.
folders=(src $(ls -d src/*/ | sed 's|/$||'))
objects=()
for folder in "${folders[@]}"; do objects+=("build-fuzz/obj/$(echo "$folder" | tr / _).o"); done
for folder in "${folders[@]}"; do
  name=$(echo "$folder" | tr / _)
  unity=build-fuzz/obj/$name.cc object=build-fuzz/obj/$name.o
  ls "$folder"/*.cc | grep -v 'src/cli/entry.cc' | sed 's|.*|#include "../../&"|' > "$unity.new"
  cmp -s "$unity.new" "$unity" && rm "$unity.new" || mv "$unity.new" "$unity"
  [ "$object" -nt "$unity" ] && [ -z "$(find "$folder" src include -maxdepth 2 -newer "$object" \( -name '*.cc' -o -name '*.h' \) -print -quit)" ] && continue
  echo "$launcher clang++ ${flags[*]} -c $unity -o $object"
done | xargs -r -P2 -I{} sh -c '{}'
sources=(tools/fuzz/fuzz_$target.cc)
[ "$target" = structure ] && sources+=(tools/fuzz/structure_mutator.cc tools/fuzz/model_sweep.cc)
if [ "$target" = cli ]; then
  # main() renamed, so that the target calls the CLI's own parser and commands in process.
  [ build-fuzz/obj/cli_main.o -nt src/cli/entry.cc ] ||
    $launcher clang++ "${flags[@]}" -Dmain=RnnstateCliMain -c src/cli/entry.cc -o build-fuzz/obj/cli_main.o
  objects+=(build-fuzz/obj/cli_main.o)
fi
clang++ "${flags[@]/fuzzer-no-link/fuzzer}" "${sources[@]}" "${objects[@]}" \
  -lonnx -lonnx_proto -lprotobuf -lspdlog -lfmt -lre2 -lpthread -o build-fuzz/fuzz_$target
[ "$seconds" = build ] && exit 0

seed_models() {  # named after their folders: two folders of models/ hold a gru2_dyn.onnx
  for f in models/*/*.onnx tests/data/external_bad/*.onnx tests/data/invalid/*.onnx tests/data/fuzz/*.onnx; do
    cp "$f" "$1/$(basename "$(dirname "$f")")_$(basename "$f")"
  done
  cp models/external/*.bin tests/data/external_bad/*.bin build-fuzz/fuzz_data/
}
cd build-fuzz
run=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 "$@")
case $target in
  metadata)
    mkdir -p metadata_corpus
    for model in ../models/*/*.onnx; do
      ../build/rnnstate -q rewrite "$model" -o metadata_seed.onnx >/dev/null 2>&1 || continue
      /usr/bin/python3 -c "import onnx, sys; m = onnx.load(sys.argv[1]); open(sys.argv[2], 'w').write([p.value for p in m.metadata_props if p.key == 'rnnstate'][0])" \
        metadata_seed.onnx "metadata_corpus/$(basename "$model" .onnx).json" 2>/dev/null || true
    done
    exec ./fuzz_metadata -max_len=100000 "${run[@]}" metadata_corpus ;;
  structure)
    mkdir -p structure_corpus && (cd .. && seed_models build-fuzz/structure_corpus)
    exec ./fuzz_structure -max_len=200000 "${run[@]}" structure_corpus ;;
  cli)
    # The scratch directory's models: a two-layer GRU, its rewrites (plain; packed batch-first), an
    # LSTM and an RNN in a folder, a fixed-length tf2onnx Loop (--time-axis x:1), a VAD (--input-context).
    rm -rf cli_template && mkdir -p cli_template/zoo cli_scratch cli_corpus cli_artifacts
    cp ../models/torch/gru2_dyn_op17.onnx cli_template/gru.onnx
    cp ../models/torch/lstm_h0.onnx cli_template/zoo/lstm.onnx
    cp ../models/torch/rnn_dyn.onnx cli_template/zoo/rnn.onnx
    cp ../models/loops/tf_lstm_loop_fixed.onnx cli_template/loop.onnx
    cp ../models/context/conv_lstm_vad.onnx cli_template/vad.onnx
    ../build/rnnstate -q rewrite cli_template/gru.onnx -o cli_template/stream.onnx
    ../build/rnnstate -q rewrite cli_template/gru.onnx --pack tensor --state-layout batch-first -o cli_template/packed.onnx
    cp ../tools/fuzz/cli_seeds/* cli_corpus/
    # Artifacts by absolute path: the target changes its working directory.
    exec ./fuzz_cli -max_len=4096 -dict=../tools/fuzz/cli.dict -artifact_prefix="$PWD/cli_artifacts/" "${run[@]}" cli_corpus ;;
esac
(cd .. && seed_models build-fuzz/corpus)
exec ./fuzz_rewrite -max_len=200000 "${run[@]}" corpus
