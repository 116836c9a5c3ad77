// The shapes a state's plan records and feeds (rewrite/state_shapes.h): what a state without a batch is
// fed at, the shape its pair records with the batch as the data inputs name it, and which axis of the
// authors' own tensor holds the state's batch (none where the batch is a part of a split axis).

#include "rewrite/state_shapes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::state_shapes_test {
namespace {

using namespace test_names;

const Dim kUnknown{};
Dim Fixed(int64_t value) { return Dim{value, ""}; }
Dim Named(const std::string& name) { return Dim{-1, name}; }

/// A state [directions, batch, hidden] = [1, batch, 3] with its batch on axis 1 (or none: -1).
RecurrentState State(int batch_axis) {
  RecurrentState state;
  state.shape = {Fixed(1), batch_axis >= 0 ? Named("batch") : Fixed(2), Fixed(3)};
  state.axis_names = {"directions", "batch", "hidden"};
  state.batch_axis = batch_axis;
  return state;
}

TEST(FedShape, AStateWithoutABatchIsFedAtItsOwnSize) {
  // An input fed empty to select its default declares axis 0 unknown; without a batch it is fed whole.
  EXPECT_EQ(ShapeText(FedShape({kUnknown, Fixed(2), Fixed(3)}, State(-1))), "[1,2,3]");
  EXPECT_EQ(ShapeText(FedShape({Named("n"), kUnknown, Fixed(3)}, State(-1))), "[n,2,3]");
  // With a batch the declared shape is what is fed.
  EXPECT_EQ(ShapeText(FedShape({kUnknown, Named("batch"), Fixed(3)}, State(1))), "[?,batch,3]");
  // Another rank than the state's: as declared.
  EXPECT_EQ(ShapeText(FedShape({kUnknown, Fixed(3)}, State(-1))), "[?,3]");
}

TEST(DataShape, RecordsTheBatchAsTheDataNamesIt) {
  const std::vector<Dim> declared = {Fixed(1), kUnknown, Fixed(3)};
  EXPECT_EQ(MetaShapeText(DataShape(declared, 1, Named("batch"))), "[1,batch,3]");
  EXPECT_EQ(MetaShapeText(DataShape(declared, 1, Fixed(4))), "[1,4,3]");  // a fixed batch stays a number
  // An unknown batch, or no batch axis, leaves the declaration.
  EXPECT_EQ(DataShape(declared, 1, kUnknown)[1], (MetaDim{-1, ""}));
  EXPECT_EQ(MetaShapeText(DataShape({Fixed(1), Named("b"), Fixed(3)}, -1, Named("batch"))), "[1,b,3]");
}

TEST(TensorBatchAxis, IsTheAxisOfTheAuthorsTensorThatKeepsTheStatesBatch) {
  const RecurrentState state = State(1);
  const RegionAxis index{RegionAxis::Kind::kIndex, 0, 0};
  const RegionAxis whole{};
  // cache [2, 1, batch, 3]: the state is cache[0] (its axes: directions, batch, hidden).
  EXPECT_EQ(TensorBatchAxis(state, {index, whole, whole, whole}, {"directions", "batch", "hidden"}, {}, {}), 2);
  // [batch, 2, 3] with the state's rows at index 0 of axis 1: the batch is axis 0.
  EXPECT_EQ(TensorBatchAxis(state, {whole, index, whole}, {"batch", "hidden"}, {}, {}), 0);
  // The region keeps no axis named after the batch, or the state has none: -1.
  EXPECT_EQ(TensorBatchAxis(state, {index, whole, whole}, {"directions", "hidden"}, {}, {}), -1);
  EXPECT_EQ(TensorBatchAxis(State(-1), {whole, whole, whole}, {"directions", "batch", "hidden"}, {}, {}), -1);
}

TEST(TensorBatchAxis, OnAViewIsAWholeAxisOfTheTensorOrNone) {
  const RecurrentState state = State(1);
  const RegionAxis whole{};
  const RegionAxis first_half{RegionAxis::Kind::kRange, 0, 3};
  const std::vector<std::string> axes = {"directions", "batch", "hidden"};
  // The view [1, batch, 6] of a tensor [1, batch, 6]: axis 1 is whole.
  const std::vector<MetaDim> same = {MetaDim{1, ""}, MetaDim{-1, "b"}, MetaDim{6, ""}};
  EXPECT_EQ(TensorBatchAxis(state, {whole, whole, first_half}, axes, same, same), 1);
  // The view [1, 8, 6] of a flat cache [1, 48]: the batch is a part of the split axis 1.
  const std::vector<MetaDim> view = {MetaDim{1, ""}, MetaDim{8, ""}, MetaDim{6, ""}};
  const std::vector<MetaDim> flat = {MetaDim{1, ""}, MetaDim{48, ""}};
  EXPECT_EQ(TensorBatchAxis(state, {whole, whole, first_half}, axes, view, flat), -1);
}

}  // namespace
}  // namespace rnnstate::state_shapes_test
