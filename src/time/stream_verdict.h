#pragma once
/// \file
/// Does the model stream? The whole model's verdict: the time axes chunked runs cut (time_sources.h),
/// what the time flow (time_flow.h) finds at each graph output — the same every call, frames that
/// concatenate, the last call's value, or different from one whole run and why — and what that means for
/// the states: a state streams only when its recurrence carries it and every output is reproduced. The
/// recurrences that run within each frame (their batch holds time) are no stream's state at all.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "contract/stream_record.h"
#include "find/analysis.h"
#include "graph/model_index.h"
#include "time/causal_windows.h"
#include "time/time_fact.h"
#include "time/time_flow.h"
#include "time/time_lookahead.h"
#include "time/time_sources.h"

namespace rnnstate {

/// One graph output, judged.
struct OutputVerdict {
  enum class Kind {
    kSame,     ///< the same on every call (time does not reach it)
    kFrames,   ///< chunks concatenated along `axis` give the whole run's
    kLast,     ///< the last call's value is the whole run's (a final state, or computed from one)
    kDiffers,  ///< chunked runs do not give the whole run's: `broken` says where and why
  };
  std::string output;
  /// A state pair's output (the model's own, such as h_n, or one a rewrite added): the pair's `streamable`
  /// speaks for it, and the metadata's "stream" object leaves it out (a rewrite adds such outputs).
  bool state = false;
  Kind kind = Kind::kSame;
  int64_t axis = -1;
  std::optional<TimeBreak> broken;
};

/// "same", "frames", "last", "differs": as metadata and JSON reports write them.
const char* OutputVerdictName(OutputVerdict::Kind kind);

/// The final value of a state that is no graph output yet, judged as the output a rewrite adds for it
/// (its pair then speaks for it): a rewrite's verdict is the one its output will get.
struct AddedStateOutput {
  StateKey state;
  /// "h state", "carried 'h_prev'": with `owner`, how the verdict's problem names it until a rewrite
  /// names its output ("the final h state of LSTM 'l1'").
  std::string which;
  TimeBreak owner;        ///< the recurrent node or loop (no `why`)
  OutputVerdict verdict;  ///< `output` empty, `state` true
};

/// The whole model's verdict.
struct StreamVerdict {
  TimeAxes time;
  std::vector<OutputVerdict> outputs;  ///< every main-graph output, in order (empty without a time axis)
  /// The states' final values a rewrite adds as outputs, in the order of the analysis' states.
  std::vector<AddedStateOutput> added;
  /// "" when chunked runs equal one run (or there is no time axis to chunk); else the first reason,
  /// naming the output (the model's data outputs, then its state outputs, then the added ones): "output
  /// 'y': Conv 'c' slides a window of 5 frames over time (...)", "the final h state of LSTM 'l' (an output
  /// a rewrite adds): ...".
  std::string problem;
  /// The causal windows whose context a rewrite carries as a state (when asked to): the flow judged the
  /// model with their padding replaced, as the rewrite will make it.
  std::vector<CausalWindow> windows;
  /// Chunks reproduce one run only when their length is a multiple of this (the strides over time).
  int64_t chunk_multiple = 1;
  /// The model's lookahead (time/time_lookahead.h): the frames after each output frame it needs.
  Lookahead lookahead;
  /// The frames the outputs lag the original's by: the lookahead, where windows that look ahead are
  /// carried (`rewrite --lookahead`, or a model it made); 0 otherwise. Chunked runs then concatenate to
  /// the whole run's frames but the last `delay`, which a flush of as many frames of zeros brings.
  int64_t delay = 0;
  /// The frames of the data inputs the flush feeds: `delay`, but where a ConvTranspose that lags makes the
  /// delay frames at its output's rate (delay / its stride per frame).
  int64_t flush = 0;
  /// Whether that flush brings the whole run's last frames exactly (Lookahead::flush_exact).
  bool flush_exact = false;
  /// The least frames the first call must hold (a carried context whose Pad reflects the first call's
  /// frames: time/pad_fill.h); 0: any length.
  int64_t first_chunk_min = 0;

  /// True when there is a time axis and chunked runs with the states fed back equal one run.
  bool ChunkExact() const { return !time.axes.empty() && problem.empty(); }
  /// "x:1, mask:1".
  std::string TimeText() const;
};

/// Judges the indexed model and writes the consequences into `analysis`: recurrences that run within
/// each frame leave their states to the call (`within_call`), every state gets the model's reason
/// (`stream_problem`), and `analysis.stream` the verdict. `given`: `--time-axis`; without it, the time
/// axes the metadata records are taken, or found. `planned_contexts`: the data inputs a planned
/// `--input-context` prepends frames of the previous call to (the recorded context pairs are the analysis's).
/// `carry_windows`: the causal windows over time get context states (time/causal_windows.h), and the
/// model is judged with them; with `lookahead`, the windows that look ahead too, unless the delays they
/// bring do not line up (then none of them: the verdict says why).
void JudgeStream(const ModelIndex& index, Analysis& analysis, const std::vector<InputAxis>& given = {},
                 const ContextFrames& planned_contexts = {}, bool carry_windows = false, bool lookahead = false);

/// The verdict as the metadata records it (contract/stream_record.h), without the outputs `state_outputs`
/// (the state pairs' outputs, which their pairs speak for: so the record is the same before and after a
/// rewrite adds them).
/// `describe`, when given, names a break's operator (the rewrite names unnamed nodes it changes: the
/// record then names them as a rewrite of the rewrite will find them). `added_outputs`: the outputs a
/// rewrite adds for states (StreamVerdict::added), by state: a reason found at one names that output.
StreamRecord RecordOf(const StreamVerdict& verdict, const std::set<std::string>& state_outputs,
                      const std::function<std::string(const TimeBreak&)>& describe = {},
                      const std::map<StateKey, std::string>& added_outputs = {});

}  // namespace rnnstate
