#pragma once
/// \file
/// The context of a causal window whose Pad fills in `edge`/`reflect` mode or with a value other than zero
/// (time/pad_fill.h): its plan (the Pad's amounts computed from the frames the context was fed) and the
/// nodes that compute them (context_plan.h, ContextFill). context_apply.h adds the nodes.

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "graph/naming.h"
#include "rewrite/context_plan.h"
#include "time/causal_windows.h"

namespace rnnstate {

/// The fill of `window` (CausalWindow::fill set), whose Pad's amounts without the time padding before are
/// `pads_without_time` (time/causal_windows.h: PadsWithoutTimeBefore), its values named after `stem`.
ContextFill PlanContextFill(const CausalWindow& window, std::vector<int64_t> pads_without_time, NameAllocator& names,
                            const std::string& stem);

/// The nodes computing `edit`'s fill amounts from `front`, the context as its Concat takes it, appended to
/// `nodes`. Nothing for an edit without a fill.
void AddContextFillNodes(const ContextEdit& edit, const std::string& front, std::vector<onnx::NodeProto>& nodes);

}  // namespace rnnstate
