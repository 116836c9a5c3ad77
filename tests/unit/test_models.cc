#include "test_models.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "rnnstate/error.h"
#include "rules/model_rules.h"

namespace rnnstate::testing {

const char* const kGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})";

const char* const kReverseGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3, direction = "reverse"> (X, W, R)
})";

const char* const kLstm = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 12, 2] W, float[1, 12, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = LSTM <hidden_size = 3> (X, W, R)
})";

const char* const kResidualSameConvGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[2, 2, 3] w, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  c = Conv <pads = [1, 1]> (x, w)
  a = Add (x, c)
  s = Transpose <perm = [2, 0, 1]> (a)
  Y = GRU <hidden_size = 3> (s, W, R)
})";

const char* const kLoopOverAxis0Start = R"(  shape = Shape (x)
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64[1] {1}> ()
  trip = Gather <axis = 0> (shape, zero)
  b = Gather <axis = 0> (shape, one)
  four = Constant <value = int64[1] {4}> ()
  dims = Concat <axis = 0> (b, four)
  h0 = ConstantOfShape (dims)
)";

onnx::ModelProto TorchChunk(const std::string& x_type) {
  return ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g ()" + x_type + R"( x) => (float[b, ?, t, 6] y, float[b, ?, t, 6] x2) {
    shape = Shape (x)
    axis = Constant <value = int64[1] {1}> ()
    channels = Gather <axis = 0> (shape, axis)
    zero = Constant <value = int64[1] {0}> ()
    one = Constant <value = int64[1] {1}> ()
    rounded = Add (channels, one)
    two = Constant <value = int64[1] {2}> ()
    half = Div (rounded, two)
    first = Constant <value = int64[1] {1}> ()
    end0 = Mul (half, first)
    x1 = Slice (x, zero, end0, axis)
    second = Constant <value = int64[1] {2}> ()
    end1 = Mul (half, second)
    x2 = Slice (x, end0, end1, axis)
    relu = Relu (x1)
    y = Identity (relu)
})");
}

std::string LstmThenGru(int lstm_hidden) {
  const std::string h = std::to_string(lstm_hidden), gates = std::to_string(4 * lstm_hidden);
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, )" +
         gates + ", 2] W1, float[1, " + gates + ", " + h + "] R1, float[1, 9, " + h + R"(] W2, float[1, 9, 3] R2)
    => (float[seq, 1, batch, 3] Y, float[1, batch, 3] h_n) {
  Y1 = LSTM <hidden_size = )" +
         h + R"(> (X, W1, R1)
  one = Constant <value = int64[1] {1}> ()
  S1 = Squeeze (Y1, one)
  Y, h_n = GRU <hidden_size = 3> (S1, W2, R2)
})";
}

std::string LoopZerosOfTheBatch(int width) {
  return R"(  shape = Shape (x)
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64[1] {1}> ()
  b = Gather <axis = 0> (shape, one)
  width = Constant <value = int64[1] {)" +
         std::to_string(width) + R"(}> ()
  dims = Concat <axis = 0> (b, width)
  h0 = ConstantOfShape (dims)
)";
}

std::string ZeroStateOfBatchText(const std::string& from, int axis, int hidden, const ZeroStateNames& names) {
  const auto int64_constant = [](const std::string& name, int value) {
    return "  " + name + " = Constant <value = int64[1] {" + std::to_string(value) + "}> ()\n";
  };
  return "  " + names.shape + " = Shape (" + from + ")\n" + int64_constant(names.axis, axis) + "  " + names.batch +
         " = Gather <axis = 0> (" + names.shape + ", " + names.axis + ")\n" + int64_constant(names.one, 1) +
         int64_constant(names.hidden, hidden) + "  " + names.dims + " = Concat <axis = 0> (" + names.one + ", " +
         names.batch + ", " + names.hidden + ")\n  " + names.zeros + " = ConstantOfShape (" + names.dims + ")\n";
}

onnx::ModelProto ParseModel(const std::string& text) {
  onnx::ModelProto model;
  onnx::Status status = onnx::OnnxParser::Parse(model, text.c_str());
  if (!status.IsOK()) throw std::runtime_error("bad test model: " + status.ErrorMessage());
  return model;
}

void AddFloatInitializer(onnx::GraphProto& graph, const std::string& name, const std::vector<int64_t>& dims,
                         const std::vector<float>& values) {
  onnx::TensorProto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (auto d : dims) {
    tensor->add_dims(d);
    count *= d;
  }
  for (int64_t i = 0; i < count; ++i) tensor->add_float_data(values.empty() ? 0.0f : values[i % values.size()]);
}

std::vector<std::string> InputNames(const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  for (const auto& v : graph.input()) names.push_back(v.name());
  return names;
}

std::vector<std::string> OutputNames(const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  for (const auto& v : graph.output()) names.push_back(v.name());
  return names;
}

