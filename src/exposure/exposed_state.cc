#include "exposure/exposed_state.h"

#include "exposure/strided_view.h"
#include "exposure/view_ops.h"
#include "graph/control_flow.h"
#include "graph/proto_access.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

/// The region a map stands for in a tensor of `shape`, with the state axis of each kept axis; nullopt
/// when the state's elements are not one box of the tensor (strided, or several state axes on one axis).
std::optional<std::pair<std::vector<RegionAxis>, std::vector<std::string>>> RegionOf(
    const ElementMap& map, const SymShape& shape, const std::vector<std::string>& state_axes) {
  if (map.rank() != shape.size() || !map.Injective()) return std::nullopt;
  std::vector<RegionAxis> region;
  std::vector<std::string> axes;
  const SymShape& state = map.state();
  for (size_t j = 0; j < map.rank(); ++j) {
    std::vector<size_t> varying = map.Varying(j);
    // A unit state axis that maps here keeps the axis (a Slice of one row does, a Gather does not).
    std::optional<size_t> kept_unit;
    for (size_t a = 0; a < state.size(); ++a) {
      if (map.coef(j, a) == 1 && state[a].fixed() && state[a].value == 1) kept_unit = a;
    }
    // Every index must lie inside the tensor (an axis of unknown size holds only the whole state axis).
    const bool inside = map.offset(j) >= 0 && (!shape[j].fixed() || map.offset(j) < shape[j].value);
    if (varying.empty() && !kept_unit) {
      if (!inside) return std::nullopt;
      region.push_back(RegionAxis{RegionAxis::Kind::kIndex, map.offset(j), 0});
      continue;
    }
    if (varying.size() > 1) return std::nullopt;
    const size_t a = varying.empty() ? *kept_unit : varying[0];
    if (map.coef(j, a) != 1 || !inside) return std::nullopt;
    axes.push_back(state_axes[a]);
    // A dynamic axis (the batch) maps onto a dynamic axis of the tensor whole; an axis whose size shape
    // inference did not find (an If's or a Loop's output: "unk__N") is the whole axis of the tensor it is
    // read from, fixed or not: the views on the way cut other axes.
    const bool whole = map.offset(j) == 0 && !state[a].fixed() && (!shape[j].fixed() || !state[a].known());
    if (whole) {
      region.push_back(RegionAxis{});
    } else if (state[a].fixed()) {
      RegionAxis range{RegionAxis::Kind::kRange, map.offset(j), map.offset(j) + state[a].value};
      if (shape[j].fixed() && range.end > shape[j].value) return std::nullopt;
      if (range.begin == 0 && shape[j].fixed() && range.end == shape[j].value) range = RegionAxis{};
      region.push_back(range);
    } else {
      return std::nullopt;  // a dynamic axis that is not the tensor's whole axis
    }
  }
  return std::make_pair(std::move(region), std::move(axes));
}

std::vector<MetaDim> MetaShapeOf(const SymShape& shape) {
  std::vector<MetaDim> meta;
  for (const SymDim& dim : shape) meta.push_back(dim.fixed() ? MetaDim{dim.value, ""} : MetaDim{-1, dim.name});
  return meta;
}

/// A region of a tensor, or of a view of it (`view` not empty).
struct PlacedRegion {
  std::vector<RegionAxis> region;
  std::vector<std::string> axes;
  std::vector<MetaDim> view;
};

/// The region a map stands for in a tensor of `shape` (see RegionOf), or else in the view of it on which
/// a strided map is a box (see StridedViewOf); nullopt when neither.
std::optional<PlacedRegion> PlaceOf(const ElementMap& map, const SymShape& shape,
                                    const std::vector<std::string>& state_axes) {
  if (auto region = RegionOf(map, shape, state_axes)) return PlacedRegion{region->first, region->second, {}};
  const std::optional<StridedView> view = StridedViewOf(map, shape);
  if (!view) return std::nullopt;
  auto region = RegionOf(view->map, view->shape, state_axes);
  if (!region) return std::nullopt;
  return PlacedRegion{region->first, region->second, MetaShapeOf(view->shape)};
}

bool Compatible(const SymShape& a, const SymShape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].fixed() && b[i].fixed() && a[i].value != b[i].value) return false;
  }
  return true;
}

bool IsWhole(const std::vector<RegionAxis>& region) {
  for (const RegionAxis& axis : region) {
    if (axis.kind != RegionAxis::Kind::kWhole) return false;
  }
  return true;
}

/// True when the first write the text names is a whole output (the final itself, viewed).
bool WrittenWhole(const ModelIndex& index, const std::vector<ElementPlace>& places,
                  const std::vector<std::string>& state_axes) {
  for (const ElementPlace& place : places) {
    std::optional<SymShape> shape = ShapeOf(index, GraphPath{}, place.tensor);
    if (!shape) continue;
    auto region = RegionOf(place.map, *shape, state_axes);
    return region && IsWhole(region->first);
  }
  return false;
}

