#include "rewrite/plan.h"

#include <algorithm>

#include "graph/overloaded.h"

namespace rnnstate {

namespace {

std::string DescribeDefault(const DefaultEdit& default_value, const std::string& original) {
  return std::visit(
      Overloaded{
          [](const NoDefault&) -> std::string { return " (required)"; },
          [](const ZerosDefault&) -> std::string { return " (default: zeros)"; },
          [](const BroadcastZerosDefault&) -> std::string { return " (default: zeros broadcast to the batch of X)"; },
          [&](const InitializerDefault& d) -> std::string {
            return d.move ? " (default: initializer '" + original + "')"
                          : " (default: copy of initializer '" + original + "')";
          },
          [&](const SelectOriginalDefault&) -> std::string {
            return " (default: the original computation of '" + original + "')";
          },
      },
      default_value);
}

}  // namespace

bool StateEdit::Changes() const {
  return !std::holds_alternative<KeepInput>(input_edit) || !std::holds_alternative<KeepOutput>(output_edit);
}

std::string StateEdit::Describe() const {
  const std::string at_rows = place ? PlaceSuffix(place->rows, place->region, place->view) : "";
  std::string in = std::visit(
      Overloaded{
          [&](const KeepInput&) { return "input '" + input + "'" + at_rows + " (already exposed)"; },
          [&](const ReuseInput&) { return "input '" + input + "' (existing graph input)"; },
          [&](const DropDefault&) { return "input '" + input + "'" + at_rows + " (default removed: required)"; },
          [&](const DefaultBehindSelect& d) {
            return "input '" + input + "'" + at_rows + " (its default kept as '" + d.default_name +
                   "', selected when the fed tensor is empty" + (d.keep_empty_default ? ")" : "; required)");
          },
          [&](const NewInput& n) {
            return "new input '" + input + "' " + ShapeText(shape) + DescribeDefault(n.default_value, original);
          },
      },
      input_edit);
  if (site.carried) in += ", fed to the loop-carried variable";
  std::string out = std::visit(
      Overloaded{
          [&](const KeepOutput&) { return "output '" + output + "'" + at_rows + " (already exposed)"; },
          [&](const ReuseOutput&) { return "output '" + output + "' (existing graph output)"; },
          [&](const NameSlot&) { return "new output '" + output + "'"; },
          [&](const IdentityOutput&) { return "new output '" + output + "' (Identity of '" + final_value + "')"; },
          [&](const ThreadedOutput& t) {
            std::string text = "new output '" + output + "' threaded out through";
            for (const auto& step : t.steps) {
              const bool branch = step.level.kind == ContainerKind::kIf;
              text += std::string(" ") + ThreadLevelOp(step.level) + (branch ? " (output)" : " (carried variable)");
            }
            return text;
          },
      },
      output_edit);
  return in + "; " + out;
}

std::string ContextEdit::Describe() const {
  const std::string what = "context of '" + value + "' (last " + std::to_string(frames) + " frames along axis " +
                           std::to_string(axis) + ")";
  if (std::holds_alternative<KeepContext>(change)) return what + ": recorded, kept";
  if (std::holds_alternative<DropContextDefault>(change)) return what + ": '" + input + "' default removed (required)";
  const auto& added = std::get<NewContext>(change);
  const bool zeros = std::holds_alternative<ContextZerosDefault>(added.default_value);
  std::string first = zeros ? " (default: zeros)" : " (required)";
  if (lookahead > 0) {
    // Carried with its lookahead (--lookahead): the first context is the padding before time alone.
    // Counted in this value's frames; an upsampling after it makes the output's delay (stream.delay) larger.
    first = " (first: " + std::to_string(frames - lookahead) + " frames of zeros; its window looks ahead " +
            std::to_string(lookahead) + (lookahead == 1 ? " frame" : " frames") +
            " of this value: its output comes that late)";
  }
  if (fill) {
    first = " (first: empty; its Pad fills what the context lacks, mode " + fill->mode + ")";
  }
  if (valid) first = " (first: no frames; its window has no padding: the first call emits " + std::to_string(frames) +
                     " frames fewer, as one run does)";
  return what + ": '" + input + "' -> '" + output + "', concatenated in front of it for " +
         std::to_string(added.readers.size()) + " reader(s)" + first;
}

bool Plan::ChangesModel() const {
  if (!node_names.empty() || metadata_changes) return true;
  for (const auto& edit : edits) {
    if (edit.Changes()) return true;
  }
  for (const auto& context : contexts) {
    if (context.Changes()) return true;
  }
  return false;
}

const StateEdit* Plan::FindEdit(const StateKey& key) const {
  for (const auto& edit : edits) {
    if (edit.key == key) return &edit;
  }
  return nullptr;
}

const SkippedState* Plan::FindSkip(const StateKey& key) const {
  for (const auto& skip : skipped) {
    if (skip.key.Covers(key)) return &skip;
  }
  return nullptr;
}

PlanLookup::PlanLookup(const Plan& plan) : plan_(plan) {
  for (size_t i = 0; i < plan.edits.size(); ++i) edits_.emplace(plan.edits[i].key, i);
  for (size_t i = 0; i < plan.skipped.size(); ++i) skips_.emplace(plan.skipped[i].key, i);
}

const StateEdit* PlanLookup::FindEdit(const StateKey& key) const {
  auto found = edits_.find(key);
  return found == edits_.end() ? nullptr : &plan_.edits[found->second];
}

const SkippedState* PlanLookup::FindSkip(const StateKey& key) const {
  // A skip covers its own state and, with slot -1, every state of its owner: the first in plan order wins.
  auto exact = skips_.find(key);
  auto owner = skips_.find(StateKey{key.graph, key.node, -1});
  size_t first = plan_.skipped.size();
  if (exact != skips_.end()) first = exact->second;
  if (owner != skips_.end()) first = std::min(first, owner->second);
  return first < plan_.skipped.size() ? &plan_.skipped[first] : nullptr;
}

}  // namespace rnnstate
