#include "exposure/view_forward.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "exposure/view_ops.h"
#include "graph/proto_access.h"
#include "ops/op_semantics.h"
#include "values/reshape_groups.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

ForwardStep To(int output) { return ForwardStep{output, "", false}; }
ForwardStep Broken(std::string why) { return ForwardStep{-1, std::move(why), false}; }
ForwardStep Elsewhere(std::string why) { return ForwardStep{-1, std::move(why), true}; }

class Step {
 public:
  Step(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, int slot, Holding& at)
      : index_(index), path_(path), node_(node), slot_(slot), map_(at.map), types_(at.types) {
    if (!at.shape.empty()) in_shape_ = at.shape;
  }

  ForwardStep Run(SymShape& shape) {
    if (!IsOnnxDomain(node_.domain()) || node_.output_size() == 0) return Broken("");
    ForwardStep step = Map();
    if (step.output >= 0) shape = OutputShape(step.output);
    return step;
  }

 private:
  /// The dim of the state's value on `axis`, when its shape has the map's rank.
  SymDim DimOf(size_t axis) const {
    return in_shape_ && in_shape_->size() == map_.rank() && axis < in_shape_->size() ? (*in_shape_)[axis] : SymDim{};
  }

  ForwardStep Map() {
    const std::string& op = node_.op_type();
    if (op == "Identity") return To(0);
    if (op == "Dropout" && slot_ == 0) {
      if (InferenceDropout(index_, path_, node_)) return To(0);
      return Broken(" may drop elements of it (its training_mode is not a constant false)");
    }
    if (op == "Cast") {
      types_.push_back(ElemType(index_, path_, node_.output(0)));
      return To(0);
    }
    if (AddsZero(index_, path_, node_, slot_, map_.rank())) return To(0);
    if (slot_ != 0 && op != "Concat" && op != "ScatterND") return Broken("");
    if (op == "Unsqueeze" || op == "Squeeze") {
      std::optional<std::vector<int64_t>> axes = AxesOperand(index_, path_, node_);
      if (!axes) return Broken(" takes axes that are not constants");
      if (op == "Unsqueeze" ? !InsertUnitAxes(map_, *axes) : !RemoveUnitAxes(map_, *axes)) {
        return Broken(op == "Unsqueeze" ? " takes axes out of range"
                                        : " removes an axis the state is not constant on, or out of range");
      }
      return To(0);
    }
    if (op == "Transpose") {
      std::optional<std::vector<int64_t>> order = PermOf(node_, static_cast<int64_t>(map_.rank()));
      if (!order || !map_.Permute(*order)) return Broken(" has a perm that is not a permutation of its axes");
      return To(0);
    }
    if (op == "Reshape") {
      std::optional<SymShape> target =
          node_.input_size() > 1 ? ShapeValue(index_, path_, node_.input(1)) : std::nullopt;
      std::optional<std::vector<ReshapeGroup>> groups;
      if (in_shape_ && target) groups = ReshapeGroups(*in_shape_, *target, IntAttribute(node_, "allowzero", 0) != 0);
      std::optional<SymShape> out_shape = ShapeOf(index_, path_, node_.output(0));
      SymShape out = target ? *target : SymShape{};
      if (out_shape && out_shape->size() == out.size()) out = *out_shape;
      if (!groups || !ApplyReshape(*groups, *in_shape_, out, /*forward=*/true, map_)) {
        return Broken(" reshapes it in a way that is not a split or merge of axes");
      }
      return To(0);
    }
    if (op == "Expand") {
      std::optional<SymShape> target =
          node_.input_size() > 1 ? ShapeValue(index_, path_, node_.input(1)) : std::nullopt;
      if (!in_shape_ || !target || !SameShape(*in_shape_, *target)) return Broken(" broadcasts it");
      return To(0);
    }
    if (op == "Concat") return Concat();
    if (op == "Slice") return Slice();
    if (op == "Split") return Split();
    if (op == "Gather") return Gather();
    if (op == "ScatterND") return Scatter();
    return Broken("");
  }

  ForwardStep Concat() {
    std::optional<size_t> axis = AxisIndex(AxisAttribute(node_, index_.onnx_opset()), map_.rank());
    if (!axis) return Broken(" joins on an axis out of range");
    std::optional<int64_t> offset = ConcatOffset(*axis);
    if (!offset) return Broken(" joins it after parts of unknown size");
    if (!map_.Scale(*axis, 1, *offset)) return Broken(" joins it at an offset out of range");
    return To(0);
  }

