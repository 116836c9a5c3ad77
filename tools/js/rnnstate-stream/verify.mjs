// The numerical proof of a rewrite: the original model run once on a whole sequence against the rewritten
// model streamed in chunks with its state fed back (through StreamingSession, as a user streams it).
// Every output of the original is compared, and every final state against one unchunked run of the
// rewrite. See README.md here and rnnstate's docs/guide.md, "verify".
import { StreamingSession } from './index.mjs';
import { firstFeedSpecs, firstFeedSpecsOf, firstFeedTensor, stateValues } from './feeds.mjs';
import { readRnnstateMetadata, withoutInitializers } from './metadata.mjs';
import { compareTensors, concatAxis, hashSeed, seededRandom, sliceAxis } from './tensors.mjs';
import { formatCallsReport, verifyCalls } from './verify_calls.mjs';
import { createSession, makeInput, parseInputs, runOrThrow, VerifyError } from './verify_inputs.mjs';

export { VerifyError };

export const DEFAULT_CHUNKS = [1, 2, 5];
export const DEFAULT_RANDOM_LENGTH = 16;

/**
 * @typedef {object} VerifyOptions
 * @property {object} ort  the onnxruntime module (onnxruntime-node)
 * @property {string | Uint8Array} original  the model before `rnnstate rewrite` (path or bytes)
 * @property {string | Uint8Array} rewritten  its rewrite (path or bytes), in either --state-inputs mode
 * @property {number[]} [chunks]  chunk lengths along the time axis (default [1, 2, 5]; the sequence is their sum)
 * @property {number} [seed]  random chunk lengths (and data) from this seed, over `length` steps
 * @property {number} [length]  the sequence length for random chunks (default 16, or the given inputs')
 * @property {Record<string, object>} [inputs]  data inputs' values for the whole sequence, by name: a
 *   number, nested arrays, {dims, data}, or an ort.Tensor; others are random (floats in [-1, 1))
 * @property {Record<string, number>} [timeAxes]  the time axis of each chunked input (default: the one
 *   symbolic dimension of the data inputs that is not the states' batch)
 * @property {number} [calls]  a model without a time axis inside one call: how many calls (default 3)
 * @property {number} [batch]  the batch size (default 1)
 * @property {Record<string, number>} [dims]  values of other symbolic dimensions
 * @property {number} [atol]  absolute tolerance (default 1e-5)
 * @property {number} [rtol]  relative tolerance (default 1e-4): an element passes when
 *   |chunked - reference| <= atol + rtol * |reference|
 * @property {object} [sessionOptions]  passed to InferenceSession.create
 */

/**
 * Runs the comparison. Resolves to {ok, chunks, length, batch, time_axes, atol, rtol, compared: [{name,
 * role: "output"|"state", max_abs, max_rel, ok, why?}]}; rejects with a VerifyError when it cannot run
 * (code 3) or refuses (code 4: states marked not carried, a fixed-length time axis, data it cannot make up).
 * A model with no time axis inside one call (the metadata records none, or no data input names one) is
 * checked call by call instead: verify_calls.mjs, whose result has `mode: "calls"`.
 * @param {VerifyOptions} options
 */