/// The state's shape with each axis shape inference left unknown taken from the axis of the input it is
/// read from whole (a batch that reached the recurrent node through an If or a computed Slice is
/// "unk__N" to inference, but it is the input's batch); the forward walk then knows the sizes the
/// exporter's Expand and Reshape targets are computed from.
SymShape CompletedShape(const ModelIndex& index, const RecurrentState& state, const ReadTrace& read) {
  SymShape shape = StateShape(state);
  if (!read.place) return shape;
  const std::optional<SymShape> tensor = ShapeOf(index, GraphPath{}, read.place->tensor);
  const ElementMap& map = read.place->map;
  if (!tensor || tensor->size() != map.rank() || map.state().size() != shape.size()) return shape;
  for (size_t a = 0; a < shape.size(); ++a) {
    if (shape[a].known()) continue;
    for (size_t j = 0; j < map.rank(); ++j) {
      if (map.coef(j, a) == 1 && map.offset(j) == 0 && map.Varying(j).size() == 1) shape[a] = (*tensor)[j];
    }
  }
  return shape;
}

std::string PlaceText(const std::string& what, const ElementPlace& place, const SymShape& shape,
                      const std::vector<std::string>& state_axes) {
  auto placed = PlaceOf(place.map, shape, state_axes);
  return what + " '" + place.tensor + "'" +
         (placed ? " " + PlaceSuffix(std::nullopt, placed->region, placed->view) : " (strided)");
}

/// For a state whose slot a graph input feeds itself (the plain case, the input is the state: not a region),
/// why it is no pair: "" when its final value is an output whole (plainly exposed) or reaches none, else
/// the output it is only part of (form 5). nullopt when no graph input feeds the slot.
std::optional<std::string> DirectInputProblem(const ModelIndex& index, const RecurrentState& state) {
  const onnx::NodeProto& owner = ResolveGraph(index.model(), state.owner.graph)->node(state.owner.node);
  if (state.initial_slot >= owner.input_size()) return std::nullopt;
  const std::string& fed = owner.input(state.initial_slot);
  const Producer::Kind kind = index.Resolve(state.owner.graph, fed).producer.kind;
  if (kind != Producer::Kind::kGraphInput && kind != Producer::Kind::kDefaultedInput) return std::nullopt;
  // Form 5: a direct input whose final leaves only as part of a bigger output is not one pair.
  const WriteTrace write = TraceWrite(index, state);
  std::string part;
  for (const ElementPlace& place : write.places) {
    std::optional<SymShape> out_shape = ShapeOf(index, GraphPath{}, place.tensor);
    if (!out_shape) continue;
    auto region = RegionOf(place.map, *out_shape, state.axis_names);
    if (region && IsWhole(region->first)) return "";  // the final is an output: plainly exposed
    if (part.empty()) part = PlaceText("output", place, *out_shape, state.axis_names);
  }
  if (part.empty()) return "";
  return "fed whole by input '" + fed + "' but written to " + part +
         ": not one-to-one (feeding the output back means splitting it into several inputs)";
}

/// Records where `read` found the initial value in `finding` (its place, text, region and view); the
/// shape of the graph input read, nullopt when none is read or its shape is unknown.
std::optional<SymShape> NoteRead(const ModelIndex& index, const ReadTrace& read, const std::vector<std::string>& axes,
                                 ExposureFinding& finding) {
  if (!read.place) return std::nullopt;
  finding.read_place = *read.place;
  std::optional<SymShape> in_shape = ShapeOf(index, GraphPath{}, read.place->tensor);
  if (!in_shape) return std::nullopt;
  finding.read = PlaceText("input", *read.place, *in_shape, axes);
  if (auto placed = PlaceOf(read.place->map, *in_shape, axes)) {
    finding.read_region = placed->region;
    finding.read_view = placed->view;
  }
  return in_shape;
}

}  // namespace

