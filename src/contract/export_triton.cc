#include "contract/export_triton.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "contract/state_tensors.h"
#include "rnnstate/error.h"

namespace rnnstate {

namespace {

/// Triton's DataType name of an element type.
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

/// One sequence's row of a batch-first state: its dims after the batch. Throws when Triton cannot
/// hold the state.
std::vector<int64_t> RowDims(const StateTensor& tensor) {
  const std::string label = "state '" + tensor.input + "' " + MetaShapeText(tensor.shape);
  if (tensor.sequence) {
    throw Error(ExitCode::kUnsupported, "state '" + tensor.input + "' is a Sequence: Triton passes tensors only " +
                                            "(rewrite the model with --pack tensor)");
  }
  if (tensor.batch_axis < 0) {
    throw Error(ExitCode::kUnsupported,
                label + " has no batch axis: Triton keeps one row of each state per " + "sequence, on axis 0");
  }
  if (tensor.batch_axis != 0 && tensor.stacked) {
    throw Error(ExitCode::kUnsupported, label + " is the model's own tensor of stacked states, with its batch on " +
                                            "axis " + std::to_string(tensor.batch_axis) +
                                            ": Triton batches on axis 0, and --state-layout batch-first leaves a " +
                                            "model's own tensors as they are (rewrite the original model with " +
                                            "--pack tensor)");
  }
  if (tensor.batch_axis != 0) {
    throw Error(ExitCode::kUnsupported, label + " has its batch on axis " + std::to_string(tensor.batch_axis) +
                                            ": Triton batches on axis 0 (rewrite the model with --pack tensor or " +
                                            "--state-layout batch-first)");
  }
  std::vector<int64_t> dims;
  for (size_t axis = 1; axis < tensor.shape.size(); ++axis) {
    if (tensor.shape[axis].value < 0) {
      throw Error(ExitCode::kUnsupported, label + ": its size on axis " + std::to_string(axis) +
                                              " is not fixed, and Triton's initial_state needs fixed dims");
    }
    dims.push_back(tensor.shape[axis].value);
  }
  if (TritonType(tensor.dtype).empty()) throw Error(ExitCode::kUnsupported, label + ": element type " + tensor.dtype);
  if (tensor.optional) {
    throw Error(ExitCode::kUnsupported, "state input '" + tensor.input + "' has a default (an initializer of its " +
                                            "name), and ONNX Runtime's C API, which Triton's onnxruntime backend " +
                                            "uses, does not list such inputs: rewrite with --state-inputs required");
  }
  return dims;
}

/// Refuses states that do not start from zeros: Triton gives every new sequence one fixed tensor.
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

/// Refuses names whose sorted order pairs an input with another state's output (Triton pairs them so).
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

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[ ";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + " ]";
}

}  // namespace

std::string TritonStateConfig(const onnx::ModelProto& model, const std::string& file,
                              std::vector<std::string>* warnings) {
  const std::vector<StateTensor> tensors = StateTensorsOf(model);
  std::vector<std::vector<int64_t>> rows;
  for (const StateTensor& tensor : tensors) rows.push_back(RowDims(tensor));
  RequireZeroDefaults(tensors);
  RequireSortedPairing(tensors);
  if (warnings) *warnings = NotStreamableWarnings(tensors, "Triton");
  std::ostringstream out;
  out << "# Implicit state of " << file << " (rnnstate export triton), for its config.pbtxt.\n"
      << "# States are batch-first: dims are one sequence's row; a new sequence starts from zeros, which is\n"
      << "# the model's own default. The model's other inputs and outputs need their batch on axis 0 too.\n"
      << "sequence_batching {\n  state [\n";
  for (size_t i = 0; i < tensors.size(); ++i) {
    const StateTensor& tensor = tensors[i];
    const std::string type = TritonType(tensor.dtype), dims = DimsText(rows[i]);
    out << "    {\n"
        << "      input_name: \"" << tensor.input << "\"\n"
        << "      output_name: \"" << tensor.output << "\"\n"
        << "      data_type: " << type << "\n"
        << "      dims: " << dims << "\n"
        << "      initial_state: {\n"
        << "        data_type: " << type << "\n"
        << "        dims: " << dims << "\n"
        << "        zero_data: true\n"
        << "        name: \"" << tensor.input << " zeros\"\n"
        << "      }\n"
        << "    }" << (i + 1 < tensors.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
  return out.str();
}

}  // namespace rnnstate
