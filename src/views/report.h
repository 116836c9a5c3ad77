#pragma once
/// \file
/// `rnnstate report`: the state wiring of a model as a readable table or as JSON (schema in docs/guide.md).

#include <string>

#include "find/analysis.h"
#include "rewrite/plan.h"
#include "rnnstate/json.h"

namespace rnnstate {

/// Version of the report JSON schema.
inline constexpr int kReportVersion = 1;

/// The report as a JSON object: {"version", "file", "opset", "ir_version", "nodes": [...], "pairs": [...],
/// "skipped": [...], "changes"}.
Json ReportJson(const std::string& file, const onnx::ModelProto& model, const Analysis& analysis, const Plan& plan);

/// The report as text for a terminal.
std::string ReportText(const std::string& file, const onnx::ModelProto& model, const Analysis& analysis,
                       const Plan& plan);

}  // namespace rnnstate
