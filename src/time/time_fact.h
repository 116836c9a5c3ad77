#pragma once
/// \file
/// What one value is along the time axis of a streamed run: the lattice the time flow (time_flow.h)
/// computes for every value between the data inputs and the graph outputs. A run in chunks cuts the data
/// inputs along their time axis and feeds each call's state outputs back; a value then is
///
///   steady  the same in every call (weights, shapes of other axes, the batch)      W, Shape(x)[0]
///   frames  has the time axis: the chunks' values, concatenated along it, make    Relu(x), LSTM Y
///           the whole run's (when exact)
///   final   has no time axis and is a function of final states: the last call's   LSTM Y_h, MatMul(Y_h, W)
///           value is the whole run's (when exact)
///   length  an integer shape vector holding the chunk's length at some elements   Shape(x)
///   first   read from the first frames: the first call's value is the whole run's  Gather(x, 0) along time
///           (fine as an initial state, which only the first call reads)
///   mixed   depends on time in a way no chunk reproduces                          ReduceMean over time
///
/// A value is exact when chunked runs reproduce it; the first operator that makes it inexact is its
/// break, which says why and how many frames it needs.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph_path.h"

namespace rnnstate {

/// Where chunked runs stop reproducing a value: the operator, why, and how much of the sequence it needs.
struct TimeBreak {
  GraphPath graph;   ///< the graph of the operator
  int node = -1;     ///< its index there (-1: no node, e.g. a fixed-length input)
  std::string op;    ///< the operator ("Conv")
  std::string what;  ///< "Conv 'enc.0'", or "Conv (output 'y')" for an unnamed node, for messages
  std::string why;   ///< "slides a window of 5 frames over time (stride 2, no padding)"
  /// Frames before / after each output frame that it needs and a chunk does not hold (0: none or
  /// unknown); `whole`: it needs the whole sequence (a reduction over time, a bidirectional recurrence).
  int64_t past = 0;
  int64_t future = 0;
  bool whole = false;
  /// It is a constant of the whole sequence's fixed length (a positional table): no chunk has it, and
  /// `--time-axis` cannot derive it from the input.
  bool fixed_length = false;

  /// "Conv 'enc.0' slides a window ...".
  std::string Text() const { return what.empty() ? why : what + " " + why; }
};

/// What a value is along time (see the file comment).
struct TimeFact {
  enum class Kind { kSteady, kFrames, kFinal, kLength, kFirst, kMixed };
  Kind kind = Kind::kSteady;
  /// kFrames: the axis that holds time.
  int64_t axis = -1;
  /// kFrames: the axis holds time together with other axes (a per-frame operator's batch, `[B*T, F]`);
  /// `outer`: time is the outermost of them, so chunks still concatenate along the axis.
  bool folded = false;
  bool outer = true;
  /// kFrames: a sequence (ONNX sequence type) whose elements are the frames, one per step, as a loop
  /// collects them (`SequenceInsert`); `ConcatFromSequence` makes it a tensor along its `axis`.
  bool sequence = false;
  /// kFrames: the value holds this many frames of the previous call in front of the chunk's own (a context
  /// state concatenated before the chunk, rnnstate rewrite --input-context): a window that spans exactly
  /// them gives the chunk's frames again; anything else that reads them sees the previous call's frames.
  int64_t context = 0;
  /// kFrames (and what is computed from them): chunks reproduce the value only when each chunk's length is
  /// a multiple of this — the product of the strides over time of the windows on the way (a window of
  /// stride 2 emits one frame per 2 input frames: an odd chunk would start the next one in mid-stride).
  int64_t multiple = 1;
  /// kFrames: the values are the frames' own positions within the call (0, 1, ... along time: a Range from
  /// 0 in steps of 1 over the chunk's length, frame_positions.cc), counting the frames of `positions_of` (a
  /// value of the same graph). They restart in every chunk, so they carry a break; only views, additions of
  /// zero and a Gather along time of frames as long as `positions_of`'s read them (picking every frame once,
  /// in order: the frames again).
  bool positions = false;
  std::string positions_of;
  /// kLength: the positions of a shape vector (or 0 for a scalar) that hold the chunk's length, and those
  /// that hold it times steady sizes (`Mul(batch, length)`: the length of time folded with the batch).
  std::vector<int64_t> elements;
  std::vector<int64_t> folded_elements;
  /// kLength: the value whose `Shape` the length was read from, while the fact is nothing but elements of
  /// that shape (picked, sliced, viewed, cast, plus zero); empty once it is computed or joined from the
  /// shapes of several values. The frames' positions (frame_positions.cc) count that value's frames.
  std::string length_of;
  /// kFinal: the recurrent node whose final state it is computed from ("LSTM 'enc'"), for messages.
  std::string origin;
  /// Set when chunked runs do not reproduce the value (always for kMixed).
  std::optional<TimeBreak> broken;

  bool exact() const { return !broken.has_value(); }
  bool steady() const { return kind == Kind::kSteady; }
  bool frames() const { return kind == Kind::kFrames; }

  static TimeFact Steady() { return TimeFact{}; }
  /// Frames along `axis`, exact unless `broken` (a value computed through a break keeps its axis).
  static TimeFact Frames(int64_t axis, std::optional<TimeBreak> broken = std::nullopt) {
    TimeFact fact;
    fact.kind = Kind::kFrames;
    fact.axis = axis;
    fact.broken = std::move(broken);
    return fact;
  }
  static TimeFact Final(std::optional<TimeBreak> broken = std::nullopt) {
    TimeFact fact;
    fact.kind = Kind::kFinal;
    fact.broken = std::move(broken);
    return fact;
  }
  static TimeFact First() {
    TimeFact fact;
    fact.kind = Kind::kFirst;
    return fact;
  }
  static TimeFact Length(std::vector<int64_t> elements, std::vector<int64_t> folded_elements = {}) {
    TimeFact fact;
    fact.kind = Kind::kLength;
    fact.elements = std::move(elements);
    fact.folded_elements = std::move(folded_elements);
    return fact;
  }
  static TimeFact Mixed(TimeBreak broken) {
    TimeFact fact;
    fact.kind = Kind::kMixed;
    fact.broken = std::move(broken);
    return fact;
  }
};

/// "steady", "frames on axis 1", "frames on axis 0 (time folded with other axes)", "final", "length",
/// "mixed" — for tests and debugging.
std::string TimeFactText(const TimeFact& fact);

/// A length fact whose positions move as `map` says (nullopt: the position is gone); steady when no position
/// holding the length is left.
TimeFact RemapLength(const TimeFact& length, const std::function<std::optional<int64_t>(int64_t)>& map);

/// The first break among `facts` (in order), or nullopt when all are exact.
std::optional<TimeBreak> FirstBreak(const std::vector<const TimeFact*>& facts);

}  // namespace rnnstate
