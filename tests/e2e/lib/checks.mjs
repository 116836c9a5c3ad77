// The ONNX Runtime checks of the rnnstate contract, run on one manifest entry.
//
// Models involved (all opened with onnxruntime-node, CPU):
//   orig       the model as generated
//   def        `rnnstate rewrite` default mode: state inputs have initializer defaults
//   req        `rnnstate rewrite def --state-inputs required`: same model, defaults removed
//   reqDirect  `rnnstate rewrite orig --state-inputs required`
// The checks of the state contract (routes, init feeds, shape feedable, (4), (5)) treat req and
// reqDirect alike, each fed only from its own metadata (see contract.mjs).
// Why `req` exists at all: onnxruntime-node hides an input that has an initializer default
// (it is not in session.inputNames) and silently IGNORES a feed for it. The fed path can only
// be exercised on a copy without the defaults, so every call that feeds state uses `req`.
import { Tensor } from 'onnxruntime-node';
import { concatAxis, maxAbsDiff, randomTensor, sliceAxis, tensorFromValues, zerosTensor } from './tensors.mjs';
import * as contract from './contract.mjs';

export const sameSet = (a, b) => a.length === b.length && a.every((x) => b.includes(x));

/**
 * session.run with an exact-feeds guard: a feed the session does not list would be dropped
 * without any error (see above), which would make a broken state path look like a pass.
 */
export async function runExact(session, feeds, what) {
  const given = Object.keys(feeds);
  const unknown = given.filter((n) => !session.inputNames.includes(n));
  const missing = session.inputNames.filter((n) => !given.includes(n));
  if (unknown.length || missing.length) {
    throw new Error(`${what}: feeds do not match the session's inputs` +
      (unknown.length ? `; not inputs (ORT would ignore them): ${unknown.join(', ')}` : '') +
      (missing.length ? `; missing mandatory inputs: ${missing.join(', ')}` : ''));
  }
  try {
    return await session.run(feeds);
  } catch (err) {
    throw new Error(`${what}: ${err.message}`);
  }
}

/** Max diff over `names` between two output maps; `worst` names the output that produced it. */
export function compareOutputs(names, got, want) {
  let result = { diff: 0, worst: '', why: '' };
  for (const name of names) {
    if (!got[name] || !want[name]) throw new Error(`output '${name}' missing from a run`);
    const { diff, why } = maxAbsDiff(got[name], want[name]);
    if (!(diff <= result.diff)) result = { diff, worst: name, why };
  }
  return result;
}

export const pass = (diff, detail = '') => ({ ok: true, diff, detail });
export const fail = (diff, detail) => ({ ok: false, diff, detail });
/** PASS/FAIL of a comparison against the tolerance; a FAIL names the worst output. */
export function verdict(cmp, tol, detail = '') {
  const ok = cmp.diff <= tol;
  const worst = ok ? '' : `worst '${cmp.worst}'` + (cmp.why ? ` (${cmp.why})` : '');
  return { ok, diff: cmp.diff, detail: [detail, worst].filter(Boolean).join('; ') };
}

/** Outputs every state-related comparison covers: the original outputs plus the state outputs. */
const allOutputs = (m) => [...new Set([...m.sessions.orig.outputNames, ...m.pairs.map((p) => p.output)])];

function requireDefaultsRun(m) {
  if (!m.defOut) throw new Error('not run: the defaults model did not run (see (1))');
}

// ---------------------------------------------------------------------------------------------
// Interface: what ORT sees of the three rewritten models.
export function checkInterface(m) {
  const { orig, def, req, reqDirect } = m.sessions;
  const problems = [];
  const stateIns = m.pairs.map((p) => p.input);
  const expectReqInputs = [...new Set([...orig.inputNames, ...stateIns])];
  // Defaults model: state inputs have defaults, so ORT lists exactly the original inputs.
  if (!sameSet(def.inputNames, orig.inputNames)) {
    problems.push(`defaults model inputs [${def.inputNames}] != original [${orig.inputNames}] (state input without default?)`);
  }
  if (!sameSet(req.inputNames, expectReqInputs)) {
    problems.push(`required model inputs [${req.inputNames}] != original + state inputs [${expectReqInputs}] (default not removed?)`);
  }
  if (!sameSet(reqDirect.inputNames, req.inputNames)) {
    problems.push(`direct required model inputs [${reqDirect.inputNames}] != required-from-rewritten [${req.inputNames}]`);
  }
  for (const [what, s] of [['defaults', def], ['required', req], ['direct required', reqDirect]]) {
    const missing = allOutputs(m).filter((n) => !s.outputNames.includes(n));
    if (missing.length) problems.push(`${what} model lacks outputs ${missing.join(', ')}`);
  }
  return problems.length ? fail(NaN, problems.join('; ')) : pass(NaN, `${m.pairs.length} pairs`);
}

