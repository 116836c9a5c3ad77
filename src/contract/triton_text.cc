#include "contract/triton_text.h"

#include <algorithm>
#include <cctype>

#include "rnnstate/error.h"

namespace rnnstate {

std::string TritonType(const std::string& dtype) {
  if (dtype == "float32") return "TYPE_FP32";
  if (dtype == "float64") return "TYPE_FP64";
  if (dtype == "float16") return "TYPE_FP16";
  if (dtype == "bfloat16") return "TYPE_BF16";
  for (const char* integer : {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"}) {
    std::string name = integer;
    if (dtype == name) {
      for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return "TYPE_" + name;
    }
  }
  if (dtype == "bool") return "TYPE_BOOL";
  return "";
}

std::string TritonTypeOf(int32_t elem_type) {
  return elem_type == onnx::TensorProto::STRING ? "TYPE_STRING" : TritonType(ElementTypeName(elem_type));
}

std::string TritonDimsText(const std::vector<int64_t>& dims) {
  std::string text = "[ ";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + " ]";
}

std::string ValueLabel(const onnx::ValueInfoProto& value) {
  std::string text = "'" + value.name() + "'";
  if (!value.type().tensor_type().has_shape()) return text;
  text += " [";
  const auto& dims = value.type().tensor_type().shape().dim();
  for (int i = 0; i < dims.size(); ++i) {
    text += (i ? "," : "") + (dims[i].has_dim_value() ? std::to_string(dims[i].dim_value()) : dims[i].dim_param());
  }
  return text + "]";
}

void WriteTritonTensor(std::ostringstream& out, const onnx::ValueInfoProto& value, const std::vector<int64_t>& dims,
                       bool last) {
  out << "  {\n"
      << "    name: \"" << value.name() << "\"\n"
      << "    data_type: " << TritonTypeOf(value.type().tensor_type().elem_type()) << "\n";
  if (dims.empty()) {
    out << "    dims: [ 1 ]\n    reshape: { shape: [ ] }\n";
  } else {
    out << "    dims: " << TritonDimsText(dims) << "\n";
  }
  out << "  }" << (last ? "" : ",") << "\n";
}

std::string TritonSequenceBatching(const std::vector<StateTensor>& tensors,
                                   const std::vector<std::vector<int64_t>>& dims) {
  std::ostringstream out;
  out << "sequence_batching {\n  state [\n";
  for (size_t i = 0; i < tensors.size(); ++i) {
    const StateTensor& tensor = tensors[i];
    const std::string type = TritonType(tensor.dtype), text = TritonDimsText(dims[i]);
    out << "    {\n"
        << "      input_name: \"" << tensor.input << "\"\n"
        << "      output_name: \"" << tensor.output << "\"\n"
        << "      data_type: " << type << "\n"
        << "      dims: " << text << "\n"
        << "      initial_state: {\n"
        << "        data_type: " << type << "\n"
        << "        dims: " << text << "\n"
        << "        zero_data: true\n"
        << "        name: \"" << tensor.input << " zeros\"\n"
        << "      }\n"
        << "    }" << (i + 1 < tensors.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
  return out.str();
}

void RequireCarriable(const StateTensor& tensor) {
  if (tensor.sequence) {
    throw Error(ExitCode::kUnsupported, "state '" + tensor.input + "' is a Sequence: Triton passes tensors only " +
                                            "(rewrite the model with --pack tensor)");
  }
  if (TritonType(tensor.dtype).empty()) {
    throw Error(ExitCode::kUnsupported,
                "state '" + tensor.input + "' " + MetaShapeText(tensor.shape) + ": element type " + tensor.dtype);
  }
  if (tensor.optional) {
    throw Error(ExitCode::kUnsupported, "state input '" + tensor.input + "' has a default (an initializer of its " +
                                            "name), and ONNX Runtime's C API, which Triton's onnxruntime backend " +
                                            "uses, does not list such inputs: rewrite with --state-inputs required");
  }
}

void RequireZeroDefaults(const std::vector<StateTensor>& tensors) {
  std::vector<std::string> not_zero;
  for (const StateTensor& tensor : tensors)
    not_zero.insert(not_zero.end(), tensor.empty_init.begin(), tensor.empty_init.end());
  if (not_zero.empty()) return;
  std::string names;
  for (const std::string& name : not_zero) names += (names.empty() ? "'" : ", '") + name + "'";
  throw Error(ExitCode::kUnsupported,
              "state " + names + " starts from the model's own default (a learned initial state or a computed " +
                  "one: its first feed is empty), which Triton's initial_state cannot give: Triton starts every " +
                  "sequence from one fixed tensor (serve it where the first call can be fed empty, such as " +
                  "ONNX Runtime itself)");
}

void RequireSortedPairing(const std::vector<StateTensor>& tensors) {
  std::vector<std::string> inputs, outputs;
  for (const StateTensor& tensor : tensors) {
    inputs.push_back(tensor.input);
    outputs.push_back(tensor.output);
  }
  std::sort(inputs.begin(), inputs.end());
  std::sort(outputs.begin(), outputs.end());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto tensor =
        std::find_if(tensors.begin(), tensors.end(), [&](const StateTensor& t) { return t.input == inputs[i]; });
    if (tensor->output == outputs[i]) continue;
    throw Error(ExitCode::kUnsupported,
                "Triton pairs state inputs with outputs by sorted name, and here input '" + inputs[i] +
                    "' would get the state of '" + outputs[i] + "' instead of '" + tensor->output +
                    "'; rewrite with --pack tensor (one pair per element type) or names that sort alike "
                    "(--input-names / --output-names, --packed-input / --packed-output)");
  }
}

}  // namespace rnnstate
