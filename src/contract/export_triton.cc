#include "contract/export_triton.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "contract/export_triton_unbatched.h"
#include "contract/state_tensors.h"
#include "contract/triton_text.h"
#include "rnnstate/error.h"

namespace rnnstate {

namespace {

/// One sequence's row of a batch-first state: its dims after the batch. Throws when Triton cannot
/// hold the state.
std::vector<int64_t> RowDims(const StateTensor& tensor) {
  const std::string label = "state '" + tensor.input + "' " + MetaShapeText(tensor.shape);
  RequireCarriable(tensor);
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
  return dims;
}

/// The rows of `tensors`, checked as TritonStateConfig documents.
std::vector<std::vector<int64_t>> CarriedRows(const std::vector<StateTensor>& tensors,
                                              std::vector<std::string>* warnings) {
  std::vector<std::vector<int64_t>> rows;
  for (const StateTensor& tensor : tensors) rows.push_back(RowDims(tensor));
  RequireZeroDefaults(tensors);
  RequireSortedPairing(tensors);
  if (warnings) *warnings = NotStreamableWarnings(tensors, "Triton");
  return rows;
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

/// Why Triton cannot batch the data of `model`, whose states are `tensors` ("" when it can): the states'
/// batch is fixed, or a data input has its batch elsewhere than on axis 0 (time-major) or has none. No
/// rewrite of rnnstate's changes these; a state's own layout (which one does) is judged by RowDims.
std::string WhyTritonCannotBatch(const onnx::ModelProto& model, const std::vector<StateTensor>& tensors) {
  const auto batched = std::find_if(tensors.begin(), tensors.end(), [](const StateTensor& tensor) {
    return tensor.batch_axis >= 0 && static_cast<size_t>(tensor.batch_axis) < tensor.shape.size();
  });
  if (batched == tensors.end()) return "";
  const MetaDim& batch = batched->shape[static_cast<size_t>(batched->batch_axis)];
  if (batch.value >= 0) {
    return "the batch of state '" + batched->input + "' is fixed at " + std::to_string(batch.value) +
           ": Triton's batcher needs a symbolic batch";
  }
  std::set<std::string> skipped;
  for (const StateTensor& tensor : tensors) skipped.insert(tensor.input);
  for (const auto& initializer : model.graph().initializer()) skipped.insert(initializer.name());
  for (const auto& input : model.graph().input()) {
    const auto& type = input.type().tensor_type();
    // What Triton cannot take at all (no shape, no type it names) is refused by either configuration.
    if (skipped.count(input.name()) || !input.type().has_tensor_type() || !type.has_shape() ||
        TritonTypeOf(type.elem_type()).empty()) {
      continue;
    }
    std::string why;
    BatchedDims(input, batch.symbol, &why);
    if (!why.empty()) return "data input " + why;
  }
  return "";
}

/// The warning of a model exported unbatched because of `why` (WhyTritonCannotBatch).
std::string UnbatchedNote(const std::string& why) {
  const bool elsewhere = why.find("has its batch on axis") != std::string::npos;
  return why + ": exported with max_batch_size 0, so Triton runs one sequence per request and model instance, " +
         "not batches of them" +
         (elsewhere ? " (for batches, export the model with its batch first, e.g. PyTorch's batch_first=True, then "
                      "rewrite it with --pack tensor --state-inputs required)"
                    : "");
}

}  // namespace

std::string TritonStateConfig(const onnx::ModelProto& model, const std::string& file,
                              std::vector<std::string>* warnings) {
  const std::vector<StateTensor> tensors = StateTensorsOf(model);
  const std::vector<std::vector<int64_t>> rows = CarriedRows(tensors, warnings);
  return "# Implicit state of " + file + " (rnnstate export triton), for its config.pbtxt.\n" +
         "# States are batch-first: dims are one sequence's row; a new sequence starts from zeros, which is\n" +
         "# the model's own default. The model's other inputs and outputs need their batch on axis 0 too.\n" +
         TritonSequenceBatching(tensors, rows);
}

std::string TritonModelConfig(const onnx::ModelProto& model, const std::string& name,
                              std::optional<int64_t> max_batch_size, std::vector<std::string>* warnings) {
  const std::vector<StateTensor> tensors = StateTensorsOf(model);
  if (max_batch_size == 0) return TritonUnbatchedConfig(model, name, tensors, warnings);
  if (const std::string why = WhyTritonCannotBatch(model, tensors); !why.empty()) {
    if (max_batch_size) {
      // The advice must work: what the unbatched configuration refuses too is refused as it says.
      TritonUnbatchedConfig(model, name, tensors, nullptr);
      throw Error(ExitCode::kUnsupported, why + ", and --max-batch-size " + std::to_string(*max_batch_size) +
                                              " asks it to batch: export it with --max-batch-size 0 (Triton's " +
                                              "configuration for a model it does not batch: one sequence per request)");
    }
    std::vector<std::string> notes;
    std::string config = TritonUnbatchedConfig(model, name, tensors, &notes);
    notes.insert(notes.begin(), UnbatchedNote(why));
    if (warnings) *warnings = std::move(notes);
    return config;
  }
  std::vector<std::string> notes;
  const std::vector<std::vector<int64_t>> rows = CarriedRows(tensors, &notes);
  const MetaDim& batch = tensors.front().shape.front();
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
    if (!why.empty()) throw Error(ExitCode::kUnsupported, "data input " + why);
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
      << "max_batch_size: " << max_batch_size.value_or(kDefaultMaxBatchSize) << "\n"
      << "input [\n";
  for (size_t i = 0; i < inputs.size(); ++i) WriteTritonTensor(out, *inputs[i], input_dims[i], i + 1 == inputs.size());
  out << "]\n";
  if (!outputs.empty()) {
    out << "output [\n";
    for (size_t i = 0; i < outputs.size(); ++i) WriteTritonTensor(out, *outputs[i], output_dims[i], i + 1 == outputs.size());
    out << "]\n";
  }
  out << TritonSequenceBatching(tensors, rows);
  return out.str();
}

}  // namespace rnnstate