// ---------------------------------------------------------------------------------------------
// (1) rewritten model, no state fed -> every original output equal.
export async function checkDefaultsUnfed(m) {
  m.origOut = await runExact(m.sessions.orig, m.fullFeeds, 'original model');
  m.defOut = await runExact(m.sessions.def, m.fullFeeds, 'defaults model, state not fed');
  return verdict(compareOutputs(m.sessions.orig.outputNames, m.defOut, m.origOut), m.tol);
}

// ---------------------------------------------------------------------------------------------
// (2) streaming. Chunk plan: sequence mode slices the seq_axes inputs; trip_count mode also sets
// the Loop trip-count input to the chunk length (and slices seq_axes inputs, if any, so a body
// that reads x[iteration] sees the right elements).

export const chunkFeeds = (m, offset, length) => sliceFeeds(m, m.fullFeeds, offset, length);

/** The feeds of `full` for one chunk: `seq_axes` inputs sliced; in trip_count mode the trip count set to the length. */
export function sliceFeeds(m, full, offset, length) {
  const feeds = { ...full };
  for (const [name, axis] of Object.entries(m.entry.seqAxes)) {
    if (feeds[name]) feeds[name] = sliceAxis(full[name], axis, offset, length);
  }
  if (m.entry.chunkMode === 'trip_count') {
    const trip = full[m.entry.tripInput];
    feeds[m.entry.tripInput] = tensorFromValues(trip.type, trip.dims, length);
  }
  return feeds;
}

/**
 * Runs the chunks: call 1 on the defaults model without state, later calls on the required model
 * with state inputs taken from the previous call's outputs as `feedback` says ([{input, output}]).
 */
async function runChunks(m, feedback) {
  const outs = [];
  let offset = 0;
  for (const length of m.entry.chunks) {
    const feeds = chunkFeeds(m, offset, length);
    const i = outs.length;
    if (i === 0) {
      outs.push(await runExact(m.sessions.def, feeds, 'chunk 1 (defaults model)'));
    } else {
      for (const { input, output, reset } of feedback) {
        const state = outs[i - 1][output];
        feeds[input] = reset ? zerosTensor(state.type, state.dims) : state;
      }
      outs.push(await runExact(m.sessions.req, feeds, `chunk ${i + 1} (required model)`));
    }
    offset += length;
  }
  return outs;
}

/** Streamed result per compared output: concatenated if it has a sequence axis, else the last call's. */
export function assembleChunks(m, outs, names) {
  const result = {};
  for (const name of names) {
    const axis = m.entry.outputSeqAxes[name];
    result[name] = axis === undefined ? outs[outs.length - 1][name] : concatAxis(outs.map((o) => o[name]), axis);
  }
  return result;
}

const streamedOutputs = (m) => allOutputs(m).filter((n) => !m.entry.streamingSkipOutputs.includes(n));

async function streamedDiff(m, feedback) {
  const names = streamedOutputs(m);
  return compareOutputs(names, assembleChunks(m, await runChunks(m, feedback), names), m.defOut);
}

export async function checkStreaming(m) {
  requireDefaultsRun(m);
  const notStreamable = m.pairs.filter((p) => p.streamable === false);
  if (notStreamable.length) {
    return fail(NaN, `manifest says streaming but metadata marks ${notStreamable.map((p) => p.input).join(', ')} not streamable`);
  }
  const detail = `${m.entry.chunkMode} chunks [${m.entry.chunks}]`;
  return verdict(await streamedDiff(m, m.pairs), m.tol, detail);
}

