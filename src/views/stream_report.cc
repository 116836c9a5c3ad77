#include "views/stream_report.h"

#include <set>
#include <sstream>

#include "time/stream_verdict.h"

namespace rnnstate {

namespace {

/// How the time axes were chosen, for the report's first line.
std::string SourceText(const TimeAxes& time) {
  switch (time.source) {
    case TimeAxes::Source::kGiven:
      return "given (--time-axis)";
    case TimeAxes::Source::kRecorded:
      return "recorded by an earlier rewrite";
    case TimeAxes::Source::kNamed:
      return "the one named dimension of the data besides the batch";
    case TimeAxes::Source::kFollowed:
      return "the axis the recurrences run along";
    case TimeAxes::Source::kWindowed:
      return "the one named dimension of the data a causal window slides along";
    case TimeAxes::Source::kNone:
      break;
  }
  return "";
}

std::string OutputText(const OutputVerdict& out) {
  switch (out.kind) {
    case OutputVerdict::Kind::kSame:
      return "the same on every call";
    case OutputVerdict::Kind::kFrames:
      return "chunked = whole: the chunks' frames along axis " + std::to_string(out.axis);
    case OutputVerdict::Kind::kLast:
      return "chunked = whole: the last call's value";
    case OutputVerdict::Kind::kDiffers:
      break;
  }
  std::string text = "chunked != whole: " + out.broken->Text();
  if (!out.broken->whole && (out.broken->past > 0 || out.broken->future > 0)) {
    text += " (needs " + std::to_string(out.broken->past) + " frames before each frame and " +
            std::to_string(out.broken->future) + " after)";
  }
  return text;
}

/// A carried window, for the report: what it is, and what its context state holds.
std::string WindowText(const CausalWindow& w) {
  const std::string carried = w.what + " " + w.shape.Text() + ": a rewrite carries the last " +
                              std::to_string(w.frames) + (w.frames == 1 ? " frame" : " frames") + " of '" + w.value +
                              "' from call to call";
  if (w.valid) return carried + " (a context state, none on the first call: it has no padding)";
  return carried + " in place of its " + (w.pad >= 0 ? "Pad's " : "") +
         (w.fill.empty() ? "zeros (a context state)"
                         : w.fill + " padding (a context state, empty on the first call, when the Pad pads as it did)");
}

/// The model's lookahead, and the delay a rewrite with --lookahead brings: "" when it looks at no frame ahead.
std::string LookaheadText(const StreamVerdict& verdict) {
  const Lookahead& ahead = verdict.lookahead;
  if (ahead.windows.empty()) return "";
  std::string text = "  lookahead: " + std::to_string(ahead.frames) + (ahead.frames == 1 ? " frame" : " frames") +
                     " (summed along the path; the windows that look ahead, with their frames:";
  for (size_t i = 0; i < ahead.windows.size(); ++i) text += (i ? ", " : " ") + ahead.windows[i];
  text += ")";
  if (verdict.delay > 0) {
    text += "; carried: each call returns the frames that are final, the outputs lag by as many";
  } else if (!ahead.problem.empty()) {
    text += "; --lookahead cannot carry it: " + ahead.problem;
  } else {
    text += "; rewrite --lookahead carries it, the outputs then lagging by as many frames";
  }
  return text + "\n";
}

}  // namespace

std::string StreamText(const Analysis& analysis) {
  if (!analysis.stream || (analysis.nodes.empty() && analysis.stream->time.axes.empty())) return "";
  const StreamVerdict& verdict = *analysis.stream;
  std::ostringstream out;
  out << "\ndoes the model stream?\n";
  if (verdict.time.axes.empty()) {
    out << "  no time axis inside one call: the model streams call by call (each call one step of its "
           "recurrences, the states fed back)";
    if (!verdict.time.note.empty()) out << "; " << verdict.time.note;
    out << "\n";
    return out.str();
  }
  out << "  time axis: " << verdict.TimeText() << " (" << SourceText(verdict.time) << ")";
  if (verdict.time.fixed_length > 0) out << ", fixed length " << verdict.time.fixed_length;
  out << "\n";
  if (verdict.chunk_multiple > 1) {
    out << "  chunks: a multiple of " << verdict.chunk_multiple
        << " frames each (the strides over time: a chunk of another length would end in mid-stride)\n";
  }
  for (const CausalWindow& w : verdict.windows) out << "  context: " << WindowText(w) << "\n";
  if (verdict.first_chunk_min > 0) {
    out << "  first chunk: at least " << verdict.first_chunk_min
        << " frames (a Pad in reflect mode reflects the first call's frames)\n";
  }
  out << LookaheadText(verdict);
  for (const OutputVerdict& o : verdict.outputs) {
    out << "  " << (o.state ? "state output '" : "output '") << o.output << "': " << OutputText(o) << "\n";
  }
  if (verdict.ChunkExact() && verdict.delay > 0) {
    out << "  yes, " << verdict.delay << (verdict.delay == 1 ? " frame" : " frames")
        << " late: chunked runs with the states fed back equal one run but its last " << verdict.delay
        << (verdict.delay == 1 ? " frame" : " frames") << ", which a flush of "
        << (verdict.flush != verdict.delay && verdict.flush > 0
                ? std::to_string(verdict.flush) + (verdict.flush == 1 ? " frame" : " frames") + " of zeros brings"
                : "zeros brings")
        << " (the first call needs more)\n";
  } else if (verdict.ChunkExact()) {
    out << "  yes: chunked runs with the states fed back equal one run\n";
  } else {
    out << "  no: " << verdict.problem << "\n";
  }
  return out.str();
}

Json StreamJson(const Analysis& analysis) {
  if (!analysis.stream) return Json();
  std::set<std::string> state_outputs;
  for (const OutputVerdict& out : analysis.stream->outputs) {
    if (out.state) state_outputs.insert(out.output);
  }
  Json json = StreamRecordJson(RecordOf(*analysis.stream, state_outputs));
  if (!analysis.stream->time.note.empty()) json["note"] = analysis.stream->time.note;
  if (const Lookahead& ahead = analysis.stream->lookahead; !ahead.windows.empty()) {
    json["lookahead"] = {{"frames", ahead.frames}, {"windows", ahead.windows}};
    if (!ahead.problem.empty()) json["lookahead"]["problem"] = ahead.problem;
  }
  if (!analysis.stream->windows.empty()) {
    Json windows = Json::array();
    for (const CausalWindow& w : analysis.stream->windows) {
      windows.push_back(
          {{"node", w.what}, {"value", w.value}, {"axis", w.axis}, {"frames", w.frames}, {"why", w.shape.Text()}});
      if (!w.fill.empty()) windows.back()["pad"] = w.fill;
    }
    json["contexts"] = std::move(windows);
  }
  return json;
}

std::string NodeStreamText(const RecurrentNode& node, const std::vector<const StateAnalysis*>& states) {
  for (const StateAnalysis* t : states) {
    if (!t->within_call.empty() && t->within_call.rfind("it runs within each frame", 0) == 0) {
      return "per frame (" + t->within_call + ")";
    }
    if (!node.streamable) break;
    if (!t->stream_problem.empty()) {
      return "no (its recurrence carries its state from call to call, but chunked runs of the model differ: " +
             t->stream_problem + ")";
    }
  }
  return node.streamable ? "yes" : "no (" + node.not_streamable_reason + ")";
}

}  // namespace rnnstate
