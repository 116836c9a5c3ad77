#include "rnnstate/pipeline.h"

#include "check.h"
#include "model_rules.h"
#include "report.h"
#include "rewrite.h"

namespace rnnstate {

RewriteResult RewriteForStreaming(onnx::ModelProto& model, const PlanOptions& options, bool strict,
                                  const std::string& model_dir) {
  RewriteOutcome outcome = RewriteModel(model, options, strict, model_dir);
  return RewriteResult{outcome.changed, outcome.plan.pairs, outcome.warnings};
}

std::vector<CheckProblem> CheckForStreaming(const onnx::ModelProto& model) {
  const ModelIndex index = IndexValidModel(model);
  return CheckModel(index, Analyze(index));
}

Json ReportOf(const onnx::ModelProto& model, const std::string& file) {
  RewriteOutcome outcome = PlanRewrite(model, PlanOptions{});
  return ReportJson(file, model, outcome.analysis, outcome.plan);
}

}  // namespace rnnstate
