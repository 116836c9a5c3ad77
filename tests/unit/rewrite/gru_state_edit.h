#pragma once
/// \file
/// The plan's edit of a lone GRU's h, as the planner writes it: the edit the apply tests hand-build.

#include <string>
#include <utility>
#include <vector>

#include "rewrite/plan.h"
#include "test_names.h"

namespace rnnstate::testing {

/// The edit of h of a GRU that is node 0 of the main graph, named "gru" (its h in input slot 5): a new input
/// "h_in" and output "h_out" of `shape`, with the given sides; `original` is the value the slot read ("" when
/// it read none).
inline StateEdit GruHEdit(InputEdit input, OutputEdit output, std::vector<Dim> shape, std::string original = "") {
  StateEdit edit;
  edit.key = StateKey{{}, 0, 5};
  edit.owner_name = "gru";
  edit.graph_name = "main";
  edit.kind = "h";
  edit.op = "GRU";
  edit.site = StateSite{{}, 0, 5, 1, false};
  edit.elem_type = onnx::TensorProto::FLOAT;
  edit.shape = std::move(shape);
  edit.input = "h_in";
  edit.original = std::move(original);
  edit.input_edit = std::move(input);
  edit.output = "h_out";
  edit.output_edit = std::move(output);
  return edit;
}

}  // namespace rnnstate::testing

namespace rnnstate::test_names {

using testing::GruHEdit;

}  // namespace rnnstate::test_names
