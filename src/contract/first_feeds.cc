#include "contract/first_feeds.h"

#include "rnnstate/error.h"

namespace rnnstate {

namespace {

std::vector<int64_t> Concrete(const StatePair& pair, std::optional<int64_t> batch,
                              const std::map<std::string, int64_t>& dims) {
  std::vector<int64_t> shape;
  // An empty first feed is empty along the batch, or (a loop's state without one) along axis 0.
  const int64_t empty_axis = pair.batch_axis >= 0 ? pair.batch_axis : 0;
  for (size_t axis = 0; axis < pair.shape.size(); ++axis) {
    const MetaDim& dim = pair.shape[axis];
    if (pair.init == kInitEmpty && static_cast<int64_t>(axis) == empty_axis && pair.batch_axis < 0) {
      shape.push_back(0);
    } else if (pair.context && pair.context->NamedTime() && static_cast<int64_t>(axis) == pair.context->axis) {
      // A window that looked ahead: the first call's context is its padding before time alone; one whose
      // Pad fills in another mode, or a valid window: none (the graph pads what the context lacks; the
      // valid window's first call emits fewer frames).
      shape.push_back(pair.context->FirstFrames());
    } else if (static_cast<int64_t>(axis) == pair.batch_axis) {
      if (batch && dim.value >= 0 && *batch != dim.value) {
        throw Error(ExitCode::kUsage, "--batch " + std::to_string(*batch) + ": state input '" + pair.input +
                                          "' has a fixed batch of " + std::to_string(dim.value) +
                                          " (the model runs at that batch only)");
      }
      // The batch: --batch, else the value given to its name (--dim batch=3), else 1.
      auto named = dims.find(dim.symbol);
      const int64_t size = batch ? *batch : named != dims.end() ? named->second : 1;
      shape.push_back(pair.init == kInitEmpty ? 0 : dim.value >= 0 ? dim.value : size);
    } else if (dim.value >= 0) {
      shape.push_back(dim.value);
    } else if (auto value = dims.find(dim.symbol); value != dims.end()) {
      shape.push_back(value->second);
    } else if (pair.kind == kKindContext) {
      // A context's zeros are broadcast by the model (the Expand in front of its Concat) to the value they
      // are concatenated with: one element stands for a size no feed gives.
      shape.push_back(1);
    } else {
      throw Error(ExitCode::kUsage, "state input '" + pair.input + "': give its dimension '" + dim.symbol +
                                        "' a value (--dim " + (dim.symbol.empty() ? "NAME" : dim.symbol) + "=N)");
    }
  }
  return shape;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace

std::vector<FirstFeed> FirstFeeds(const std::vector<StatePair>& pairs, std::optional<int64_t> batch,
                                  const std::map<std::string, int64_t>& dims) {
  std::vector<FirstFeed> feeds;
  std::map<std::string, size_t> at;
  for (const StatePair& pair : pairs) {
    if (pair.dtype.empty() || pair.init.empty()) {
      throw Error(ExitCode::kBadInput, "state pair '" + pair.input + "' lacks dtype/shape/init (metadata of an " +
                                           "older rnnstate: rewrite the model again)");
    }
    FirstFeed feed{pair.input, pair.dtype, Concrete(pair, batch, dims), pair.init};
    if (auto seen = at.find(pair.input); seen != at.end()) {
      const FirstFeed& other = feeds[seen->second];
      if (other.dtype != feed.dtype || other.shape != feed.shape || other.init != feed.init) {
        throw Error(ExitCode::kBadInput, "state pairs of input '" + pair.input + "' disagree about its first feed");
      }
      continue;
    }
    at[pair.input] = feeds.size();
    feeds.push_back(std::move(feed));
  }
  return feeds;
}

std::string FirstFeedsText(const std::vector<FirstFeed>& feeds) {
  std::string text;
  for (const FirstFeed& feed : feeds) {
    const std::string dtype = feed.sequence ? "sequence<" + feed.dtype + ">" : feed.dtype;
    text += feed.input + "  " + dtype + "  " + ShapeString(feed.shape) + "  " + feed.init + "\n";
  }
  return text;
}

Json FirstFeedsJson(const std::vector<FirstFeed>& feeds) {
  Json list = Json::array();
  for (const FirstFeed& feed : feeds) {
    Json entry = {{"input", feed.input}, {"dtype", feed.dtype}, {"shape", feed.shape}, {"init", feed.init}};
    if (feed.sequence) entry["sequence"] = true;
    list.push_back(std::move(entry));
  }
  return list;
}

}  // namespace rnnstate
