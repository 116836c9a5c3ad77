#include "rewrite/plan.h"

#include <algorithm>
#include <optional>

#include "graph/overloaded.h"

namespace rnnstate {

namespace {

/// Appends what `default_value` is to `text` (`original`: the value it stands for).
void AppendDefault(const DefaultEdit& default_value, const std::string& original, std::string& text) {
  std::visit(Overloaded{
                 [&](const NoDefault&) { text += " (required)"; },
                 [&](const ZerosDefault&) { text += " (default: zeros)"; },
                 [&](const BroadcastZerosDefault&) { text += " (default: zeros broadcast to the batch of X)"; },
                 [&](const InitializerDefault& d) {
                   text.append(d.move ? " (default: initializer '" : " (default: copy of initializer '")
                       .append(original)
                       .append("')");
                 },
                 [&](const SelectOriginalDefault&) {
                   text.append(" (default: the original computation of '").append(original).append("')");
                 },
             },
             default_value);
}

/// Appends `what` 'name'`suffix` to `text`.
void AppendQuoted(const char* what, const std::string& name, const std::string& suffix, std::string& text) {
  text.append(what).append(" '").append(name).append("'").append(suffix);
}

}  // namespace

bool StateEdit::Changes() const {
  return !std::holds_alternative<KeepInput>(input_edit) || !std::holds_alternative<KeepOutput>(output_edit);
}

std::string StateEdit::Describe() const {
  // Appended to one string: at 10,000 LSTMs `report` describes 20,000 edits.
  const std::string at_rows = place ? PlaceSuffix(place->rows, place->region, place->view) : "";
  std::string text;
  text.reserve(160 + 2 * (input.size() + output.size()));
  std::visit(
      Overloaded{
          [&](const KeepInput&) { AppendQuoted("input", input, at_rows + " (already exposed)", text); },
          [&](const ReuseInput&) { AppendQuoted("input", input, " (existing graph input)", text); },
          [&](const DropDefault&) { AppendQuoted("input", input, at_rows + " (default removed: required)", text); },
          [&](const DefaultBehindSelect& d) {
            AppendQuoted("input", input, at_rows, text);
            text.append(" (its default kept as '")
                .append(d.default_name)
                .append("', selected when the fed tensor is empty")
                .append(d.keep_empty_default ? ")" : "; required)");
          },
          [&](const NewInput& n) {
            AppendQuoted("new input", input, " ", text);
            text += ShapeText(shape);
            AppendDefault(n.default_value, original, text);
          },
      },
      input_edit);
  if (site.carried) text += ", fed to the loop-carried variable";
  text += "; ";
  std::visit(
      Overloaded{
          [&](const KeepOutput&) { AppendQuoted("output", output, at_rows + " (already exposed)", text); },
          [&](const ReuseOutput&) { AppendQuoted("output", output, " (existing graph output)", text); },
          [&](const NameSlot&) { AppendQuoted("new output", output, "", text); },
          [&](const IdentityOutput&) {
            AppendQuoted("new output", output, " (Identity of '", text);
            text.append(final_value).append("')");
          },
          [&](const ThreadedOutput& t) {
            AppendQuoted("new output", output, " threaded out through", text);
            for (const auto& step : t.steps) {
              const bool branch = step.level.kind == ContainerKind::kIf;
              text.append(" ").append(ThreadLevelOp(step.level)).append(branch ? " (output)" : " (carried variable)");
            }
          },
      },
      output_edit);
  return text;
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

namespace {

/// `items`' keys, sorted, each with its item's index; equal keys in `items`' order.
template <typename Item>
std::vector<PlanLookup::Entry> SortedKeys(const std::vector<Item>& items) {
  std::vector<PlanLookup::Entry> entries;
  entries.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) entries.push_back({&items[i].key, i});
  std::stable_sort(entries.begin(), entries.end(),
                   [](const PlanLookup::Entry& a, const PlanLookup::Entry& b) { return *a.key < *b.key; });
  return entries;
}

/// The index of the first entry of `key` in `entries` (SortedKeys), or nullopt.
std::optional<size_t> FirstOf(const std::vector<PlanLookup::Entry>& entries, const StateKey& key) {
  auto found = std::lower_bound(entries.begin(), entries.end(), key,
                                [](const PlanLookup::Entry& entry, const StateKey& k) { return *entry.key < k; });
  if (found == entries.end() || key < *found->key) return std::nullopt;
  return found->index;
}

}  // namespace

PlanLookup::PlanLookup(const Plan& plan)
    : plan_(plan), edits_(SortedKeys(plan.edits)), skips_(SortedKeys(plan.skipped)) {}

const StateEdit* PlanLookup::FindEdit(const StateKey& key) const {
  const std::optional<size_t> found = FirstOf(edits_, key);
  return found ? &plan_.edits[*found] : nullptr;
}

const SkippedState* PlanLookup::FindSkip(const StateKey& key) const {
  // A skip covers its own state and, with slot -1, every state of its owner: the first in plan order wins.
  const std::optional<size_t> exact = FirstOf(skips_, key);
  const std::optional<size_t> owner = FirstOf(skips_, StateKey{key.graph, key.node, -1});
  const size_t first = std::min(exact.value_or(plan_.skipped.size()), owner.value_or(plan_.skipped.size()));
  return first < plan_.skipped.size() ? &plan_.skipped[first] : nullptr;
}

}  // namespace rnnstate