export async function verifyStreaming(options) {
  const { ort } = options;
  const atol = options.atol ?? 1e-5;
  const rtol = options.rtol ?? 1e-4;
  const rewrittenBytes = await bytesOf(options.rewritten);
  const metadata = await metadataOf(rewrittenBytes);
  const values = stateValues(metadata);
  refuseNotStreamable(metadata, values);

  // A defaults-mode rewrite's state inputs are invisible to onnxruntime-node: drop their defaults (the
  // metadata's first feeds give the same values).
  const streamable = withoutInitializers(rewrittenBytes, values.map((v) => v.input));
  const sessionOptions = options.sessionOptions ?? {};
  // Models given as paths are opened from their files, so that external data resolves beside them; a copy
  // without the defaults goes beside the rewritten file for the same reason, and is removed again.
  const original = await createSession(ort, options.original, sessionOptions, 'the original model');
  const copy = streamable.length !== rewrittenBytes.length && typeof options.rewritten === 'string'
    ? await writeBeside(options.rewritten, streamable) : null;
  let rewritten;
  try {
    rewritten = await createSession(ort, copy ?? (streamable.length === rewrittenBytes.length &&
      typeof options.rewritten === 'string' ? options.rewritten : streamable), sessionOptions, 'the rewritten model');
  } catch (err) {
    await original.release?.();
    throw err;
  } finally {
    if (copy) await (await import('node:fs/promises')).rm(copy, { force: true });
  }
  try {
    // A state batch without a name (Silero's `state [2, ?, 128]`) takes --batch (default 1): no feed names it.
    const unnamedBatch = values.some((v) => v.batch_axis >= 0 && (v.shape[v.batch_axis] ?? '') === '');
    const feedBatch = options.batch ?? (unnamedBatch ? 1 : undefined);
    const stream = new StreamingSession(rewritten, metadata, { ort, batch: feedBatch, dims: options.dims, stateOutputs: true });
    const stateInputs = new Set(values.map((v) => v.input));
    const dataInputs = stream.dataInputNames;
    const declared = new Map((rewritten.inputMetadata ?? []).map((m) => [m.name, m]));
    const batchNames = new Set(values.map((v) => v.shape[v.batch_axis]).filter((d) => typeof d === 'string'));
    const { tensors: given, shapes } = await parseInputs(ort, options.inputs ?? {}, declared);
    const { timeAxes, noChunking } = chooseTimeAxes(options, metadata, dataInputs, declared, batchNames, given);
    if (noChunking) {
      return await verifyCalls({ ort, options, metadata, values, original, rewritten, dataInputs, declared, given, shapes,
        batchNames, noChunking, hasDefaults: streamable.length !== rewrittenBytes.length,
        rewrittenAsWritten: typeof options.rewritten === 'string' ? options.rewritten : rewrittenBytes });
    }
    checkTimeAxes(timeAxes, dataInputs, declared);
    // rewrite --lookahead: the outputs lag by `delay` frames (at the outputs' rate); a flush of `flush` input
    // frames of zeros brings them (as many, but after a ConvTranspose that lags: delay / its stride), and the
    // first call must hold more input frames than the flush.
    const delay = metadata.stream?.delay ?? 0;
    const flushFrames = delay > 0 ? (metadata.stream?.flush ?? delay) : 0;
    // A context whose Pad reflects the first call's frames: the first call must hold stream.first_chunk_min;
    // windows without padding ("valid") take their frames off the first call's outputs.
    const multiple = metadata.stream?.chunk_multiple ?? 1;
    const least = Math.max(flushFrames + validFrames(metadata) * multiple + 1, metadata.stream?.first_chunk_min ?? 0);
    const { chunks, length } = chunkPlan(options, timeAxes, given, multiple, least);
    const dims = { ...(options.dims ?? {}) };
    for (const [name, axis] of Object.entries(timeAxes)) {
      const d = declared.get(name)?.shape?.[axis];
      if (typeof d === 'string' && d) dims[d] = length;
    }
    const batch = options.batch ?? 1;
    for (const b of batchNames) dims[b] ??= batch;

    const full = {};
    for (const name of dataInputs) {
      full[name] = given[name] ?? makeInput(ort, name, declared.get(name),
        { dims, timeAxis: timeAxes[name], length, seed: options.seed ?? 0, shape: shapes[name] });
    }
    const chunkFeeds = (offset, size) => Object.fromEntries(dataInputs.map((name) =>
      [name, timeAxes[name] === undefined ? full[name] : sliceAxis(full[name], timeAxes[name], offset, size)]));

    // The original: the whole sequence in one call; its own state inputs (the authors' `state`, say) get
    // the metadata's first feed, as the rewrite's first call does.
    const originalFeeds = {};
    // (A packed model's members are the original's state inputs: their own first feeds, unpacked.)
    const firstFeeds = new Map([...firstFeedSpecs(metadata.states, { dims, batch: feedBatch }),
      ...firstFeedSpecsOf(metadata, { dims, batch: feedBatch })].map((s) => [s.input, s]));
    for (const name of original.inputNames) {
      if (full[name]) originalFeeds[name] = full[name];
      else if (firstFeeds.has(name)) originalFeeds[name] = firstFeedTensor(firstFeeds.get(name), ort.Tensor);
      else throw new VerifyError(3, `the original model's input '${name}' is neither a data input of the rewrite nor a state input`);
    }
    const reference = await runOrThrow(() => original.run(originalFeeds), 'the original model, whole sequence');
    const unchunked = await runOrThrow(() => stream.run(chunkFeeds(0, length)), 'the rewritten model, whole sequence');
    await stream.reset();
    const pieces = [];
    let offset = 0;
    for (const size of chunks) {
      pieces.push(await runOrThrow(() => stream.run(chunkFeeds(offset, size)), `the rewritten model, chunk at ${offset}`));
      offset += size;
    }
    // The last `delay` frames come with a flush: `flushFrames` frames of zeros (the padding the windows dropped).
    const flush = delay > 0 ? await runOrThrow(() => stream.run(zeroFeeds(chunkFeeds(0, flushFrames), timeAxes)),
      'the rewritten model, the flush') : null;

    const compared = [];
    const check = (name, role, got, want) => {
      const cmp = compareTensors(got, want);
      const ok = !cmp.exceeds(atol, rtol);
      compared.push({ name, role, max_abs: cmp.diff, max_rel: cmp.rel, ok, ...(cmp.why ? { why: cmp.why } : {}) });
    };
    for (const name of original.outputNames) {
      const assembled = assemble(name, pieces.map((p) => p[name]), reference[name], delay);
      if (assembled.why) compared.push({ name, role: 'output', max_abs: Infinity, max_rel: Infinity, ok: false, why: assembled.why });
      // A last value (a final state) with a delay: the whole run's comes with the flush (below).
      else if (!flush || assembled.axis !== undefined) check(name, 'output', assembled.tensor, assembled.want);
      if (flush && !assembled.why) {
        // Exact where one window looks ahead; after several, the last frames differ (each later window
        // would pad the end with zeros of its own), and so does a final state between them: shown, not judged.
        // (stream.flush_exact says so; a model written before it: one window.)
        const judged = metadata.stream?.flush_exact ?? lookaheadWindows(metadata) === 1;
        // (The output's own length: at another rate than the input's after an upsampling.)
        const want = assembled.axis === undefined ? reference[name]
          : sliceAxis(reference[name], assembled.axis, reference[name].dims[assembled.axis] - delay, delay);
        check(name, judged ? 'flush' : 'flush?', flush[name], want);
        if (!judged) compared[compared.length - 1].ok = true;
      }
    }
    for (const v of values) {
      if (original.outputNames.includes(v.output)) continue;  // the model's own output: compared above
      check(v.output, 'state', pieces[pieces.length - 1][v.output], unchunked[v.output]);
    }
    return {
      ok: compared.every((c) => c.ok), chunks, length, batch, time_axes: timeAxes, atol, rtol, compared,
      state_inputs: [...stateInputs], predicted_difference: predictedDifference(metadata),
    };
  } finally {
    await original.release?.();
    await rewritten.release?.();
  }
}