  /// Where input `slot` of a Concat starts on `axis`: the sizes of the inputs before it. One input of
  /// unknown size (onnx infers no shapes for the outputs of RNN/GRU/LSTM-1, so a packed state at opset
  /// <= 6 has such parts) is the output's size less all the others'; nullopt when that does not decide it.
  std::optional<int64_t> ConcatOffset(size_t axis) const {
    auto size_of = [&](int k) -> std::optional<int64_t> {
      const std::optional<SymShape> part = k == slot_ ? in_shape_ : ShapeOf(index_, path_, node_.input(k));
      if (part && part->size() > axis && (*part)[axis].fixed()) return (*part)[axis].value;
      // An Unsqueeze made the axis: size 1, whatever inference knows of the rest (an If's output).
      const ResolvedName made = index_.Resolve(path_, node_.input(k));
      if (made.node != nullptr && IsOnnxOp(*made.node, {"Unsqueeze"})) {
        const std::optional<std::vector<int64_t>> axes = AxesOperand(index_, made.graph, *made.node);
        const std::optional<std::vector<int64_t>> listed =
            axes ? NormalizeAxes(*axes, static_cast<int64_t>(map_.rank())) : std::nullopt;
        if (listed && std::binary_search(listed->begin(), listed->end(), static_cast<int64_t>(axis))) return 1;
      }
      return std::nullopt;
    };
    int64_t before = 0;
    std::optional<int> unknown;
    for (int k = 0; k < slot_; ++k) {
      if (std::optional<int64_t> size = size_of(k)) {
        if (__builtin_add_overflow(before, *size, &before)) return std::nullopt;
      } else if (unknown) {
        return std::nullopt;
      } else {
        unknown = k;
      }
    }
    if (!unknown) return before;
    const std::optional<SymShape> out = ShapeOf(index_, path_, node_.output(0));
    if (!out || out->size() <= axis || !(*out)[axis].fixed()) return std::nullopt;
    int64_t others = 0;
    for (int k = 0; k < node_.input_size(); ++k) {
      if (k == *unknown) continue;
      std::optional<int64_t> size = size_of(k);
      if (!size || __builtin_add_overflow(others, *size, &others)) return std::nullopt;
    }
    const int64_t missing = (*out)[axis].value - others;
    if (missing < 0 || __builtin_add_overflow(before, missing, &before)) return std::nullopt;
    return before;
  }

  /// A Slice passes the state on when it keeps all of it, with steps of 1 (ONNX's rules for negative
  /// and out-of-range starts and ends applied).
  ForwardStep Slice() {
    std::optional<SliceSpec> spec = SliceOf(index_, path_, node_, map_.rank());
    if (!spec) return Broken(" takes starts, ends, axes or steps that are not constants, out of range or a step 0");
    ElementMap result = map_;
    for (size_t k = 0; k < spec->axes.size(); ++k) {
      const auto axis = static_cast<size_t>(spec->axes[k]);
      std::optional<SliceAxis> cut = ResolveSliceAxis(spec->starts[k], spec->ends[k], spec->steps[k], DimOf(axis));
      if (!cut) return Broken(" counts from the end of an axis of unknown size");
      if (cut->step != 1) return Broken(" takes every " + std::to_string(cut->step) + "th element of an axis");
      std::optional<std::pair<int64_t, int64_t>> range = result.Range(axis);
      if (!range) return Broken(" cuts an axis the state has no fixed size on");
      // Kept: input indices [start, start + limit). Both ends of the state's range must be inside.
      int64_t end = INT64_MAX;
      if (cut->limit && __builtin_add_overflow(cut->start, *cut->limit, &end)) end = INT64_MAX;
      if (range->first < cut->start || !cut->limit || range->second >= end) {
        // Only apart from the state is the slice a view of other elements.
        const bool apart = range->second < cut->start || (cut->limit && range->first >= end);
        return apart ? Elsewhere(" drops it (keeps other elements)") : Broken(" cuts part of it off");
      }
      if (!result.Scale(axis, 1, -cut->start)) return Broken("");
    }
    map_ = std::move(result);
    return To(0);
  }

