#pragma once
/// \file
/// What `report` says of the whole model's streaming: the time axes chunked runs cut, each output's
/// verdict (frames that concatenate, the last call's value, the same every call, or different and why),
/// and what that leaves for the states (time/stream_verdict.h).

#include <string>

#include "find/analysis.h"
#include "rnnstate/json.h"

namespace rnnstate {

/// The section of the text report ("" for a model without recurrent nodes).
std::string StreamText(const Analysis& analysis);

/// The report's "stream" object: the metadata's form (contract/stream_record.h) plus "note".
Json StreamJson(const Analysis& analysis);

/// The per-node verdict line: "yes", or "no (why)" — the node's own reason, or the whole model's. `states`:
/// the node's states (Analysis::StatesOf), so that a report of many nodes reads each state once.
std::string NodeStreamText(const RecurrentNode& node, const std::vector<const StateAnalysis*>& states);

}  // namespace rnnstate