async function bytesOf(model) {
  if (typeof model === 'string') {
    const { readFile } = await import('node:fs/promises');
    try {
      return new Uint8Array(await readFile(model));
    } catch (err) {
      throw new VerifyError(3, `cannot read ${model}: ${err.message}`);
    }
  }
  return model;
}

/** Writes `bytes` to a new hidden file in the directory of `path`; returns its path. */
async function writeBeside(path, bytes) {
  const { writeFile } = await import('node:fs/promises');
  const { basename, dirname, join } = await import('node:path');
  const copy = join(dirname(path), `.${basename(path)}.verify-${process.pid}-${Date.now()}.onnx`);
  try {
    await writeFile(copy, bytes, { flag: 'wx' });
  } catch (err) {
    throw new VerifyError(3, `cannot write a copy of ${path} without its state defaults beside it: ${err.message}`);
  }
  return copy;
}

async function metadataOf(bytes) {
  let metadata;
  try {
    metadata = await readRnnstateMetadata(bytes);
  } catch (err) {
    throw new VerifyError(3, err.message);
  }
  if (!metadata) {
    throw new VerifyError(3, 'the rewritten model has no "rnnstate" metadata: it was not rewritten by rnnstate ' +
      '(run `rnnstate rewrite ORIGINAL -o REWRITTEN` first)');
  }
  if (metadata.states.length === 0) throw new VerifyError(4, 'the metadata lists no state pairs: nothing streams');
  return metadata;
}