/**
 * Negative control for a model marked not streamable: the same chunked run as (2), state fed back, must
 * differ from one full run (else "not streamable" is wrong, or the check proves nothing).
 */
export async function checkChunkingDiffers(m) {
  requireDefaultsRun(m);
  const cmp = await streamedDiff(m, m.pairs);
  const what = `chunks [${m.entry.chunks}], state fed back`;
  return cmp.diff > m.tol ? pass(cmp.diff, `${what}: differs from one run, as "not streamable" says`)
    : fail(cmp.diff, `${what}: equals one run although the pairs say not streamable`);
}

/**
 * (2) on the ORIGINAL model for states it already exposes stacked (report's "stacked"): every chunk on
 * the original, the first with the full feeds' initial state, later ones fed the previous chunk's
 * stacked outputs (`h_n` as `h0`). Must equal one call on the whole sequence.
 */
async function stackedDiff(m, feedback) {
  const outs = [];
  let offset = 0;
  for (const length of m.entry.chunks) {
    const feeds = chunkFeeds(m, offset, length);
    if (outs.length) {
      for (const { input, output, reset } of feedback) {
        const state = outs[outs.length - 1][output];
        feeds[input] = reset ? zerosTensor(state.type, state.dims) : state;
      }
    }
    outs.push(await runExact(m.sessions.orig, feeds, `chunk ${outs.length + 1} (original model)`));
    offset += length;
  }
  const names = m.sessions.orig.outputNames.filter((n) => !m.entry.streamingSkipOutputs.includes(n));
  return compareOutputs(names, assembleChunks(m, outs, names), m.origOut);
}

export async function checkStackedStreaming(m) {
  if (!m.origOut) throw new Error('not run: the original model did not run (see (1))');
  const detail = `${m.stacked.map((p) => `${p.output}->${p.input}`).join(', ')}; chunks [${m.entry.chunks}]`;
  return verdict(await stackedDiff(m, m.stacked), m.tol, detail);
}

/**
 * Self-test of the above: with each stacked input fed a wrong output (rotated), or, for a single tensor
 * pair, restarted from zeros every chunk, the check must fail.
 */
export async function checkStackedSelfTest(m) {
  const rotated = m.stacked.length > 1;
  const wrong = rotated
    ? m.stacked.map((p, i) => ({ input: p.input, output: m.stacked[(i + 1) % m.stacked.length].output }))
    : m.stacked.map((p) => ({ ...p, reset: true }));
  const cmp = await stackedDiff(m, wrong);
  const what = rotated ? 'rotated stacked feeds' : 'state reset to zeros between chunks';
  return cmp.diff > m.tol ? pass(cmp.diff, `${what}: mismatch detected as expected`)
    : fail(cmp.diff, `${what}: NOT detected - harness broken`);
}

/** Two pairs whose state tensors have the same type and shape (so a swapped feed still runs). */
function swappablePairs(m) {
  for (let i = 0; i < m.pairs.length; i++) {
    for (let j = i + 1; j < m.pairs.length; j++) {
      const a = m.defOut[m.pairs[i].output], b = m.defOut[m.pairs[j].output];
      // Two states with equal values (e.g. both still the zero default because their node did not
      // run) cannot reveal a swap: look for a pair that differs.
      if (a.type === b.type && a.dims.join() === b.dims.join() && maxAbsDiff(a, b).diff > m.tol) return [i, j];
    }
  }
  return null;
}

/**
 * Negative self-test: feed pair A's state into pair B's input and vice versa. Check (2) must see a
 * mismatch; if it does not, the harness is not actually testing the state path (e.g. the feeds are
 * ignored) and every (2) PASS above is worthless. Returns null when no two pairs can be swapped.
 */
export async function checkSelfTest(m) {
  requireDefaultsRun(m);
  const ij = swappablePairs(m);
  if (!ij) return checkResetSelfTest(m);
  const [i, j] = ij;
  const feedback = m.pairs.map(({ input, output }) => ({ input, output }));
  [feedback[i].output, feedback[j].output] = [feedback[j].output, feedback[i].output];
  const cmp = await streamedDiff(m, feedback);
  const what = `swapped ${m.pairs[i].output}<->${m.pairs[j].output}`;
  return cmp.diff > m.tol ? pass(cmp.diff, `${what}: mismatch detected as expected`)
    : fail(cmp.diff, `${what}: check (2) did NOT detect the swap - harness broken`);
}

