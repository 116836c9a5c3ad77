#include "contract/applied_transforms.h"

#include <optional>

#include "rnnstate/json.h"
#include "rnnstate/metadata.h"
#include "rnnstate/packed_metadata.h"

namespace rnnstate {

AppliedTransforms TransformsOf(const onnx::ModelProto& model) {
  AppliedTransforms applied;
  std::optional<Json> document;  // parsed once for both questions
  for (const StatePair& pair : ReadStatePairs(model, nullptr, &document, /*bounded=*/true)) {
    applied.batch_first |= !pair.layout.empty();
  }
  applied.packed = HasPackedStates(document);
  return applied;
}

}  // namespace rnnstate
