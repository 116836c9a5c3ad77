#include "contract/export_triton_unbatched.h"

#include <set>
#include <sstream>

#include "contract/triton_text.h"
#include "rnnstate/error.h"

namespace rnnstate {

namespace {

/// The name of the batch the states share ("" when it is fixed or they have none).
std::string BatchSymbol(const std::vector<StateTensor>& tensors) {
  for (const StateTensor& tensor : tensors) {
    if (tensor.batch_axis >= 0 && static_cast<size_t>(tensor.batch_axis) < tensor.shape.size()) {
      const MetaDim& batch = tensor.shape[static_cast<size_t>(tensor.batch_axis)];
      if (batch.value < 0) return batch.symbol;
    }
  }
  return "";
}

/// A state's whole dims, its symbolic batch 1 (one sequence per request). Throws for another size that
/// is not fixed: Triton's initial_state needs fixed dims.
std::vector<int64_t> WholeStateDims(const StateTensor& tensor) {
  std::vector<int64_t> dims;
  for (size_t axis = 0; axis < tensor.shape.size(); ++axis) {
    const MetaDim& dim = tensor.shape[axis];
    if (dim.value >= 0) {
      dims.push_back(dim.value);
    } else if (static_cast<int64_t>(axis) == tensor.batch_axis) {
      dims.push_back(1);
    } else {
      throw Error(ExitCode::kUnsupported, "state '" + tensor.input + "' " + MetaShapeText(tensor.shape) +
                                              ": its size on axis " + std::to_string(axis) +
                                              " is not fixed, and Triton's initial_state needs fixed dims");
    }
  }
  return dims;
}

/// A data tensor's whole dims: fixed sizes as they are, `batch` as `batch_dim`, other names -1. Empty
/// for a scalar. `why` gets the reason Triton cannot take it (no tensor type it names, no shape).
std::vector<int64_t> WholeDims(const onnx::ValueInfoProto& value, const std::string& batch, int64_t batch_dim,
                               std::string* why) {
  const auto& type = value.type().tensor_type();
  if (!value.type().has_tensor_type() || TritonTypeOf(type.elem_type()).empty()) {
    *why = ValueLabel(value) + " is not a tensor of an element type Triton names";
    return {};
  }
  if (!type.has_shape()) {
    *why = ValueLabel(value) + " has no declared shape, and Triton needs its dims";
    return {};
  }
  std::vector<int64_t> dims;
  for (const auto& dim : type.shape().dim()) {
    if (dim.has_dim_value()) {
      dims.push_back(dim.dim_value());
    } else {
      dims.push_back(!batch.empty() && dim.dim_param() == batch ? batch_dim : -1);
    }
  }
  return dims;
}

}  // namespace

std::string TritonUnbatchedConfig(const onnx::ModelProto& model, const std::string& name,
                                  const std::vector<StateTensor>& tensors, std::vector<std::string>* warnings) {
  std::vector<std::vector<int64_t>> state_dims;
  for (const StateTensor& tensor : tensors) {
    RequireCarriable(tensor);
    state_dims.push_back(WholeStateDims(tensor));
  }
  RequireZeroDefaults(tensors);
  RequireSortedPairing(tensors);
  std::vector<std::string> notes = NotStreamableWarnings(tensors, "Triton");
  const std::string batch = BatchSymbol(tensors);
  std::set<std::string> state_inputs, state_outputs, initializers;
  for (const StateTensor& tensor : tensors) {
    state_inputs.insert(tensor.input);
    state_outputs.insert(tensor.output);
  }
  for (const auto& initializer : model.graph().initializer()) initializers.insert(initializer.name());
  std::vector<std::pair<const onnx::ValueInfoProto*, std::vector<int64_t>>> listed_inputs, listed_outputs;
  for (const auto& input : model.graph().input()) {
    if (state_inputs.count(input.name()) || initializers.count(input.name())) continue;
    std::string problem;
    std::vector<int64_t> dims = WholeDims(input, batch, 1, &problem);
    if (!problem.empty()) throw Error(ExitCode::kUnsupported, "data input " + problem);
    listed_inputs.emplace_back(&input, std::move(dims));
  }
  for (const auto& output : model.graph().output()) {
    if (state_outputs.count(output.name())) continue;
    std::string problem;
    std::vector<int64_t> dims = WholeDims(output, batch, -1, &problem);
    if (!problem.empty()) {
      notes.push_back("output " + problem + ": left out of config.pbtxt, so Triton does not return it");
      continue;
    }
    listed_outputs.emplace_back(&output, std::move(dims));
  }
  if (warnings) *warnings = notes;
  std::ostringstream out;
  out << "# Triton model-repository entry '" << name << "' (rnnstate export triton): " << name
      << "/config.pbtxt beside " << name << "/1/model.onnx.\n"
      << "# Triton does not batch this model (max_batch_size 0): every dims is the tensor's whole shape, and\n"
      << "# each request carries one sequence (a symbolic batch is written 1).\n"
      << "# The states are Triton's implicit state, each new sequence starting from zeros (the model's own\n"
      << "# default); clients send only the inputs below.\n"
      << "name: \"" << name << "\"\n"
      << "backend: \"onnxruntime\"\n"
      << "max_batch_size: 0\n"
      << "input [\n";
  for (size_t i = 0; i < listed_inputs.size(); ++i) {
    WriteTritonTensor(out, *listed_inputs[i].first, listed_inputs[i].second, i + 1 == listed_inputs.size());
  }
  out << "]\n";
  if (!listed_outputs.empty()) {
    out << "output [\n";
    for (size_t i = 0; i < listed_outputs.size(); ++i) {
      WriteTritonTensor(out, *listed_outputs[i].first, listed_outputs[i].second, i + 1 == listed_outputs.size());
    }
    out << "]\n";
  }
  out << TritonSequenceBatching(tensors, state_dims);
  return out.str();
}

}  // namespace rnnstate
