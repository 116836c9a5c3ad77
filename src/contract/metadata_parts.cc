// The parts of a state pair as text and JSON — element types, row ranges, regions, shapes, views — and
// whether two regions overlap: what metadata.h declares beside the document's reading and writing
// (metadata.cc).

#include <algorithm>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "rnnstate/metadata.h"

namespace rnnstate {

std::string ElementTypeName(int32_t elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT:
      return "float32";
    case onnx::TensorProto::DOUBLE:
      return "float64";
    case onnx::TensorProto::FLOAT16:
      return "float16";
    case onnx::TensorProto::BFLOAT16:
      return "bfloat16";
    // Integer and bool states: a loop's (an autoregressive decoder's token). Names as onnxruntime's.
    case onnx::TensorProto::INT8:
      return "int8";
    case onnx::TensorProto::UINT8:
      return "uint8";
    case onnx::TensorProto::INT16:
      return "int16";
    case onnx::TensorProto::UINT16:
      return "uint16";
    case onnx::TensorProto::INT32:
      return "int32";
    case onnx::TensorProto::UINT32:
      return "uint32";
    case onnx::TensorProto::INT64:
      return "int64";
    case onnx::TensorProto::UINT64:
      return "uint64";
    case onnx::TensorProto::BOOL:
      return "bool";
    default:
      return "";
  }
}

std::string RowRangeText(const std::optional<RowRange>& rows) {
  if (!rows) return "";
  return "[" + std::to_string(rows->first) + ":" + std::to_string(rows->second) + "]";
}

Json RowRangeJson(const RowRange& rows) { return Json::array({rows.first, rows.second}); }

std::string RegionText(const std::vector<RegionAxis>& region) {
  std::string text = "[";
  for (size_t i = 0; i < region.size(); ++i) {
    const RegionAxis& axis = region[i];
    text += i ? ", " : "";
    switch (axis.kind) {
      case RegionAxis::Kind::kIndex:
        text += std::to_string(axis.begin);
        break;
      case RegionAxis::Kind::kRange:
        text += std::to_string(axis.begin) + ":" + std::to_string(axis.end);
        break;
      case RegionAxis::Kind::kWhole:
        text += ":";
        break;
    }
  }
  return text + "]";
}

std::string PlaceSuffix(const std::optional<RowRange>& rows, const std::vector<RegionAxis>& region,
                        const std::vector<MetaDim>& view) {
  if (rows) return RowRangeText(rows);
  if (region.empty()) return "";
  return RegionText(region) + (view.empty() ? "" : " of view " + MetaShapeText(view));
}

std::string MetaShapeText(const std::vector<MetaDim>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    const MetaDim& dim = shape[i];
    text += (i ? "," : "") + (dim.value >= 0       ? std::to_string(dim.value)
                              : dim.symbol.empty() ? kUnnamedDimText
                                                   : dim.symbol);
  }
  return text + "]";
}

Json MetaShapeJson(const std::vector<MetaDim>& shape) {
  Json json = Json::array();
  for (const MetaDim& dim : shape) {
    json.push_back(dim.value >= 0 ? Json(dim.value) : dim.symbol.empty() ? Json(nullptr) : Json(dim.symbol));
  }
  return json;
}

std::vector<MetaDim> MetaShapeFromJson(const Json& shape, const std::string& key) {
  if (!shape.is_array()) throw std::runtime_error("'" + key + "' is not an array");
  std::vector<MetaDim> dims;
  for (const auto& dim : shape) {
    if (dim.is_number_integer() && dim.get<int64_t>() >= 0) {
      dims.push_back(MetaDim{dim.get<int64_t>(), ""});
    } else if (dim.is_string()) {
      dims.push_back(MetaDim{-1, dim.get<std::string>()});
    } else if (dim.is_null()) {
      dims.push_back(MetaDim{-1, ""});
    } else {
      throw std::runtime_error("'" + key + "' holds something other than sizes, names and null (unnamed)");
    }
  }
  return dims;
}

std::optional<std::vector<size_t>> ViewSplit(const std::vector<MetaDim>& view, const std::vector<MetaDim>& shape) {
  std::vector<size_t> first;
  size_t v = 0;
  for (const MetaDim& dim : shape) {
    first.push_back(v);
    if (v == view.size()) return std::nullopt;
    if (dim.value < 0) {
      // A symbolic axis is never split: it is one symbolic axis of the view.
      if (view[v++].value >= 0) return std::nullopt;
      continue;
    }
    // A fixed axis is the product of one or more fixed axes of the view (one, when it has size 1).
    int64_t product = 1;
    do {
      if (view[v].value < 0 || __builtin_mul_overflow(product, view[v].value, &product)) return std::nullopt;
      ++v;
    } while (product < dim.value && v < view.size());
    if (product != dim.value) return std::nullopt;
  }
  if (v != view.size()) return std::nullopt;
  first.push_back(v);
  return first;
}

