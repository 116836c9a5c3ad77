// The ONNX Runtime checks of packed and batch-first models (`rnnstate rewrite --pack tensor|sequence`,
// `--state-layout batch-first`), run on one manifest entry. See README.md, "Packed states".
//
// The reference is always the ORIGINAL model, run once on the whole input (its own state inputs, if it
// has any, fed zeros: what an empty packed value gives them). A packed or batch-first model keeps every
// output of the original, in its own layout, beside the packed value (or the batch-first copies); the
// Triton-like run reads the states back from the packed value with the metadata's description (offset,
// length, row_shape, batch_axis), which checks that description too.
import { Tensor } from 'onnxruntime-node';
import { assembleChunks, compareOutputs, fail, pass, runExact, sliceFeeds, verdict } from './checks.mjs';
import { concatAxis, numel, sliceAxis, zerosTensor } from './tensors.mjs';


// ---------------------------------------------------------------------------------------------
// Tensor layout helpers.

/** `t` with its axes permuted: result axis i is axis perm[i] of `t`. */
export function transpose(t, perm) {
  const dims = perm.map((p) => t.dims[p]);
  const strides = t.dims.map((_, i) => numel(t.dims.slice(i + 1)));
  const out = new t.data.constructor(t.data.length);
  const index = new Array(dims.length).fill(0);
  for (let k = 0; k < out.length; k++) {
    let from = 0;
    for (let i = 0; i < dims.length; i++) from += index[i] * strides[perm[i]];
    out[k] = t.data[from];
    for (let i = dims.length - 1; i >= 0; i--) {
      if (++index[i] < dims[i]) break;
      index[i] = 0;
    }
  }
  return new Tensor(t.type, out, dims);
}

/** Member `member` of the packed tensor `packed` [B, N], in the member's own layout. */
export function unpackMember(packed, member) {
  const batch = packed.dims[0];
  const columns = sliceAxis(packed, 1, member.offset, member.length);
  const rows = new Tensor(columns.type, columns.data, [batch, ...member.row_shape]);
  const rank = member.row_shape.length + 1;
  return transpose(rows, fromBatchFirst(rank, member.batch_axis));  // the batch back at batch_axis
}

/** The packed tensor [B, N] of `members` (each in its own layout, batch at its batch_axis). */
export function packMembers(value, tensors) {
  const parts = value.members.map((m, i) => {
    const t = tensors[i];
    const perm = [m.batch_axis, ...t.dims.map((_, a) => a).filter((a) => a !== m.batch_axis)];
    const rows = transpose(t, perm);
    return new Tensor(rows.type, rows.data, [rows.dims[0], m.length]);
  });
  return concatAxis(parts, 1);
}

// ---------------------------------------------------------------------------------------------
// One packed model: what it returns, read as the original's outputs.

/** The permutation putting axis 0 back at `axis` (a batch-first tensor in a node's layout). */
export function fromBatchFirst(rank, axis) {
  const perm = [];
  for (let i = 0, rest = 1; i < rank; i++) perm.push(i === axis ? 0 : rest++);
  return perm;
}

/**
 * A state tensor as the original model returned it: `meta.states[state]` of a model whose pairs may be
 * batch-first (`layout`), where `m.nodeBatchAxis[output]` is the node's own batch axis.
 */
export function inNodeLayout(m, meta, state, tensor) {
  const pair = meta.states[state];
  if (pair.layout !== 'batch-first') return tensor;
  return transpose(tensor, fromBatchFirst(tensor.dims.length, m.nodeBatchAxis[pair.output]));
}

/**
 * Outputs of a packed run, checked to hold every output of the original model as it was: packing keeps
 * the model's own outputs (h_n) beside the packed value, in their own layout (issue 12's audit: they
 * used to be removed, and read back from the packed value here).
 */
export function asOriginalOutputs(m, out) {
  const missing = m.origOutputNames.filter((n) => !(n in out));
  if (missing.length) throw new Error(`the rewritten model lacks the original output(s) ${missing.join(', ')}`);
  return out;
}

/** Original outputs a run of the packed model can be compared on. */
export function comparedOutputs(m, skip = []) {
  return m.origOutputNames.filter((n) => !skip.includes(n));
}

/** Only the inputs `session` lists (the packed model lacks the original's own state inputs). */
export function feedsFor(session, feeds) {
  return Object.fromEntries(session.inputNames.filter((n) => n in feeds).map((n) => [n, feeds[n]]));
}

// ---------------------------------------------------------------------------------------------
// Checks of one variant. `v` = {name, meta, def (session, unfed), req (session, fed), kind}.

/** The empty packed value of `value`: a [0, N] tensor. */
export function emptyPacked(value) {
  return zerosTensor(value.dtype, [0, value.shape[1]]);
}

