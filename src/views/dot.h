#pragma once
/// \file
/// `rnnstate report --format dot`: the state wiring of a model as a Graphviz digraph — each recurrent
/// node with where its initial states come from and where its final states go, inside nested clusters
/// for the Loop / If / Scan subgraphs it sits in, with what is not exposed or not streamable marked.

#include <onnx/onnx_pb.h>

#include <string>

#include "find/analysis.h"
#include "rewrite/plan.h"

namespace rnnstate {

/// The picture as DOT source (one `digraph`), for `dot -Tsvg`. `file` is shown as the title.
std::string ReportDot(const std::string& file, const onnx::ModelProto& model, const Analysis& analysis,
                      const Plan& plan);

/// `text` as a quoted DOT string: quotes and backslashes escaped, newlines as `\n`.
std::string DotQuote(const std::string& text);

}  // namespace rnnstate