/**
 * Negative self-test for models without two swappable pairs: restart every chunk from zeros instead
 * of the fed-back state. Check (2) must see a mismatch unless the final state is zero anyway.
 */
async function checkResetSelfTest(m) {
  const live = m.pairs.filter((p) => maxAbsDiff(m.defOut[p.output], zerosTensor(m.defOut[p.output].type, m.defOut[p.output].dims)).diff > m.tol);
  if (!live.length) return null;
  const feedback = m.pairs.map(({ input, output }) => ({ input, output, reset: true }));
  const cmp = await streamedDiff(m, feedback);
  const what = `state reset to zeros between chunks`;
  return cmp.diff > m.tol ? pass(cmp.diff, `${what}: mismatch detected as expected`)
    : fail(cmp.diff, `${what}: check (2) did NOT detect it - harness broken`);
}

/**
 * (2) for chunk_mode "calls" (If models): K calls with the same inputs, call 1 on the defaults
 * model (its equality with the original is check (1)), calls 2..K on the required model fed with
 * the previous call's state. With "branch_taken": false the recurrent branch never runs, so the
 * state must pass through: every output of every call must equal call 1. Otherwise we only check
 * that fed state is accepted and comes back with the same shape (no expected values exist).
 */
export async function checkCalls(m) {
  requireDefaultsRun(m);
  const names = allOutputs(m);
  const outs = [m.defOut];
  for (let k = 1; k < m.entry.chunks; k++) {
    const feeds = { ...m.fullFeeds };
    for (const p of m.pairs) feeds[p.input] = outs[k - 1][p.output];
    outs.push(await runExact(m.sessions.req, feeds, `call ${k + 1} (required model)`));
  }
  if (m.entry.branchTaken === false) {
    let worst = { diff: 0, worst: '', why: '' };
    for (const o of outs.slice(1)) {
      const cmp = compareOutputs(names, o, outs[0]);
      if (!(cmp.diff <= worst.diff)) worst = cmp;
    }
    return verdict(worst, m.tol, `${m.entry.chunks} calls, branch not taken: state passes through`);
  }
  for (let k = 1; k < outs.length; k++) {
    for (const p of m.pairs) {
      const fed = outs[k - 1][p.output], got = outs[k][p.output];
      if (fed.dims.join() !== got.dims.join()) {
        return fail(Infinity, `call ${k + 1}: state '${p.output}' came back as [${got.dims}] after feeding [${fed.dims}]`);
      }
    }
  }
  return pass(NaN, `${m.entry.chunks} calls accepted (branch taken: values not compared)`);
}

// ---------------------------------------------------------------------------------------------
// (3) required model fed explicit zeros == defaults model not fed. State shapes come from the
// defaults run: a pair's state output has the shape of its state input.
export async function checkZeroState(m) {
  requireDefaultsRun(m);
  const feeds = { ...m.fullFeeds };
  for (const p of m.pairs) feeds[p.input] = zerosTensor(m.defOut[p.output].type, firstDims(p, m.defOut[p.output].dims));
  const out = await runExact(m.sessions.req, feeds, 'required model fed zeros');
  return verdict(compareOutputs(allOutputs(m), out, m.defOut), m.tol);
}

/** The dims of pair `p`'s first feed, its output being `dims`: a context whose Pad fills in another mode
 * (`context.pad`) starts empty on its time axis, one that looked ahead with the padding before time. */
function firstDims(p, dims) {
  const c = p.context;
  if (!c || !(c.pad || c.valid === true || c.lookahead > 0)) return dims;
  return dims.map((d, axis) => (axis === c.axis ? (c.pad || c.valid === true ? 0 : c.frames - c.lookahead) : d));
}

