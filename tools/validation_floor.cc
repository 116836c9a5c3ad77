/// \file
/// Benchmark helper for tools/bench.py (not a test, not shipped): the least work any *validating* rewrite
/// of a model must do, timed on real files so that a throughput target can be compared with it.
///
/// For each (input, output) pair it parses both files and runs exactly the onnx calls rnnstate relies
/// on to trust a rewrite: shape inference on the input (the analysis needs the inferred types), onnx's
/// checker and shape inference on the output. Nothing is written and there is no analysis, planning,
/// copying or structural checking, so the time this takes is a floor below which rnnstate cannot go
/// without dropping a check.
///
/// Usage: rnnstate_validation_floor JOBS LIST_FILE
///   LIST_FILE holds one "input<TAB>output" pair per line. Prints "files=N failed=M".

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

bool Parse(const std::string& path, onnx::ModelProto* model) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return in.good() && model->ParseFromString(bytes.str());
}

void Infer(onnx::ModelProto& model) {
  // The options rnnstate uses (see src/graph/model_index.cc and src/validate/validate.cc).
  onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0, /*data_prop=*/false);
  onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
}

/// The validation work for one pair; false when a file cannot be read or a check fails.
bool Validate(const std::string& input_path, const std::string& output_path) {
  onnx::ModelProto input, output;
  if (!Parse(input_path, &input) || !Parse(output_path, &output)) return false;
  try {
    Infer(input);
    onnx::checker::check_model(output);
    Infer(output);
  } catch (const std::exception& e) {
    std::cerr << output_path << ": " << e.what() << "\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: rnnstate_validation_floor JOBS LIST_FILE\n";
    return 2;
  }
  int jobs = std::max(1, std::atoi(argv[1]));
  std::vector<std::pair<std::string, std::string>> pairs;
  std::ifstream list(argv[2]);
  for (std::string line; std::getline(list, line);) {
    auto tab = line.find('\t');
    if (tab != std::string::npos) pairs.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  std::atomic<size_t> next{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> workers;
  for (int j = 0; j < jobs; ++j) {
    workers.emplace_back([&] {
      for (size_t i; (i = next++) < pairs.size();) {
        if (!Validate(pairs[i].first, pairs[i].second)) ++failed;
      }
    });
  }
  for (auto& worker : workers) worker.join();
  std::printf("files=%zu failed=%d\n", pairs.size(), failed.load());
  return failed == 0 ? 0 : 1;
}
