#pragma once
/// \file
/// The names the unit tests read unqualified: googletest's matchers and the shared helpers of
/// test_models.h and loop_text.h. A test file says `using namespace test_names;` inside its own namespace,
/// once, instead of repeating a block of using-declarations (a file's own helper of the same name hides the
/// shared one). testing::Producer is not here: rnnstate::Producer (graph/model_index.h) would make it
/// ambiguous, so a file names it with its own using-declaration.

#include <gmock/gmock.h>

#include "loop_text.h"
#include "test_models.h"

namespace rnnstate::test_names {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Optional;
using ::testing::Pair;
using ::testing::SizeIs;

using testing::AddCellAtInt32CounterText;
using testing::AddFloatInitializer;
using testing::BatchZerosText;
using testing::Bytes;
using testing::ContextPair;
using testing::DeclaredShape;
using testing::ErrorMessage;
using testing::ExpectContextDefault;
using testing::ExpectError;
using testing::FloatHPair;
using testing::InitializerNames;
using testing::InMode;
using testing::InputNames;
using testing::kGru;
using testing::kLstm;
using testing::kResidualSameConvGru;
using testing::kReverseGru;
using testing::LoopLstmOverContextText;
using testing::LoopZerosOfTheBatch;
using testing::LstmThenGru;
using testing::NodeOfType;
using testing::OutputNames;
using testing::Packing;
using testing::PairOf;
using testing::ParseModel;
using testing::RecordedPairs;
using testing::StreamObject;
using testing::TanhCell;
using testing::Tf2onnxStacked;
using testing::TorchPadAmountsText;
using testing::Verdict;

}  // namespace rnnstate::test_names