// ---------------------------------------------------------------------------------------------
// Each state input moves its own output: with every state fed zeros, feeding one pair's input
// random values instead must change that pair's output. A state input left disconnected (or read
// by nothing but a Shape) would pass (1)-(3) on zeros; this catches it, pair by pair. Any change
// counts, not only one above the tolerance: both runs are deterministic, and an input's influence
// on the final state fades over a long sequence (a quantized model's tolerance is larger than it).
export async function checkStateInputsLive(m) {
  requireDefaultsRun(m);
  const zeros = { ...m.fullFeeds };
  for (const p of m.pairs) zeros[p.input] = zerosTensor(m.defOut[p.output].type, m.defOut[p.output].dims);
  const base = await runExact(m.sessions.req, zeros, 'required model fed zeros');
  const dead = [], delayLines = [];
  let checked = 0, weakest = Infinity;
  for (const p of m.pairs) {
    const like = m.defOut[p.output];
    if (!like.type.startsWith('float') || like.dims.includes(0)) continue;
    const feeds = { ...zeros, [p.input]: randomTensor(like.type, like.dims, `${m.seedBase}|live|${p.input}`) };
    const out = await runExact(m.sessions.req, feeds, `required model, '${p.input}' random`);
    let { diff } = maxAbsDiff(out[p.output], base[p.output]);
    if (!(diff > 0)) {
      // A delay line (prev' = x[t]) does not move its own output, but what the model computes from it.
      const moved = m.sessions.req.outputNames.filter((o) => o !== p.output && maxAbsDiff(out[o], base[o]).diff > 0);
      if (moved.length) {
        diff = Math.max(...moved.map((o) => maxAbsDiff(out[o], base[o]).diff));
        delayLines.push(`${p.input} moves ${moved.join(', ')}`);
      }
    }
    checked++;
    weakest = Math.min(weakest, diff);
    if (!(diff > 0)) dead.push(`${p.input}->${p.output}`);
  }
  if (!checked) return null;
  const lines = delayLines.length ? ` (${delayLines.join('; ')}, not its own output: a delay line)` : '';
  return dead.length ? fail(weakest, `output unmoved by its input: ${dead.join(', ')}`)
    : pass(weakest, `${checked} state input(s), each moves its output${lines} (smallest change shown)`);
}

// ---------------------------------------------------------------------------------------------
// The two ways to get a required-inputs model (from the rewritten model, or directly from the
// original) must compute the same function, checked with random (non-zero) state.
export async function checkRequiredDirect(m) {
  requireDefaultsRun(m);
  const feeds = { ...m.fullFeeds };
  for (const p of m.pairs) {
    const like = m.defOut[p.output];
    feeds[p.input] = like.type.startsWith('float') ? randomTensor(like.type, like.dims, `${m.seedBase}|state|${p.input}`)
      : new Tensor(like.type, like.data, like.dims);
  }
  const a = await runExact(m.sessions.req, feeds, 'required model');
  const b = await runExact(m.sessions.reqDirect, feeds, 'direct required model');
  return verdict(compareOutputs(m.sessions.req.outputNames, b, a), m.tol, m.requiredBytesNote);
}

// ---------------------------------------------------------------------------------------------
// The state contract in required mode (issue 11): a runner that knows only the metadata. Every feed
// of a state input below is derived from the model's own `rnnstate` metadata (init, shape, dtype,
// batch_axis) and the data feeds - never from a run of the defaults model. Each check runs on both
// required models (m.required: [required.onnx, required-direct.onnx], each with its own metadata;
// `routes` checks that they agree). See contract.mjs.

/** Runs `one(model)` on each required model; the worst result wins, details are joined by model. */
async function onEachRequired(m, one) {
  const results = [];
  for (const model of m.required) results.push({ model, r: await one(model) });
  const applicable = results.filter((x) => x.r !== null);
  if (!applicable.length) return null;
  const bad = applicable.filter((x) => !x.r.ok);
  const diffs = applicable.map((x) => x.r.diff).filter((d) => typeof d === 'number' && !Number.isNaN(d));
  const diff = diffs.length ? Math.max(...diffs) : NaN;
  const shown = bad.length ? bad : applicable.slice(0, 1);
  const detail = shown.map((x) => (bad.length || applicable.length < results.length ? `${x.model.name}: ` : '') + x.r.detail)
    .filter((d) => d.trim()).join(' | ');
  return { ok: bad.length === 0, diff, detail };
}

const bare = ({ input, dtype, shape, init }) => ({ input, dtype, shape, init });

