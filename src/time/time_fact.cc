#include "time/time_fact.h"

namespace rnnstate {

std::string TimeFactText(const TimeFact& fact) {
  std::string text;
  switch (fact.kind) {
    case TimeFact::Kind::kSteady:
      text = "steady";
      break;
    case TimeFact::Kind::kFrames:
      text = "frames on axis " + std::to_string(fact.axis);
      if (fact.folded) text += fact.outer ? " (time folded outermost)" : " (time folded with other axes)";
      if (fact.positions) text += ", positions";
      break;
    case TimeFact::Kind::kFinal:
      text = "final";
      break;
    case TimeFact::Kind::kLength: {
      text = "length at [";
      for (size_t i = 0; i < fact.elements.size(); ++i) text += (i ? "," : "") + std::to_string(fact.elements[i]);
      text += "]";
      if (!fact.folded_elements.empty()) {
        text += ", folded at [";
        for (size_t i = 0; i < fact.folded_elements.size(); ++i) {
          text += (i ? "," : "") + std::to_string(fact.folded_elements[i]);
        }
        text += "]";
      }
      break;
    }
    case TimeFact::Kind::kFirst:
      text = "first frames";
      break;
    case TimeFact::Kind::kMixed:
      text = "mixed";
      break;
  }
  if (fact.broken && fact.kind != TimeFact::Kind::kMixed) text += ", inexact";
  return text;
}

TimeFact RemapLength(const TimeFact& length, const std::function<std::optional<int64_t>(int64_t)>& map) {
  std::vector<int64_t> exact, folded;
  for (int64_t e : length.elements) {
    if (std::optional<int64_t> to = map(e)) exact.push_back(*to);
  }
  for (int64_t e : length.folded_elements) {
    if (std::optional<int64_t> to = map(e)) folded.push_back(*to);
  }
  if (exact.empty() && folded.empty()) return TimeFact::Steady();
  TimeFact out = TimeFact::Length(std::move(exact), std::move(folded));
  out.length_of = length.length_of;
  return out;
}

std::optional<TimeBreak> FirstBreak(const std::vector<const TimeFact*>& facts) {
  for (const TimeFact* fact : facts) {
    if (fact != nullptr && fact->broken) return fact->broken;
  }
  return std::nullopt;
}

}  // namespace rnnstate
