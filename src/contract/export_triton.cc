#include "contract/export_triton.h"

#include <algorithm>
#include <cctype>
#include <set>
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

/// Triton's DataType name of an ONNX element type ("" when Triton has none).
std::string TritonTypeOf(int32_t elem_type) {
  return elem_type == onnx::TensorProto::STRING ? "TYPE_STRING" : TritonType(ElementTypeName(elem_type));
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
    const MetaDim& batch = tensor.shape.at(static_cast<size_t>(tensor.batch_axis));
    // --pack tensor sizes an empty packed value's zeros by a data input's dimension: one the model leaves
    // unnamed cannot be sized, and that rewrite refuses (pack_plan), so it is no advice then.
    const std::string advice =
        batch.value < 0 && batch.symbol.empty()
            ? "; --pack tensor cannot help either: the model leaves that batch unnamed, so an empty packed value "
              "cannot be sized. Serve it without Triton's implicit state: feed '" +
                  tensor.input + "' and read '" + tensor.output +
                  "' in your client, or name that dimension "
                  "after the data's batch in the model and rewrite it with --pack tensor"
            : " (rewrite the original model with --pack tensor)";
    throw Error(ExitCode::kUnsupported, label + " is the model's own tensor of stacked states, with its batch on " +
                                            "axis " + std::to_string(tensor.batch_axis) +
                                            ": Triton batches on axis 0, and --state-layout batch-first leaves a " +
                                            "model's own tensors as they are" + advice);
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

/// The `sequence_batching` section: one implicit state per state tensor, starting from zeros.
std::string SequenceBatching(const std::vector<StateTensor>& tensors, const std::vector<std::vector<int64_t>>& rows) {
  std::ostringstream out;
  out << "sequence_batching {\n  state [\n";
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

/// The state tensors of `model` with their rows, checked as TritonStateConfig documents.
std::vector<StateTensor> CarriedStates(const onnx::ModelProto& model, std::vector<std::vector<int64_t>>* rows,
                                       std::vector<std::string>* warnings) {
  std::vector<StateTensor> tensors = StateTensorsOf(model);
  for (const StateTensor& tensor : tensors) rows->push_back(RowDims(tensor));
  RequireZeroDefaults(tensors);
  RequireSortedPairing(tensors);
  if (warnings) *warnings = NotStreamableWarnings(tensors, "Triton");
  return tensors;
}

/// "x [seq,batch,3]" for messages.
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

/// A data input's or output's dims after the batch, or why Triton cannot batch it (`why` non-empty).
std::vector<int64_t> BatchedDims(const onnx::ValueInfoProto& value, const std::string& batch, std::string* why) {
  const auto& type = value.type().tensor_type();
  if (!value.type().has_tensor_type() || TritonTypeOf(type.elem_type()).empty()) {
    *why = ValueLabel(value) + " is not a tensor of an element type Triton names";
    return {};
  }
  if (!type.has_shape()) {
    *why = ValueLabel(value) + " has no declared shape, and Triton needs its dims";
    return {};
  }
  const auto& dims = type.shape().dim();
  if (dims.empty() || dims[0].dim_param() != batch) {
    int64_t axis = -1;
    for (int i = 0; i < dims.size(); ++i) {
      if (dims[i].dim_param() == batch) axis = i;
    }
    *why = ValueLabel(value) +
           (axis < 0 ? " has no batch dimension ('" + batch + "')" : " has its batch on axis " + std::to_string(axis)) +
           ": Triton batches every input and output on axis 0";
    return {};
  }
  std::vector<int64_t> row;
  for (int i = 1; i < dims.size(); ++i) row.push_back(dims[i].has_dim_value() ? dims[i].dim_value() : -1);
  return row;
}

void WriteTensor(std::ostringstream& out, const onnx::ValueInfoProto& value, const std::vector<int64_t>& dims,
                 bool last) {
  out << "  {\n"
      << "    name: \"" << value.name() << "\"\n"
      << "    data_type: " << TritonTypeOf(value.type().tensor_type().elem_type()) << "\n";
  // A tensor that is only its batch ([batch]) is one element per sequence: Triton's dims cannot be empty.
  if (dims.empty()) {
    out << "    dims: [ 1 ]\n    reshape: { shape: [ ] }\n";
  } else {
    out << "    dims: " << DimsText(dims) << "\n";
  }
  out << "  }" << (last ? "" : ",") << "\n";
}

}  // namespace

std::string TritonStateConfig(const onnx::ModelProto& model, const std::string& file,
                              std::vector<std::string>* warnings) {
  std::vector<std::vector<int64_t>> rows;
  const std::vector<StateTensor> tensors = CarriedStates(model, &rows, warnings);
  return "# Implicit state of " + file + " (rnnstate export triton), for its config.pbtxt.\n" +
         "# States are batch-first: dims are one sequence's row; a new sequence starts from zeros, which is\n" +
         "# the model's own default. The model's other inputs and outputs need their batch on axis 0 too.\n" +
         SequenceBatching(tensors, rows);
}

std::string TritonModelConfig(const onnx::ModelProto& model, const std::string& name, int64_t max_batch_size,
                              std::vector<std::string>* warnings) {
  std::vector<std::vector<int64_t>> rows;
  std::vector<std::string> notes;
  const std::vector<StateTensor> tensors = CarriedStates(model, &rows, &notes);
  const MetaDim& batch = tensors.front().shape.front();
  if (batch.value >= 0) {
    throw Error(ExitCode::kUnsupported, "the batch of state '" + tensors.front().input + "' is fixed at " +
                                            std::to_string(batch.value) + ": Triton's batcher needs a symbolic batch " +
                                            "(export the model with a dynamic batch axis)");
  }
  std::set<std::string> state_inputs, state_outputs, initializers;
  for (const StateTensor& tensor : tensors) {
    state_inputs.insert(tensor.input);
    state_outputs.insert(tensor.output);
  }
  for (const auto& initializer : model.graph().initializer()) initializers.insert(initializer.name());
  std::vector<const onnx::ValueInfoProto*> inputs, outputs;
  std::vector<std::vector<int64_t>> input_dims, output_dims;
  for (const auto& input : model.graph().input()) {
    if (state_inputs.count(input.name()) || initializers.count(input.name())) continue;
    std::string why;
    input_dims.push_back(BatchedDims(input, batch.symbol, &why));
    if (!why.empty()) {
      const bool elsewhere = why.find("has its batch on axis") != std::string::npos;
      throw Error(ExitCode::kUnsupported,
                  "data input " + why +
                      (elsewhere ? " (rnnstate moves only the states: export the model with its batch first, e.g. "
                                   "PyTorch's batch_first=True, then rewrite it with --pack tensor "
                                   "--state-inputs required)"
                                 : " (each row of a Triton batch is one sequence's request: the model must take "
                                   "this input per batch row, with the batch first)"));
    }
    inputs.push_back(&input);
  }
  for (const auto& output : model.graph().output()) {
    if (state_outputs.count(output.name())) continue;
    std::string why;
    std::vector<int64_t> dims = BatchedDims(output, batch.symbol, &why);
    if (!why.empty()) {
      notes.push_back("output " + why + ": left out of config.pbtxt, so Triton does not return it");
      continue;
    }
    outputs.push_back(&output);
    output_dims.push_back(std::move(dims));
  }
  if (warnings) *warnings = notes;
  std::ostringstream out;
  out << "# Triton model-repository entry '" << name << "' (rnnstate export triton): " << name
      << "/config.pbtxt beside " << name << "/1/model.onnx.\n"
      << "# The states are Triton's implicit state: batch-first, dims one sequence's row, each new sequence\n"
      << "# starting from zeros (the model's own default); clients send only the inputs below.\n"
      << "name: \"" << name << "\"\n"
      << "backend: \"onnxruntime\"\n"
      << "max_batch_size: " << max_batch_size << "\n"
      << "input [\n";
  for (size_t i = 0; i < inputs.size(); ++i) WriteTensor(out, *inputs[i], input_dims[i], i + 1 == inputs.size());
  out << "]\n";
  if (!outputs.empty()) {
    out << "output [\n";
    for (size_t i = 0; i < outputs.size(); ++i) WriteTensor(out, *outputs[i], output_dims[i], i + 1 == outputs.size());
    out << "]\n";
  }
  out << SequenceBatching(tensors, rows);
  return out.str();
}

}  // namespace rnnstate