/** `rnnstate init --json`, the harness's own derivation and the JavaScript helper's agree on the first feeds. */
export async function checkInitFeeds(m, cli) {
  return onEachRequired(m, async (model) => {
    const plan = contract.firstFeedPlan(m, model, m.fullFeeds);
    const problems = [];
    // --batch only where the harness knows one: on a model of fixed batch another one is refused.
    const args = ['init', model.file, '--json', ...(plan.batch == null ? [] : ['--batch', String(plan.batch)])];
    for (const [name, value] of Object.entries(plan.dims)) args.push('--dim', `${name}=${value}`);
    const r = cli.run(args);
    if (r.status !== 0) return fail(NaN, `'${r.command}' exited ${r.status}: ${r.stderr.trim().split('\n').pop()}`);
    const cliFeeds = JSON.parse(r.stdout.split('\n')[0]).feeds ?? [];
    const mine = plan.specs.map(bare);
    if (JSON.stringify(cliFeeds) !== JSON.stringify(mine)) {
      problems.push(`rnnstate init ${JSON.stringify(cliFeeds)} != harness ${JSON.stringify(mine)}`);
    }
    // The helper: its own metadata reader (on the file) and its own dims (the session's inputMetadata).
    try {
      const helper = await contract.helperSession(model, plan.unnamedBatch ? { batch: plan.batch } : {});
      const theirs = helper.firstFeedSpecs(contract.dataFeeds(model, m.fullFeeds)).map(bare);
      if (JSON.stringify(theirs) !== JSON.stringify(mine)) problems.push(`helper ${JSON.stringify(theirs)} != harness ${JSON.stringify(mine)}`);
    } catch (err) {
      problems.push(`helper: ${err.message}`);
    }
    return problems.length ? fail(NaN, problems.join('; '))
      : pass(NaN, plan.specs.map((f) => `${f.input} [${f.shape}] ${f.init}`).join(', ') + (plan.note ? `; ${plan.note}` : ''));
  });
}

/**
 * Both routes to a required-mode model (rewritten -> required, original -> required) give one
 * interface: input names, their declared types and shapes, output names, types and shapes, and the
 * same `rnnstate` metadata document.
 */
export function checkRoutes(m) {
  const [a, b] = m.required;
  const problems = [];
  const describe = (metas) => metas.map((v) => `${v.name}:${v.isTensor ? `${v.type}[${v.shape.map((d) => (d === '' ? '?' : d))}]` : 'non-tensor'}`);
  for (const what of ['inputMetadata', 'outputMetadata']) {
    const da = describe(a.session[what]), db = describe(b.session[what]);
    if (da.join() !== db.join()) {
      const only = (x, y) => x.filter((v) => !y.includes(v));
      problems.push(`${what === 'inputMetadata' ? 'inputs' : 'outputs'} differ: ${a.name} [${only(da, db)}], ${b.name} [${only(db, da)}]` +
        (only(da, db).length === 0 ? ' (order differs)' : ''));
    }
  }
  if (contract.canonicalJson(a.meta) !== contract.canonicalJson(b.meta)) {
    problems.push(`rnnstate metadata differs (${a.name} vs ${b.name}): ${contract.stateDifferences(a.meta, b.meta).join('; ')}`);
  }
  return problems.length ? fail(NaN, problems.join('; '))
    : pass(NaN, `${a.session.inputNames.length} inputs, ${a.session.outputNames.length} outputs, metadata identical; ${m.requiredBytesNote}`);
}

/**
 * Every state input's declared shape accepts the metadata shape resolved with the data batch (and the
 * empty feed, for init "empty"); every symbolic name in a metadata shape is a data input's dimension;
 * dtype equals the declared type; and fed zeros of that shape, the state outputs come back with exactly
 * the metadata shape and dtype.
 */
