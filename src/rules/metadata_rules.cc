#include "rules/metadata_rules.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "graph/graph_path.h"
#include "graph/proto_access.h"
#include "rnnstate/error.h"

namespace rnnstate {

namespace {

using Kind = CheckProblem::Kind;

const std::string kWhere = std::string("metadata '") + kMetadataKey + "'";

/// "state pair 'in' -> 'out' (main lstm h)", as check names a pair.
std::string PairLabel(const StatePair& pair) {
  return "state pair '" + pair.input + "' -> '" + pair.output + "' (" + pair.graph + " " + pair.node + " " +
         pair.kind + (pair.variable.empty() ? "" : " '" + pair.variable + "'") + ")";
}

/// The names of ElementTypeName, and the declared element type's name of a tensor value ("" otherwise).
bool KnownDtype(const std::string& dtype) {
  for (int type = onnx::TensorProto::FLOAT; type <= onnx::TensorProto::BFLOAT16; ++type) {
    if (!dtype.empty() && ElementTypeName(type) == dtype) return true;
  }
  return false;
}

const onnx::TypeProto_Tensor* TensorType(const onnx::ValueInfoProto& value) {
  return value.type().has_tensor_type() ? &value.type().tensor_type() : nullptr;
}

std::string MetaText(const std::vector<MetaDim>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    text += (i ? "," : "") + (shape[i].value >= 0       ? std::to_string(shape[i].value)
                              : shape[i].symbol.empty() ? kUnnamedDimText
                                                        : shape[i].symbol);
  }
  return text + "]";
}

/// Why `shape` (metadata) contradicts the declared shape of `value`, or "". A fixed size must equal a
/// fixed declared size; a name may stand for any size (the data's batch); a size may fill a name (a fixed
/// batch that a broadcast default declares symbolic).
std::string ShapeContradiction(const std::vector<MetaDim>& shape, const onnx::ValueInfoProto& value) {
  const onnx::TypeProto_Tensor* tensor = TensorType(value);
  if (tensor == nullptr || !tensor->has_shape() || shape.empty()) return "";
  const onnx::TensorShapeProto& declared = tensor->shape();
  bool contradicts = declared.dim_size() != static_cast<int>(shape.size());
  for (int i = 0; !contradicts && i < declared.dim_size(); ++i) {
    contradicts = declared.dim(i).has_dim_value() && shape[i].value >= 0 &&
                  declared.dim(i).dim_value() != shape[i].value;
  }
  if (!contradicts) return "";
  return "shape " + MetaText(shape) + " contradicts the declared shape " + ShapeText(declared) + " of '" +
         value.name() + "'";
}

/// The main graph's interface, looked up by name.
class Interface {
 public:
  explicit Interface(const onnx::GraphProto& graph) : graph_(graph) {
    inputs_.reserve(graph.input_size());
    for (const auto& input : graph.input()) inputs_.emplace(input.name(), &input);
    for (const auto& output : graph.output()) outputs_.emplace(output.name(), &output);
  }
  const onnx::ValueInfoProto* Input(const std::string& name) const { return Find(inputs_, name); }
  const onnx::ValueInfoProto* Output(const std::string& name) const { return Find(outputs_, name); }
  /// True when the main graph defines `name` (a packed member's value): built on first use.
  bool Defines(const std::string& name) {
    if (defined_.empty()) {
      for (const auto& input : graph_.input()) defined_.insert(input.name());
      for (const auto& tensor : graph_.initializer()) defined_.insert(tensor.name());
      for (const auto& node : graph_.node()) defined_.insert(node.output().begin(), node.output().end());
    }
    return defined_.count(name) > 0;
  }

