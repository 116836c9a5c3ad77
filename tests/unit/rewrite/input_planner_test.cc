// The input side of each state (input_planner.h): the shape a state input declares (DeclaredShape), and the
// default InputPlanner gives a new input by the state's origin and the mode — zeros stored or broadcast to
// the batch, the original initializer, the original selected when the feed is empty, none when required —
// or the graph input already feeding the state, and what happens to an exposed input's default.

#include "rewrite/input_planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analyze_text.h"
#include "rewrite/planner.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::input_planner_test {
namespace {

using namespace test_names;

/// A planned state: the model, its analysis and the planner live as long as this.
class PlannedInputs {
 public:
  explicit PlannedInputs(const std::string& text, StateInputMode mode = StateInputMode::kDefaults)
      : model_(ParseModel(text)),
        index_(model_),
        analysis_(Analyze(index_)),
        options_(InMode(mode)),
        names_(index_.NewNames()),
        planner_(index_, options_, names_, plan_) {}

  /// PlanUnexposed on state `i`, with the state's own batch; returns the edit, the reason in `reason`.
  StateEdit Unexposed(size_t i, std::string* reason = nullptr) {
    const StateAnalysis& analyzed = analysis_.states.at(i);
    StateEdit edit = EditHeader(analyzed, analyzed.state.owner.name, "main");
    const Dim batch = analyzed.state.batch_axis >= 0 ? analyzed.state.shape[analyzed.state.batch_axis] : Dim{};
    const std::string why = planner_.PlanUnexposed(analyzed, batch, "gru", "gru.h_in", edit);
    if (reason != nullptr) *reason = why;
    return edit;
  }

  /// PlanExposed on the input `input` of state `i`.
  StateEdit Exposed(size_t i, const std::string& input) {
    StateEdit edit = EditHeader(analysis_.states.at(i), "gru", "main");
    edit.input = input;
    planner_.PlanExposed(edit);
    return edit;
  }

  const Plan& plan() const { return plan_; }

 private:
  onnx::ModelProto model_;
  ModelIndex index_;
  Analysis analysis_;
  PlanOptions options_;
  NameAllocator names_;
  Plan plan_;
  InputPlanner planner_;
};

/// A GRU whose initial state is `h0`, declared among the inputs as `h0_type` (with its initializer, if any,
/// in `initializers`), on X [seq, `batch`, 2].
std::string GruFrom(const std::string& batch, const std::string& h0_type, const std::string& initializers = "") {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, )" +
         batch + R"(, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, )" + h0_type + R"( h0) => (float[seq, 1, )" + batch +
         R"(, 3] Y)
  )" + initializers +
         R"( {
  Y = GRU <hidden_size = 3> (X, W, R, , , h0)
})";
}

/// A GRU on X [seq, 2, 2] whose initial state is the initializer `h0` ("float[1, 2, 3] h0 = {...}"), no input.
std::string GruFromInitializer(const std::string& h0) {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, 2, 3] Y)
  <)" + h0 +
         R"(> {
  Y = GRU <hidden_size = 3> (X, W, R, , , h0)
})";
}

const NewInput& NewInputOf(const StateEdit& edit) { return std::get<NewInput>(edit.input_edit); }

TEST(DeclaredShape, TheBatchIsTheDatasWhenItIsKnown) {
  RecurrentState state;
  state.shape = {Dim{1, ""}, Dim{-1, ""}, Dim{3, ""}};
  state.batch_axis = 1;
  EXPECT_EQ(ShapeText(rnnstate::DeclaredShape(state, Dim{-1, "batch"}, "unused")), "[1,batch,3]");
  EXPECT_EQ(ShapeText(rnnstate::DeclaredShape(state, Dim{4, ""}, "unused")), "[1,4,3]");
}

