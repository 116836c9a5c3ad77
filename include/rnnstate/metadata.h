#pragma once
/// \file
/// The public contract with runtimes: model metadata key `rnnstate`, a JSON document listing the state
/// input/output pairs (schema in docs/metadata.md).

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rnnstate/json.h"

namespace rnnstate {

/// The metadata_props key.
inline constexpr const char* kMetadataKey = "rnnstate";
/// The schema version written.
inline constexpr int kMetadataVersion = 1;

/// Rows [first, second) on axis 0 of a stacked state tensor.
using RowRange = std::pair<int64_t, int64_t>;

/// "[0:1]"; "" for no rows.
std::string RowRangeText(const std::optional<RowRange>& rows);
/// [first, second] as a JSON array.
Json RowRangeJson(const RowRange& rows);

/// One axis of a region of a tensor: one index (the axis is dropped), a range [begin, end) (the axis is
/// kept), or the whole axis (kept).
struct RegionAxis {
  enum class Kind { kIndex, kRange, kWhole };
  Kind kind = Kind::kWhole;
  int64_t begin = 0;  ///< the index (kIndex) or the first index (kRange)
  int64_t end = 0;    ///< one past the last index (kRange)
  bool operator==(const RegionAxis& o) const { return kind == o.kind && begin == o.begin && end == o.end; }
};

/// One dimension of a state's shape: a number, or the symbolic name of a data input's dimension.
struct MetaDim {
  int64_t value = -1;  ///< >= 0 when fixed
  std::string symbol;  ///< the name when not fixed ("" only when nothing is known)
  bool operator==(const MetaDim& o) const { return value == o.value && symbol == o.symbol; }
};

/// "[0, :, 4:8]".
std::string RegionText(const std::vector<RegionAxis>& region);
/// The region as JSON: one item per axis, an index, [begin, end], or null.
Json RegionJson(const std::vector<RegionAxis>& region);
/// True when two regions of one tensor (on the same view of it) share an element.
bool RegionsOverlap(const std::vector<RegionAxis>& a, const std::vector<RegionAxis>& b);

/// How an unnamed dimension (a data input that leaves its dimension unnamed) is written in text ("[2,?,128]");
/// in JSON it is `null`.
inline constexpr const char* kUnnamedDimText = "?";

/// "[1,66,16]": a shape (or a view) as numbers and names, an unnamed dimension `?`.
std::string MetaShapeText(const std::vector<MetaDim>& shape);
/// A shape (or a view) as JSON: numbers, names, and `null` for an unnamed dimension.
Json MetaShapeJson(const std::vector<MetaDim>& shape);
/// Reads a shape written by MetaShapeJson (an empty name, as older metadata writes an unnamed dimension,
/// is read as unnamed too); throws std::runtime_error naming `key` for anything else.
std::vector<MetaDim> MetaShapeFromJson(const Json& shape, const std::string& key);

/// A view of a tensor: its elements in row-major order seen with shape `view`, each of whose axes is an
/// axis of the tensor or one of the parts a fixed axis is split into (a strided state, `cache[0, 16*b + h]`,
/// is the box [0, b, h] of the view [1,66,16] of `cache` [1,1056]). Returns, for each axis of `shape`, the
/// first axis of `view` that makes it (and view.size() last), or nullopt when `view` is not such a split
/// of `shape` (other element count, a symbolic axis split or renumbered). A symbolic axis matches a
/// symbolic axis whatever the names (a view records the tensor's own, `shape` may name the data's).
std::optional<std::vector<size_t>> ViewSplit(const std::vector<MetaDim>& view, const std::vector<MetaDim>& shape);

/// True when two regions of one tensor of shape `shape` share an element, each region on its own view
/// (empty: the tensor itself; see ViewSplit). Exact where the views split `shape`; true (overlapping)
/// when one does not.
bool RegionsOverlap(const std::vector<RegionAxis>& a, const std::vector<MetaDim>& a_view,
                    const std::vector<RegionAxis>& b, const std::vector<MetaDim>& b_view,
                    const std::vector<MetaDim>& shape);

/// Where in its tensor a pair's state is: "[0:1]" for rows, "[:, 0, :, 1]" for a region,
/// "[0, 0:33, 0:8] of view [1,66,16]" for a region of a view, "" for all of it.
std::string PlaceSuffix(const std::optional<RowRange>& rows, const std::vector<RegionAxis>& region,
                        const std::vector<MetaDim>& view = {});

/// One step down from a graph to a subgraph: the node holding it (by name) and its attribute, with the
/// position in a list of graphs (GRAPHS attributes; -1 otherwise).
struct PathStep {
  std::string node;
  std::string attribute;
  int64_t index = -1;
  bool operator==(const PathStep& o) const { return node == o.node && attribute == o.attribute && index == o.index; }
};

/// How to make the first call's feed of a state input.
inline constexpr const char* kInitZeros = "zeros";  ///< zeros of `shape`: exactly the model's default
inline constexpr const char* kInitEmpty = "empty";  ///< an empty tensor (batch 0): the model's own default

/// The `layout` of a state pair whose tensors were transposed to put the batch on axis 0.
inline constexpr const char* kLayoutBatchFirst = "batch-first";

/// The `kind` of a context state (see ContextSpec).
inline constexpr const char* kKindContext = "context";

/// What a context state carries: the last `frames` frames along `axis` of the main-graph value `value`
/// (a data input, or the input of a causal window), kept from one call to the next. The graph concatenates the pair's
/// input in front of the value it is fed (the node the pair names is that Concat) and returns the last `frames` frames
/// of the concatenation as the pair's output. Metadata key `"context"` of a pair of kind "context".
struct ContextSpec {
  std::string value;
  int64_t axis = 0;
  int64_t frames = 0;
  /// The causal window over time whose padding the context replaced (`rewrite` made it; "window" in the
  /// document): the Conv or pooling node's name. "" for a context of a data input (`--input-context`).
  std::string window;
  /// `rewrite --lookahead`: the window looked this many frames ahead (its padding after time, dropped);
  /// its output lags the original's by as many frames, and the first call's context holds `frames -
  /// lookahead` frames (the padding before time) instead of `frames` ("lookahead" in the document).
  int64_t lookahead = 0;
  /// The mode of the `Pad` in front of the window when it pads with other than zeros: "constant" (a value
  /// other than 0), "edge" or "reflect" ("pad" in the document). The first call's context is then empty (0
  /// frames on `axis`), and the graph pads the concatenation by `frames` minus the frames fed, in that mode:
  /// the original padding on the first call, none once the context is full. "" for zeros.
  std::string pad;
  /// A window without padding on time (a "valid" window, `rewrite` made it): the first call's context holds
  /// no frames, so the first call emits `frames` output frames fewer, as one run does ("valid" in the
  /// document).
  bool valid = false;
  /// The frames the first call's context holds: none for a `pad` context or a valid window, the padding
  /// before time for one that looked ahead, else `frames`.
  int64_t FirstFrames() const { return valid || !pad.empty() ? 0 : frames - lookahead; }
  /// True when the context's time axis is named rather than fixed (its first call holds fewer frames).
  bool NamedTime() const { return lookahead > 0 || !pad.empty() || valid; }
  bool operator==(const ContextSpec& o) const {
    return value == o.value && axis == o.axis && frames == o.frames && window == o.window &&
           lookahead == o.lookahead && pad == o.pad && valid == o.valid;
  }
};

/// One state pair: feed `output` of one call as `input` of the next.
struct StatePair {
  std::string input;
  std::string output;
  std::string node;        ///< name of the node owning the state
  std::string graph;       ///< graph path of that node, for display ("main", "main/Loop_3:body")
  std::string kind;        ///< "h" or "c" of a recurrent operator, "state" of a loop (readers accept any kind)
  bool optional = true;    ///< the input has a default (may be left unfed)
  /// Chunked runs with the state fed back equal one full run: the recurrence carries the state and the
  /// whole model streams (judged on every output; see the document's "stream" object).
  bool streamable = true;
  /// Set for a state the model exposes stacked (PyTorch's `(h0, c0)`): rows [first, second) on axis 0
  /// of `input` and of `output` are this state's; other pairs hold the other rows of the same tensors.
  std::optional<RowRange> rows;
  /// Set for a state the model exposes in its own packed tensors: the region of `input` its initial value
  /// is read from, which is also the region of `output` its final value is written to, and for each kept
  /// axis of the region which axis of the state it is ("num_directions", "batch", "hidden_size"; the
  /// state's other axes have size 1). Pairs of other states may name the same tensors with other regions.
  std::vector<RegionAxis> region;
  std::vector<std::string> axes;
  // Written since the contract grew (version stays 1; absent in older metadata):
  std::string dtype;           ///< element type of `input` ("float32", ..., "int64", "bool": see ElementTypeName)
  std::vector<MetaDim> shape;  ///< shape of the tensor fed as `input`, the batch named as the data's
  int64_t batch_axis = -1;     ///< the axis of `shape` that is the batch, -1 when none
  std::string init;            ///< kInitZeros or kInitEmpty ("" in older metadata)
  std::vector<PathStep> path;  ///< the graph of `node`, step by step from the main graph (empty: main)
  /// kLayoutBatchFirst when `input` and `output` were transposed to put the batch first (the node itself
  /// takes another layout); "" when they have the node's own layout.
  std::string layout = "";
  /// Kind "state": the carried variable of the loop `node` (its body input name); "" otherwise.
  std::string variable = "";
  /// Set when `region` is not a box of `input` but of a view of it (see ViewSplit: a strided state, one
  /// axis of `input` holding two of the state's axes): the view's shape, one item per axis of `region`.
  std::vector<MetaDim> view = {};
  /// The recurrence carries the state from call to call (forward, no sequence_lens): a runner feeds the
  /// output back. Written only where it differs from `streamable`; absent, it is `streamable`.
  bool carried = true;
  /// Kind "context": what the state carries (set for that kind only).
  std::optional<ContextSpec> context = std::nullopt;