  /// A Split passes the state on to the piece it lies inside.
  ForwardStep Split() {
    std::optional<size_t> axis = AxisIndex(AxisAttribute(node_, index_.onnx_opset()), map_.rank());
    if (!axis) return Broken(" splits on an axis out of range");
    std::optional<std::pair<int64_t, int64_t>> range = map_.Range(*axis);
    if (!range) return Broken(" splits an axis the state has no fixed size on");
    int64_t offset = 0;
    for (int k = 0; k < node_.output_size(); ++k) {
      std::optional<SymShape> part = ShapeOf(index_, path_, node_.output(k));
      if (!part || part->size() <= *axis || !(*part)[*axis].fixed())
        return Broken(" splits into parts of unknown size");
      const int64_t size = (*part)[*axis].value;
      if (range->first >= offset && range->second - offset < size) {
        return map_.Scale(*axis, 1, -offset) ? To(k) : Broken("");
      }
      if (__builtin_add_overflow(offset, size, &offset)) return Broken("");
    }
    return Broken(" splits it into several parts");
  }

  ForwardStep Gather() {
    std::optional<std::vector<int64_t>> indices =
        node_.input_size() > 1 ? IntValues(index_, path_, node_.input(1)) : std::nullopt;
    std::optional<SymShape> indices_shape =
        node_.input_size() > 1 ? ShapeOf(index_, path_, node_.input(1)) : std::nullopt;
    if (!indices || !indices_shape || indices_shape->size() > 1) return Broken(" takes indices that are not constants");
    std::optional<size_t> axis = AxisIndex(AxisAttribute(node_, index_.onnx_opset()), map_.rank());
    if (!axis) return Broken(" gathers on an axis out of range");
    if (!map_.IsConstant(*axis)) return Broken(" picks elements along an axis the state spans");
    const int64_t at = map_.offset(*axis);
    const SymDim dim = DimOf(*axis);
    for (size_t k = 0; k < indices->size(); ++k) {
      int64_t i = (*indices)[k];
      if (i < 0 && !dim.fixed()) return Broken(" takes a negative index of an axis of unknown size");
      if (i < 0) i += dim.value;
      if (i != at) continue;
      if (!map_.RemoveFixed(*axis, at)) return Broken("");
      if (!indices_shape->empty() && !map_.InsertFixed(*axis, static_cast<int64_t>(k))) return Broken("");
      return To(0);
    }
    return Elsewhere(" takes other elements");
  }

  ForwardStep Scatter() {
    std::string why;
    if (slot_ == 0) {  // the state is in the data: it survives where no row writes
      std::optional<ScatterSpec> spec = ScatterOf(index_, path_, node_, DimsOrNone(), &why);
      if (!spec) return Broken(why);
      for (const auto& row : spec->rows) {
        if (RowOverlap(map_, row) != Overlap::kApart) return Broken(" overwrites it");
      }
      return To(0);
    }
    if (slot_ != 2) return Broken("");
    std::optional<ScatterSpec> spec = ScatterOf(index_, path_, node_, ShapeOf(index_, path_, node_.input(0)), &why);
    if (!spec) return Broken(why);
    if (spec->reduction != "none") {
      return Broken(" combines it with its data (reduction '" + spec->reduction + "'): not a copy of it");
    }
    // The updates' leading axes are the positions of the rows: the state's must be one position.
    size_t r = 0;
    for (size_t i = 0; i < spec->lead.size(); ++i) {
      if (!map_.IsConstant(i)) return Broken(" writes it through several rows");
      const int64_t position = map_.offset(i);
      if (position < 0 || position >= spec->lead[i]) return Broken(" has no row for it");
      r = r * static_cast<size_t>(spec->lead[i]) + static_cast<size_t>(position);
    }
    if (r >= spec->rows.size()) return Broken(" has no row for it");
    if (spec->Duplicated(r))
      return Broken(" writes it where another row writes too (duplicate indices: ONNX leaves the result undefined)");
    ElementMap result = map_;
    for (size_t i = 0; i < spec->lead.size(); ++i) {
      if (!result.RemoveFixed(0, map_.offset(i))) return Broken("");
    }
    for (size_t k = 0; k < spec->rows[r].size(); ++k) {
      if (!result.InsertFixed(k, spec->rows[r][k])) return Broken("");
    }
    map_ = std::move(result);
    return To(0);
  }