/** (1) unfed (defaults model) or empty (required model) first call == the original. */
export async function checkFirstCall(m, v, session, feedState, full, reference) {
  const feeds = feedsFor(session, full);
  if (feedState) for (const value of v.meta.packed.values) feeds[value.input] = emptyPacked(value);
  const out = await runExact(session, feeds, `${v.name} first call`);
  const names = comparedOutputs(m);
  return verdict(compareOutputs(names, asOriginalOutputs(m, out), reference), m.tol);
}

/**
 * Runs the chunks on the required model: call 1 with the empty packed value, later calls with the
 * previous call's packed output (or, with `reset`, empty again: the negative self-test).
 */
async function runPackedChunks(m, v, full, reset = false) {
  const outs = [];
  const calls = m.entry.chunkMode === 'calls' ? Array(m.entry.chunks).fill(0) : m.entry.chunks;
  let offset = 0;
  for (const length of calls) {
    const feeds = feedsFor(v.req, m.entry.chunkMode === 'calls' ? full : sliceFeeds(m, full, offset, length));
    for (const value of v.meta.packed.values) {
      feeds[value.input] = outs.length && !reset ? outs[outs.length - 1][value.output] : emptyPacked(value);
    }
    const out = await runExact(v.req, feeds, `${v.name} call ${outs.length + 1}`);
    outs.push(asOriginalOutputs(m, out));
    offset += length;
  }
  return outs;
}

/** (2) chunked streaming, feeding the packed output back, == one full run of the original. */
export async function checkStreaming(m, v, full, reference) {
  const names = comparedOutputs(m, m.entry.streamingSkipOutputs);
  const outs = await runPackedChunks(m, v, full);
  if (m.entry.chunkMode === 'calls') return checkCallsOutcome(m, v, outs);
  const detail = `${m.entry.chunkMode} chunks [${m.entry.chunks}]`;
  return verdict(compareOutputs(names, assembleChunks(m, outs, names), reference), m.tol, detail);
}

/** Calls mode (If models): with the branch not taken every call equals call 1, else the state is accepted. */
function checkCallsOutcome(m, v, outs) {
  const names = [...m.origOutputNames, ...v.meta.packed.values.map((x) => x.output)];
  if (m.entry.branchTaken !== false) return pass(NaN, `${outs.length} calls accepted (branch taken: values not compared)`);
  let worst = { diff: 0, worst: '', why: '' };
  for (const o of outs.slice(1)) {
    const cmp = compareOutputs(names, o, outs[0]);
    if (!(cmp.diff <= worst.diff)) worst = cmp;
  }
  return verdict(worst, m.tol, `${outs.length} calls, branch not taken: state passes through`);
}

/** Negative self-test: the same chunks restarting from the empty value every call must differ. */
export async function checkSelfTest(m, v, full, reference) {
  const names = comparedOutputs(m, m.entry.streamingSkipOutputs);
  const streamed = await runPackedChunks(m, v, full);
  const live = v.meta.packed.values.some((x) => streamed[streamed.length - 1][x.output].data.some((e) => e !== 0));
  if (!live) return null;  // every final state is zero: a reset cannot be told apart
  const outs = await runPackedChunks(m, v, full, true);
  const cmp = compareOutputs(names, assembleChunks(m, outs, names), reference);
  return cmp.diff > m.tol ? pass(cmp.diff, 'state reset every call: mismatch detected as expected')
    : fail(cmp.diff, 'state reset every call: NOT detected - the state path is not tested');
}

// ---------------------------------------------------------------------------------------------
// --state-layout batch-first alone: one input and output per state, batch on axis 0.

/** The first feed of each distinct state input: zeros of its shape, or its batch axis 0 ("empty"). */
function layoutFirstFeeds(m, meta) {
  const feeds = {};
  const batch = m.dataBatch(m.entry);
  for (const pair of meta.states) {
    if (feeds[pair.input]) continue;
    // Empty along the batch, or (a loop's state without one: batch_axis -1) along axis 0 (README "Metadata").
    const emptyAxis = pair.batch_axis >= 0 ? pair.batch_axis : 0;
    const dims = pair.shape.map((d, axis) => {
      if (axis === emptyAxis && pair.init === 'empty') return 0;
      if (axis === pair.batch_axis) return typeof d === 'number' ? d : batch;
      if (typeof d === 'number') return d;
      if (d in m.entry.dims) return m.entry.dims[d];
      throw new Error(`state '${pair.input}': no value for its dimension '${d}'`);
    });
    feeds[pair.input] = zerosTensor(pair.dtype, dims);
  }
  return feeds;
}

/** The original's outputs from a run of the batch-first model: present, in their own layout. */
function layoutAsOriginal(m, meta, out) {
  return asOriginalOutputs(m, out);
}