 private:
  using Map = std::unordered_map<std::string, const onnx::ValueInfoProto*>;
  static const onnx::ValueInfoProto* Find(const Map& map, const std::string& name) {
    auto found = map.find(name);
    return found == map.end() ? nullptr : found->second;
  }
  const onnx::GraphProto& graph_;
  Map inputs_, outputs_;
  std::unordered_set<std::string> defined_;
};

/// The graph a pair's `path` leads to, or nullptr with `problem` set: each step names a node of the graph
/// before (by name, or an unnamed one by the label rnnstate gives it, NodeLabel) with that graph attribute;
/// `graph` must be the path's text. Old metadata (without the contract fields) may lack the path.
const onnx::GraphProto* ResolvePath(const onnx::ModelProto& model, const StatePair& pair, std::string* problem) {
  const onnx::GraphProto* graph = &model.graph();
  if (pair.path.empty() && pair.graph != "main") {
    if (!pair.dtype.empty()) *problem = "graph '" + pair.graph + "' is not the main graph its empty path names";
    return nullptr;
  }
  std::string name = "main";
  for (size_t s = 0; s < pair.path.size(); ++s) {
    const PathStep& step = pair.path[s];
    const onnx::AttributeProto* found = nullptr;
    for (int n = 0; n < graph->node_size() && found == nullptr; ++n) {
      const onnx::NodeProto& node = graph->node(n);
      if (node.name() != step.node && !(node.name().empty() && NodeLabel(node, n) == step.node)) continue;
      for (const auto& attribute : node.attribute()) {
        if (attribute.name() == step.attribute) found = &attribute;
      }
    }
    const std::string where = "path step " + std::to_string(s + 1) + " (" + step.node + ":" + step.attribute + ")";
    if (found == nullptr) {
      *problem = where + ": graph '" + name + "' has no node with that graph attribute";
      return nullptr;
    }
    if (step.index < 0 && found->type() == onnx::AttributeProto::GRAPH) {
      graph = &found->g();
    } else if (step.index >= 0 && found->type() == onnx::AttributeProto::GRAPHS && step.index < found->graphs_size()) {
      graph = &found->graphs(static_cast<int>(step.index));
    } else {
      *problem =
          where + ": the attribute holds no graph" + (step.index >= 0 ? " at index " + std::to_string(step.index) : "");
      return nullptr;
    }
    name += "/" + step.node + ":" + step.attribute + (step.index >= 0 ? "[" + std::to_string(step.index) + "]" : "");
  }
  if (pair.graph != name) {
    *problem = "graph '" + pair.graph + "' is not the graph its path names ('" + name + "')";
    return nullptr;
  }
  return graph;
}

/// The names of the nodes of each graph pairs lead to (unnamed ones by their label), made once per graph.
class NodeNames {
 public:
  bool Has(const onnx::GraphProto& graph, const std::string& name) {
    auto [names, fresh] = names_.try_emplace(&graph);
    if (fresh) {
      for (int n = 0; n < graph.node_size(); ++n) {
        const onnx::NodeProto& node = graph.node(n);
        names->second.insert(node.name().empty() ? NodeLabel(node, n) : node.name());
      }
    }
    return names->second.count(name) > 0;
  }

