#pragma once
/// \file
/// The layouts of ONNX's control-flow operators, in one place:
///   Loop    inputs (M, cond, v_initial...)         body (iter, cond, v...) -> (cond, v..., scan...)
///           outputs (v_final..., scan outputs...)
///   Scan-9+ inputs (state..., scan inputs...)        body (state..., scan elements...) -> (state..., scan...)
///   Scan-8  inputs (sequence_lens, state..., scan...) with a leading batch axis on every value
///   If      inputs (cond)                           then_branch / else_branch () -> one output per If output
/// Which outer value a body input or output corresponds to, whether a container is well formed, whether a
/// state can be threaded out of it, and how a carried variable or branch output is added.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rnnstate {

/// The control-flow operators rnnstate understands; kOther is any other node holding a subgraph.
enum class ContainerKind { kLoop, kScan8, kScan9, kIf, kOther };

/// The subgraph attributes: a Loop's or Scan's body, an If's branches (then first).
inline constexpr char kBody[] = "body";
inline constexpr char kThenBranch[] = "then_branch";
inline constexpr char kElseBranch[] = "else_branch";
inline constexpr const char* kIfBranches[] = {kThenBranch, kElseBranch};

/// "Loop", "Scan" (Scan-8 and Scan-9+ alike) or "If": the operator of a container, as messages name it;
/// "?" for kOther.
const char* ContainerKindName(ContainerKind kind);

/// The kind of `node` in a model whose ai.onnx opset is `onnx_opset` (Scan's layout changed in opset 9).
ContainerKind ContainerKindOf(const onnx::NodeProto& node, int64_t onnx_opset);

/// Why `container` breaks its operator's spec — an If without then_branch or else_branch, a branch with
/// inputs, branches with different output counts or another count than the If's; a Loop or Scan without
/// its body, a Loop body without its iteration number and condition or whose carried values do not match
/// the Loop's inputs, a Loop whose outputs are not the body's after the condition; a Scan without a valid
/// num_scan_inputs, whose body inputs are not one per state variable and scan input or whose outputs are
/// not the body's — or "" (also for kOther). The counts are those onnx's inference functions (and so
/// ONNX Runtime) require. A model with such a node is invalid (see model_rules.h).
std::string ContainerRuleViolation(const onnx::NodeProto& container, ContainerKind kind);

/// Why rnnstate cannot read `container`'s layout: ContainerRuleViolation, or a Loop without its trip count
/// and condition inputs (valid when nothing is carried, but a state cannot be threaded through it); ""
/// when it is well formed or not a control-flow operator.
std::string MalformedContainer(const onnx::NodeProto& container, ContainerKind kind);

/// The number of state variables of a Scan (its inputs before the scan inputs; for Scan-8, including
/// the leading sequence_lens).
int ScanStateCount(const onnx::NodeProto& scan);

/// A Loop's trip count M and initial condition (its inputs 0 and 1); "" when omitted.
const std::string& LoopTripCount(const onnx::NodeProto& loop);
const std::string& LoopInitialCondition(const onnx::NodeProto& loop);

/// A Loop body's iteration number and condition inputs (0 and 1) and its condition output (0); "" when
/// the body lacks them.
const std::string& BodyIterationNumber(const onnx::GraphProto& body);
const std::string& BodyConditionInput(const onnx::GraphProto& body);
const std::string& BodyConditionOutput(const onnx::GraphProto& body);

/// The number of a Scan body's inputs (and of the Scan's outputs) that are state variables: Scan-8's
/// leading sequence_lens has none.
int ScanBodyStateCount(ContainerKind kind, const onnx::NodeProto& scan);

/// The inputs of a Scan that are scan inputs, [first, end): those after its state variables.
struct SlotRange {
  int first = 0;
  int end = 0;
};
SlotRange ScanInputs(const onnx::NodeProto& scan);

/// True when output `slot` of a Loop or Scan is a scan output (it comes after the carried values or state
/// variables); false for an If and kOther.
bool IsScanOutput(ContainerKind kind, const onnx::NodeProto& container, int slot);

/// An If's condition (its input 0; "" when absent), the branch it runs when the condition is
/// `condition`, the other branch of `branch` ("" when `branch` is no If branch), and whether a subgraph
/// attribute is an If branch.
const std::string& IfCondition(const onnx::NodeProto& node);
const char* IfBranchTaken(bool condition);
const char* OtherBranch(const std::string& branch);
bool IsIfBranch(const std::string& attribute);

/// A loop-carried variable: its slot in the container's inputs and outputs and in the body's.
struct CarriedVariable {
  int node_input = -1;
  int node_output = -1;
  int body_input = -1;
  int body_output = -1;
};

/// The carried variable that body input `position` of a well-formed Loop or Scan-9+ is, or nullopt
/// (the iteration number, the condition, a scan element, or another kind of container).
std::optional<CarriedVariable> CarriedAtBodyInput(ContainerKind kind, const onnx::NodeProto& container, int position);

/// Where body input `position` takes its values from: container inputs (first iteration; for kOther
/// and If every input, conservatively) and, for a carried variable, the body output of the previous
/// iteration (-1: none).
struct BodyInputSources {
  std::vector<int> node_inputs;
  int body_output = -1;
};
BodyInputSources SourcesOfBodyInput(ContainerKind kind, const onnx::NodeProto& container, int position);

/// The body output that container output `slot` returns (a Loop skips the body's condition), or -1 when
/// any body output may be (kOther).
int BodyOutputOfNodeOutput(ContainerKind kind, int slot);

/// The container output that body output `position` returns (the inverse of BodyOutputOfNodeOutput), or
/// -1: a Loop body's condition, or kOther.
int NodeOutputOfBodyOutput(ContainerKind kind, int position);

/// True when a state can be threaded out of subgraph `attribute` of a container of this kind: a Loop
/// or Scan-9+ body (as an added carried variable) or an If branch (as an added output).
bool CanThreadOut(ContainerKind kind, const std::string& attribute);

/// The names of one added carried variable or branch output (see AddThreadedValue).
struct ThreadedValue {
  std::string initial;      ///< Loop/Scan: the container's new input (value before the first iteration)
  std::string inner;        ///< the subgraph's new output
  std::string body_input;   ///< Loop/Scan: the body's new input
  std::string other_inner;  ///< If: the other branch's new output (an Identity of `initial`)
  std::string outer;        ///< the container's new output
};

/// Threads `value` (a value of subgraph `inner`) out of `container`: an Identity inside `inner` makes the
/// subgraph's new output (ONNX Runtime rejects a subgraph output that is an outer name); a Loop or Scan
/// gets a new carried variable started from `names.initial` (so zero iterations return it) in the place
/// its layout requires; an If gets a new output of both branches, `other` passing `names.initial`
/// through. `type` is the ValueInfo (without name) of every new subgraph input and output. For apply.
void AddThreadedValue(ContainerKind kind, onnx::NodeProto& container, onnx::GraphProto& inner, onnx::GraphProto* other,
                      const std::string& value, const ThreadedValue& names, const onnx::ValueInfoProto& type);

/// Gives a new If node its two branches (then first). For apply.
void SetIfBranches(onnx::NodeProto& node, onnx::GraphProto then_branch, onnx::GraphProto else_branch);

}  // namespace rnnstate
