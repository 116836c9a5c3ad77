#pragma once
/// \file
/// Part of the one validation every command runs (model_rules.h): the rules of the ONNX spec for the
/// view operators the exposure walks follow. An axis, a perm or a constant index out of range is an
/// invalid model (exit 3), judged where the input's rank (and, for indices, the axis's size) is declared
/// or inferred; where it is not, the walks check every index themselves (view_ops.h).

#include <string>

#include "graph/model_index.h"

namespace rnnstate {

/// The first rule a node of the default domain breaks, as "GRAPH: NODE: RULE", or "":
/// - Unsqueeze, Squeeze: constant axes in range (of the output's rank for Unsqueeze), none listed twice;
///   a squeezed axis of known size has size 1;
/// - Transpose: perm is a permutation of the input's axes;
/// - Reshape: a constant shape has at most one -1, no other negative dim (with allowzero, not 0 and -1);
/// - Slice: constant starts, ends, axes and steps of one length, axes in range and distinct, no step 0;
/// - Gather, Concat, Split: axis in range; Gather's constant indices in range of an axis of known size;
/// - ScatterND: constant indices address at most the data's rank of axes, each in range of an axis of
///   known size.
/// Only constants (initializers, Constant nodes) are judged, never computed values.
std::string FirstViewRuleViolation(const ModelIndex& index);

}  // namespace rnnstate
