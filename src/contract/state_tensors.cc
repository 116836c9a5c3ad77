#include "contract/state_tensors.h"

#include <map>

#include "rnnstate/error.h"

namespace rnnstate {

std::vector<StateTensor> StateTensorsOf(const onnx::ModelProto& model) {
  std::string error;
  std::optional<Json> document;  // parsed once: the pairs, then the packed description
  const std::vector<StatePair> pairs = ReadStatePairs(model, &error, &document, /*bounded=*/true);
  if (!error.empty()) throw Error(ExitCode::kBadInput, error);
  const std::optional<PackedStates> packed =
      document ? ReadPackedStates(*document, pairs.size(), &error) : std::nullopt;
  if (!error.empty()) throw Error(ExitCode::kBadInput, error);
  if (pairs.empty()) throw Error(ExitCode::kUnsupported, "no state pairs recorded (run rnnstate rewrite first)");
  for (const StatePair& pair : pairs) {
    if (pair.dtype.empty() || pair.init.empty()) {
      throw Error(ExitCode::kBadInput, "state pair '" + pair.input + "' lacks dtype/shape/init (metadata of an " +
                                           "older rnnstate: rewrite the model again)");
    }
  }
  std::vector<StateTensor> tensors;
  std::vector<bool> packed_pair(pairs.size(), false);
  if (packed) {
    for (const PackedValue& value : packed->values) {
      StateTensor tensor{value.input,
                         value.output,
                         value.dtype,
                         value.shape,
                         value.batch_axis,
                         packed->kind == kPackedSequence,
                         {},
                         value.streamable,
                         value.optional,
                         {},
                         false};
      for (const PackedMember& member : value.members) {
        for (int64_t state : member.states) {
          packed_pair[static_cast<size_t>(state)] = true;
          const bool named = !tensor.not_streamable.empty() && tensor.not_streamable.back() == member.input;
          if (!pairs[static_cast<size_t>(state)].streamable && !named) tensor.not_streamable.push_back(member.input);
          const bool listed = !tensor.empty_init.empty() && tensor.empty_init.back() == member.input;
          if (pairs[static_cast<size_t>(state)].init != kInitZeros && !listed)
            tensor.empty_init.push_back(member.input);
        }
      }
      tensors.push_back(std::move(tensor));
    }
  }
  std::map<std::string, size_t> by_input;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (packed_pair[i]) continue;
    const StatePair& pair = pairs[i];
    auto [at, fresh] = by_input.try_emplace(pair.input, tensors.size());
    if (fresh) {
      tensors.push_back({pair.input,
                         pair.output,
                         pair.dtype,
                         pair.shape,
                         pair.batch_axis,
                         false,
                         {},
                         true,
                         pair.optional,
                         {},
                         false});
    }
    StateTensor& tensor = tensors[at->second];
    if (pair.init != kInitZeros && tensor.empty_init.empty()) tensor.empty_init.push_back(pair.input);
    if (!pair.streamable && tensor.not_streamable.empty()) tensor.not_streamable.push_back(pair.input);
    tensor.streamable = tensor.streamable && pair.streamable;
    tensor.stacked = tensor.stacked || pair.rows || !pair.region.empty();
  }
  return tensors;
}

std::vector<std::string> NotStreamableWarnings(const std::vector<StateTensor>& tensors, const std::string& runtime) {
  std::vector<std::string> warnings;
  for (const StateTensor& tensor : tensors) {
    if (tensor.not_streamable.empty()) continue;
    std::string names;
    for (const std::string& name : tensor.not_streamable) names += (names.empty() ? "'" : ", '") + name + "'";
    const bool packed = tensor.not_streamable.size() > 1 || tensor.not_streamable.front() != tensor.input;
    const std::string verb = tensor.not_streamable.size() > 1 ? " do" : " does";
    warnings.push_back(
        (packed ? "state '" + tensor.input + "' holds state " + names + ", which" + verb : "state " + names + verb) +
        " not stream (bidirectional, reverse or sequence_lens): carried by " + runtime +
        " from one request to the next it gives other results than one full run; send each "
        "sequence in one request, or rewrite with --streamable-only");
  }
  return warnings;
}

}  // namespace rnnstate
