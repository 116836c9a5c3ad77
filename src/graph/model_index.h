#pragma once
/// \file
/// An index of every graph scope of a model — who produces each value, who
/// consumes it (including references from nested subgraphs), its declared or inferred type, and every
/// name in use anywhere. Read-only: built once from the loaded model, invalid after a rewrite.

#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graph/graph_path.h"
#include "graph/naming.h"
#include "graph/proto_access.h"
#include "graph/shape_inference.h"

namespace rnnstate {

/// Where a value visible in a graph comes from.
struct Producer {
  enum class Kind {
    kGraphInput,   ///< a graph input without initializer (must be fed)
    kInitializer,  ///< an initializer that is not a graph input
    kDefaultedInput,  ///< a graph input with an initializer of the same name (overridable default)
    kNode,         ///< output `slot` of node `index`
    kOuterScope,   ///< not defined in this graph: a value of an enclosing graph
  };
  Kind kind = Kind::kOuterScope;
  int index = -1;  ///< graph input / initializer / node index, by kind
  int slot = -1;   ///< output slot for kNode
};

/// A use of a value by a node of the same graph: input `slot`, or -1 when a subgraph of that node
/// refers to the value from the outer scope.
struct Consumer {
  int node = -1;
  int slot = -1;
};

/// The uses of one value.
using Consumers = std::pmr::vector<Consumer>;

/// What one graph knows of one value: who produces it, who uses it, its type. Its uses take their memory
/// from the map holding the entry.
struct ValueEntry {
  using allocator_type = std::pmr::polymorphic_allocator<Consumer>;
  explicit ValueEntry(const allocator_type& memory = {}) : consumers(memory) {}
  ValueEntry(const ValueEntry& other, const allocator_type& memory)
      : producer(other.producer), consumers(other.consumers, memory), type(other.type) {}
  ValueEntry(ValueEntry&& other, const allocator_type& memory)
      : producer(other.producer), consumers(std::move(other.consumers), memory), type(other.type) {}

  Producer producer;                      ///< kOuterScope when this graph does not define the value
  Consumers consumers;                    ///< uses in this graph
  const onnx::TypeProto* type = nullptr;  ///< declared or inferred, or nullptr
};

/// The index of one graph (main graph or subgraph). The map with an entry per value is keyed by views of
/// the names in the indexed model (or, for a name only inference declares, in the ModelIndex's inferred
/// copy; the model must not change while its index lives) and takes its memory from the ModelIndex: no
/// allocation per value to build it, no free to drop it, and one entry per value, not one per map.
struct GraphIndex {
  explicit GraphIndex(std::pmr::memory_resource* memory = std::pmr::get_default_resource()) : values(memory) {}

  GraphPath path;
  std::optional<GraphPath> parent;  ///< empty for the main graph
  /// Every value this graph defines, uses or declares a type for. The types come from the model's
  /// declarations, completed by onnx shape inference when it succeeded; they point into the ModelIndex's
  /// inferred copy of the model, which outlives every GraphIndex.
  std::pmr::unordered_map<std::string_view, ValueEntry> values;
  std::unordered_map<std::string, int> outputs;     ///< graph output name -> position
  std::unordered_map<std::string, int> inputs;      ///< graph input name -> position
  std::unordered_map<std::string, int> initializers;  ///< initializer name -> position
  /// Names this graph's subgraphs read from outer scopes, per node of this graph.
  std::map<int, std::set<std::string>> outer_references;
  /// The index of the enclosing graph (nullptr for the main graph), and this graph in the indexed model
  /// (not in the inferred copy): names resolve upwards without looking paths up again.
  const GraphIndex* parent_index = nullptr;
  const onnx::GraphProto* proto = nullptr;

