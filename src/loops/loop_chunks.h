#pragma once
/// \file
/// The last test of loop_streaming.h: whether everything around a Loop or Scan is the same
/// when the model runs chunk by chunk as in one run. Chunked runs cut some main-graph inputs along time
/// (and give an autoregressive loop its own trip count per call); the loop's states are fed back. That
/// reproduces one run only when
///   - what the loop takes from outside does not depend on the time axis of a chunked input: the initial
///     values of all its carried variables (a pass-through initialised from `ReduceMean(x)`, as TF's
///     while_v2 carries captured tensors, differs per chunk) and every outer value the body reads (a
///     `Size(x)`, `1 / len(x)`), except the per-step reads at the iteration index, `Shape(x)` elements of
///     other axes (the batch), and the bound of the loop's condition;
///   - what leaves the loop along time (scan outputs, the collected sequences) reaches graph outputs only
///     through time-local operators (elementwise ops with chunk-invariant operands, Transpose, MatMul by a
///     weight, reductions over other axes, ConcatFromSequence...): `ReduceMean(ys, axis 0)` after the
///     loop averages each chunk on its own.

#include <functional>
#include <set>
#include <string>

#include "graph/model_index.h"
#include "loops/carried_variables.h"
#include "loops/chunk_dependence.h"

namespace rnnstate {

/// Values of the body the checks leave to the caller (already proven): the per-step reads (nodes of the
/// body) and outer values the condition alone uses as its bound.
struct ProvenUses {
  std::set<int> reads;
  std::set<std::string> bounds;
};

/// The verdict on a Loop downstream that reads a value along time step by step (stacked Keras layers):
/// "" when that loop streams (or is made to by `--time-axis`), else why not. Given by loop_streaming.h,
/// whose own verdict asks this unit about its surroundings: the judge is passed in rather than included.
using DownstreamLoopJudge = std::function<std::string(const LoopAnatomy&)>;

/// Why chunked runs of `loop` cannot equal one run because of its surroundings, or "" (see the file).
/// `downstream` judges the loops that read what leaves this one step by step.
std::string ChunkProblem(const ModelIndex& index, const LoopAnatomy& loop, const ChunkedInputs& chunked,
                         const ProvenUses& proven, const DownstreamLoopJudge& downstream);

}  // namespace rnnstate
