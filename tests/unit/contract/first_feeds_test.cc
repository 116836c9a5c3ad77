// `rnnstate init`'s first feeds (contract/first_feeds.h), from the pairs alone: zeros of the state's shape
// at the batch asked for, or empty along the batch (along axis 0 without one) where the model's own default
// is meant; one feed per input; refusals for a dimension without a value (exit 2), a batch the model fixes
// otherwise (exit 2), old metadata and pairs of one input that disagree (exit 3).

#include "contract/first_feeds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::first_feeds_test {
namespace {

using namespace test_names;

TEST(FirstFeeds, ZerosAtTheBatchAskedForOrNamedOrOne) {
  EXPECT_THAT(FirstFeeds({FloatHPair("h")}, 2, {})[0].shape, ElementsAre(1, 2, 3));
  EXPECT_THAT(FirstFeeds({FloatHPair("h")}, std::nullopt, {{"batch", 5}})[0].shape, ElementsAre(1, 5, 3));
  EXPECT_THAT(FirstFeeds({FloatHPair("h")}, std::nullopt, {})[0].shape, ElementsAre(1, 1, 3));
  const FirstFeed feed = FirstFeeds({FloatHPair("h")}, 2, {})[0];
  EXPECT_EQ(feed.input, "h");
  EXPECT_EQ(feed.dtype, "float32");
  EXPECT_EQ(feed.init, kInitZeros);
}

TEST(FirstFeeds, AnEmptyFeedIsEmptyAlongTheBatchOrAxisZero) {
  EXPECT_THAT(FirstFeeds({FloatHPair("h", kInitEmpty)}, 4, {})[0].shape, ElementsAre(1, 0, 3));
  StatePair loop = FloatHPair("s", kInitEmpty);
  loop.batch_axis = -1;
  loop.shape = {MetaDim{-1, "n"}, MetaDim{5, ""}};
  EXPECT_THAT(FirstFeeds({loop}, 4, {})[0].shape, ElementsAre(0, 5));
}

TEST(FirstFeeds, GivesOtherSymbolicDimsTheirValuesAndAContextsBroadcastOne) {
  StatePair pair = FloatHPair("h");
  pair.shape[2] = MetaDim{-1, "hidden"};
  EXPECT_THAT(FirstFeeds({pair}, 2, {{"hidden", 8}})[0].shape, ElementsAre(1, 2, 8));
  ExpectError([&] { FirstFeeds({pair}, 2, {}); }, ExitCode::kUsage,
              "state input 'h': give its dimension 'hidden' a value (--dim hidden=N)");
  pair.shape[2] = MetaDim{};
  ExpectError([&] { FirstFeeds({pair}, 2, {}); }, ExitCode::kUsage, "(--dim NAME=N)");
  pair.kind = kKindContext;
  EXPECT_THAT(FirstFeeds({pair}, 2, {})[0].shape, ElementsAre(1, 2, 1));
}

TEST(FirstFeeds, RefusesABatchOtherThanTheModelsFixedOne) {
  StatePair pair = FloatHPair("h");
  pair.shape[1] = MetaDim{4, ""};
  EXPECT_THAT(FirstFeeds({pair}, 4, {})[0].shape, ElementsAre(1, 4, 3));
  EXPECT_THAT(FirstFeeds({pair}, std::nullopt, {})[0].shape, ElementsAre(1, 4, 3));
  ExpectError([&] { FirstFeeds({pair}, 2, {}); }, ExitCode::kUsage,
              "--batch 2: state input 'h' has a fixed batch of 4 (the model runs at that batch only)");
}

TEST(FirstFeeds, OneFeedPerInputAndPairsOfOneInputMustAgree) {
  StatePair h = FloatHPair("state"), c = FloatHPair("state");
  c.kind = "c";
  const std::vector<FirstFeed> feeds = FirstFeeds({FloatHPair("a"), h, c}, 2, {});
  ASSERT_EQ(feeds.size(), 2u);
  EXPECT_EQ(feeds[0].input, "a");
  EXPECT_EQ(feeds[1].input, "state");
  c.init = kInitEmpty;
  ExpectError(
      [&] {
        FirstFeeds({h, c}, 2, {});
      },
      ExitCode::kBadInput, "state pairs of input 'state' disagree about its first feed");
}

TEST(FirstFeeds, RefusesPairsOfOlderMetadata) {
  StatePair old = FloatHPair("h");
  old.dtype.clear();
  ExpectError([&] { FirstFeeds({old}, 2, {}); }, ExitCode::kBadInput, "state pair 'h' lacks dtype/shape/init");
  StatePair no_init = FloatHPair("h", "");
  ExpectError([&] { FirstFeeds({no_init}, 2, {}); }, ExitCode::kBadInput, "lacks dtype/shape/init");
}

TEST(FirstFeedsText, OneLinePerFeed) {
  std::vector<FirstFeed> feeds = FirstFeeds({FloatHPair("h"), FloatHPair("c", kInitEmpty)}, 2, {});
  feeds.push_back(FirstFeed{"packed", "float32", {}, kInitEmpty, true});
  EXPECT_EQ(FirstFeedsText(feeds),
            "h  float32  [1,2,3]  zeros\nc  float32  [1,0,3]  empty\n"
            "packed  sequence<float32>  []  empty\n");
  EXPECT_EQ(FirstFeedsJson(feeds).dump(),
            R"([{"input":"h","dtype":"float32","shape":[1,2,3],"init":"zeros"},)"
            R"({"input":"c","dtype":"float32","shape":[1,0,3],"init":"empty"},)"
            R"({"input":"packed","dtype":"float32","shape":[],"init":"empty","sequence":true}])");
}

}  // namespace
}  // namespace rnnstate::first_feeds_test
