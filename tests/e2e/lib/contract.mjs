// The first-call protocol of the state contract, derived by the harness itself from the required
// model's `rnnstate` metadata (read with protobufjs, see onnx-proto.mjs) and the data feeds - written
// independently of the JavaScript helper (tools/js/rnnstate-stream) and of `rnnstate init`, so that the
// checks can compare all three.
import * as ort from 'onnxruntime-node';

import { StreamingSession } from '../../../tools/js/rnnstate-stream/index.mjs';
import { zerosTensor } from './tensors.mjs';

/** The state pairs grouped by input (stacked states share one): [{input, output, pairs}], metadata order. */
export function stateGroups(states) {
  const groups = new Map();
  for (const st of states) {
    if (!groups.has(st.input)) groups.set(st.input, { input: st.input, output: st.output, pairs: [] });
    groups.get(st.input).pairs.push(st);
  }
  return [...groups.values()];
}

// A required model as the functions below see it:
//   { name: 'required.onnx', file, session, meta: the parsed `rnnstate` metadata document }

/** Feedback of a model's metadata: one {input, output} per state input. */
export const feedback = (model) => stateGroups(model.meta.states).map(({ input, output }) => ({ input, output }));

/** `feeds` without the state inputs: what a caller of a streaming model passes. */
export function dataFeeds(model, feeds) {
  const state = new Set(model.meta.states.map((st) => st.input));
  return Object.fromEntries(Object.entries(feeds).filter(([name]) => !state.has(name)));
}

/** Symbolic dimension name -> value, read off the data feeds with the model's declared inputs. */
function dataDims(model, feeds) {
  const state = new Set(model.meta.states.map((st) => st.input));
  const dims = {};
  for (const meta of model.session.inputMetadata) {
    const feed = feeds[meta.name];
    if (state.has(meta.name) || !feed || !meta.isTensor) continue;
    meta.shape.forEach((d, axis) => {
      if (typeof d === 'string' && d !== '' && !(d in dims)) dims[d] = feed.dims[axis];
    });
  }
  return dims;
}

/**
 * The first feeds the metadata prescribes for these data feeds:
 *   { specs: [{input, output, dtype, init, batchAxis, shape (the feed: batch 0 when empty),
 *              fullShape (batch resolved; null for a batch no data input gives, fed empty first),
 *              outShape (what the first call returns: fullShape, with a short-starting context's frames)}],
 *     dims (data dims by name), batch (the batch used for symbolic batch axes),
 *     unresolved: [{input, name, axis}] names that are no data input's dimension, note }
 * An unresolved name gets the manifest's value of the same name, or for a batch axis its "batch" (so
 * the numeric checks still run; `shape feedable` FAILs on it).
 */
export function firstFeedPlan(m, model, feeds) {
  const dims = dataDims(model, feeds);
  const unresolved = [];
  let batch = null;
  let unnamedBatch = false;
  const specs = stateGroups(model.meta.states).map(({ input, output, pairs: [st] }) => {
    // A batch that is no data input's (batch x frequency bins of a dual-path model) is fed empty first:
    // its size is the one the model returns, known to no feed beforehand.
    const ownBatch = st.init === 'empty' && st.batch_axis >= 0 && !(st.shape[st.batch_axis] in dims) &&
      typeof st.shape[st.batch_axis] !== 'number';
    const fullShape = ownBatch ? null : st.shape.map((d, axis) => {
      if (typeof d === 'number') return d;
      // A context that starts short: empty (its Pad fills what it lacks; a valid window has no frames before
      // its first call) or with the padding before a lookahead.
      if (st.context && axis === st.context.axis && (st.context.pad || st.context.valid === true || st.context.lookahead > 0)) {
        return st.context.pad || st.context.valid === true ? 0 : st.context.frames - st.context.lookahead;
      }
      if (d in dims) {
        if (axis === st.batch_axis) batch ??= dims[d];
        return dims[d];
      }
      // A batch without a name (null: Silero VAD's `state [2, ?, 128]`) is the caller's batch size, as
      // `rnnstate init --batch N` and the helper's {batch} take it: no data dimension to resolve.
      if (d === null && axis === st.batch_axis && m.entry.dims.batch !== undefined) {
        unnamedBatch = true;
        batch ??= m.entry.dims.batch;
        return batch;
      }
      unresolved.push({ input, name: d, axis });
      const fallback = m.entry.dims[d] ?? (axis === st.batch_axis ? m.entry.dims.batch : undefined);
      if (fallback === undefined) throw new Error(`state input '${input}': dimension '${d}' has no value`);
      if (axis === st.batch_axis) batch ??= fallback;
      return fallback;
    });
    // Empty along the batch, or (a loop's state without one: batch_axis -1) along axis 0.
    const emptyAxis = st.batch_axis >= 0 ? st.batch_axis : 0;
    const shape = ownBatch ? st.shape.map((d, axis) => (axis === emptyAxis ? 0 : d))
      : fullShape.map((d, axis) => (axis === emptyAxis && st.init === 'empty' ? 0 : d));
    // What the first call returns: a context that started short holds its frames then.
    const named = st.context && (st.context.pad || st.context.valid === true || st.context.lookahead > 0);
    const outShape = named && fullShape ? fullShape.map((d, axis) => (axis === st.context.axis ? st.context.frames : d)) : fullShape;
    return { input, output, dtype: st.dtype, init: st.init, batchAxis: st.batch_axis, shape, fullShape, outShape };
  });
  const note = unresolved.length
    ? `unresolved dims ${[...new Set(unresolved.map((u) => u.name))].join(', ')} taken from the manifest` : '';
  return { specs, dims, batch, unresolved, note, unnamedBatch };
}

/** The tensor of a first feed: zeros of its shape (an empty tensor when init is "empty"). */
export const firstFeedTensor = (spec) => zerosTensor(spec.dtype, spec.shape);

/** A StreamingSession of the helper over the model's open session, reading the metadata from the file itself. */
export async function helperSession(model, options = {}) {
  return StreamingSession.create(model.session, { ort, model: model.file, nonStreamable: 'reset', ...options });
}

/** JSON with object keys sorted: equal documents give equal text. */
export function canonicalJson(value) {
  const sort = (v) => (Array.isArray(v) ? v.map(sort)
    : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])])) : v);
  return JSON.stringify(sort(value));
}

/** Short text of how two metadata documents differ, per state and key. */
export function stateDifferences(a, b) {
  const out = [];
  if (a.version !== b.version) out.push(`version ${a.version} vs ${b.version}`);
  const n = Math.max(a.states.length, b.states.length);
  for (let i = 0; i < n; i++) {
    const x = a.states[i], y = b.states[i];
    if (!x || !y) { out.push(`state ${i} only in the ${x ? 'first' : 'second'}`); continue; }
    for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) {
      if (canonicalJson(x[k]) !== canonicalJson(y[k])) out.push(`'${x.input}' ${k}: ${JSON.stringify(x[k])} vs ${JSON.stringify(y[k])}`);
    }
  }
  return out.slice(0, 4).concat(out.length > 4 ? [`(${out.length - 4} more)`] : []);
}
