#pragma once
/// \file
/// `rnnstate export openvino MODEL`: a model's state pairs in the form OpenVINO's MakeStateful
/// transformation takes them (parameter name -> result name): as the `--transform` argument of OpenVINO's
/// converters, or as JSON (`{"param_res_names": {...}, "states": [...]}`, for `MakeStateful(dict)`).

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "rnnstate/json.h"

namespace rnnstate {

/// What `export openvino` prints.
struct OpenVinoPairs {
  std::string text;                   ///< MakeStateful[param_res_names={'in':'out',...}]
  Json json;                          ///< {"param_res_names": {...}, "states": [{parameter, result, ...}]}
  std::vector<std::string> warnings;  ///< states OpenVINO will not start from their own default
};

/// The pairs of `model`. Throws Error(kUnsupported) for a sequence-packed model (MakeStateful takes
/// tensors) or a name the transformation's syntax cannot carry.
OpenVinoPairs OpenVinoStatePairs(const onnx::ModelProto& model);

}  // namespace rnnstate