std::vector<std::string> InitializerNames(const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  for (const auto& t : graph.initializer()) names.push_back(t.name());
  return names;
}

const onnx::NodeProto* Producer(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& node : graph.node()) {
    for (const auto& output : node.output()) {
      if (output == name) return &node;
    }
  }
  return nullptr;
}

std::string DeclaredShape(const onnx::GraphProto& graph, const std::string& name) {
  auto render = [](const onnx::ValueInfoProto& info) {
    std::string out = "[";
    const auto& shape = info.type().tensor_type().shape();
    for (int i = 0; i < shape.dim_size(); ++i) {
      if (i) out += ",";
      const auto& d = shape.dim(i);
      out += d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?";
    }
    return out + "]";
  };
  for (const auto& v : graph.input()) {
    if (v.name() == name) return render(v);
  }
  for (const auto& v : graph.output()) {
    if (v.name() == name) return render(v);
  }
  return "";
}

const onnx::NodeProto& NodeOfType(const onnx::GraphProto& graph, const std::string& op, int nth) {
  for (const auto& node : graph.node()) {
    if (node.op_type() == op && nth-- == 0) return node;
  }
  throw std::runtime_error("no node " + op);
}

onnx::NodeProto& NodeOfType(onnx::GraphProto& graph, const std::string& op, int nth) {
  return const_cast<onnx::NodeProto&>(NodeOfType(static_cast<const onnx::GraphProto&>(graph), op, nth));
}

std::vector<StatePair> RecordedPairs(const onnx::ModelProto& model) {
  std::string error;
  std::vector<StatePair> pairs = ReadStatePairs(model, &error);
  EXPECT_EQ(error, "");
  return pairs;
}

StatePair ContextPair(const onnx::ModelProto& model) {
  for (const StatePair& pair : RecordedPairs(model)) {
    if (pair.kind == kKindContext) return pair;
  }
  throw std::runtime_error("no context pair");
}

StatePair PairOf(const std::string& input, const std::string& output, const std::string& node, const std::string& graph,
                 const std::string& kind) {
  StatePair pair;
  std::tie(pair.input, pair.output, pair.node, pair.graph, pair.kind) = std::tie(input, output, node, graph, kind);
  return pair;
}

void ExpectContextDefault(const onnx::GraphProto& graph, const StatePair& pair, const std::vector<int64_t>& dims) {
  ASSERT_EQ(pair.shape.size(), dims.size());
  EXPECT_LT(pair.shape.back().value, 0) << "the time axis of " << pair.input << " is named";
  EXPECT_FALSE(pair.shape.back().symbol.empty());
  const onnx::TensorProto* value = nullptr;
  for (const auto& tensor : graph.initializer()) {
    if (tensor.name() == pair.input) value = &tensor;
  }
  ASSERT_NE(value, nullptr) << "no default for " << pair.input;
  EXPECT_THAT(value->dims(), ::testing::ElementsAreArray(dims));
}

Json StreamObject(const onnx::ModelProto& model) {
  for (const auto& prop : model.metadata_props()) {
    if (prop.key() == "rnnstate") return Json::parse(prop.value()).at("stream");
  }
  return Json();
}

PlanOptions InMode(StateInputMode mode) {
  PlanOptions options;
  options.mode = mode;
  return options;
}

PlanOptions Packing(PackKind pack, StateLayout layout, StateInputMode mode) {
  PlanOptions options = InMode(mode);
  options.pack = pack;
  options.layout = layout;
  return options;
}