TEST(DeclaredShape, AnUnknownBatchGetsTheNameGiven) {
  RecurrentState state;
  state.shape = {Dim{1, ""}, Dim{-1, ""}, Dim{3, ""}};
  state.batch_axis = 1;
  EXPECT_EQ(ShapeText(rnnstate::DeclaredShape(state, Dim{}, "batch_2")), "[1,batch_2,3]");
  // A batch the state knows already stays, when the data name none.
  state.shape[1] = Dim{5, ""};
  EXPECT_EQ(ShapeText(rnnstate::DeclaredShape(state, Dim{}, "batch_2")), "[1,5,3]");
}

TEST(DeclaredShape, AStateWithoutABatchAxisKeepsItsShape) {
  RecurrentState state;
  state.shape = {Dim{-1, ""}, Dim{4, ""}};
  state.batch_axis = -1;
  EXPECT_EQ(ShapeText(rnnstate::DeclaredShape(state, Dim{-1, "batch"}, "batch_2")), ShapeText(state.shape));
}

TEST(InputPlanner, AnAbsentStateOfADynamicBatchGetsZerosBroadcastToTheBatch) {
  PlannedInputs planned(kGru);
  const StateEdit edit = planned.Unexposed(0);
  EXPECT_EQ(edit.input, "gru.h_in");
  EXPECT_TRUE(edit.optional);
  EXPECT_EQ(edit.init, kInitZeros);
  EXPECT_EQ(ShapeText(edit.shape), "[1,batch,3]");
  const auto& broadcast = std::get<BroadcastZerosDefault>(NewInputOf(edit).default_value);
  EXPECT_THAT(broadcast.dims, ElementsAre(1, 1, 3));
  ASSERT_EQ(planned.plan().broadcasts.size(), 1u);
  EXPECT_EQ(broadcast.broadcast, 0);
  EXPECT_EQ(planned.plan().broadcasts[0].x, "X");
  EXPECT_EQ(planned.plan().broadcasts[0].batch_axis, 1);
}

TEST(InputPlanner, TheStatesOfOneBatchShareOneBroadcast) {
  PlannedInputs planned(kLstm);
  const StateEdit h = planned.Unexposed(0);
  const StateEdit c = planned.Unexposed(1);
  EXPECT_EQ(planned.plan().broadcasts.size(), 1u);
  EXPECT_EQ(std::get<BroadcastZerosDefault>(NewInputOf(c).default_value).broadcast,
            std::get<BroadcastZerosDefault>(NewInputOf(h).default_value).broadcast);
}

TEST(InputPlanner, AFixedBatchStoresItsZeros) {
  std::string text = kGru;
  for (size_t at = text.find("batch"); at != std::string::npos; at = text.find("batch")) text.replace(at, 5, "4");
  PlannedInputs planned(text);
  const StateEdit edit = planned.Unexposed(0);
  EXPECT_THAT(std::get<ZerosDefault>(NewInputOf(edit).default_value).dims, ElementsAre(1, 4, 3));
  EXPECT_THAT(planned.plan().broadcasts, IsEmpty());
}

TEST(InputPlanner, RequiredModeGivesANewInputNoDefault) {
  PlannedInputs planned(kGru, StateInputMode::kRequired);
  const StateEdit edit = planned.Unexposed(0);
  EXPECT_FALSE(edit.optional);
  EXPECT_EQ(edit.init, kInitZeros);
  EXPECT_TRUE(std::holds_alternative<NoDefault>(NewInputOf(edit).default_value));
}

TEST(InputPlanner, AStateFedByItsOwnGraphInputReusesIt) {
  PlannedInputs planned(GruFrom("batch", "float[1, batch, 3]"));
  std::string reason = "?";
  const StateEdit edit = planned.Unexposed(0, &reason);
  EXPECT_EQ(reason, "");
  EXPECT_EQ(edit.input, "h0");
  EXPECT_TRUE(std::holds_alternative<ReuseInput>(edit.input_edit));
  EXPECT_FALSE(edit.optional);
}

