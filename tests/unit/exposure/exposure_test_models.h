#pragma once
/// \file
/// The small hand-written models of the exposure tests (exposed_state_test.cc, exposure_soundness_test.cc)
/// and the analysis of one, as `report` and `check` see it.

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "exposure/exposed_state.h"
#include "find/analysis.h"
#include "graph/model_index.h"
#include "rewrite/plan.h"
#include "test_names.h"
#include "views/check.h"

namespace rnnstate::testing {

/// IR 8, ai.onnx opset 14.
extern const char* kHeader;

/// A model and its analysis, as `report` and `check` see it (the index reads the model in place).
struct Analyzed {
  explicit Analyzed(const std::string& text);

  /// The state `kind` ("h", "c") of the `node`-th recurrent node (graph order, branches included).
  const StateAnalysis& State(size_t node, const std::string& kind) const;
  /// The recurrent node in If branch `branch` ("then_branch", "else_branch").
  size_t InBranch(const std::string& branch) const;
  std::vector<CheckProblem> Problems(bool streamable_only = false) const;
  Plan PlanWith(const PlanOptions& options = {}) const;

  onnx::ModelProto model;
  std::unique_ptr<ModelIndex> index;
  Analysis analysis;
};

/// The exposure's region as text ("[0, :, :]").
std::string Region(const Exposure& exposure);

/// The exposure of a state that must have one (throws, with the reason, when it has none).
const Exposure& ExposureOf(const StateAnalysis& state);

/// The kinds of check problems ("not_exposed", ...).
std::vector<std::string> Kinds(const std::vector<CheckProblem>& problems);

/// Expects what a strict rewrite with `options` promises of its output `model`: `check` finds nothing (`why`
/// says what that proves) and a rewrite of the rewrite changes no byte.
void ExpectCheckedAndSettled(const onnx::ModelProto& model, const PlanOptions& options, const std::string& why);

/// `text` rewritten strictly with `options`, expecting the metadata its only change: the graph byte for byte
/// the authors' (no input, output or node changes).
onnx::ModelProto RewrittenMetadataOnly(const std::string& text, const PlanOptions& options = {});

/// Replaces the first `from` in `text` by `to`; throws when `text` has no `from`.
void Replace(std::string& text, const std::string& from, const std::string& to);

/// The authors' "empty means start from zeros" test: `empty` is true when axis 1 (the batch) of `state` has
/// size 0 (`shp` and `rows` its steps; the int64 scalars `zero` and `one` defined before it). Starts with
/// two spaces, ends with a newline.
extern const char* kStateIsEmpty;

/// Form 1 (Silero v5's chain): h0 = Unsqueeze(Gather(state, 0)), c0 = Unsqueeze(Gather(state, 1)); and
/// stateN = Concat(Unsqueeze(Squeeze(Y_h)), Unsqueeze(Squeeze(Y_c))).
extern const char* kPackedRead;
extern const char* kPackedWrite;

/// An LSTM (hidden 3) reading h0, c0 from `read` (out of state [2, batch, 3]) and writing stateN [2,
/// batch, 3] with `write`.
std::string PackedLstm(const std::string& read = kPackedRead, const std::string& write = kPackedWrite,
                       const std::string& header = kHeader);

/// An LSTM per branch of If(condition), each reading `state` from outer scope (like form 1) and writing
/// its finals through the If's outputs into stateN. The then-branch starts from `then_start` ("fed": the
/// state, "zeros": ConstantOfShape from X's batch). `empty` in the condition is "state's batch is 0".
std::string BranchedLstm(const std::string& condition, const std::string& then_start);

/// Two GRU layers reading rows [l:l+1] of h0 [2, batch, 3] (PyTorch's `(h0, c0)`), layer 1 the rows
/// `second_rows` ("one, two": [1:2]); h_n = Concat(Y_h layers).
std::string StackedGrus(const std::string& second_rows = "one, two");

/// GRU i (of read.size(), hidden 3) reads Unsqueeze(Gather(C_i, read[i])) and writes C_{i+1} =
/// ScatterND(C_i, [[write[i]]], Reshape(Gather(Y_h, 0), Concat([1], Shape(C_i)[1:]))) — PyTorch's
/// `cache[i] = h[0]`, the update's shape computed from the cache; cache [3, batch, 3], cache_out = C_n.
std::string Cache(const std::vector<int>& read, const std::vector<int>& write);

}  // namespace rnnstate::testing

// The exposure tests read these unqualified too (test_names.h).
namespace rnnstate::test_names {

using testing::Analyzed;
using testing::BranchedLstm;
using testing::Cache;
using testing::ExpectCheckedAndSettled;
using testing::ExposureOf;
using testing::kHeader;
using testing::Kinds;
using testing::kPackedRead;
using testing::kPackedWrite;
using testing::kStateIsEmpty;
using testing::PackedLstm;
using testing::Region;
using testing::Replace;
using testing::RewrittenMetadataOnly;
using testing::StackedGrus;

}  // namespace rnnstate::test_names