  /// The producer of `name` in this graph, or a kOuterScope producer when it is not defined here.
  Producer ProducerOf(const std::string& name) const;
  /// True when this graph defines `name` (an input, an initializer or a node output).
  bool Defines(const std::string& name) const { return ProducerOf(name).kind != Producer::Kind::kOuterScope; }
  /// Uses of `name` in this graph (empty vector when unused).
  const Consumers& ConsumersOf(const std::string& name) const;
  /// The declared or inferred tensor type of `name`, or nullptr.
  const onnx::TypeProto* TypeOf(const std::string& name) const;
};

/// A name resolved through the scopes: the graph that defines it, its producer there and, for a node's
/// output, that node.
struct ResolvedName {
  GraphPath graph;
  Producer producer;                   ///< kOuterScope only when no enclosing graph defines the name
  const onnx::NodeProto* node = nullptr;  ///< the producing node (kNode), else nullptr
  const GraphIndex* index = nullptr;      ///< the index of `graph`
};

/// The index of a whole model.
class ModelIndex {
 public:
  /// Indexes `model`. Runs onnx shape inference on a structural copy (tensor payloads are not copied)
  /// while another thread indexes producers, uses and names from `model`; if inference fails,
  /// `inference_error()` says why and only declared types are known. `model` must outlive the index and
  /// not change while it lives.
  explicit ModelIndex(const onnx::ModelProto& model) : ModelIndex(model, MakeStructuralCopy(model)) {}
  /// Indexes `model` from `copy`, its StructuralCopy made beforehand (IndexValidModel makes it beside the
  /// structural rules).
  ModelIndex(const onnx::ModelProto& model, OwnedCopy copy);

  const onnx::ModelProto& model() const { return *model_; }
  /// The index of the graph at `path`; throws std::out_of_range for an unknown path.
  const GraphIndex& graph(const GraphPath& path) const;
  const std::map<GraphPath, GraphIndex>& graphs() const { return graphs_; }
  /// Resolves `name` as seen from the graph at `path`, following outer-scope references upwards: where
  /// it is defined, and by which node.
  ResolvedName Resolve(const GraphPath& path, const std::string& name) const;
  /// The declared or inferred type of `name` as seen from `path` (searching enclosing graphs), or nullptr.
  const onnx::TypeProto* TypeOf(const GraphPath& path, const std::string& name) const;
  /// True when `name` is a value, node or graph name used anywhere in the model.
  bool UsesName(const std::string& name) const;
  /// A NameAllocator of value and node names that avoids every name the model uses (UsesName); the
  /// index must outlive it.
  NameAllocator NewNames() const {
    return NameAllocator([this](const std::string& name) { return UsesName(name); });
  }
  /// The dim_param names used anywhere in the model: views into the index's inferred copy of the model,
  /// valid as long as the index.
  const NameViews& used_dim_params() const { return used_dim_params_; }
  /// The ai.onnx opset the model imports (0 if none).
  int64_t onnx_opset() const { return onnx_opset_; }
  const std::string& inference_error() const { return inference_error_; }
  /// The structural copy shape inference ran on, with the types it inferred: the model as it was when
  /// indexed (later changes to the model do not reach it). Shares its memory, which outlives the index.
  InferredModel inferred() const {
    return InferredModel{arena_, inferred_, declared_value_infos_, declared_in_subgraphs_};
  }

 private:
  const onnx::ModelProto* model_;
  // Owns the inferred structural copy and the initializer types that `types` point to; one arena, so
  // that neither costs an allocation per message. Shared with inferred()'s callers.
  std::shared_ptr<google::protobuf::Arena> arena_;
  const onnx::ModelProto* inferred_ = nullptr;
  int declared_value_infos_ = 0;  ///< of the main graph, before inference added its own
  /// Of every subgraph of the inferred copy, by its address there, before inference added its own.
  std::shared_ptr<const std::unordered_map<const onnx::GraphProto*, int>> declared_in_subgraphs_;
  // The memory of the maps below, released at once with the index (declared first: dropped last).
  std::unique_ptr<std::pmr::monotonic_buffer_resource> memory_;
  std::map<GraphPath, GraphIndex> graphs_;
  /// The same graphs by hashed path: graph() is called for nearly every name looked up.
  std::unordered_map<GraphPath, const GraphIndex*, GraphPathHash> by_path_;
  /// The main graph's, which most look-ups ask for: found without hashing a path.
  const GraphIndex* main_ = nullptr;
  /// Adds the names of `graph` that its index's maps do not hold to used_names_.
  void CollectNames(const onnx::GraphProto& graph, const GraphIndex& index);

  NameViews used_names_;  ///< with the main graph's map of values, every name in use (UsesName)
  NameViews used_dim_params_;
  int64_t onnx_opset_ = 0;
  std::string inference_error_;
};

}  // namespace rnnstate