TEST(InputPlanner, AZeroInitializerBecomesTheNewInputsDefault) {
  PlannedInputs planned(GruFromInitializer("float[1, 2, 3] h0 = {0, 0, 0, 0, 0, 0}"));
  const StateEdit edit = planned.Unexposed(0);
  const auto& initializer = std::get<InitializerDefault>(NewInputOf(edit).default_value);
  EXPECT_TRUE(initializer.move);  // it served this state only
  EXPECT_THAT(initializer.dims, ElementsAre(1, 2, 3));
  EXPECT_EQ(ShapeText(edit.shape), "[1,2,3]");
}

TEST(InputPlanner, ALearnedInitializerIsSelectedWhenTheFeedIsEmpty) {
  PlannedInputs planned(GruFromInitializer("float[1, 2, 3] h0 = {1, 2, 3, 4, 5, 6}"));
  const StateEdit edit = planned.Unexposed(0);
  const auto& select = std::get<SelectOriginalDefault>(NewInputOf(edit).default_value);
  EXPECT_THAT(select.dims, ElementsAre(1, 0, 3));
  EXPECT_TRUE(select.empty_default);
  EXPECT_EQ(edit.init, kInitEmpty);
  EXPECT_EQ(ShapeText(edit.shape), "[1,batch,3]");  // an empty feed must fit the declared shape
  EXPECT_EQ(NewInputOf(edit).slot_value, "gru.h_in.selected");
}

TEST(InputPlanner, AnInitializerOfAnotherShapeIsSkipped) {
  PlannedInputs planned(GruFromInitializer("float[1, 1, 3] h0 = {0, 0, 0}"));
  std::string reason;
  planned.Unexposed(0, &reason);
  EXPECT_THAT(reason, HasSubstr("initializer 'h0' has shape [1,1,3], not the state shape [1,2,3]"));
}

TEST(InputPlanner, AnExposedInputWithoutADefaultIsKeptAndRequired) {
  PlannedInputs planned(GruFrom("batch", "float[1, batch, 3]"));
  const StateEdit edit = planned.Exposed(0, "h0");
  EXPECT_TRUE(std::holds_alternative<KeepInput>(edit.input_edit));
  EXPECT_FALSE(edit.optional);
  EXPECT_EQ(edit.init, kInitZeros);
}

TEST(InputPlanner, AnExposedInputsZeroDefaultIsDroppedInRequiredMode) {
  const std::string text = GruFrom("2", "float[1, 2, 3]", "<float[1, 2, 3] h0 = {0, 0, 0, 0, 0, 0}>");
  PlannedInputs defaults(text);
  const StateEdit kept = defaults.Exposed(0, "h0");
  EXPECT_TRUE(std::holds_alternative<KeepInput>(kept.input_edit));
  EXPECT_TRUE(kept.optional);
  PlannedInputs required(text, StateInputMode::kRequired);
  const StateEdit dropped = required.Exposed(0, "h0");
  EXPECT_TRUE(std::holds_alternative<DropDefault>(dropped.input_edit));
  EXPECT_FALSE(dropped.optional);
  EXPECT_EQ(dropped.init, kInitZeros);
}

TEST(InputPlanner, AnExposedInputsLearnedDefaultMovesBehindASelection) {
  PlannedInputs planned(GruFrom("2", "float[1, 2, 3]", "<float[1, 2, 3] h0 = {1, 2, 3, 4, 5, 6}>"));
  const StateEdit edit = planned.Exposed(0, "h0");
  const auto& behind = std::get<DefaultBehindSelect>(edit.input_edit);
  EXPECT_EQ(behind.default_name, "h0.default");
  EXPECT_EQ(behind.selected, "h0.selected");
  EXPECT_THAT(behind.select.dims, ElementsAre(1, 0, 3));
  EXPECT_TRUE(behind.keep_empty_default);
  EXPECT_EQ(edit.init, kInitEmpty);
  EXPECT_EQ(ShapeText(edit.shape), "[1,batch,3]");
}

}  // namespace
}  // namespace rnnstate::input_planner_test