export async function checkLayoutFirstCall(m, v, full, reference) {
  const feeds = { ...feedsFor(v.req, full), ...layoutFirstFeeds(m, v.meta) };
  const out = await runExact(v.req, feeds, 'batch-first model, first call');
  return verdict(compareOutputs(comparedOutputs(m), layoutAsOriginal(m, v.meta, out), reference), m.tol);
}

export async function checkLayoutStreaming(m, v, full, reference) {
  const outs = [];
  const calls = m.entry.chunkMode === 'calls' ? Array(m.entry.chunks).fill(0) : m.entry.chunks;
  let offset = 0;
  for (const length of calls) {
    const feeds = feedsFor(v.req, m.entry.chunkMode === 'calls' ? full : sliceFeeds(m, full, offset, length));
    if (outs.length) for (const pair of v.meta.states) feeds[pair.input] = outs[outs.length - 1].raw[pair.output];
    else Object.assign(feeds, layoutFirstFeeds(m, v.meta));
    const out = await runExact(v.req, feeds, `batch-first call ${outs.length + 1}`);
    outs.push({ raw: out, ...layoutAsOriginal(m, v.meta, out) });
    offset += length;
  }
  if (m.entry.chunkMode === 'calls') {
    if (m.entry.branchTaken !== false) return pass(NaN, `${outs.length} calls accepted (branch taken: values not compared)`);
    let worst = { diff: 0, worst: '', why: '' };
    for (const o of outs.slice(1)) {
      const cmp = compareOutputs(m.origOutputNames, o, outs[0]);
      if (!(cmp.diff <= worst.diff)) worst = cmp;
    }
    return verdict(worst, m.tol, `${outs.length} calls, branch not taken`);
  }
  const names = comparedOutputs(m, m.entry.streamingSkipOutputs);
  return verdict(compareOutputs(names, assembleChunks(m, outs, names), reference), m.tol, `chunks [${m.entry.chunks}]`);
}

// ---------------------------------------------------------------------------------------------
// --pack sequence, through the wrapper models of onnx-edit.mjs.

/** Runs the chunks through the two wrappers; returns the original's outputs of each call. */
async function runSequenceChunks(m, w, full, reset = false) {
  const outs = [];
  const calls = m.entry.chunkMode === 'calls' ? Array(m.entry.chunks).fill(0) : m.entry.chunks;
  let offset = 0;
  let state = null;
  for (const length of calls) {
    const base = m.entry.chunkMode === 'calls' ? full : sliceFeeds(m, full, offset, length);
    const session = state && !reset ? w.next : w.first;
    const feeds = feedsFor(session, base);
    if (session === w.next) w.memberInputs.forEach((name, i) => { feeds[name] = state[w.memberOutputs[i]]; });
    const out = await runExact(session, feeds, `sequence wrapper call ${outs.length + 1}`);
    state = out;
    outs.push(asOriginalOutputs(m, { ...out }));
    offset += length;
  }
  return outs;
}

export async function checkSequenceFirstCall(m, w, full, reference) {
  const out = asOriginalOutputs(m, { ...(await runExact(w.first, feedsFor(w.first, full), 'sequence wrapper, first call')) });
  return verdict(compareOutputs(comparedOutputs(m), out, reference), m.tol, 'SequenceEmpty first call');
}

export async function checkSequenceStreaming(m, w, full, reference) {
  const outs = await runSequenceChunks(m, w, full);
  if (m.entry.chunkMode === 'calls') {
    if (m.entry.branchTaken !== false) return pass(NaN, `${outs.length} calls accepted (branch taken: values not compared)`);
    let worst = { diff: 0, worst: '', why: '' };
    for (const o of outs.slice(1)) {
      const cmp = compareOutputs([...m.origOutputNames, ...w.memberOutputs], o, outs[0]);
      if (!(cmp.diff <= worst.diff)) worst = cmp;
    }
    return verdict(worst, m.tol, `${outs.length} calls, branch not taken`);
  }
  const names = comparedOutputs(m, m.entry.streamingSkipOutputs);
  return verdict(compareOutputs(names, assembleChunks(m, outs, names), reference), m.tol, `chunks [${m.entry.chunks}]`);
}

export async function checkSequenceSelfTest(m, w, full, reference) {
  const names = comparedOutputs(m, m.entry.streamingSkipOutputs);
  const cmp = compareOutputs(names, assembleChunks(m, await runSequenceChunks(m, w, full, true), names), reference);
  return cmp.diff > m.tol ? pass(cmp.diff, 'empty sequence every call: mismatch detected as expected')
    : fail(cmp.diff, 'empty sequence every call: NOT detected - the state path is not tested');
}

// ---------------------------------------------------------------------------------------------
// A Triton-like run: the sequence batcher's direct strategy with implicit state. Three slots, batch 3;
// each slot keeps its own rows of every batch-first state tensor; a sequence starts from Triton's
// `initial_state { zero_data: true }` (zeros rows). Slot 0 and 2 run one sequence over every chunk,
// slot 1 one sequence for the first chunk and a new one (its rows reset to zeros) for the rest. Each
// sequence's outputs must equal the original model run on that sequence alone (batch 1, one call).

