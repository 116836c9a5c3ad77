#pragma once
/// \file
/// Helpers for building test models from ONNX text and checking rewrite results.

#include <onnx/onnx_pb.h>

#include <functional>
#include <string>
#include <vector>

#include "rnnstate/error.h"
#include "rnnstate/json.h"
#include "rnnstate/metadata.h"
#include "rnnstate/options.h"

namespace rnnstate::testing {

/// ONNX text: the main-graph nodes a loop over axis 0 of `x` ([seq, batch, ...]) starts with, as scripted
/// loops export them: `trip` the sequence length (Gather of Shape(x)) and `h0` zeros [batch, 4] sized from
/// the data (ConstantOfShape of Concat(batch, [4])); `zero`, `one`, `b`, `four` and `dims` are its steps.
/// Ends with a newline.
extern const char* const kLoopOverAxis0Start;

/// ONNX text: kLoopOverAxis0Start without the trip count, which the caller defines (from `shape` and the
/// int64 scalar `zero`, or otherwise): `h0` zeros [batch, `width`] sized from Shape(x)[1] (`one`, `b`,
/// `width` and `dims` its steps). Starts with two spaces, ends with a newline.
std::string LoopZerosOfTheBatch(int width);

/// The value names of PyTorch's zeros for a missing initial state, step by step (see ZeroStateOfBatchText).
struct ZeroStateNames {
  std::string shape = "shape";   ///< Shape of the data
  std::string axis = "zero";     ///< int64[1] constant: the batch axis
  std::string batch = "b";       ///< Gather: the batch size
  std::string one = "one";       ///< int64[1] constant {1}: the layers-times-directions dimension
  std::string hidden = "three";  ///< int64[1] constant: the hidden size
  std::string dims = "dims";     ///< Concat(one, batch, hidden)
  std::string zeros = "h0";      ///< ConstantOfShape(dims): the zero state
};

/// ONNX text: PyTorch's zero state [1, batch, `hidden`] for a recurrent layer exported without h0, the batch
/// size read from axis `axis` of `from`'s shape, its steps named by `names`. Starts with two spaces, ends
/// with a newline.
std::string ZeroStateOfBatchText(const std::string& from, int axis, int hidden, const ZeroStateNames& names = {});

/// One recurrent layer as PyTorch exports it without an initial state (IR 8, ai.onnx opset 14): X [seq,
/// batch, 2], hidden 3, weights W and R as graph inputs, Y [seq, 1, batch, 3] the only output.
extern const char* const kGru;
/// kGru with direction "reverse".
extern const char* const kReverseGru;
/// kGru's LSTM (W [1, 12, 2], R [1, 12, 3]).
extern const char* const kLstm;

/// PyTorch's export of an LSTM of hidden size `lstm_hidden` then a GRU of hidden size 3 on X [seq, batch, 2]
/// (opset 14): Y and the GRU's h_n are the model's outputs, the LSTM's finals are not.
std::string LstmThenGru(int lstm_hidden);

/// x [batch, 2, seq] + a "same" Conv of x (kernel 3, pads [1, 1]), then a GRU over time: the window looks
/// one frame ahead, the skip path none.
extern const char* const kResidualSameConvGru;

/// torch.chunk(x, 2, dim=1) as PyTorch 1.13 exports it (opset 14) on x of type `x_type` (e.g.
/// "float[b, 8, t, 6]"): the bounds `k * ((Shape(x)[1] + 1) / 2)` (`end0`, `end1`; the first chunk's end the
/// second's start), the chunks `x1` and `x2`, `relu` = Relu(x1) and the outputs y = Identity(relu) and x2.
onnx::ModelProto TorchChunk(const std::string& x_type);

/// Parses a model in ONNX text syntax; fails the test (throws) on a syntax error.
onnx::ModelProto ParseModel(const std::string& text);

/// Adds a float initializer `name` with `dims` and the given values (repeated cyclically).
void AddFloatInitializer(onnx::GraphProto& graph, const std::string& name, const std::vector<int64_t>& dims,
                         const std::vector<float>& values);

/// Names of the graph inputs / outputs / initializers.
std::vector<std::string> InputNames(const onnx::GraphProto& graph);
std::vector<std::string> OutputNames(const onnx::GraphProto& graph);
std::vector<std::string> InitializerNames(const onnx::GraphProto& graph);

/// The node producing `name` in `graph`, or nullptr.
const onnx::NodeProto* Producer(const onnx::GraphProto& graph, const std::string& name);

/// Declared shape of graph input/output `name` as text, e.g. "[1,batch,3]" ("" if absent).
std::string DeclaredShape(const onnx::GraphProto& graph, const std::string& name);

/// The node of type `op` (the `nth` one, in graph order); throws when there is none.
const onnx::NodeProto& NodeOfType(const onnx::GraphProto& graph, const std::string& op, int nth = 0);
onnx::NodeProto& NodeOfType(onnx::GraphProto& graph, const std::string& op, int nth = 0);

/// The state pairs recorded in `model`'s metadata; fails the test when the metadata is malformed.
std::vector<StatePair> RecordedPairs(const onnx::ModelProto& model);

/// The first recorded pair of kind "context"; throws std::runtime_error when there is none.
StatePair ContextPair(const onnx::ModelProto& model);

/// The pair `input` -> `output` of the state `kind` of node `node` in the graph `graph` ("main"), every
/// other field as StatePair leaves it.
StatePair PairOf(const std::string& input, const std::string& output, const std::string& node, const std::string& graph,
                 const std::string& kind);

/// Expects a context pair of `dims.size()` axes whose time axis (the last) is named, since the first call
/// carries another number of frames than the later ones, and whose default, the initializer named as its
/// input in `graph`, has `dims`.
void ExpectContextDefault(const onnx::GraphProto& graph, const StatePair& pair, const std::vector<int64_t>& dims);

/// The "stream" object of `model`'s rnnstate metadata (null when it has none).
Json StreamObject(const onnx::ModelProto& model);

/// Options of a rewrite in `mode`, the rest as by default.
PlanOptions InMode(StateInputMode mode);

/// Options that pack the states with `pack` in `layout`, in `mode`.
PlanOptions Packing(PackKind pack, StateLayout layout, StateInputMode mode = StateInputMode::kDefaults);

/// The serialized bytes of a model.
std::string Bytes(const onnx::ModelProto& model);

/// The message IndexValidModel (every command's validation) throws for `model`, "" when it accepts it;
/// fails the test when the exit code is not kBadInput.
std::string Verdict(const onnx::ModelProto& model);

/// Runs `action`, expects it to throw an Error with `code` and returns the message ("" and a failure when
/// it throws none).
std::string ErrorMessage(const std::function<void()>& action, ExitCode code);

/// Runs `action` and expects an Error with `code` whose message contains `text`.
void ExpectError(const std::function<void()>& action, ExitCode code, const std::string& text);

/// Binds a Unix domain socket at `path` and closes it, leaving the socket file behind (a path that is
/// neither a regular file nor a directory); fails the test when that cannot be done.
void MakeSocketFile(const std::string& path);

/// Two stacked Keras layers on x [1, 6, 3] as tf2onnx writes them (issue 22): one Loop each over a cell
/// at an int32 counter, a shared trip count 6, initial condition `And(Less(0.0, 6.0), ...)` and counter
/// start; `Reshape(x, [6, 1, 3])` as Keras's transpose and `Reshape(ys1, [6, 1, 4])` between the layers;
/// each body's condition `And(Less(Cast(iter), b), Less(Cast(t + 1), b))` (layer 2's bound `bound2`); the
/// readout `Squeeze(Slice(ys2, [start], [INT32_MAX], [0]))`.
std::string Tf2onnxStacked(const std::string& bound2 = "6.0", const std::string& start = "-1");

/// ONNX text: F.pad's `amounts` (before and after of the last axis, then of the axis before it, ...) for an
/// input of rank `rank` as PyTorch 1.13 exports them: a chain of constant nodes (the amounts, ConstantOfShape
/// zeros for the other axes, the pairs reversed by a Slice of step -1, then flattened) ending in `pads`
/// (int64[2 * rank], in ONNX's order); its steps are named `prefix` + "n", "amounts", ... Each line is
/// indented by four spaces and ends with a newline.
std::string TorchPadAmountsText(const std::vector<int64_t>& amounts, int rank, const std::string& pads = "pads",
                                const std::string& prefix = "");

/// The float32 pair `input` -> `input` + "_out" of kind "h" fed as [1, batch, 3] (the batch on axis 1, named
/// "batch"), starting from `init` (kInitZeros or kInitEmpty); every other field as StatePair leaves it.
StatePair FloatHPair(const std::string& input, const std::string& init = kInitZeros);

}  // namespace rnnstate::testing