 private:
  std::unordered_map<const onnx::GraphProto*, std::unordered_set<std::string>> names_;
};

/// Rules on one pair's own fields.
void CheckFields(const StatePair& pair, std::vector<CheckProblem>& problems) {
  const std::string label = kWhere + ": " + PairLabel(pair) + ": ";
  if (!pair.init.empty() && pair.init != kInitZeros && pair.init != kInitEmpty) {
    problems.push_back({Kind::kBadMetadata, label + "init '" + pair.init + "' is not \"zeros\" or \"empty\""});
  }
  if (!pair.dtype.empty() && !KnownDtype(pair.dtype)) {
    problems.push_back({Kind::kBadMetadata, label + "dtype '" + pair.dtype + "' is not an element type a state has"});
  }
  // The fields the contract grew are written all together (WriteContractFields) or not at all.
  const bool grown = !pair.dtype.empty() || !pair.init.empty() || !pair.shape.empty() || !pair.path.empty() ||
                     pair.batch_axis != -1 || !pair.layout.empty();
  if (grown && (pair.dtype.empty() || pair.init.empty())) {
    problems.push_back({Kind::kBadMetadata, label + "dtype, shape, batch_axis, init and path are given together or not at all"});
  }
  // A context state says what it carries; no other kind does.
  if ((pair.kind == kKindContext) != pair.context.has_value()) {
    problems.push_back({Kind::kBadMetadata, label + (pair.context ? "a \"context\" object on a state of kind '" +
                                                                        pair.kind + "'"
                                                                  : std::string("kind \"context\" without its \"context\" object"))});
  }
  const auto rank = static_cast<int64_t>(pair.shape.size());
  // A lookahead's context names its time axis: the first call holds fewer frames than the later ones.
  const auto holds = [&](const MetaDim& dim) {
    return pair.context->NamedFrames() ? dim.value < 0 && !dim.symbol.empty() : dim.value == pair.context->frames;
  };
  if (pair.context && rank > 0 && (pair.context->axis >= rank || !holds(pair.shape[pair.context->axis]))) {
    problems.push_back({Kind::kBadMetadata,
                        label + "shape " + MetaText(pair.shape) + " does not hold " +
                            (pair.context->NamedFrames() ? "a named number of" : std::to_string(pair.context->frames)) +
                            " frames on axis " + std::to_string(pair.context->axis)});
  }
  if (pair.batch_axis < -1 || (pair.batch_axis >= rank && !(rank == 0 && pair.batch_axis == -1))) {
    problems.push_back({Kind::kBadMetadata, label + "batch_axis " + std::to_string(pair.batch_axis) +
                                                " is not an axis of shape " + MetaText(pair.shape)});
  }
}

/// Rules between a (non-packed) pair and the model's inputs and outputs.
void CheckInterface(const StatePair& pair, const Interface& interface, std::vector<CheckProblem>& problems) {
  const std::string label = PairLabel(pair) + ": ";
  const onnx::ValueInfoProto* input = interface.Input(pair.input);
  if (input == nullptr) problems.push_back({Kind::kNotGraphInput, label + "'" + pair.input + "' is not a main-graph input"});
  if (interface.Output(pair.output) == nullptr) {
    problems.push_back({Kind::kNotGraphOutput, label + "'" + pair.output + "' is not a main-graph output"});
  }
  if (input == nullptr) return;
  const onnx::TypeProto_Tensor* tensor = TensorType(*input);
  if (!pair.dtype.empty() && tensor != nullptr && tensor->elem_type() != 0 &&
      ElementTypeName(tensor->elem_type()) != pair.dtype) {
    problems.push_back({Kind::kBadMetadata, kWhere + ": " + label + "dtype '" + pair.dtype + "' contradicts input '" +
                                                pair.input + "' of element type " +
                                                (ElementTypeName(tensor->elem_type()).empty()
                                                     ? std::to_string(tensor->elem_type())
                                                     : ElementTypeName(tensor->elem_type()))});
  }
  // With rows or a region too, `shape` is the whole tensor's.
  std::string contradiction = ShapeContradiction(pair.shape, *input);
  if (!contradiction.empty()) problems.push_back({Kind::kBadMetadata, kWhere + ": " + label + contradiction});
}

/// The region of the tensor a pair takes: its region, its rows on axis 0, or all of it (empty).
std::vector<RegionAxis> Claim(const StatePair& pair) {
  if (!pair.region.empty()) return pair.region;
  if (!pair.rows) return {};
  std::vector<RegionAxis> claim(std::max<size_t>(pair.shape.size(), 1));
  claim[0] = RegionAxis{RegionAxis::Kind::kRange, pair.rows->first, pair.rows->second};
  return claim;
}

/// True when two pairs' states never run in one call: their paths part at one node's different graphs
/// (the branches of an If).
bool Exclusive(const StatePair& a, const StatePair& b) {
  for (size_t i = 0; i < a.path.size() && i < b.path.size(); ++i) {
    if (a.path[i] == b.path[i]) continue;
    return a.path[i].node == b.path[i].node;
  }
  return false;
}

/// Two pairs on one tensor must take parts of it that do not overlap (unless exclusive).
void CheckShared(const std::vector<StatePair>& pairs, const std::vector<size_t>& candidates, bool inputs,
                 std::vector<CheckProblem>& problems) {
  std::map<std::string, std::vector<size_t>> users;
  std::vector<std::string> order;
  for (size_t i : candidates) {
    const std::string& name = inputs ? pairs[i].input : pairs[i].output;
    auto& list = users[name];
    if (list.empty()) order.push_back(name);
    list.push_back(i);
  }
  const std::string what = inputs ? "input" : "output";
  const Kind kind = inputs ? Kind::kDuplicateInput : Kind::kDuplicateOutput;
  for (const std::string& name : order) {
    const std::vector<size_t>& sharing = users[name];
    if (sharing.size() < 2) continue;
    const std::string text = what + " '" + name + "' is in " + std::to_string(sharing.size()) + " state pairs";
    if (sharing.size() > kMaxPairsPerTensor) {
      problems.push_back({kind, text + " (more than " + std::to_string(kMaxPairsPerTensor) + ")"});
      continue;
    }
    bool overlapping = false;
    for (size_t a = 0; a < sharing.size() && !overlapping; ++a) {
      for (size_t b = a + 1; b < sharing.size() && !overlapping; ++b) {
        const StatePair &x = pairs[sharing[a]], &y = pairs[sharing[b]];
        const std::vector<RegionAxis> cx = Claim(x), cy = Claim(y);
        overlapping = !Exclusive(x, y) && (cx.empty() || cy.empty() || RegionsOverlap(cx, cy));
      }
    }
    if (overlapping) problems.push_back({kind, text + " that take the same elements"});
  }
}

std::string RowText(const std::vector<int64_t>& dims) {
  std::vector<MetaDim> shape;
  for (int64_t d : dims) shape.push_back(MetaDim{d, d < 0 ? std::to_string(d) : ""});
  return MetaText(shape);
}

/// Product of `dims`, or -1 when one is negative or the product overflows.
int64_t Elements(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && count > std::numeric_limits<int64_t>::max() / d)) return -1;
    count *= d;
  }
  return count;
}