export async function checkShapeFeedable(m) {
  return onEachRequired(m, async (model) => {
    const plan = contract.firstFeedPlan(m, model, m.fullFeeds);
    const problems = plan.unresolved.map((u) => `state input '${u.input}': dimension '${u.name}' (axis ${u.axis}) ` +
      'is no dimension of a data input');
    const declared = new Map(model.session.inputMetadata.map((v) => [v.name, v]));
    const feeds = contract.dataFeeds(model, m.fullFeeds);
    for (const spec of plan.specs) {
      const decl = declared.get(spec.input);
      if (!decl) { problems.push(`'${spec.input}' is not an input`); continue; }
      if (decl.type !== spec.dtype) problems.push(`'${spec.input}' declared ${decl.type}, metadata dtype ${spec.dtype}`);
      const accepts = (shape) => decl.shape.length === shape.length &&
        decl.shape.every((d, i) => typeof d === 'string' || d < 0 || d === shape[i]);
      if (spec.fullShape && !accepts(spec.fullShape)) {
        problems.push(`'${spec.input}' declared [${decl.shape}] does not accept [${spec.fullShape}]`);
      }
      if (spec.init === 'empty' && !accepts(spec.shape)) {
        problems.push(`'${spec.input}' declared [${decl.shape}] does not accept the empty feed [${spec.shape}]`);
      }
      feeds[spec.input] = zerosTensor(spec.dtype, spec.fullShape ?? spec.shape);
    }
    let out = null;
    try {
      out = await runExact(model.session, feeds, 'fed zeros of the metadata shapes');
    } catch (err) {
      problems.push(err.message);
    }
    for (const spec of out ? plan.specs : []) {
      const got = out[spec.output];
      if (!got) problems.push(`no state output '${spec.output}'`);
      else if (spec.fullShape === null) {
        // The batch no data input gives: the output has the state's other axes and some batch.
        const fits = got.dims.length === spec.shape.length && got.dims[spec.batchAxis] > 0 &&
          spec.shape.every((d, i) => i === spec.batchAxis || d === got.dims[i]);
        if (got.type !== spec.dtype || !fits) {
          problems.push(`state output '${spec.output}' is ${got.type} [${got.dims}], metadata says ${spec.dtype} [${spec.shape}] (any batch)`);
        }
      } else if (got.type !== spec.dtype || got.dims.join() !== spec.outShape.join()) {
        problems.push(`state output '${spec.output}' is ${got.type} [${got.dims}], metadata says ${spec.dtype} [${spec.outShape}]`);
      }
    }
    return problems.length ? fail(NaN, problems.join('; '))
      : pass(NaN, plan.specs.map((f) => `${f.input} [${f.fullShape ?? `${f.shape} first, its own batch`}]`).join(', ') + (plan.note ? `; ${plan.note}` : ''));
  });
}

/**
 * The original's outputs for a first call: the full feeds, except that the original's own inputs that
 * are state inputs get the metadata's first feed too (PyTorch's h0/c0: the caller's first feed).
 */
async function referenceRun(m, model) {
  m.refOut ??= new Map();
  if (m.refOut.has(model)) return m.refOut.get(model);
  const own = contract.firstFeedPlan(m, model, m.fullFeeds).specs.filter((f) => m.sessions.orig.inputNames.includes(f.input));
  const feeds = { ...m.fullFeeds };
  for (const f of own) feeds[f.input] = contract.firstFeedTensor(f);
  const out = own.length || !m.origOut ? await runExact(m.sessions.orig, feeds, 'original model') : m.origOut;
  const ref = { out, note: own.length ? `the original's own state inputs ${own.map((f) => f.input).join(', ')} fed the first feed` : '' };
  m.refOut.set(model, ref);
  return ref;
}

/** Data feeds plus the metadata's first feeds (`overrides` by input name). */
function firstCallFeeds(m, model, dataFull, overrides = {}) {
  const feeds = contract.dataFeeds(model, dataFull);
  for (const spec of contract.firstFeedPlan(m, model, dataFull).specs) {
    feeds[spec.input] = overrides[spec.input] ?? contract.firstFeedTensor(spec);
  }
  return feeds;
}

/**
 * (4) required model, first call fed only as its metadata says (zeros of `shape`, or the empty tensor):
 * every original output equals the original model's.
 */