ExposureFinding FindExposure(const ModelIndex& index, const RecurrentState& state, const StateSite& site,
                             const BranchFacts* facts) {
  ExposureFinding finding;
  if (site.carried || !(site.graph == state.owner.graph && site.node == state.owner.node)) return finding;
  // A slot fed by a graph input itself is the plain case (the input is the state): not a region.
  const std::vector<std::string>& axes = state.axis_names;
  if (std::optional<std::string> why_not = DirectInputProblem(index, state)) {
    finding.why_not = *why_not;
    return finding;
  }
  const ReadTrace read = TraceRead(index, state, facts);
  const WriteTrace write = TraceWrite(index, state, CompletedShape(index, state, read), facts);
  finding.writes = write.places;
  const std::optional<SymShape> in_shape = NoteRead(index, read, axes, finding);
  std::string other_type;  // why a place with the same elements is no pair: another element type
  for (const ElementPlace& place : write.places) {
    std::optional<SymShape> out_shape = ShapeOf(index, GraphPath{}, place.tensor);
    if (!out_shape) continue;
    if (finding.written.empty()) finding.written = PlaceText("output", place, *out_shape, axes);
    if (!read.place || !in_shape || place.tensor == read.place->tensor || !place.map.SamePlaces(read.place->map) ||
        !Compatible(*in_shape, *out_shape)) {
      continue;
    }
    // Fed back, the output must be the input's very values: of the same element type, not converted.
    const int32_t in_type = ElemType(index, GraphPath{}, read.place->tensor);
    const int32_t out_type = ElemType(index, GraphPath{}, place.tensor);
    if (in_type == 0 || in_type != out_type) {
      if (other_type.empty()) {
        other_type = "read from " + finding.read + " (" + DataTypeName(in_type) +
                     ") and written to the same elements of " + PlaceText("output", place, *out_shape, axes) + " (" +
                     DataTypeName(out_type) + "): not the same element type (feeding it back would convert it)";
      }
      continue;
    }
    // The region is described as it is read (the same elements as written, see SamePlaces).
    auto placed = PlaceOf(read.place->map, *in_shape, axes);
    if (!placed) continue;
    Exposure exposure{read.place->tensor, place.tensor,           placed->region,
                      placed->axes,       std::nullopt,           read.place->map,
                      placed->view,       MetaShapeOf(*in_shape), ""};
    // The rows form: a range on axis 0, the rest whole, the state's own axes (of the tensor itself).
    bool rows = exposure.view.empty() && !exposure.region.empty() &&
                exposure.region[0].kind == RegionAxis::Kind::kRange && exposure.axes == axes;
    for (size_t j = 1; rows && j < exposure.region.size(); ++j)
      rows = exposure.region[j].kind == RegionAxis::Kind::kWhole;
    if (rows) exposure.rows = RowRange{exposure.region[0].begin, exposure.region[0].end};
    if (finding.candidates.empty()) finding.written = PlaceText("output", place, *out_shape, axes);
    finding.candidates.push_back(std::move(exposure));
  }
  if (!finding.candidates.empty()) return finding;
  if (!read.place) {
    // The origin says where it comes from; say what broke a read that went back through operators.
    if (!read.constant) finding.why_not = "its initial value is not a view of a graph input: " + read.broken;
    return finding;
  }
  if (!other_type.empty()) {
    finding.why_not = other_type;
  } else if (write.places.empty()) {
    finding.why_not = "read from " + finding.read + ", but its final value reaches no graph output" +
                      (write.broken.empty() ? "" : " (" + write.broken + ")");
  } else if (WrittenWhole(index, write.places, axes) &&
             (finding.read_region.empty() || !IsWhole(finding.read_region))) {
    finding.why_not = "read from " + finding.read + " but written whole to " + finding.written +
                      ": not one-to-one (feeding back means packing several outputs into the input)";
  } else {
    finding.why_not = "read from " + finding.read + " but written to " + finding.written + ": not the same elements";
  }
  return finding;
}

bool Exclusive(const RecurrentState& a, const RecurrentState& b) {
  const GraphPath &x = a.owner.graph, &y = b.owner.graph;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (x[i] == y[i]) continue;
    // The first step where they part: the same node, different subgraphs of it (an If's two branches).
    return x[i].node == y[i].node && x[i].attribute != y[i].attribute && IsIfBranch(x[i].attribute) &&
           IsIfBranch(y[i].attribute);
  }
  return false;
}

ClaimConflict ClaimsConflict(const RegionClaim& a, const RegionClaim& b) {
  const bool same_input = a.input == b.input, same_output = a.output == b.output;
  if (!same_input && !same_output) return ClaimConflict::kNone;
  if (RegionsOverlap(a.region, a.view, b.region, b.view, a.shape.empty() ? b.shape : a.shape)) {
    return ClaimConflict::kOverlapping;
  }
  if (same_input != same_output) return ClaimConflict::kCrossed;
  return ClaimConflict::kNone;
}

bool RecordsExposure(const StatePair& pair, const Exposure* exposure) {
  if (!exposure || pair.input != exposure->input || pair.output != exposure->output) return false;
  if (pair.rows != exposure->rows || pair.view != exposure->view) return false;
  return pair.region.empty() ? pair.rows.has_value() : pair.region == exposure->region && pair.axes == exposure->axes;
}

std::string ExposureText(const Exposure& exposure) {
  const std::string where = exposure.rows ? "rows " + RowRangeText(exposure.rows)
                                          : "region " + PlaceSuffix(std::nullopt, exposure.region, exposure.view);
  const std::string axis = exposure.rows ? ", axis 0" : "";
  return where + " of input '" + exposure.input + "'" + axis + " -> " + where + " of output '" + exposure.output + "'" +
         (exposure.default_path_of.empty() ? "" : " (the default path of " + exposure.default_path_of + ")");
}

std::vector<RegionAxis> PairRegion(const StatePair& pair, size_t rank) {
  std::vector<RegionAxis> region = pair.region.empty() ? std::vector<RegionAxis>(rank) : pair.region;
  // The rows, when given, are the region's axis 0 (older metadata has only them).
  if (pair.rows && !region.empty())
    region[0] = RegionAxis{RegionAxis::Kind::kRange, pair.rows->first, pair.rows->second};
  return region;
}

}  // namespace rnnstate
