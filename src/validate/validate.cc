#include "validate/validate.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/contrib_schemas.h"
#include "graph/graph_path.h"
#include "graph/helper_thread.h"
#include "graph/model_index.h"
#include "graph/shape_inference.h"
#include "rnnstate/error.h"
#include "rules/structure_rules.h"
#include "validate/changed_region.h"

// Defined and exported by libonnx 1.12 but not declared in its header: the overload that takes a
// context, needed to tell the checker where external data files are (it otherwise looks in the
// current directory).
namespace onnx::checker {
void check_model(const ModelProto& model, CheckerContext& ctx);
}  // namespace onnx::checker

namespace rnnstate {

namespace {

/// The newest IR version and ai.onnx opset that onnx 1.12's checker knows.
constexpr int64_t kCheckerMaxIr = 8;
constexpr int64_t kCheckerMaxOpset = 17;

void RunChecker(const onnx::ModelProto& model, const std::string& model_dir) {
  RegisterContribSchemas();
  onnx::checker::CheckerContext ctx;
  ctx.set_model_dir(model_dir.empty() ? "." : model_dir);
  onnx::checker::check_model(model, ctx);
}

/// RunChecker's verdict: nullopt when `model` passes, else the checker's message.
std::optional<std::string> CheckerProblem(const onnx::ModelProto& model, const std::string& model_dir) {
  try {
    RunChecker(model, model_dir);
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
}

/// True when what `model`'s rewrite changed passes onnx's checker and shape inference and infers the input's
/// types where the rest of the graph reads them (changed_region.h): then the whole model passes. False when
/// the region cannot tell (the whole model is then checked, which also names any problem).
bool ChangedRegionPasses(const onnx::ModelProto& model, const ValidationBaseline& baseline) {
  google::protobuf::Arena arena(StructuralCopyArenaOptions());
  std::optional<ChangedRegion> region = FindChangedRegion(model, baseline.input, arena);
  if (!region) return false;
  try {
    // Every initializer, as the checker checks them in the whole graph (the region holds the changed ones).
    onnx::checker::CheckerContext ctx;
    ctx.set_ir_version(static_cast<int>(model.ir_version()));
    std::unordered_map<std::string, int> opsets;
    for (const auto& opset : model.opset_import()) opsets[opset.domain()] = static_cast<int>(opset.version());
    ctx.set_opset_imports(opsets);
    ctx.set_model_dir(baseline.model_dir.empty() ? "." : baseline.model_dir);
    for (const auto& tensor : model.graph().initializer()) onnx::checker::check_tensor(tensor, ctx);
  } catch (const std::exception&) {
    return false;
  }
  if (CheckerProblem(*region->model, baseline.model_dir)) return false;
  if (!InferShapes(*region->model).empty()) return false;
  // Every graph's: pruned bodies (pruned_bodies.h) define kept values too, each name defined once.
  std::unordered_map<std::string_view, const onnx::TypeProto*> inferred;
  GraphPath root;
  ForEachGraph(region->model->graph(), root, [&](const GraphPath&, const onnx::GraphProto& graph) {
    for (const auto* infos : {&graph.input(), &graph.output(), &graph.value_info()}) {
      for (const auto& info : *infos) {
        if (info.has_type()) inferred.emplace(info.name(), &info.type());
      }
    }
  });
  for (const auto& [name, type] : region->kept) {
    auto found = inferred.find(name);
    const onnx::TypeProto* now = found == inferred.end() ? nullptr : found->second;
    if ((type == nullptr) != (now == nullptr)) return false;
    if (type != nullptr && !SameTypeUpToSymbols(*type, *now)) return false;
  }
  return true;
}

/// Whether the changed region may be checked instead of the whole: onnx's checker and inference passed
/// the input, whose inferred copy is kept.
bool ByRegion(const ValidationBaseline& baseline) {
  return baseline.checker_applies && baseline.inference_applies && baseline.input.model != nullptr;
}

bool OpsetsKnown(const onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    if (IsOnnxDomain(opset.domain()) && opset.version() > kCheckerMaxOpset) return false;
  }
  return true;
}

/// "com.microsoft.DynamicQuantizeLSTM" for every operator of the model (any depth) onnx has no schema for
/// in a domain other than ai.onnx, which onnx's checker skips instead of rejecting.
std::vector<std::string> OpsWithoutSchema(const onnx::ModelProto& model) {
  RegisterContribSchemas();
  std::map<std::string, int64_t> versions;
  for (const auto& opset : model.opset_import()) versions[opset.domain()] = opset.version();
  std::set<std::string> found;
  GraphPath path;
  ForEachGraph(model.graph(), path, [&](const GraphPath&, const onnx::GraphProto& graph) {
    for (const auto& node : graph.node()) {
      if (IsOnnxDomain(node.domain())) continue;
      auto version = versions.find(node.domain());
      const int64_t at = version == versions.end() ? 1 : version->second;
      if (!onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(at), node.domain())) {
        found.insert(node.domain() + "." + node.op_type());
      }
    }
  });
  return {found.begin(), found.end()};
}

}  // namespace

