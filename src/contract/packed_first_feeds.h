#pragma once
/// \file
/// `rnnstate init` on a packed model: the first feed of each packed value — the empty tensor [0, N] or
/// the empty sequence, which gives every state its default — and of each pair packing left out.

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "contract/first_feeds.h"

namespace rnnstate {

/// The first feeds of `model`, whose recorded pairs are `pairs` (see FirstFeeds for the rest).
std::vector<FirstFeed> FirstFeedsOf(const onnx::ModelProto& model, const std::vector<StatePair>& pairs,
                                    std::optional<int64_t> batch, const std::map<std::string, int64_t>& dims);

}  // namespace rnnstate