function refuseNotStreamable(metadata, values) {
  // States their recurrence does not carry (bidirectional, reverse, sequence_lens) cannot be fed back at
  // all; a model whose operators around the recurrences make chunks differ is compared, to show it.
  const states = metadata.states.filter((s) => (s.carried ?? s.streamable) === false).map((s) => `'${s.input}'`);
  if (!states.length && values.every((v) => v.carried)) return;
  throw new VerifyError(4, `the metadata marks state ${[...new Set(states)].join(', ')} as not carried ` +
    '(bidirectional, reverse, sequence_lens, or a loop rnnstate cannot prove): chunked runs are not meant to ' +
    'equal one full run. Rewrite with --streamable-only to leave such states out, or run those models unchunked');
}

/** The metadata's own verdict on chunked runs: its reason when it says they differ, else null. */
function predictedDifference(metadata) {
  if (metadata.stream && metadata.stream.chunk_exact === false) return metadata.stream.reason ?? 'chunked runs differ';
  const states = metadata.states.filter((s) => s.streamable === false);
  return states.length ? `state '${states[0].input}' is marked not streamable` : null;
}

/**
 * The time axes to chunk: --time-axis (the caller's word), else the metadata's, else the one found. None
 * — the metadata records none (one frame per call, as Silero VAD; or an ambiguous axis it did not choose),
 * or no data input names one — gives `noChunking`, why: the calls are checked instead.
 */
function chooseTimeAxes(options, metadata, dataInputs, declared, batchNames, given) {
  if (options.timeAxes) return { timeAxes: options.timeAxes };
  if (Array.isArray(metadata.stream?.time) && metadata.stream.time.length === 0) {
    return { timeAxes: {}, noChunking: 'the rewrite records no time axis inside one call: the model streams call by ' +
      'call (pass --time-axis INPUT:AXIS to chunk one anyway)' };
  }
  const timeAxes = recordedTimeAxes(metadata, dataInputs) ?? findTimeAxes(dataInputs, declared, batchNames, given);
  if (Object.keys(timeAxes).length) return { timeAxes };
  return { timeAxes, noChunking: 'no data input has a named dimension besides the batch (pass --time-axis INPUT:AXIS to chunk one)' };
}

/** The time axes the metadata records (`stream.time`), as {input: axis}, or null. */
function recordedTimeAxes(metadata, dataInputs) {
  const time = metadata.stream?.time;
  if (!Array.isArray(time) || !time.length || !time.every((t) => dataInputs.includes(t.input))) return null;
  return Object.fromEntries(time.map((t) => [t.input, t.axis]));
}

/**
 * The time axis of each data input: the axes holding the one symbolic dimension, shared by the data
 * inputs, that is not a state's batch. Inputs without it are fed whole on every call. None ({}): the model
 * streams call by call.
 */
function findTimeAxes(dataInputs, declared, batchNames, given) {
  const candidates = new Map();  // dim name -> {input: axis}
  for (const name of dataInputs) {
    (declared.get(name)?.shape ?? []).forEach((d, axis) => {
      if (typeof d !== 'string' || d === '' || batchNames.has(d)) return;
      const entry = candidates.get(d) ?? {};
      entry[name] ??= axis;
      candidates.set(d, entry);
    });
  }
  if (candidates.size === 1) return [...candidates.values()][0];
  if (candidates.size === 0) return {};  // no time axis inside one call: the calls are checked
  const described = dataInputs.map((n) => `${n} [${(declared.get(n)?.shape ?? []).map((d) => d === '' ? '?' : d)}]`).join(', ');
  throw new VerifyError(4, `several dimensions could be the time axis (${[...candidates.keys()].join(', ')} in ${described}); ` +
    'pass --time-axis INPUT:AXIS for each chunked input');
}