std::future<std::optional<std::string>> StartChecker(const onnx::ModelProto& model, const std::string& model_dir) {
  if (model.ir_version() > kCheckerMaxIr || !OpsetsKnown(model)) return {};
  return StartBeside(model, [&model, model_dir] { return CheckerProblem(model, model_dir); });
}

ValidationBaseline MakeValidationBaseline(const onnx::ModelProto& input, bool inference_succeeded,
                                          const std::string& model_dir,
                                          std::future<std::optional<std::string>> checked) {
  ValidationBaseline baseline;
  baseline.model_dir = model_dir;
  baseline.inference_applies = inference_succeeded;
  baseline.unchecked_ops = OpsWithoutSchema(input);
  if (input.ir_version() > kCheckerMaxIr) {
    baseline.why_not = "IR version " + std::to_string(input.ir_version()) + " is newer than onnx 1.12 knows";
  } else if (!OpsetsKnown(input)) {
    baseline.why_not = "the ai.onnx opset is newer than onnx 1.12 knows";
  } else if (const std::optional<std::string> problem =
                 checked.valid() ? checked.get() : CheckerProblem(input, model_dir)) {
    baseline.why_not = "the input model does not pass onnx's checker (" + *problem + ")";
  } else {
    baseline.checker_applies = true;
  }
  if (!inference_succeeded && baseline.why_not.empty())
    baseline.why_not = "onnx shape inference fails on the input model";
  return baseline;
}

bool ChangesPassOnTheirOwn(const onnx::ModelProto& model, const ValidationBaseline& baseline) {
  return ByRegion(baseline) && ChangedRegionPasses(model, baseline);
}

void ValidateRewritten(onnx::ModelProto& model, ValidationBaseline baseline) {
  // Every check but the last (inference of the whole, which puts back what it wrote) only reads the model.
  // What allocates the most runs on this thread, each cheaper check on another beside it: then what the analysis, the
  // input's copy and the region freed stays in this thread's heap for the next step to reuse (another thread's heap
  // would take fresh memory beside it: at 10,000 LSTMs, 51 MB more at the peak). onnx's checker and shape inference on
  // what the rewrite changed where that suffices (changed_region.h), else on the whole. (Unlike an input, the output is
  // rnnstate's own rewrite of a model that passed every rule and this inference: a structural problem is a bug of
  // rnnstate, still reported as one.) A small model's checks all run on this thread (helper_thread.h).
  std::future<std::string> structure = StartBeside(model, [&model] { return StructuralProblem(model); });
  const bool region_passes = ByRegion(baseline) && ChangedRegionPasses(model, baseline);
  if (std::string problem = structure.get(); !problem.empty()) {
    throw Error(ExitCode::kInternal, "rewritten model is invalid: " + problem);
  }
  if (region_passes) return;
  // The whole model then, which also names the problem if there is one; the input's copy goes first.
  baseline.input = InferredModel{};
  if (baseline.checker_applies) {
    if (const std::optional<std::string> problem = CheckerProblem(model, baseline.model_dir)) {
      throw Error(ExitCode::kInternal, "rewritten model fails onnx's checker: " + *problem);
    }
  }
  if (!baseline.inference_applies) return;
  // The same inference as the analysis ran on the input, so that only what the rewrite changed can fail; on
  // the model itself, after the checker (nothing else reads it now): a copy would take as much memory as the
  // model's graph, the run's peak (10,000 LSTMs: 51 MB of 205).
  const std::string error = InferShapesInPlace(model);
  if (error.empty()) return;
  const std::string failure = "rewritten model fails onnx shape inference: " + error;
  if (baseline.checker_applies) throw Error(ExitCode::kInternal, failure);
  // onnx cannot vouch for the input, and the rewrite's new inputs can give inference types it did not have
  // on the input (reaching, say, shapes a node cannot take): the failure cannot be told apart from a defect
  // the model already had. Not "invalid model" (exit 3): that verdict is the shared validation's
  // (model_rules.h), which every command reaches; this one only a rewrite can.
  throw Error(ExitCode::kUnsupported, "cannot validate the rewrite: " + baseline.why_not +
                                          ", and onnx shape inference fails on the rewritten model: " + error);
}

}  // namespace rnnstate
