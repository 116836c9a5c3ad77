#include "rules/validate.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <future>
#include <map>
#include <memory_resource>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/contrib_schemas.h"
#include "graph/graph_path.h"
#include "graph/model_index.h"
#include "graph/shape_inference.h"
#include "rnnstate/error.h"
#include "rules/changed_region.h"

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

/// Why node `n` of `graph` cannot read `name`: a later node defines it (the nodes are not sorted, or
/// form a cycle), or nothing before it does.
std::string UndefinedInput(const onnx::GraphProto& graph, int n, const std::string& name) {
  const std::string reads = DescribeNode(graph.node(n), n) + " reads '" + name + "', which ";
  for (int later = n + 1; later < graph.node_size(); ++later) {
    const auto& outputs = graph.node(later).output();
    if (std::find(outputs.begin(), outputs.end(), name) != outputs.end()) {
      return reads + "a later node, " + DescribeNode(graph.node(later), later) +
             ", defines (nodes must be sorted: a cycle, or nodes out of order)";
    }
  }
  return reads + "nothing before it defines";
}

/// Names visible in the scope being checked: those of the enclosing graphs defined before the node
/// that holds the subgraph, then the scope's own, each with the depth of the scope that defines it
/// (the innermost). Views into the model, which outlives the check. Their memory comes from one
/// monotonic buffer: no malloc and free per name (a million of each on a million-node graph).
using VisibleNames = std::pmr::unordered_map<std::string_view, int>;
using NameSet = std::unordered_set<std::string_view>;

/// Makes room for `more` names at once. Never shrinks: unordered_map::reserve rehashes a big map down to
/// the size asked for, which every small subgraph would do to the main graph's names.
void MakeRoom(VisibleNames& names, size_t more) {
  const size_t wanted = names.size() + more;
  if (static_cast<double>(wanted) > static_cast<double>(names.bucket_count()) * names.max_load_factor()) {
    names.reserve(wanted);
  }
}

/// `depth`: 0 for the main graph; deeper graphs are Loop/Scan bodies or If branches, whose outputs are
/// positional.
std::string CheckScope(const onnx::GraphProto& graph, VisibleNames& visible, int depth, const std::string& where) {
  const bool subgraph = depth > 0;
  // About one name per input, initializer and node: room made once, not by rehashing as the map grows.
  MakeRoom(visible, static_cast<size_t>(graph.input_size() + graph.initializer_size() + graph.node_size()));
  std::vector<std::string_view> added;                     // newly visible here, hidden when the scope ends
  std::vector<std::pair<std::string_view, int>> shadowed;  // outer names defined again here, and their depth
  // `what` names the definition for the message: built only when there is one, not for every name.
  auto define = [&](const std::string& name, const auto& what) -> std::string {
    if (name.empty()) return "";
    auto [known, fresh] = visible.try_emplace(name, depth);
    if (fresh) {
      added.push_back(name);
    } else if (known->second == depth) {
      return where + ": '" + name + "' is defined twice (" + what() + ")";
    } else {
      shadowed.emplace_back(name, known->second);
      known->second = depth;
    }
    return "";
  };
  auto problem = [&]() -> std::string {
    NameSet input_names;
    for (const auto& input : graph.input()) {
      if (!input_names.insert(input.name()).second) return where + ": duplicate graph input '" + input.name() + "'";
      if (auto p = define(input.name(), [] { return "a graph input"; }); !p.empty()) return p;
    }
    for (const auto& tensor : graph.initializer()) {
      if (input_names.count(tensor.name())) continue;  // an overridable default of that input
      if (auto p = define(tensor.name(), [] { return "an initializer"; }); !p.empty()) return p;
    }
    for (int n = 0; n < graph.node_size(); ++n) {
      const auto& node = graph.node(n);
      for (const auto& input : node.input()) {
        if (!input.empty() && !visible.count(input)) return where + ": " + UndefinedInput(graph, n, input);
      }
      for (const auto& attribute : node.attribute()) {
        if (!attribute.has_g() && attribute.graphs_size() == 0) continue;
        // Spelled as GraphPathString spells it, so that every message names a graph the same way.
        const std::string sub_where = where + "/" + NodeLabel(node, n) + ":" + attribute.name();
        if (attribute.has_g()) {
          if (auto p = CheckScope(attribute.g(), visible, depth + 1, sub_where); !p.empty()) return p;
        }
        for (int i = 0; i < attribute.graphs_size(); ++i) {
          const std::string listed = sub_where + "[" + std::to_string(i) + "]";
          if (auto p = CheckScope(attribute.graphs(i), visible, depth + 1, listed); !p.empty()) return p;
        }
      }
      for (const auto& output : node.output()) {
        if (auto p = define(output, [&] { return "an output of " + DescribeNode(node, n); }); !p.empty()) return p;
      }
    }
    NameSet output_names;
    for (const auto& output : graph.output()) {
      // A subgraph's outputs are taken by position, and one value may be two of them (PyTorch's opset-11
      // and -12 loops return h both as the carried value and as the scan output); the main graph's are
      // fetched by name.
      if (!output_names.insert(output.name()).second && !subgraph) {
        return where + ": duplicate graph output '" + output.name() + "'";
      }
      if (!visible.count(output.name())) return where + ": graph output '" + output.name() + "' is never defined";
    }
    return "";
  }();
  if (subgraph) {  // the main graph's names go with the map
    for (auto name : added) visible.erase(name);
    for (const auto& [name, outer] : shadowed) visible[name] = outer;
  }
  return problem;
}

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
  std::unordered_map<std::string_view, const onnx::TypeProto*> inferred;
  const onnx::GraphProto& graph = region->model->graph();
  for (const auto* infos : {&graph.input(), &graph.output(), &graph.value_info()}) {
    for (const auto& info : *infos) {
      if (info.has_type()) inferred.emplace(info.name(), &info.type());
    }
  }
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