/// Rules between the packed values and the model: their tensors exist with the declared type and width,
/// and every member's columns lie inside that width.
void CheckPacked(const PackedStates& packed, const Interface& interface, std::vector<CheckProblem>& problems) {
  for (const PackedValue& value : packed.values) {
    const std::string label = "packed value '" + value.input + "' -> '" + value.output + "': ";
    const onnx::ValueInfoProto* input = interface.Input(value.input);
    if (input == nullptr) {
      problems.push_back({Kind::kNotGraphInput, label + "'" + value.input + "' is not a main-graph input"});
    }
    if (interface.Output(value.output) == nullptr) {
      problems.push_back({Kind::kNotGraphOutput, label + "'" + value.output + "' is not a main-graph output"});
    }
    if (!KnownDtype(value.dtype)) {
      problems.push_back({Kind::kBadMetadata, kWhere + ": " + label + "dtype '" + value.dtype +
                                                  "' is not an element type a state has"});
    }
    if (packed.kind != kPackedTensor) continue;
    if (input != nullptr) {
      const onnx::TypeProto_Tensor* tensor = TensorType(*input);
      if (tensor == nullptr || (tensor->elem_type() != 0 && ElementTypeName(tensor->elem_type()) != value.dtype)) {
        problems.push_back({Kind::kBadMetadata, kWhere + ": " + label + "'" + value.input +
                                                    "' is not a tensor of dtype '" + value.dtype + "'"});
      }
      std::string contradiction = ShapeContradiction(value.shape, *input);
      if (!contradiction.empty()) problems.push_back({Kind::kBadMetadata, kWhere + ": " + label + contradiction});
    }
    if (value.shape.size() != 2 || value.batch_axis != 0 || value.shape[1].value < 0) {
      problems.push_back({Kind::kBadMetadata, kWhere + ": " + label + "shape " + MetaText(value.shape) +
                                                  " is not [batch, N] with a fixed width N"});
      continue;
    }
    const int64_t width = value.shape[1].value;
    for (const PackedMember& member : value.members) {
      const int64_t elements = Elements(member.row_shape);
      if (member.offset < 0 || member.length < 0 || member.length != elements || member.offset > width ||
          member.length > width - member.offset) {
        problems.push_back({Kind::kBadMetadata, kWhere + ": " + label + "member '" + member.input + "': columns [" +
                                                    std::to_string(member.offset) + ", +" +
                                                    std::to_string(member.length) + ") of row shape " +
                                                    RowText(member.row_shape) + " do not fit width " +
                                                    std::to_string(width)});
      }
    }
  }
}

}  // namespace

