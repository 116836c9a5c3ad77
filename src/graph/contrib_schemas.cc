#include "graph/contrib_schemas.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <mutex>

namespace ONNX_NAMESPACE {
// onnx's shape inference of RNN, GRU and LSTM (onnx/defs/rnn/defs.cc), exported by libonnx but not declared
// in a header: [seq, D, batch, H] for Y, [D, batch, H] for Y_h and Y_c, read from X, `direction` and
// `hidden_size`.
void RNNShapeInference(InferenceContext& ctx);
}  // namespace ONNX_NAMESPACE

namespace rnnstate {

namespace {

constexpr const char* kMicrosoftDomain = "com.microsoft";

/// ONNX Runtime's DynamicQuantizeLSTM (onnxruntime/core/graph/contrib_ops/quantization_defs.cc): an LSTM
/// whose W [D, input, 4H] and R [D, H, 4H] are 8-bit, with their scales and zero points (per direction, or
/// per direction and column) as inputs 8 to 11.
onnx::OpSchema DynamicQuantizeLstmSchema() {
  using onnx::AttributeProto;
  using onnx::OpSchema;
  OpSchema schema;
  schema.SetName("DynamicQuantizeLSTM").SetDomain(kMicrosoftDomain).SinceVersion(1);
  schema.Attr("direction", "forward, reverse or bidirectional", AttributeProto::STRING, std::string("forward"))
      .Attr("hidden_size", "number of neurons in the hidden layer", AttributeProto::INT, false)
      .Attr("activation_alpha", "activation parameters", AttributeProto::FLOATS, false)
      .Attr("activation_beta", "activation parameters", AttributeProto::FLOATS, false)
      .Attr("activations", "the three activation functions", AttributeProto::STRINGS, false)
      .Attr("clip", "cell clip threshold", AttributeProto::FLOAT, false)
      .Attr("input_forget", "couple the input and forget gates", AttributeProto::INT, static_cast<int64_t>(0));
  schema.Input(0, "X", "[seq_length, batch_size, input_size]", "T")
      .Input(1, "W", "[num_directions, input_size, 4*hidden_size], quantized", "T2")
      .Input(2, "R", "[num_directions, hidden_size, 4*hidden_size], quantized", "T2")
      .Input(3, "B", "[num_directions, 8*hidden_size]", "T", OpSchema::Optional)
      .Input(4, "sequence_lens", "[batch_size]", "T1", OpSchema::Optional)
      .Input(5, "initial_h", "[num_directions, batch_size, hidden_size]", "T", OpSchema::Optional)
      .Input(6, "initial_c", "[num_directions, batch_size, hidden_size]", "T", OpSchema::Optional)
      .Input(7, "P", "[num_directions, 3*hidden_size]", "T", OpSchema::Optional)
      .Input(8, "W_scale", "W's scale", "T")
      .Input(9, "W_zero_point", "W's zero point", "T2")
      .Input(10, "R_scale", "R's scale", "T")
      .Input(11, "R_zero_point", "R's zero point", "T2");
  schema.Output(0, "Y", "[seq_length, num_directions, batch_size, hidden_size]", "T", OpSchema::Optional)
      .Output(1, "Y_h", "[num_directions, batch_size, hidden_size]", "T", OpSchema::Optional)
      .Output(2, "Y_c", "[num_directions, batch_size, hidden_size]", "T", OpSchema::Optional);
  schema.TypeConstraint("T", {"tensor(float)"}, "float tensors")
      .TypeConstraint("T1", {"tensor(int32)"}, "sequence lengths")
      .TypeConstraint("T2", {"tensor(uint8)", "tensor(int8)"}, "8-bit weights");
  schema.TypeAndShapeInferenceFunction(onnx::RNNShapeInference);
  return schema;
}

}  // namespace

void RegisterContribSchemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    // A domain must be known to the registry before a schema of it is registered; ONNX Runtime's
    // com.microsoft operator set is version 1.
    auto& domains = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
    if (domains.Map().count(kMicrosoftDomain) == 0) domains.AddDomainToVersion(kMicrosoftDomain, 1, 1);
    onnx::RegisterSchema(DynamicQuantizeLstmSchema());
  });
}

}  // namespace rnnstate
