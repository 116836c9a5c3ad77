// The pieces of Triton's config.pbtxt both export configurations write (contract/triton_text.h): Triton's
// type names, dims, a tensor entry (a scalar as dims [1] reshaped to []), the sequence_batching section
// with zeros as each state's start, and the refusals of states Triton cannot carry (exit 4).

#include "contract/triton_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::triton_text_test {
namespace {

using namespace test_names;

/// A float32 state `input` -> `output`.
StateTensor State(const std::string& input, const std::string& output) {
  StateTensor tensor;
  tensor.input = input;
  tensor.output = output;
  tensor.dtype = "float32";
  tensor.shape = {MetaDim{1, ""}, MetaDim{-1, "batch"}, MetaDim{3, ""}};
  return tensor;
}

TEST(TritonType, NamesEveryTypeTritonHas) {
  EXPECT_EQ(TritonType("float32"), "TYPE_FP32");
  EXPECT_EQ(TritonType("float64"), "TYPE_FP64");
  EXPECT_EQ(TritonType("float16"), "TYPE_FP16");
  EXPECT_EQ(TritonType("bfloat16"), "TYPE_BF16");
  EXPECT_EQ(TritonType("int8"), "TYPE_INT8");
  EXPECT_EQ(TritonType("uint64"), "TYPE_UINT64");
  EXPECT_EQ(TritonType("bool"), "TYPE_BOOL");
  EXPECT_EQ(TritonType("complex64"), "");
  EXPECT_EQ(TritonType("string"), "");
  EXPECT_EQ(TritonType(""), "");
  EXPECT_EQ(TritonTypeOf(onnx::TensorProto::FLOAT), "TYPE_FP32");
  EXPECT_EQ(TritonTypeOf(onnx::TensorProto::INT64), "TYPE_INT64");
  EXPECT_EQ(TritonTypeOf(onnx::TensorProto::STRING), "TYPE_STRING");
  EXPECT_EQ(TritonTypeOf(onnx::TensorProto::COMPLEX128), "");
}

TEST(TritonDimsText, ListsTheDims) {
  EXPECT_EQ(TritonDimsText({1, -1, 3}), "[ 1, -1, 3 ]");
  EXPECT_EQ(TritonDimsText({}), "[  ]");
}

TEST(ValueLabel, QuotesTheNameAndTheDeclaredShape) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float s) => (float y) {
  y = ReduceSum (x)
})");
  EXPECT_EQ(ValueLabel(model.graph().input(0)), "'x' [seq,batch,3]");
  EXPECT_EQ(ValueLabel(model.graph().input(1)), "'s' []");
  onnx::ValueInfoProto unshaped = model.graph().input(0);
  unshaped.mutable_type()->mutable_tensor_type()->clear_shape();
  EXPECT_EQ(ValueLabel(unshaped), "'x'");
}

TEST(WriteTritonTensor, WritesAScalarAsOneReshapedToNoDims) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 3] x, int64 n) => (float[batch, 3] y) {
  y = Identity (x)
})");
  std::ostringstream out;
  WriteTritonTensor(out, model.graph().input(0), {3}, false);
  WriteTritonTensor(out, model.graph().input(1), {}, true);
  EXPECT_EQ(out.str(),
            "  {\n    name: \"x\"\n    data_type: TYPE_FP32\n    dims: [ 3 ]\n  },\n"
            "  {\n    name: \"n\"\n    data_type: TYPE_INT64\n    dims: [ 1 ]\n    reshape: { shape: [ ] }\n  }\n");
}

TEST(TritonSequenceBatching, StartsEveryStateFromZerosOfItsDims) {
  StateTensor c = State("c_in", "c_out");
  c.dtype = "float16";
  EXPECT_EQ(TritonSequenceBatching({State("h_in", "h_out"), c}, {{1, 3}, {2}}),
            "sequence_batching {\n  state [\n"
            "    {\n      input_name: \"h_in\"\n      output_name: \"h_out\"\n      data_type: TYPE_FP32\n"
            "      dims: [ 1, 3 ]\n      initial_state: {\n        data_type: TYPE_FP32\n        dims: [ 1, 3 ]\n"
            "        zero_data: true\n        name: \"h_in zeros\"\n      }\n    },\n"
            "    {\n      input_name: \"c_in\"\n      output_name: \"c_out\"\n      data_type: TYPE_FP16\n"
            "      dims: [ 2 ]\n      initial_state: {\n        data_type: TYPE_FP16\n        dims: [ 2 ]\n"
            "        zero_data: true\n        name: \"c_in zeros\"\n      }\n    }\n"
            "  ]\n}\n");
}

TEST(RequireCarriable, RefusesASequenceATypeTritonLacksAndAnInputWithADefault) {
  EXPECT_NO_THROW(RequireCarriable(State("h_in", "h_out")));
  StateTensor sequence = State("s_in", "s_out");
  sequence.sequence = true;
  ExpectError([&] { RequireCarriable(sequence); }, ExitCode::kUnsupported, "state 's_in' is a Sequence");
  StateTensor complex = State("z_in", "z_out");
  complex.dtype = "complex64";
  ExpectError([&] { RequireCarriable(complex); }, ExitCode::kUnsupported,
              "state 'z_in' [1,batch,3]: element type complex64");
  StateTensor optional = State("h_in", "h_out");
  optional.optional = true;
  ExpectError([&] { RequireCarriable(optional); }, ExitCode::kUnsupported,
              "state input 'h_in' has a default (an initializer of its name)");
}

TEST(RequireZeroDefaults, NamesEveryStateThatStartsFromTheModelsOwnDefault) {
  StateTensor learned = State("packed_in", "packed_out");
  EXPECT_NO_THROW(RequireZeroDefaults({learned}));
  learned.empty_init = {"h0", "c0"};
  StateTensor other = State("g_in", "g_out");
  other.empty_init = {"g0"};
  ExpectError(
      [&] {
        RequireZeroDefaults({learned, State("x_in", "x_out"), other});
      },
      ExitCode::kUnsupported, "state 'h0', 'c0', 'g0' starts from the model's own default");
}

TEST(RequireSortedPairing, RefusesNamesWhoseSortedOrdersDoNotPair) {
  EXPECT_NO_THROW(RequireSortedPairing({State("b_in", "b_out"), State("a_in", "a_out")}));
  EXPECT_NO_THROW(RequireSortedPairing({}));
  ExpectError(
      [] {
        RequireSortedPairing({State("a_in", "z_out"), State("b_in", "y_out")});
      },
      ExitCode::kUnsupported, "input 'a_in' would get the state of 'y_out' instead of 'z_out'");
}

}  // namespace
}  // namespace rnnstate::triton_text_test