  bool operator==(const StatePair& o) const {
    return input == o.input && output == o.output && node == o.node && graph == o.graph && kind == o.kind &&
           optional == o.optional && streamable == o.streamable && carried == o.carried && rows == o.rows &&
           dtype == o.dtype && shape == o.shape && batch_axis == o.batch_axis && init == o.init && path == o.path &&
           region == o.region && axes == o.axes && view == o.view && layout == o.layout && variable == o.variable &&
           context == o.context;
  }
};

/// "float32" for onnx::TensorProto::FLOAT, "float64", "float16", "bfloat16", and for a loop's integer or
/// bool state "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool" (onnxruntime's
/// names); "" for an element type a state cannot have.
std::string ElementTypeName(int32_t elem_type);

/// The pairs recorded in `model`, or an empty list when there is no `rnnstate` key.
/// Sets `error` (and returns what could be read) when the value is not valid metadata. With `document`,
/// also gives the parsed document (nullopt when there is none, or it is no JSON object), so that a
/// reader of other keys ("packed") does not parse the value again. `bounded`: a document listing more
/// entries than `model` can have states (one per input slot of a node and per main-graph input) is refused
/// at the first entry past that bound, before the rest is parsed: the time is the model's, not the
/// document's (a hostile model lists a million); every command's reading is bounded.
std::vector<StatePair> ReadStatePairs(const onnx::ModelProto& model, std::string* error,
                                      std::optional<Json>* document = nullptr, bool bounded = false);

/// The JSON array of `pairs` (as in the metadata's "states").
Json StatePairsJson(const std::vector<StatePair>& pairs);

/// The complete metadata value for `pairs`.
std::string StateMetadataValue(const std::vector<StatePair>& pairs);

/// The document's key for the whole model's streaming verdict (docs/metadata.md, "stream").
inline constexpr const char* kStreamKey = "stream";

/// Sets the `rnnstate` key of `model` to `pairs`, replacing an old value in place. Other top-level keys of
/// an old value (written by a newer stage, such as "packed") are kept; `stream`, when not null, replaces
/// the "stream" object.
void WriteStatePairs(onnx::ModelProto& model, const std::vector<StatePair>& pairs, const Json& stream = Json());

/// The parsed `rnnstate` document of `model` (an object), or nullopt when there is none or it is not a
/// JSON object.
std::optional<Json> ReadStateDocument(const onnx::ModelProto& model);

/// Sets the `rnnstate` key of `model` to `document` (a complete value: "version", "states", ...).
void WriteStateDocument(onnx::ModelProto& model, const Json& document);

}  // namespace rnnstate