  /// A Concat's output shape from the walked value's: its other axes, and the joined axis summed over
  /// the parts (unknown when one part's size is). Inference cannot know it when the walked value's batch
  /// is an If's or a Slice's "unk__N".
  std::optional<SymShape> ConcatShape() const {
    std::optional<size_t> axis = AxisIndex(AxisAttribute(node_, index_.onnx_opset()), in_shape_->size());
    if (!axis) return std::nullopt;
    SymShape shape = *in_shape_;
    int64_t total = 0;
    for (int k = 0; k < node_.input_size(); ++k) {
      const std::optional<SymShape> part = k == slot_ ? in_shape_ : ShapeOf(index_, path_, node_.input(k));
      if (!part || part->size() != shape.size() || !(*part)[*axis].fixed()) {
        shape[*axis] = SymDim{};
        return shape;
      }
      total += (*part)[*axis].value;
    }
    shape[*axis] = SymDim{total, ""};
    return shape;
  }

  std::optional<SymShape> DimsOrNone() const {
    return in_shape_ && in_shape_->size() == map_.rank() ? in_shape_ : std::nullopt;
  }

  /// The shape of output `out` when the state's value came in with `in_shape_`: what inference says,
  /// completed by what the operator does to the shape.
  SymShape OutputShape(int out) const {
    const std::optional<SymShape> inferred = ShapeOf(index_, path_, node_.output(out));
    const std::string& op = node_.op_type();
    std::optional<SymShape> derived;
    if ((op == "Identity" || op == "Cast" || op == "Dropout") && in_shape_) derived = in_shape_;
    if ((op == "Reshape" || op == "Expand") && node_.input_size() > 1) {
      std::optional<SymShape> target = ShapeValue(index_, path_, node_.input(1));
      SymShape resolved;
      if (target && in_shape_ && op == "Reshape" &&
          ReshapeGroups(*in_shape_, *target, IntAttribute(node_, "allowzero", 0) != 0, &resolved)) {
        derived = resolved;
      } else if (op == "Expand") {
        derived = target;
      }
    }
    if (op == "ScatterND") derived = slot_ == 0 ? in_shape_ : ShapeOf(index_, path_, node_.input(0));
    if (op == "Concat" && in_shape_) derived = ConcatShape();
    if ((op == "Unsqueeze" || op == "Squeeze" || op == "Transpose") && in_shape_) {
      // The map's rank is the output's; the input's dims move as the map's rows did.
      SymShape shape(map_.rank(), SymDim{});
      const SymShape& in = *in_shape_;
      if (op == "Transpose") {
        if (std::optional<std::vector<int64_t>> order = PermOf(node_, static_cast<int64_t>(in.size()));
            order && order->size() == shape.size()) {
          for (size_t i = 0; i < shape.size(); ++i) shape[i] = in[static_cast<size_t>((*order)[i])];
        }
      } else if (std::optional<std::vector<int64_t>> axes = AxesOperand(index_, path_, node_)) {
        const size_t rank = op == "Unsqueeze" ? shape.size() : in.size();
        std::optional<std::vector<int64_t>> listed = NormalizeAxes(*axes, static_cast<int64_t>(rank));
        auto is_listed = [&](size_t i) {
          return std::find(listed->begin(), listed->end(), static_cast<int64_t>(i)) != listed->end();
        };
        for (size_t i = 0, from = 0, k = 0; listed && i < rank; ++i) {
          if (op == "Unsqueeze") {
            shape[i] = is_listed(i) ? SymDim{1, ""} : (from < in.size() ? in[from++] : SymDim{});
          } else if (!is_listed(i) && k < shape.size()) {
            shape[k++] = in[i];
          }
        }
      }
      derived = shape;
    }
    return MergeShapes(inferred, derived);
  }

  const ModelIndex& index_;
  const GraphPath& path_;
  const onnx::NodeProto& node_;
  const int slot_;
  ElementMap& map_;
  std::vector<int32_t>& types_;
  std::optional<SymShape> in_shape_;
};

}  // namespace

ForwardStep StepForward(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, int slot,
                        Holding& at) {
  return Step(index, path, node, slot, at).Run(at.shape);
}

}  // namespace rnnstate