std::string Bytes(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

std::string Verdict(const onnx::ModelProto& model) {
  try {
    IndexValidModel(model);
    return "";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
}

namespace {

/// Layer `k` (1 or 2): a Loop over `x_tm<k>` [6, 1, F] at its int32 counter, h carried from `zeros`, the
/// condition tf2onnx writes with the float bound `bound`.
std::string Layer(int k, const std::string& bound) {
  const std::string n = std::to_string(k);
  return "  t_n" + n + ", h_n" + n + ", ys" + n + " = Loop (M, cond0, t0, zeros) <body = body" + n + " (int64 i" + n +
         ", bool cond" + n + ", int32 t" + n + ", float[1, 4] h" + n + ") => (bool cond_out" + n + ", int32 t_next" + n +
         ", float[1, 4] h_next" + n + ", float[1, 4] y_t" + n + ") {\n" +
         "    x_t" + n + " = Gather <axis = 0> (x_tm" + n + ", t" + n + ")\n" +
         "    xw" + n + " = MatMul (x_t" + n + ", W" + n + ")\n" +
         "    hu" + n + " = MatMul (h" + n + ", U)\n" +
         "    s" + n + " = Add (xw" + n + ", hu" + n + ")\n" +
         "    h_next" + n + " = Tanh (s" + n + ")\n" +
         "    one" + n + " = Constant <value = int32 {1}> ()\n" +
         "    t_next" + n + " = Add (t" + n + ", one" + n + ")\n" +
         "    bound" + n + " = Constant <value = float {" + bound + "}> ()\n" +
         "    i_f" + n + " = Cast <to = 1> (i" + n + ")\n" +
         "    below_i" + n + " = Less (i_f" + n + ", bound" + n + ")\n" +
         "    t_f" + n + " = Cast <to = 1> (t_next" + n + ")\n" +
         "    below_t" + n + " = Less (t_f" + n + ", bound" + n + ")\n" +
         "    cond_out" + n + " = And (below_i" + n + ", below_t" + n + ")\n" +
         "    y_t" + n + " = Identity (h_next" + n + ")\n" +
         "  }>\n";
}

}  // namespace

std::string Tf2onnxStacked(const std::string& bound2, const std::string& start) {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[1, 6, 3] x) => (float[1, 4] y)
  <int64 M = {6}, float T = {6.0}, float z = {0.0}, int32 t0 = {0}, float[1, 4] zeros = {0, 0, 0, 0},
   int64[3] s1 = {6, 1, 3}, int64[3] s2 = {6, 1, 4}, float[3, 4] W1 = {1,2,3,4,5,6,7,8,9,10,11,12},
   float[4, 4] W2 = {1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1}, float[4, 4] U = {1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1}> {
  c0 = Less (z, T)
  cond0 = And (c0, c0)
  x_tm1 = Reshape (x, s1)
)" + Layer(1, "6.0") +
         R"(  x_tm2 = Reshape (ys1, s2)
)" + Layer(2, bound2) +
         R"(  starts = Constant <value = int64[1] {)" + start + R"(}> ()
  ends = Constant <value = int64[1] {2147483647}> ()
  axes = Constant <value = int64[1] {0}> ()
  last = Slice (ys2, starts, ends, axes)
  y = Squeeze (last, axes)
})";
}

std::string ErrorMessage(const std::function<void()>& action, ExitCode code) {
  try {
    action();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), code) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

void ExpectError(const std::function<void()>& action, ExitCode code, const std::string& text) {
  const std::string message = ErrorMessage(action, code);
  EXPECT_NE(message.find(text), std::string::npos) << "expected an error containing \"" << text << "\": " << message;
}

void MakeSocketFile(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(address.sun_path));
  std::copy(path.begin(), path.end(), address.sun_path);
  const int bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  close(fd);
  ASSERT_EQ(bound, 0) << path;
}

std::string TorchPadAmountsText(const std::vector<int64_t>& amounts, int rank, const std::string& pads,
                                const std::string& prefix) {
  std::string listed;
  for (int64_t amount : amounts) listed += (listed.empty() ? "" : ", ") + std::to_string(amount);
  const std::string zeros = std::to_string(2 * rank - static_cast<int>(amounts.size()));
  const std::string& p = prefix;
  return "    " + p + "n = Constant <value = int64[1] {" + zeros + "}> ()\n" +                                  //
         "    " + p + "amounts = Constant <value = int64[" + std::to_string(amounts.size()) + "] {" + listed +  //
         "}> ()\n" +                                                                                            //
         "    " + p + "zeros = ConstantOfShape (" + p + "n)\n" +                                                //
         "    " + p + "all = Concat <axis = 0> (" + p + "amounts, " + p + "zeros)\n" +                          //
         "    " + p + "shape = Constant <value = int64[2] {-1, 2}> ()\n" +                                      //
         "    " + p + "pairs = Reshape (" + p + "all, " + p + "shape)\n" +                                      //
         "    " + p + "start = Constant <value = int64[1] {-1}> ()\n" +                                         //
         "    " + p + "end = Constant <value = int64[1] {-9223372036854775807}> ()\n" +                         //
         "    " + p + "axis = Constant <value = int64[1] {0}> ()\n" +                                           //
         "    " + p + "step = Constant <value = int64[1] {-1}> ()\n" +                                          //
         "    " + p + "reversed = Slice (" + p + "pairs, " + p + "start, " + p + "end, " + p + "axis, " + p +   //
         "step)\n" +                                                                                            //
         "    " + p + "t = Transpose <perm = [1, 0]> (" + p + "reversed)\n" +                                   //
         "    " + p + "flat = Constant <value = int64[1] {-1}> ()\n" +                                          //
         "    " + pads + " = Reshape (" + p + "t, " + p + "flat)\n";
}

StatePair FloatHPair(const std::string& input, const std::string& init) {
  StatePair pair = PairOf(input, input + "_out", "", "", "h");
  pair.dtype = "float32";
  pair.shape = {MetaDim{1, ""}, MetaDim{-1, "batch"}, MetaDim{3, ""}};
  pair.batch_axis = 1;
  pair.init = init;
  return pair;
}

}  // namespace rnnstate::testing