Json RegionJson(const std::vector<RegionAxis>& region) {
  Json json = Json::array();
  for (const RegionAxis& axis : region) {
    switch (axis.kind) {
      case RegionAxis::Kind::kIndex:
        json.push_back(axis.begin);
        break;
      case RegionAxis::Kind::kRange:
        json.push_back(Json::array({axis.begin, axis.end}));
        break;
      case RegionAxis::Kind::kWhole:
        json.push_back(nullptr);
        break;
    }
  }
  return json;
}

bool RegionsOverlap(const std::vector<RegionAxis>& a, const std::vector<RegionAxis>& b) {
  if (a.size() != b.size()) return true;  // two views of one tensor must agree on its rank
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind == RegionAxis::Kind::kWhole || b[i].kind == RegionAxis::Kind::kWhole) continue;
    const int64_t a_end = a[i].kind == RegionAxis::Kind::kIndex ? a[i].begin + 1 : a[i].end;
    const int64_t b_end = b[i].kind == RegionAxis::Kind::kIndex ? b[i].begin + 1 : b[i].end;
    if (std::max(a[i].begin, b[i].begin) >= std::min(a_end, b_end)) return false;
  }
  return true;
}

namespace {

/// The indices an axis of a region takes (one index, a range, or all `size`).
std::pair<int64_t, int64_t> AxisSpan(const RegionAxis& axis, int64_t size) {
  switch (axis.kind) {
    case RegionAxis::Kind::kIndex:
      return {axis.begin, axis.begin + 1};
    case RegionAxis::Kind::kRange:
      return {axis.begin, axis.end};
    case RegionAxis::Kind::kWhole:
      break;
  }
  return {0, size};
}

/// The indices of one fixed tensor axis that a region takes on the view axes [first, last) splitting it
/// (row-major), sorted; nullopt when the axis has more elements than is sensible to list.
std::optional<std::vector<int64_t>> SplitAxisIndices(const std::vector<RegionAxis>& region,
                                                     const std::vector<MetaDim>& view, size_t first, size_t last) {
  constexpr int64_t kMaxListed = int64_t{1} << 22;
  std::vector<int64_t> indices{0};
  for (size_t k = first; k < last; ++k) {
    const auto [begin, end] = AxisSpan(region[k], view[k].value);
    if (end - begin <= 0) return std::vector<int64_t>{};
    if (static_cast<int64_t>(indices.size()) > kMaxListed / (end - begin)) return std::nullopt;
    std::vector<int64_t> next;
    next.reserve(indices.size() * static_cast<size_t>(end - begin));
    for (int64_t base : indices) {
      for (int64_t i = begin; i < end; ++i) next.push_back(base * view[k].value + i);
    }
    indices = std::move(next);
  }
  return indices;  // sorted: row-major digits in increasing order
}

}  // namespace

bool RegionsOverlap(const std::vector<RegionAxis>& a, const std::vector<MetaDim>& a_view,
                    const std::vector<RegionAxis>& b, const std::vector<MetaDim>& b_view,
                    const std::vector<MetaDim>& shape) {
  if (a_view == b_view) return RegionsOverlap(a, b);
  // Each region is the product, over the tensor's axes, of the indices it takes on that axis: two regions
  // meet when they meet on every axis.
  const std::vector<MetaDim>& av = a_view.empty() ? shape : a_view;
  const std::vector<MetaDim>& bv = b_view.empty() ? shape : b_view;
  const auto a_split = ViewSplit(av, shape), b_split = ViewSplit(bv, shape);
  if (!a_split || !b_split || a.size() != av.size() || b.size() != bv.size()) return true;
  for (size_t j = 0; j < shape.size(); ++j) {
    const size_t a0 = (*a_split)[j], a1 = (*a_split)[j + 1], b0 = (*b_split)[j], b1 = (*b_split)[j + 1];
    if (a1 - a0 == 1 && b1 - b0 == 1) {
      if (!RegionsOverlap({a[a0]}, {b[b0]})) return false;
      continue;
    }
    const auto x = SplitAxisIndices(a, av, a0, a1), y = SplitAxisIndices(b, bv, b0, b1);
    if (!x || !y) continue;  // too many to list: they may meet
    std::vector<int64_t> common;
    std::set_intersection(x->begin(), x->end(), y->begin(), y->end(), std::back_inserter(common));
    if (common.empty()) return false;
  }
  return true;
}

}  // namespace rnnstate
