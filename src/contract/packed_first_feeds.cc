#include "contract/packed_first_feeds.h"

#include "rnnstate/error.h"
#include "rnnstate/packed_metadata.h"

namespace rnnstate {

std::vector<FirstFeed> FirstFeedsOf(const onnx::ModelProto& model, const std::vector<StatePair>& pairs,
                                    std::optional<int64_t> batch, const std::map<std::string, int64_t>& dims) {
  std::string error;
  const std::optional<PackedStates> packed = ReadPackedStates(model, pairs.size(), &error);
  if (!error.empty()) throw Error(ExitCode::kBadInput, error);
  if (!packed) return FirstFeeds(pairs, batch, dims);
  std::vector<FirstFeed> feeds;
  std::vector<StatePair> unpacked;
  for (const PackedValue& value : packed->values) {
    FirstFeed feed{value.input, value.dtype, {}, value.init, packed->kind == kPackedSequence};
    if (!feed.sequence) feed.shape = {0, value.shape.size() == 2 ? value.shape[1].value : 0};
    if (batch && !value.shape.empty() && value.shape[0].value >= 0 && *batch != value.shape[0].value) {
      throw Error(ExitCode::kUsage, "--batch " + std::to_string(*batch) + ": packed input '" + value.input +
                                        "' has a fixed batch of " + std::to_string(value.shape[0].value) +
                                        " (the model runs at that batch only)");
    }
    feeds.push_back(std::move(feed));
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (packed->MemberOf(static_cast<int64_t>(i)).first < 0) unpacked.push_back(pairs[i]);
  }
  std::vector<FirstFeed> rest = FirstFeeds(unpacked, batch, dims);
  feeds.insert(feeds.end(), rest.begin(), rest.end());
  return feeds;
}

}  // namespace rnnstate
