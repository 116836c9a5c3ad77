#include "contract/export_openvino.h"

#include "contract/state_tensors.h"
#include "rnnstate/error.h"

namespace rnnstate {

OpenVinoPairs OpenVinoStatePairs(const onnx::ModelProto& model) {
  OpenVinoPairs pairs;
  Json names = Json::object(), states = Json::array();
  std::string text;
  const std::vector<StateTensor> tensors = StateTensorsOf(model);
  pairs.warnings = NotStreamableWarnings(tensors, "OpenVINO");
  for (const StateTensor& tensor : tensors) {
    if (tensor.sequence) {
      throw Error(ExitCode::kUnsupported, "state '" + tensor.input + "' is a Sequence: MakeStateful takes tensor " +
                                              "parameters (rewrite the model with --pack tensor, or without --pack)");
    }
    for (const std::string* name : {&tensor.input, &tensor.output}) {
      if (name->find_first_of("', {}[]:") != std::string::npos) {
        throw Error(ExitCode::kUnsupported, "name '" + *name + "' cannot be written in MakeStateful's syntax " +
                                                "(rewrite with other --input-names / --output-names)");
      }
    }
    // Appended, not looked up: an ordered object's operator[] searches its keys (quadratic in the states),
    // and the inputs are distinct (one tensor per input; duplicate pairs are refused before).
    names.get_ref<Json::object_t&>().emplace_back(tensor.input, tensor.output);
    Json shape = MetaShapeJson(tensor.shape);
    states.push_back({{"parameter", tensor.input},
                      {"result", tensor.output},
                      {"dtype", tensor.dtype},
                      {"shape", std::move(shape)},
                      {"batch_axis", tensor.batch_axis},
                      {"init", tensor.empty_init.empty() ? kInitZeros : kInitEmpty}});
    text += (text.empty() ? "" : ",") + ("'" + tensor.input + "':'" + tensor.output + "'");
    if (!tensor.empty_init.empty()) {
      std::string members;
      for (const std::string& name : tensor.empty_init) members += (members.empty() ? "'" : ", '") + name + "'";
      const bool packed = tensor.empty_init.size() > 1 || tensor.empty_init.front() != tensor.input;
      pairs.warnings.push_back(
          "state '" + tensor.input + "' " +
          (packed ? "holds state " + members + (tensor.empty_init.size() > 1 ? ", which start" : ", which starts")
                  : "starts") +
          " from the model's own default (a learned or computed initial state, what an empty feed gives), but " +
          "OpenVINO starts a variable from zeros (ReadValue without an initial value): before the first " +
          "inference of a sequence, set the variable to that default (for a learned one: the initializer's " +
          "values), or serve the model where the first call can be fed empty");
    }
  }
  pairs.text = "MakeStateful[param_res_names={" + text + "}]\n";
  pairs.json = {{"param_res_names", std::move(names)}, {"states", std::move(states)}};
  return pairs;
}

}  // namespace rnnstate
