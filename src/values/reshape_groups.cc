#include "values/reshape_groups.h"

#include <cstdint>
#include <utility>

namespace rnnstate {

namespace {

int64_t StaticProduct(const SymShape& shape, size_t from, size_t to) {
  int64_t product = 1;
  for (size_t i = from; i < to; ++i) product *= shape[i].value;
  return product;
}

/// `in` with its one dim of unknown size (no name) taken from a `target` whose sizes are all fixed: a Reshape that
/// runs keeps the count of elements (tf2onnx reshapes a Loop's scan output, of a length onnx's inference
/// does not know, to `[60, 1, H]`). Unchanged when that does not decide it.
SymShape SizedByTarget(SymShape in, const SymShape& target) {
  int64_t target_product = 1, in_product = 1;
  for (const SymDim& d : target) {
    if (!d.fixed()) return in;
    target_product *= d.value;
  }
  SymDim* open = nullptr;
  for (SymDim& d : in) {
    if (d.fixed()) {
      in_product *= d.value;
    } else if (open != nullptr || d.known()) {  // a named dim stays what its name says
      return in;
    } else {
      open = &d;
    }
  }
  if (open == nullptr || in_product == 0 || target_product % in_product != 0) return in;
  *open = SymDim{target_product / in_product, ""};
  return in;
}

/// A Reshape's target with 0 (copy) and -1 (the rest) resolved against the input's shape `in`.
struct ResolvedTarget {
  SymShape target;
  std::vector<bool> copied;  ///< per target axis: a copy (0) is that very input axis, even of an unknown size
  int inferred = -1;         ///< the target axis that was -1 (or of a size unknown to us)
  int inferred_from = -1;    ///< the input axis a -1 takes its size from, even an unknown size
};

std::optional<ResolvedTarget> ResolveTarget(const SymShape& in, SymShape given, bool allow_zero) {
  ResolvedTarget r;
  SymShape& target = r.target;
  target = std::move(given);
  r.copied.assign(target.size(), false);
  for (size_t j = 0; j < target.size(); ++j) {
    if (target[j].fixed() && target[j].value == 0 && !allow_zero) {
      if (j >= in.size()) return std::nullopt;
      target[j] = in[j];
      r.copied[j] = true;
    } else if (!target[j].known()) {
      // -1 in the target (or a size unknown to us, which the input's size then decides the same way).
      if (r.inferred >= 0) return std::nullopt;
      r.inferred = static_cast<int>(j);
    }
  }
  if (r.inferred >= 0) {
    SymShape symbolic_in, symbolic_out;
    int64_t in_product = 1, out_product = 1;
    for (const SymDim& d : in) (d.fixed() ? in_product *= d.value, void() : symbolic_in.push_back(d));
    for (size_t j = 0; j < target.size(); ++j) {
      if (static_cast<int>(j) == r.inferred) continue;
      if (target[j].fixed())
        out_product *= target[j].value;
      else
        symbolic_out.push_back(target[j]);
    }
    if (out_product == 0 || in_product % out_product != 0) return std::nullopt;
    if (symbolic_in.size() == symbolic_out.size() + 1 && in_product == out_product) {
      // The one dynamic dim of the input that no other target dim names ([B, T, 1, H] to [-1, T, H]: B).
      std::vector<bool> named(in.size(), false);
      for (const SymDim& out_dim : symbolic_out) {
        for (size_t i = 0; i < in.size(); ++i) {
          if (!named[i] && !in[i].fixed() && in[i].known() && in[i] == out_dim) {
            named[i] = true;
            break;
          }
        }
      }
      std::vector<size_t> left;
      for (size_t i = 0; i < in.size(); ++i) {
        if (!in[i].fixed() && !named[i]) left.push_back(i);
      }
      if (left.size() != 1) return std::nullopt;
      r.inferred_from = static_cast<int>(left[0]);
      target[r.inferred] = in[left[0]];
    } else if (symbolic_in.size() == symbolic_out.size()) {
      target[r.inferred] = SymDim{in_product / out_product, ""};
    } else {
      return std::nullopt;
    }
  }
  return r;
}

std::optional<std::vector<ReshapeGroup>> MatchedGroups(SymShape in, SymShape target, bool allow_zero,
                                                       SymShape* resolved);
std::optional<std::vector<ReshapeGroup>> TrailingRestGroups(const SymShape& in, const SymShape& target, bool allow_zero,
                                                            SymShape* resolved);

}  // namespace

std::optional<std::vector<ReshapeGroup>> ReshapeGroups(SymShape in, SymShape target, bool allow_zero,
                                                       SymShape* resolved) {
  if (std::optional<std::vector<ReshapeGroup>> groups = MatchedGroups(in, target, allow_zero, resolved)) return groups;
  return TrailingRestGroups(in, target, allow_zero, resolved);
}

namespace {

/// The groups when the target's sizes (its -1 resolved) can be matched axis by axis.
std::optional<std::vector<ReshapeGroup>> MatchedGroups(SymShape in, SymShape target, bool allow_zero,
                                                       SymShape* resolved) {
  std::optional<ResolvedTarget> r = ResolveTarget(in, std::move(target), allow_zero);
  if (!r) return std::nullopt;
  target = std::move(r->target);
  const std::vector<bool>& copied = r->copied;
  const int inferred = r->inferred;
  const int inferred_from = r->inferred_from;
  if (resolved != nullptr) *resolved = target;
  in = SizedByTarget(std::move(in), target);
  std::vector<ReshapeGroup> groups;
  size_t i = 0, j = 0;
  while (i < in.size() || j < target.size()) {
    if (i < in.size() && in[i].fixed() && in[i].value == 1) {
      groups.push_back({{i++}, {}});
      continue;
    }
    if (j < target.size() && target[j].fixed() && target[j].value == 1) {
      groups.push_back({{}, {j++}});
      continue;
    }
    if (i >= in.size() || j >= target.size()) return std::nullopt;
    if (!in[i].fixed() || !target[j].fixed()) {
      const bool same_axis =
          (copied[j] && i == j) || (static_cast<int>(j) == inferred && static_cast<int>(i) == inferred_from);
      if (!same_axis && (!in[i].known() || !(in[i] == target[j]))) return std::nullopt;
      groups.push_back({{i++}, {j++}});
      continue;
    }
    size_t i_end = i + 1, j_end = j + 1;
    while (StaticProduct(in, i, i_end) != StaticProduct(target, j, j_end)) {
      if (StaticProduct(in, i, i_end) < StaticProduct(target, j, j_end)) {
        if (i_end >= in.size() || !in[i_end].fixed()) return std::nullopt;
        ++i_end;
      } else {
        if (j_end >= target.size() || !target[j_end].fixed()) return std::nullopt;
        ++j_end;
      }
    }
    if (i_end - i > 1 && j_end - j > 1) return std::nullopt;  // a regrouping, not a split or a merge
    ReshapeGroup group;
    for (size_t k = i; k < i_end; ++k) group.in.push_back(k);
    for (size_t k = j; k < j_end; ++k) group.out.push_back(k);
    groups.push_back(std::move(group));
    i = i_end;
    j = j_end;
  }
  return groups;
}

/// A target whose last axis is -1 after axes that the input's first axes fill exactly (`[B, C, 1, 3, T, F]`
/// to `[B, 3C, -1]`, nn.Unfold's export): the -1 holds every input axis left, whatever their sizes. The
/// first axes must be of known sizes (fixed or named) for that to be proven.
std::optional<std::vector<ReshapeGroup>> TrailingRestGroups(const SymShape& in, const SymShape& target, bool allow_zero,
                                                            SymShape* resolved) {
  if (target.empty() || target.back().known()) return std::nullopt;
  const SymShape head(target.begin(), target.end() - 1);
  for (const SymDim& d : head) {
    if (!d.known() || (allow_zero && d.fixed() && d.value == 0)) return std::nullopt;
  }
  for (size_t i = 0; i < in.size() && (i == 0 || in[i - 1].known()); ++i) {
    if (in[i].fixed() && in[i].value == 1) continue;  // a unit axis after the head goes with the head
    SymShape head_resolved;
    std::optional<std::vector<ReshapeGroup>> groups = ReshapeGroups(
        SymShape(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(i)), head, allow_zero, &head_resolved);
    if (!groups) continue;
    ReshapeGroup rest;
    for (size_t k = i; k < in.size(); ++k) rest.in.push_back(k);
    rest.out.push_back(head.size());
    groups->push_back(std::move(rest));
    if (resolved != nullptr) {
      *resolved = std::move(head_resolved);
      resolved->push_back(SymDim{});
    }
    return groups;
  }
  return std::nullopt;
}

}  // namespace

}  // namespace rnnstate