export async function checkRequiredFirstCall(m) {
  return onEachRequired(m, async (model) => {
    const ref = await referenceRun(m, model);
    const out = await runExact(model.session, firstCallFeeds(m, model, m.fullFeeds), 'first call');
    model.firstOut = out;
    const inits = contract.firstFeedPlan(m, model, m.fullFeeds).specs.map((f) => f.init);
    const count = (what) => inits.filter((i) => i === what).length;
    return verdict(compareOutputs(m.sessions.orig.outputNames, out, ref.out), m.tol,
      [`${count('zeros')} zeros, ${count('empty')} empty`, ref.note].filter(Boolean).join('; '));
  });
}

/**
 * Self-test of (4): where the metadata says "empty", feeding zeros instead (what a runner did before
 * the contract) must change the outputs when the model's own default is not zero. SKIP when no input is
 * "empty" or when the selected default is zero anyway.
 */
export async function checkRequiredFirstCallSelfTest(m) {
  return onEachRequired(m, async (model) => {
    const empties = contract.firstFeedPlan(m, model, m.fullFeeds).specs.filter((f) => f.init === 'empty' && f.fullShape);
    if (!empties.length) return null;
    const overrides = Object.fromEntries(empties.map((f) => [f.input, zerosTensor(f.dtype, f.fullShape)]));
    const out = await runExact(model.session, firstCallFeeds(m, model, m.fullFeeds, overrides), 'zeros fed for "empty"');
    const cmp = compareOutputs(m.sessions.orig.outputNames, out, (await referenceRun(m, model)).out);
    if (cmp.diff > m.tol) {
      return pass(cmp.diff, `zeros instead of empty for ${empties.map((f) => f.input).join(', ')}: mismatch detected as expected`);
    }
    return null; // the model's default is zeros here: nothing to detect
  });
}

/**
 * (5) streaming entirely on a required model: the first chunk fed per `init`, later chunks fed back per
 * the metadata's pairs. Original outputs equal one full run of the original (the reference of (4));
 * state outputs equal the model's own full first call (whose original outputs (4) checked).
 */
export async function checkRequiredStreaming(m) {
  return onEachRequired(m, async (model) => {
    const ref = await referenceRun(m, model);
    if (!model.firstOut) throw new Error('not run: the first call did not run (see (4))');
    const pairs = contract.feedback(model);
    const skipped = (n) => m.entry.streamingSkipOutputs.includes(n);
    const origNames = m.sessions.orig.outputNames.filter((n) => !skipped(n));
    const stateNames = [...new Set(pairs.map((p) => p.output))].filter((n) => !origNames.includes(n) && !skipped(n));
    const names = [...origNames, ...stateNames];
    const want = { ...model.firstOut, ...Object.fromEntries(origNames.map((n) => [n, ref.out[n]])) };
    const outs = [];
    const call = async (dataFull) => {
      const feeds = outs.length === 0 ? firstCallFeeds(m, model, dataFull) : contract.dataFeeds(model, dataFull);
      if (outs.length) for (const p of pairs) feeds[p.input] = outs[outs.length - 1][p.output];
      outs.push(await runExact(model.session, feeds, `call ${outs.length + 1}`));
    };
    if (m.entry.chunkMode === 'calls') {
      for (let k = 0; k < m.entry.chunks; k++) await call(m.fullFeeds);
      if (m.entry.branchTaken !== false) {
        for (let k = 1; k < outs.length; k++) {
          const changed = pairs.find((p) => outs[k - 1][p.output].dims.join() !== outs[k][p.output].dims.join());
          if (changed) return fail(Infinity, `call ${k + 1}: state '${changed.output}' came back as [${outs[k][changed.output].dims}]`);
        }
        return pass(NaN, `${m.entry.chunks} calls accepted (branch taken: values not compared)`);
      }
      let worst = { diff: 0, worst: '', why: '' };
      for (const o of outs) {
        const cmp = compareOutputs(names, o, want);
        if (!(cmp.diff <= worst.diff)) worst = cmp;
      }
      return verdict(worst, m.tol, `${m.entry.chunks} calls, the first fed per init; branch not taken`);
    }
    let offset = 0;
    for (const length of m.entry.chunks) {
      await call(chunkFeeds(m, offset, length));
      offset += length;
    }
    return verdict(compareOutputs(names, assembleChunks(m, outs, names), want), m.tol,
      `${m.entry.chunkMode} chunks [${m.entry.chunks}], the first fed per init`);
  });
}