function checkTimeAxes(timeAxes, dataInputs, declared) {
  if (Object.keys(timeAxes).length === 0) throw new VerifyError(4, 'no input is chunked: pass --time-axis INPUT:AXIS');
  for (const [name, axis] of Object.entries(timeAxes)) {
    if (!dataInputs.includes(name)) {
      throw new VerifyError(2, `--time-axis ${name}:${axis}: '${name}' is not a data input (${dataInputs.join(', ')})`);
    }
    const shape = declared.get(name)?.shape;
    if (shape && !(Number.isInteger(axis) && axis >= 0 && axis < shape.length)) {
      throw new VerifyError(2, `--time-axis ${name}:${axis}: input '${name}' has rank ${shape.length}`);
    }
    if (shape && typeof shape[axis] === 'number') {
      throw new VerifyError(4, `input '${name}' has a fixed length ${shape[axis]} on axis ${axis}: it cannot be chunked ` +
        `(a fixed-length loop: rnnstate rewrite --time-axis ${name}:${axis})`);
    }
  }
}

/** The frames the windows without padding ("valid") take off the first call: their contexts' frames, summed. */
function validFrames(metadata) {
  return metadata.states.filter((st) => st.kind === 'context' && st.context?.valid === true)
    .reduce((n, st) => n + st.context.frames, 0);
}

/** The state pairs of windows carried with their lookahead (rewrite --lookahead). */
function lookaheadWindows(metadata) {
  return metadata.states.filter((st) => st.kind === 'context' && st.context?.lookahead > 0).length;
}

/** The feeds `feeds` with the chunked inputs' values made zeros. */
function zeroFeeds(feeds, timeAxes) {
  for (const name of Object.keys(timeAxes)) {
    const data = feeds[name].data;
    data.fill(typeof data[0] === 'bigint' ? 0n : 0);
  }
  return feeds;
}

/** The chunk lengths: given, or random from the seed; their sum is the sequence length. Each a multiple of
 * `multiple` (the model's strides over time, metadata `stream.chunk_multiple`); the first at least `least`
 * frames long (more than the frames of the outputs' flush, `stream.flush` or `stream.delay`, plus the frames windows without padding take off the
 * first call: the first call emits its frames but that many; at least `stream.first_chunk_min`), random or
 * default ones merged to be. */
function chunkPlan(options, timeAxes, given, multiple = 1, least = 1) {
  const fromInputs = Object.entries(timeAxes).filter(([n]) => given[n]).map(([n, a]) => given[n].dims[a]);
  if (new Set(fromInputs).size > 1) throw new VerifyError(2, `the given inputs disagree on the sequence length (${fromInputs.join(', ')})`);
  let chunks = options.chunks;
  if (!chunks && options.seed !== undefined) {
    const steps = Math.ceil((fromInputs[0] ?? options.length ?? DEFAULT_RANDOM_LENGTH) / multiple);
    const next = seededRandom(hashSeed(`chunks|${options.seed}`));
    chunks = [];
    for (let left = steps; left > 0;) {
      const size = Math.min(left, 1 + Math.floor(next() * Math.max(1, Math.ceil(steps / 2))));
      chunks.push(size * multiple);
      left -= size;
    }
  }
  chunks ??= fromInputs.length ? splitLike(DEFAULT_CHUNKS.map((c) => c * multiple), fromInputs[0])
    : DEFAULT_CHUNKS.map((c) => c * multiple);
  if (!chunks.length || !chunks.every((c) => Number.isInteger(c) && c > 0)) {
    throw new VerifyError(2, `chunk lengths must be positive integers, not ${chunks.join(',')}`);
  }
  if (!chunks.every((c) => c % multiple === 0)) {
    throw new VerifyError(2, `chunk lengths must be multiples of ${multiple} (the model's strides over time: ` +
      `metadata stream.chunk_multiple), not ${chunks.join(',')}`);
  }
  if (chunks[0] < least && options.chunks) {
    throw new VerifyError(2, `the first chunk must be longer than ${least - 1} frames (the model's outputs lag by ` +
      `metadata stream.delay, brought by a flush of stream.flush input frames, windows without padding take frames off the first call: context "valid", or its ` +
      `stream.first_chunk_min: a Pad that reflects the first frames), not ${chunks[0]}`);
  }
  while (chunks.length > 1 && chunks[0] < least) chunks = [chunks[0] + chunks[1], ...chunks.slice(2)];
  const length = chunks.reduce((a, b) => a + b, 0);
  if (fromInputs.length && fromInputs[0] !== length) {
    throw new VerifyError(2, `the chunks add up to ${length}, but the given inputs are ${fromInputs[0]} long`);
  }
  return { chunks, length };
}

