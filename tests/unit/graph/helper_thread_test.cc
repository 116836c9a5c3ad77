// Helper work on a thread only where the model is large enough to pay for one (helper_thread.h).

#include "graph/helper_thread.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "test_names.h"

namespace rnnstate::helper_thread_test {
namespace {

using namespace test_names;

/// A model whose main graph holds `main` Relu nodes and an If whose then-branch holds `nested` more.
onnx::ModelProto ModelOf(int main, int nested) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(14);
  onnx::GraphProto& graph = *model.mutable_graph();
  for (int n = 0; n < main; ++n) graph.add_node()->set_op_type("Relu");
  onnx::NodeProto& if_node = *graph.add_node();
  if_node.set_op_type("If");
  onnx::AttributeProto& then_branch = *if_node.add_attribute();
  then_branch.set_name("then_branch");
  then_branch.set_type(onnx::AttributeProto::GRAPH);
  for (int n = 0; n < nested; ++n) then_branch.mutable_g()->add_node()->set_op_type("Relu");
  return model;
}

TEST(HelperThread, CountsTheNodesAtAnyDepth) {
  EXPECT_FALSE(WorthAThread(ModelOf(3, 0)));
  EXPECT_FALSE(WorthAThread(ModelOf(kNodesWorthAThread - 2, 0)));  // and the If
  EXPECT_TRUE(WorthAThread(ModelOf(kNodesWorthAThread - 1, 0)));
  EXPECT_TRUE(WorthAThread(ModelOf(1, kNodesWorthAThread - 2)));  // most of them in the branch
  EXPECT_FALSE(WorthAThread(ModelOf(1, kNodesWorthAThread - 3)));
}

TEST(HelperThread, ASmallModelsWorkRunsWhereItIsAwaitedAndOnlyThen) {
  const onnx::ModelProto small = ModelOf(3, 0);
  std::atomic<bool> ran = false;
  std::future<std::thread::id> work = StartBeside(small, [&ran] {
    ran = true;
    return std::this_thread::get_id();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(ran);
  EXPECT_EQ(work.get(), std::this_thread::get_id());
  EXPECT_TRUE(ran);
  std::atomic<bool> never = false;
  {
    auto dropped = StartBeside(small, [&never] { never = true; });
  }
  EXPECT_FALSE(never);  // a check nobody waits for costs nothing (a rewrite that changes nothing)
}

TEST(HelperThread, ALargeModelsWorkRunsOnAThreadOfItsOwn) {
  const onnx::ModelProto large = ModelOf(kNodesWorthAThread, 0);
  std::future<std::thread::id> work = StartBeside(large, [] { return std::this_thread::get_id(); });
  EXPECT_NE(work.get(), std::this_thread::get_id());
}

}  // namespace
}  // namespace rnnstate::helper_thread_test
