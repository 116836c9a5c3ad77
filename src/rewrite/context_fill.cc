#include "rewrite/context_fill.h"

#include "graph/graph_edit.h"
#include "graph/proto_access.h"

namespace rnnstate {

ContextFill PlanContextFill(const CausalWindow& window, std::vector<int64_t> pads_without_time, NameAllocator& names,
                            const std::string& stem) {
  ContextFill fill;
  fill.mode = window.fill;
  // pad_fill.h: such a Pad lists amounts for every axis in order, so the time axis's begin is at `axis`.
  fill.pads = std::move(pads_without_time);
  if (window.axis < static_cast<int64_t>(fill.pads.size())) fill.pads[static_cast<size_t>(window.axis)] = window.frames;
  fill.fed_shape = names.Allocate(stem + ".context_fed_shape");
  fill.unit = names.Allocate(stem + ".context_fill_unit");
  fill.fed_time = names.Allocate(stem + ".context_fed_frames");
  fill.zeros = names.Allocate(stem + ".context_fill_zeros");
  fill.fed_pads = names.Allocate(stem + ".context_fed_pads");
  fill.original = names.Allocate(stem + ".context_fill_pads");
  fill.amounts = names.Allocate(stem + ".context_pads");
  return fill;
}

void AddContextFillNodes(const ContextEdit& edit, const std::string& front, std::vector<onnx::NodeProto>& nodes) {
  if (!edit.fill) return;
  const ContextFill& fill = *edit.fill;
  const size_t rank = fill.pads.size() / 2;
  std::vector<int64_t> unit(rank, 0);
  if (edit.axis >= 0 && static_cast<size_t>(edit.axis) < rank) unit[static_cast<size_t>(edit.axis)] = 1;
  nodes.push_back(MakeNode("Shape", {front}, {fill.fed_shape}));
  nodes.push_back(Int64ConstantNode(fill.unit, unit));
  nodes.push_back(MakeNode("Mul", {fill.fed_shape, fill.unit}, {fill.fed_time}));
  // The frames fed stand at the time axis's begin; nothing is taken off the ends.
  nodes.push_back(Int64ConstantNode(fill.zeros, std::vector<int64_t>(rank, 0)));
  onnx::NodeProto concat = MakeNode("Concat", {fill.fed_time, fill.zeros}, {fill.fed_pads});
  SetIntAttribute(concat, "axis", 0);
  nodes.push_back(std::move(concat));
  nodes.push_back(Int64ConstantNode(fill.original, fill.pads));
  nodes.push_back(MakeNode("Sub", {fill.original, fill.fed_pads}, {fill.amounts}));
}

}  // namespace rnnstate