/** The default chunk pattern cut to a sequence of `length`: 1, 2, 5, 1, 2, ... */
function splitLike(pattern, length) {
  const chunks = [];
  for (let left = length, i = 0; left > 0; i++) {
    const size = Math.min(left, pattern[i % pattern.length]);
    chunks.push(size);
    left -= size;
  }
  return chunks;
}

/**
 * The chunks' values of one output as one tensor comparable with the whole-sequence run: concatenated
 * along the axis whose length follows the chunks, or the last chunk's value when no axis does (a final
 * value such as h_n).
 */
function assemble(name, parts, want, delay = 0) {
  if (!want) return { why: `the original run returned no '${name}'` };
  if (parts.some((p) => !p)) return { why: `a chunked run returned no '${name}'` };
  const same = (a, b) => a.join(',') === b.join(',');
  if (parts.every((p) => same(p.dims, want.dims))) return { tensor: parts[parts.length - 1], want };
  for (let axis = 0; axis < want.dims.length; axis++) {
    const rest = (d) => d.filter((_, i) => i !== axis);
    const lines = parts.every((p) => p.dims.length === want.dims.length && same(rest(p.dims), rest(want.dims)));
    const total = parts.reduce((n, p) => n + p.dims[axis], 0);
    // With a delay, the chunks hold the whole run's frames but the last `delay`.
    if (lines && total + delay === want.dims[axis]) {
      return { tensor: concatAxis(parts, axis), want: delay ? sliceAxis(want, axis, 0, total) : want, axis };
    }
  }
  return { why: `the chunks' '${name}' [${parts.map((p) => p.dims).join('] [')}] do not line up with the whole run's [${want.dims}]` };
}

/** The report as text, one line per compared value, then the verdict. */
export function formatReport(result, { original = 'ORIGINAL', rewritten = 'REWRITTEN' } = {}) {
  if (result.mode === 'calls') return formatCallsReport(result, { original, rewritten });
  const axes = Object.entries(result.time_axes).map(([n, a]) => `${n}:${a}`).join(', ');
  const lines = [`${original}: the whole sequence (${result.length} steps along ${axes}, batch ${result.batch}) in one call`,
    `${rewritten}: chunks ${result.chunks.join(',')}, state fed back`];
  const width = Math.max(...result.compared.map((c) => c.name.length), 4);
  const num = (x) => (x === Infinity ? 'inf' : x === 0 ? '0' : x.toExponential(2));
  for (const c of result.compared) {
    lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.role.padEnd(6)}  ${c.name.padEnd(width)}  max abs ${num(c.max_abs).padStart(8)}  ` +
      `max rel ${num(c.max_rel).padStart(8)}${c.why ? `  (${c.why})` : ''}`);
  }
  if (result.predicted_difference) lines.push(`the metadata says chunked runs differ: ${result.predicted_difference}`);
  const failed = result.compared.filter((c) => !c.ok).length;
  lines.push(failed
    ? `FAIL: ${failed} of ${result.compared.length} past atol ${result.atol} + rtol ${result.rtol} * |expected|`
    : `PASS: ${result.compared.length} outputs and final states within atol ${result.atol} + rtol ${result.rtol} * |expected|`);
  return lines.join('\n') + '\n';
}
