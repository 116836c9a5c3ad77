// The shapes a state's plan records and feeds (moved unchanged from planner.cc's Planner, whose static
// members they were).

#include "rewrite/state_shapes.h"

#include <optional>

namespace rnnstate {

namespace {

/// The axis of a tensor of shape `shape` that axis `j` of its view `view` is whole, or -1.
int64_t TensorAxisOf(size_t j, const std::vector<MetaDim>& view, const std::vector<MetaDim>& shape) {
  const std::optional<std::vector<size_t>> split = ViewSplit(view, shape);
  if (!split) return -1;
  for (size_t axis = 0; axis + 1 < split->size(); ++axis) {
    if ((*split)[axis] == j && (*split)[axis + 1] == j + 1) return static_cast<int64_t>(axis);
  }
  return -1;
}

}  // namespace

std::vector<Dim> FedShape(const std::vector<Dim>& declared, const RecurrentState& state) {
  std::vector<Dim> shape = declared;
  if (state.batch_axis >= 0 || shape.size() != state.shape.size()) return shape;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!shape[i].fixed() && shape[i].param.empty()) shape[i] = state.shape[i];
  }
  return shape;
}

std::vector<MetaDim> DataShape(const std::vector<Dim>& declared, int64_t batch_axis, const Dim& batch) {
  std::vector<MetaDim> shape;
  for (size_t i = 0; i < declared.size(); ++i) {
    const bool at_batch = static_cast<int64_t>(i) == batch_axis && (batch.fixed() || !batch.param.empty());
    const Dim& d = at_batch ? batch : declared[i];
    shape.push_back(d.fixed() ? MetaDim{d.value, ""} : MetaDim{-1, d.param});
  }
  return shape;
}

int64_t TensorBatchAxis(const RecurrentState& state, const std::vector<RegionAxis>& region,
                        const std::vector<std::string>& axes, const std::vector<MetaDim>& view,
                        const std::vector<MetaDim>& shape) {
  if (state.batch_axis < 0 || state.batch_axis >= static_cast<int64_t>(state.axis_names.size())) return -1;
  const std::string& batch_name = state.axis_names[state.batch_axis];
  size_t kept = 0;
  for (size_t j = 0; j < region.size(); ++j) {
    if (region[j].kind == RegionAxis::Kind::kIndex) continue;
    if (kept < axes.size() && axes[kept] == batch_name)
      return view.empty() ? static_cast<int64_t>(j) : TensorAxisOf(j, view, shape);
    ++kept;
  }
  return -1;
}

}  // namespace rnnstate
