// libFuzzer target, structure-aware: the bytes are a ModelProto, mutated as a graph by
// structure_mutator.h (LLVMFuzzerCustomMutator; bytes that do not parse, and one in 16 that do, get
// libFuzzer's byte mutations; LLVMFuzzerCustomCrossOver splices nodes of one model into another). Each
// mutant goes through every command's library call (model_sweep.h: every rewrite mode, check, report,
// init, export, and again on each rewrite's output); a broken oracle there, a crash, a sanitizer report or
// a hang (-timeout) is a find. Build and run: tools/fuzz/run.sh --structure [SECONDS].

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

#include "model_sweep.h"
#include "structure_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

using rnnstate::fuzz::Bytes;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)) || !model.has_graph()) return 0;
  const std::vector<std::string> problems = rnnstate::fuzz::SweepModel(model, size, "fuzz_data");
  if (problems.empty()) return 0;
  for (const std::string& problem : problems) std::fprintf(stderr, "fuzz_structure: %s\n", problem.c_str());
  std::fflush(stderr);
  __builtin_trap();
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::minstd_rand random(seed);
  onnx::ModelProto model;
  // Bytes that do not parse, and now and then those that do, get byte mutations: the parser and the
  // rules for broken models stay covered.
  if (random() % 16 == 0 || !model.ParseFromArray(data, static_cast<int>(size)) || !model.has_graph()) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  for (int done = 0, wanted = 1 + static_cast<int>(random() % 3), tries = 0; done < wanted && tries < 12; ++tries) {
    done += rnnstate::fuzz::MutateOnce(model, random) ? 1 : 0;
  }
  const std::string bytes = Bytes(model);
  if (bytes.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::copy(bytes.begin(), bytes.end(), data);
  return bytes.size();
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                                            uint8_t* out, size_t max_out_size, unsigned int seed) {
  std::minstd_rand random(seed);
  onnx::ModelProto model;
  onnx::ModelProto donor;
  if (!model.ParseFromArray(data1, static_cast<int>(size1)) || !model.has_graph() ||
      !donor.ParseFromArray(data2, static_cast<int>(size2)) || !donor.has_graph()) {
    return 0;  // no crossover of unparseable bytes
  }
  rnnstate::fuzz::CrossNodes(model, donor, random);
  const std::string bytes = Bytes(model);
  if (bytes.size() > max_out_size) return 0;
  std::copy(bytes.begin(), bytes.end(), out);
  return bytes.size();
}
