#pragma once
/// \file
/// The part of a rewritten model that differs from the model it was rewritten from, cut out as a model of
/// its own, so that onnx's checker and shape inference run on what the rewrite changed instead of on the
/// whole graph again (on a million-node graph, the rewrite's longest step after the input's own
/// inference).
///
/// Why checking the region is as good as checking the whole, for a main graph whose only subgraphs are in
/// nodes the rewrite changed (the If of a computed default), without model-local functions, whose input
/// passed onnx's checker and shape inference:
/// - onnx's checker looks at each node alone (its schema, its attributes, the opsets), at each graph input,
///   output and initializer alone, and at names (defined before use, defined once), which rnnstate's own
///   structural check covers on the whole output — but for a name a subgraph defines again, which the
///   checker refuses and the region, holding part of the main graph, could miss: no name a changed node's
///   subgraphs define may be one the main graph defines. A node, input, output or initializer equal to the
///   input's passed there.
/// - onnx's shape inference gives a node's outputs from the node and the types (and, for initializers and
///   Constant nodes, the data) of its inputs; it fails on a node, or where an inferred type contradicts a
///   declared one. A node equal to an input's node, whose inputs have the types they had in the input,
///   infers what it inferred there. So the region holds every node that is not equal to one of the input's,
///   reads a graph input or initializer that changed, or defines a value whose declaration changed; it
///   reads everything else as inputs typed as the input's inference typed them; and what its nodes define
///   that the input had too must be inferred as the input's inference did (up to dim_param names, on which
///   no shape function fails) — else nodes outside it could see other types.
/// Wherever that argument does not hold, FindChangedRegion says so and the whole model is validated.

#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

#include "graph/shape_inference.h"

namespace rnnstate {

/// The changed part of a rewritten model, as a model (FindChangedRegion).
struct ChangedRegion {
  /// Opsets, IR version and metadata of the rewritten model; its graph holds the changed nodes (and the
  /// Constant nodes they read), the changed graph inputs, outputs and initializers, and an input for every
  /// other value the changed nodes read, typed as the input model's inference typed it.
  onnx::ModelProto* model = nullptr;
  /// Values the region's nodes define that the input model defined too, each with the type the input's
  /// inference gave it (nullptr: none): the region must infer the same (SameTypeUpToSymbols).
  std::vector<std::pair<std::string, const onnx::TypeProto*>> kept;
  int changed_nodes = 0;  ///< nodes of the rewritten main graph in the region (Constant nodes it reads aside)
};

/// The region of `rewritten` that differs from `before` — the input model's StructuralCopy after shape
/// inference (ModelIndex::inferred), which must hold one — allocated on `arena`; nullopt when the region cannot stand
/// for the whole model: an unchanged node with a subgraph, a changed one whose subgraphs define a name the
/// main graph defines or hold more nodes than the main graph, model-local functions, IR version below 4 or
/// changed, opsets changed, sparse initializers, a value the region reads whose type the input's inference
/// left incomplete, a Constant the rest reads now given by a changed node, or most of the graph changed
/// (validating the whole costs no more). Reads both models only.
std::optional<ChangedRegion> FindChangedRegion(const onnx::ModelProto& rewritten, const InferredModel& before,
                                               google::protobuf::Arena& arena);

/// True when `a` and `b` are the same type except for the names of symbolic dimensions: the same element
/// types, ranks, and dimension values where either has one.
bool SameTypeUpToSymbols(const onnx::TypeProto& a, const onnx::TypeProto& b);

}  // namespace rnnstate
