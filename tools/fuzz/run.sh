#!/usr/bin/env bash
# Builds the libFuzzer target with clang (ASan + UBSan) and fuzzes the external data checks, the model
# rules, check, report and the rewrite pipeline, seeded with the models in models/, tests/data/external_bad/
# (their data files go to build-fuzz/fuzz_data/, where the target resolves external data locations),
# tests/data/invalid/ and the earlier finds in tests/data/fuzz/.
# Usage: tools/fuzz/run.sh [SECONDS] (default 60). Needs clang and libclang-rt-14-dev. Crashes are written
# to build-fuzz/crash-*.
# tools/fuzz/run.sh --metadata [SECONDS]: fuzzes the metadata reader and its validation instead
# (fuzz_metadata.cc: the bytes are the `rnnstate` metadata value of a rewritten model), seeded with the
# metadata of the rewrites of models/.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=rewrite
if [ "${1:-}" = --metadata ]; then target=metadata; shift; fi
seconds=${1:-60}
mkdir -p build-fuzz/corpus build-fuzz/fuzz_data
cp models/*/*.onnx tests/data/external_bad/*.onnx build-fuzz/corpus/
for f in tests/data/invalid/*.onnx tests/data/fuzz/*.onnx; do cp "$f" "build-fuzz/corpus/$(basename "$(dirname "$f")")_$(basename "$f")"; done
cp models/external/*.bin tests/data/external_bad/*.bin build-fuzz/fuzz_data/
srcs=$(ls src/*.cc src/*/*.cc | grep -v 'src/cli/main.cc\|src/cli/cli_run.cc\|src/cli/version.cc')
clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -DONNX_NAMESPACE=onnx -DONNX_ML=1 \
  -Iinclude -Isrc tools/fuzz/fuzz_$target.cc $srcs \
  -lonnx -lonnx_proto -lprotobuf -lspdlog -lfmt -lre2 -lpthread -o build-fuzz/fuzz_$target
cd build-fuzz
if [ "$target" = metadata ]; then
  mkdir -p metadata_corpus
  for model in ../models/*/*.onnx; do
    ../build/rnnstate -q rewrite "$model" -o metadata_seed.onnx >/dev/null 2>&1 || continue
    /usr/bin/python3 -c "import onnx, sys; m = onnx.load(sys.argv[1]); open(sys.argv[2], 'w').write([p.value for p in m.metadata_props if p.key == 'rnnstate'][0])" \
      metadata_seed.onnx "metadata_corpus/$(basename "$model" .onnx).json" 2>/dev/null || true
  done
  exec ./fuzz_metadata -max_total_time="$seconds" -max_len=100000 -timeout=10 -rss_limit_mb=4096 metadata_corpus
fi
./fuzz_rewrite -max_total_time="$seconds" -max_len=200000 -timeout=10 -rss_limit_mb=4096 corpus