std::string MetadataReading::Summary() const {
  if (problems.empty()) return "";
  const std::string& first = problems.front().message;
  // Pair problems named as check names them gain the key they were read from.
  std::string text = first.rfind(kWhere, 0) == 0 ? first : kWhere + ": " + first;
  if (problems.size() > 1) text += " (and " + std::to_string(problems.size() - 1) + " more)";
  return text;
}

MetadataReading ReadMetadata(const onnx::ModelProto& model) {
  MetadataReading reading;
  std::string error;
  std::optional<Json> document;  // parsed once: a model may carry a million pairs
  reading.pairs = ReadStatePairs(model, &error, &document, /*bounded=*/true);
  if (error.empty() && document) reading.packed = ReadPackedStates(*document, reading.pairs.size(), &error);
  if (error.empty() && document && document->contains(kStreamKey)) {
    try {
      reading.stream = StreamRecordFromJson((*document)[kStreamKey]);
    } catch (const std::exception& e) {
      error = kWhere + " is invalid: " + e.what();
    }
  }
  if (!error.empty()) {
    reading.document_valid = false;
    reading.problems.push_back({Kind::kBadMetadata, error});
    return reading;
  }
  Interface interface(model.graph());
  NodeNames nodes;
  std::vector<char> member(reading.pairs.size(), 0);
  if (reading.packed) {
    for (const PackedValue& value : reading.packed->values) {
      for (const PackedMember& m : value.members) {
        for (int64_t state : m.states) member[static_cast<size_t>(state)] = 1;
      }
    }
    CheckPacked(*reading.packed, interface, reading.problems);
  }
  std::vector<size_t> whole;  // the pairs naming graph inputs and outputs (not packed members)
  for (size_t i = 0; i < reading.pairs.size(); ++i) {
    const StatePair& pair = reading.pairs[i];
    CheckFields(pair, reading.problems);
    std::string problem;
    if (const onnx::GraphProto* graph = ResolvePath(model, pair, &problem)) {
      if (!nodes.Has(*graph, pair.node)) {
        reading.problems.push_back(
            {Kind::kNoSuchNode, PairLabel(pair) + ": no node '" + pair.node + "' in graph '" + pair.graph + "'"});
      }
    } else if (!problem.empty()) {
      reading.problems.push_back({Kind::kBadMetadata, kWhere + ": " + PairLabel(pair) + ": " + problem});
    }
    if (member[i]) {
      // A member names values inside the main graph (the unpacked state and its final value).
      for (const std::string* name : {&pair.input, &pair.output}) {
        if (!interface.Defines(*name)) {
          reading.problems.push_back(
              {Kind::kPackedMismatch, PairLabel(pair) + ": '" + *name + "' is not a value of the main graph"});
        }
      }
      continue;
    }
    CheckInterface(pair, interface, reading.problems);
    whole.push_back(i);
  }
  CheckShared(reading.pairs, whole, /*inputs=*/true, reading.problems);
  CheckShared(reading.pairs, whole, /*inputs=*/false, reading.problems);
  return reading;
}

MetadataReading RequireValidMetadata(const onnx::ModelProto& model) {
  MetadataReading reading = ReadMetadata(model);
  if (!reading.valid()) throw Error(ExitCode::kBadInput, reading.Summary());
  return reading;
}

}  // namespace rnnstate
