#include "graph/control_flow.h"

#include "graph/graph_edit.h"
#include "graph/model_index.h"
#include "graph/proto_access.h"

namespace rnnstate {

namespace {

/// Scan-9 dropped Scan-8's batch axis and its leading sequence_lens input.
constexpr int64_t kScanWithoutBatchOpset = 9;

/// Inserts `value` at `position` of a repeated field (protobuf only appends).
template <typename T>
void InsertAt(google::protobuf::RepeatedPtrField<T>* field, int position, T value) {
  *field->Add() = std::move(value);
  for (int i = field->size() - 1; i > position; --i) field->SwapElements(i, i - 1);
}

/// "1 input", "2 inputs".
std::string Counted(int64_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

onnx::ValueInfoProto Named(const onnx::ValueInfoProto& type, const std::string& name) {
  onnx::ValueInfoProto info = type;
  info.set_name(name);
  return info;
}

template <typename Names>
const std::string& NameAt(const Names& names, int position) {
  static const std::string kNone;
  return position < names.size() ? names.Get(position) : kNone;
}

template <typename Values>
const std::string& ValueNameAt(const Values& values, int position) {
  static const std::string kNone;
  return position < values.size() ? values.Get(position).name() : kNone;
}

/// The number of a Loop's carried values, by its inputs (trip count and condition first).
int LoopCarriedCount(const onnx::NodeProto& loop) { return loop.input_size() - 2; }

}  // namespace

ContainerKind ContainerKindOf(const onnx::NodeProto& node, int64_t onnx_opset) {
  if (!IsOnnxDomain(node.domain())) return ContainerKind::kOther;
  const std::string& op = node.op_type();
  if (op == "Loop") return ContainerKind::kLoop;
  if (op == "If") return ContainerKind::kIf;
  if (op == "Scan") return onnx_opset >= kScanWithoutBatchOpset ? ContainerKind::kScan9 : ContainerKind::kScan8;
  return ContainerKind::kOther;
}

const char* ContainerKindName(ContainerKind kind) {
  switch (kind) {
    case ContainerKind::kLoop:
      return "Loop";
    case ContainerKind::kScan8:
    case ContainerKind::kScan9:
      return "Scan";
    case ContainerKind::kIf:
      return "If";
    case ContainerKind::kOther:
      break;
  }
  return "?";
}

std::string ContainerRuleViolation(const onnx::NodeProto& container, ContainerKind kind) {
  switch (kind) {
    case ContainerKind::kIf: {
      // The counts onnx's If inference (and so ONNX Runtime) requires: branches without inputs, each
      // with one output per If output.
      for (const char* branch : kIfBranches) {
        if (!GraphAttribute(container, branch)) return std::string("the If has no ") + branch;
      }
      for (const char* branch : kIfBranches) {
        if (const int inputs = GraphAttribute(container, branch)->input_size(); inputs > 0) {
          return std::string("the If's ") + branch + " has " + Counted(inputs, "input") + " (an If branch takes none)";
        }
      }
      const int then_outputs = GraphAttribute(container, kThenBranch)->output_size();
      const int else_outputs = GraphAttribute(container, kElseBranch)->output_size();
      if (then_outputs != else_outputs) {
        return "the If's then_branch has " + Counted(then_outputs, "output") + ", but its else_branch " +
               std::to_string(else_outputs);
      }
      if (then_outputs != container.output_size()) {
        return "the If has " + Counted(container.output_size(), "output") + ", but its branches have " +
               std::to_string(then_outputs);
      }
      return "";
    }
    case ContainerKind::kLoop: {
      // Body: (iteration number, condition, carried...) -> (condition, carried..., scan outputs...);
      // Loop: (trip count, condition, carried...), where a Loop that carries nothing may omit the first two.
      const onnx::GraphProto* body = GraphAttribute(container, kBody);
      if (body == nullptr) return "the Loop has no body";
      if (body->input_size() < 2) return "the Loop body lacks its iteration number and condition inputs";
      const int carried = body->input_size() - 2;
      if (body->output_size() < 1 + carried) {
        return "the Loop body has " + Counted(body->output_size(), "output") + ", fewer than its condition and " +
               Counted(carried, "carried value");
      }
      const bool omitted = carried == 0 && container.input_size() < 2;
      if (!omitted && container.input_size() != 2 + carried) {
        return "the Loop has " + Counted(container.input_size(), "input") + ", but its body carries " +
               Counted(carried, "value") + " (trip count, condition and one input per carried value)";
      }
      // onnx's Loop inference (and so ONNX Runtime) requires one Loop output per body output after the
      // condition: the carried values' finals, then the scan outputs.
      if (container.output_size() != body->output_size() - 1) {
        return "the Loop has " + Counted(container.output_size(), "output") + ", but its body returns " +
               std::to_string(body->output_size() - 1) + " after its condition (one Loop output for each)";
      }
      return "";
    }
    case ContainerKind::kScan8:
    case ContainerKind::kScan9: {
      const onnx::AttributeProto* count = FindAttribute(container, "num_scan_inputs");
      if (count == nullptr) return "the Scan has no num_scan_inputs";
      if (count->i() < 1 || count->i() > container.input_size()) {
        return "the Scan's num_scan_inputs " + std::to_string(count->i()) + " is not between 1 and its " +
               Counted(container.input_size(), "input");
      }
      const onnx::GraphProto* body = GraphAttribute(container, kBody);
      if (body == nullptr) return "the Scan has no body";
      // onnx's Scan inference (and so ONNX Runtime): one body input per state variable and scan input
      // (Scan-8's sequence_lens has none), one Scan output per body output.
      const int inputs = container.input_size() - (kind == ContainerKind::kScan8 ? 1 : 0);
      if (body->input_size() != inputs) {
        return "the Scan body has " + Counted(body->input_size(), "input") + ", but the Scan passes it " +
               std::to_string(inputs) + " (one per state variable and scan input)";
      }
      if (container.output_size() != body->output_size()) {
        return "the Scan has " + Counted(container.output_size(), "output") + ", but its body returns " +
               std::to_string(body->output_size());
      }
      return "";
    }
    case ContainerKind::kOther:
      return "";
  }
  return "";
}

std::string MalformedContainer(const onnx::NodeProto& container, ContainerKind kind) {
  if (std::string rule = ContainerRuleViolation(container, kind); !rule.empty()) return rule;
  if (kind == ContainerKind::kLoop && container.input_size() < 2) {
    return "the Loop lacks its trip count/condition inputs";
  }
  return "";
}

int ScanStateCount(const onnx::NodeProto& scan) {
  return scan.input_size() - static_cast<int>(IntAttribute(scan, "num_scan_inputs", 0));
}

const std::string& LoopTripCount(const onnx::NodeProto& loop) { return NameAt(loop.input(), 0); }
const std::string& LoopInitialCondition(const onnx::NodeProto& loop) { return NameAt(loop.input(), 1); }

const std::string& BodyIterationNumber(const onnx::GraphProto& body) { return ValueNameAt(body.input(), 0); }
const std::string& BodyConditionInput(const onnx::GraphProto& body) { return ValueNameAt(body.input(), 1); }
const std::string& BodyConditionOutput(const onnx::GraphProto& body) { return ValueNameAt(body.output(), 0); }

int ScanBodyStateCount(ContainerKind kind, const onnx::NodeProto& scan) {
  return ScanStateCount(scan) - (kind == ContainerKind::kScan8 ? 1 : 0);  // Scan-8's sequence_lens
}

SlotRange ScanInputs(const onnx::NodeProto& scan) { return SlotRange{ScanStateCount(scan), scan.input_size()}; }

bool IsScanOutput(ContainerKind kind, const onnx::NodeProto& container, int slot) {
  switch (kind) {
    case ContainerKind::kLoop:
      return slot >= LoopCarriedCount(container);
    case ContainerKind::kScan8:
    case ContainerKind::kScan9:
      return slot >= ScanBodyStateCount(kind, container);
    case ContainerKind::kIf:
    case ContainerKind::kOther:
      break;
  }
  return false;
}

const std::string& IfCondition(const onnx::NodeProto& node) { return NameAt(node.input(), 0); }

const char* IfBranchTaken(bool condition) { return condition ? kThenBranch : kElseBranch; }

const char* OtherBranch(const std::string& branch) {
  if (branch == kThenBranch) return kElseBranch;
  if (branch == kElseBranch) return kThenBranch;
  return "";
}

bool IsIfBranch(const std::string& attribute) { return attribute == kThenBranch || attribute == kElseBranch; }

std::optional<CarriedVariable> CarriedAtBodyInput(ContainerKind kind, const onnx::NodeProto& container, int position) {
  if (!MalformedContainer(container, kind).empty()) return std::nullopt;
  if (kind == ContainerKind::kLoop) {
    if (position < 2) return std::nullopt;  // the iteration number and the condition
    const int carried = position - 2;
    return CarriedVariable{2 + carried, carried, position, 1 + carried};
  }
  if (kind == ContainerKind::kScan9) {
    if (position < 0 || position >= ScanStateCount(container)) return std::nullopt;
    return CarriedVariable{position, position, position, position};
  }
  return std::nullopt;
}

BodyInputSources SourcesOfBodyInput(ContainerKind kind, const onnx::NodeProto& container, int position) {
  BodyInputSources sources;
  auto input = [&](int k) {
    if (k >= 0 && k < container.input_size()) sources.node_inputs.push_back(k);
  };
  switch (kind) {
    case ContainerKind::kLoop:
      // Body inputs: iteration number, condition, carried values; body outputs: condition, carried values.
      if (position >= 1) {
        input(position);
        sources.body_output = position - 1;
      }
      break;
    case ContainerKind::kScan8:
    case ContainerKind::kScan9: {
      const int states = ScanBodyStateCount(kind, container);
      input(position + ScanStateCount(container) - states);  // after Scan-8's sequence_lens
      if (position < states) sources.body_output = position;
      break;
    }
    case ContainerKind::kIf:
    case ContainerKind::kOther:
      for (int k = 0; k < container.input_size(); ++k) input(k);
      break;
  }
  return sources;
}

int BodyOutputOfNodeOutput(ContainerKind kind, int slot) {
  switch (kind) {
    case ContainerKind::kLoop:
      return slot + 1;
    case ContainerKind::kScan8:
    case ContainerKind::kScan9:
    case ContainerKind::kIf:
      return slot;
    case ContainerKind::kOther:
      return -1;
  }
  return -1;
}

int NodeOutputOfBodyOutput(ContainerKind kind, int position) {
  switch (kind) {
    case ContainerKind::kLoop:
      return position - 1;  // -1 for the condition
    case ContainerKind::kScan8:
    case ContainerKind::kScan9:
    case ContainerKind::kIf:
      return position;
    case ContainerKind::kOther:
      break;
  }
  return -1;
}

bool CanThreadOut(ContainerKind kind, const std::string& attribute) {
  return ((kind == ContainerKind::kLoop || kind == ContainerKind::kScan9) && attribute == kBody) ||
         kind == ContainerKind::kIf;
}

void SetIfBranches(onnx::NodeProto& node, onnx::GraphProto then_branch, onnx::GraphProto else_branch) {
  SetGraphAttribute(node, kThenBranch, std::move(then_branch));
  SetGraphAttribute(node, kElseBranch, std::move(else_branch));
}

void AddThreadedValue(ContainerKind kind, onnx::NodeProto& container, onnx::GraphProto& inner, onnx::GraphProto* other,
                      const std::string& value, const ThreadedValue& names, const onnx::ValueInfoProto& type) {
  *inner.add_node() = MakeNode("Identity", {value}, {names.inner});
  switch (kind) {
    case ContainerKind::kLoop: {
      const int carried = LoopCarriedCount(container);
      container.add_input(names.initial);
      InsertAt(container.mutable_output(), carried, names.outer);
      *inner.add_input() = Named(type, names.body_input);
      InsertAt(inner.mutable_output(), 1 + carried, Named(type, names.inner));
      return;
    }
    case ContainerKind::kScan9: {
      const int states = ScanStateCount(container);
      InsertAt(container.mutable_input(), states, names.initial);
      InsertAt(container.mutable_output(), states, names.outer);
      InsertAt(inner.mutable_input(), states, Named(type, names.body_input));
      InsertAt(inner.mutable_output(), states, Named(type, names.inner));
      return;
    }
    case ContainerKind::kIf:
      *inner.add_output() = Named(type, names.inner);
      *other->add_node() = MakeNode("Identity", {names.initial}, {names.other_inner});
      *other->add_output() = Named(type, names.other_inner);
      container.add_output(names.outer);
      return;
    case ContainerKind::kScan8:
    case ContainerKind::kOther:
      break;
  }
}

}  // namespace rnnstate
