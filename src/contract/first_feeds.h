#pragma once
/// \file
/// `rnnstate init`: the first call's feed of every state input, from the metadata alone, so that a
/// script in any language can build it: zeros of the state's shape, or the empty tensor (batch 0) that
/// means the model's own default.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rnnstate/json.h"
#include "rnnstate/metadata.h"

namespace rnnstate {

/// The first feed of one state input.
struct FirstFeed {
  std::string input;
  std::string dtype;
  std::vector<int64_t> shape;  ///< concrete; the batch axis is 0 for an empty feed
  std::string init;            ///< kInitZeros or kInitEmpty
  bool sequence = false;       ///< a packed Sequence<Tensor>: the first feed is the empty sequence
};

/// One feed per distinct input of `pairs` (several pairs may take regions of one input), in order.
/// `batch` is the batch size (unset: the value `dims` gives the batch dimension's name, else 1); `dims`
/// gives other symbolic dimensions a value. Throws Error(kUsage) for a
/// symbolic dimension without a value, Error(kBadInput) when a pair lacks the contract fields (metadata
/// written by an older rnnstate: rewrite the model again) or pairs of one input disagree.
std::vector<FirstFeed> FirstFeeds(const std::vector<StatePair>& pairs, std::optional<int64_t> batch,
                                  const std::map<std::string, int64_t>& dims);

/// "lstm.h_in  float32  [1,2,64]  zeros" lines ("state_in  sequence<float32>  []  empty" for a sequence).
std::string FirstFeedsText(const std::vector<FirstFeed>& feeds);

/// [{"input", "dtype", "shape", "init"}] (plus "sequence": true for a sequence).
Json FirstFeedsJson(const std::vector<FirstFeed>& feeds);

}  // namespace rnnstate