/** The batch axis of each input / output of `session` that has one (`symbol` names it). */
function batchAxes(metadata, symbol) {
  const axes = {};
  for (const meta of metadata) {
    const axis = (meta.shape ?? []).indexOf(symbol);
    if (axis >= 0) axes[meta.name] = axis;
  }
  return axes;
}

/**
 * `states`: [{input, output, row: [dims of one batch row]}] (the packed value, or each batch-first
 * pair). `seqInput(s, name, dims)` gives sequence s's data for a batched input. Returns {ok, diff, detail}.
 */
export async function checkTritonLike(m, session, states, batchSymbol, reference) {
  const { chunks } = m.entry;
  const total = chunks.reduce((a, b) => a + b, 0);
  const inAxes = batchAxes(session.inputMetadata, batchSymbol);
  const outAxes = batchAxes(session.outputMetadata, batchSymbol);
  const stateInputs = new Set(states.map((s) => s.input));
  // Four sequences of batch 1 at full length; slot 1 runs sequence 1 for chunk 1, then sequence 3.
  const data = [0, 1, 2, 3].map((s) => m.sequenceData(s));
  const schedule = chunks.map((length, k) => ({
    length,
    slots: [{ seq: 0, offset: k === 0 ? 0 : chunks.slice(0, k).reduce((a, b) => a + b, 0) },
      k === 0 ? { seq: 1, offset: 0 } : { seq: 3, offset: chunks.slice(1, k).reduce((a, b) => a + b, 0) },
      { seq: 2, offset: k === 0 ? 0 : chunks.slice(0, k).reduce((a, b) => a + b, 0) }],
  }));
  const zerosRow = (s) => zerosTensor(s.type, [1, ...s.row]);
  let rows = [0, 1, 2].map(() => states.map(zerosRow));
  const perSeq = { 0: [], 1: [], 2: [], 3: [] };
  for (const [k, call] of schedule.entries()) {
    if (k === 1) rows[1] = states.map(zerosRow);  // a new sequence in slot 1: Triton's zero initial state
    const feeds = {};
    for (const meta of session.inputMetadata) {
      const name = meta.name;
      if (stateInputs.has(name)) continue;
      if (inAxes[name] === undefined) { feeds[name] = m.fullFeeds[name]; continue; }
      feeds[name] = concatAxis(call.slots.map(({ seq, offset }) => {
        const whole = data[seq][name];
        const axis = m.entry.seqAxes[name];
        return axis === undefined ? whole : sliceAxis(whole, axis, offset, call.length);
      }), inAxes[name]);
    }
    states.forEach((s, i) => { feeds[s.input] = concatAxis(rows.map((r) => r[i]), 0); });
    const out = await runExact(session, feeds, `triton-like call ${k + 1}`);
    rows = [0, 1, 2].map((slot) => states.map((s) => sliceAxis(out[s.output], 0, slot, 1)));
    call.slots.forEach(({ seq }, slot) => {
      const mine = {};
      for (const [name, axis] of Object.entries(outAxes)) mine[name] = sliceAxis(out[name], axis, slot, 1);
      states.forEach((s, i) => { mine[s.output] = rows[slot][i]; });
      perSeq[seq].push(mine);
    });
  }
  // Compare each sequence with the original run alone on its own data.
  let worst = { diff: 0, worst: '', why: '' };
  const lengths = { 0: total, 1: chunks[0], 2: total, 3: total - chunks[0] };
  for (const seq of [0, 1, 2, 3]) {
    const want = await reference(data[seq], lengths[seq]);
    const got = assembleChunks(m, perSeq[seq], Object.keys(perSeq[seq][0]));
    const finalState = perSeq[seq][perSeq[seq].length - 1];
    for (const name of m.origOutputNames) {
      if (got[name] === undefined) {
        const fromState = m.readState?.(name, finalState);
        if (fromState) got[name] = fromState;
      }
    }
    const names = m.origOutputNames.filter((n) => got[n] !== undefined && !m.entry.streamingSkipOutputs.includes(n));
    if (!names.length) return fail(NaN, `sequence ${seq}: no output with a batch axis to compare`);
    const cmp = compareOutputs(names, got, want);
    if (!(cmp.diff <= worst.diff)) worst = { ...cmp, worst: `sequence ${seq}: ${cmp.worst}` };
  }
  const coupled = m.entry.batchMatesTolerance === null ? '' : `; rows share quantization ranges: tolerance ${m.tol}`;
  return verdict(worst, m.tol, `3 slots, chunks [${chunks}], slot 1 reset after chunk 1${coupled}`);
}

