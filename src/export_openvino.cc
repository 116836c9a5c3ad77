#include "export_openvino.h"

#include "rnnstate/error.h"
#include "state_tensors.h"

namespace rnnstate {

OpenVinoPairs OpenVinoStatePairs(const onnx::ModelProto& model) {
  OpenVinoPairs pairs;
  Json names = Json::object(), states = Json::array();
  std::string text;
  for (const StateTensor& tensor : StateTensorsOf(model)) {
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
    names[tensor.input] = tensor.output;
    Json shape = Json::array();
    for (const MetaDim& dim : tensor.shape) shape.push_back(dim.value >= 0 ? Json(dim.value) : Json(dim.symbol));
    states.push_back({{"parameter", tensor.input},
                      {"result", tensor.output},
                      {"dtype", tensor.dtype},
                      {"shape", std::move(shape)},
                      {"batch_axis", tensor.batch_axis},
                      {"init", tensor.empty_init.empty() ? kInitZeros : kInitEmpty}});
    text += (text.empty() ? "" : ",") + ("'" + tensor.input + "':'" + tensor.output + "'");
    for (const std::string& state : tensor.empty_init) {
      pairs.warnings.push_back("state '" + state + "' starts from the model's own default, but OpenVINO starts a " +
                               "variable from zeros (ReadValue without an initial value): set the state before the " +
                               "first inference (its value: the model run once with this state fed empty)");
    }
  }
  pairs.text = "MakeStateful[param_res_names={" + text + "}]\n";
  pairs.json = {{"param_res_names", std::move(names)}, {"states", std::move(states)}};
  return pairs;
}

}  // namespace rnnstate