std::string StructuralProblem(const onnx::ModelProto& model) {
  std::pmr::monotonic_buffer_resource memory;
  VisibleNames visible(&memory);
  return CheckScope(model.graph(), visible, 0, "main");
}

std::future<std::optional<std::string>> StartChecker(const onnx::ModelProto& model, const std::string& model_dir) {
  if (model.ir_version() > kCheckerMaxIr || !OpsetsKnown(model)) return {};
  return std::async(std::launch::async, [&model, model_dir] { return CheckerProblem(model, model_dir); });
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

void ValidateRewritten(const onnx::ModelProto& model, ValidationBaseline baseline) {
  // Every check only reads the model, and the longest runs on another thread while the structure of the
  // whole is checked here: onnx's checker and shape inference on what the rewrite changed where that
  // suffices (changed_region.h), else shape inference of the whole. (Unlike an input, the output is
  // rnnstate's own rewrite of a model that passed every rule and this inference: a structural problem is
  // a bug of rnnstate, still reported as one.)
  auto infer_whole = [&model] {
    google::protobuf::Arena arena(StructuralCopyArenaOptions());
    // The same inference as the analysis ran on the input, so that only what the rewrite changed can fail.
    return InferShapes(*StructuralCopy(model, arena));
  };
  const bool by_region = ByRegion(baseline);
  std::future<bool> region_passes;
  std::future<std::string> inferred;
  if (by_region) {
    region_passes =
        std::async(std::launch::async, [&model, &baseline] { return ChangedRegionPasses(model, baseline); });
  } else if (baseline.inference_applies) {
    inferred = std::async(std::launch::async, infer_whole);
  }
  if (std::string problem = StructuralProblem(model); !problem.empty()) {
    throw Error(ExitCode::kInternal, "rewritten model is invalid: " + problem);
  }
  if (by_region) {
    if (region_passes.get()) return;
    // The whole model then, which also names the problem if there is one; the input's copy goes first,
    // so that it and the output's are not held at once.
    baseline.input = InferredModel{};
    inferred = std::async(std::launch::async, infer_whole);
  }
  if (baseline.checker_applies) {
    if (const std::optional<std::string> problem = CheckerProblem(model, baseline.model_dir)) {
      throw Error(ExitCode::kInternal, "rewritten model fails onnx's checker: " + *problem);
    }
  }
  if (baseline.inference_applies) {
    if (const std::string error = inferred.get(); !error.empty()) {
      const std::string failure = "rewritten model fails onnx shape inference: " + error;
      if (baseline.checker_applies) throw Error(ExitCode::kInternal, failure);
      // onnx cannot vouch for the input, and the rewrite's new inputs can give inference types it did
      // not have on the input (reaching, say, shapes a node cannot take): the failure cannot be told
      // apart from a defect the model already had. Not "invalid model" (exit 3): that verdict is the
      // shared validation's (model_rules.h), which every command reaches; this one only a rewrite can.
      throw Error(ExitCode::kUnsupported, "cannot validate the rewrite: " + baseline.why_not +
                                              ", and onnx shape inference fails on the rewritten model: " + error);
    }
  }
}

}  // namespace rnnstate
