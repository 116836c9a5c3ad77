#!/usr/bin/env node
// The JavaScript streaming helper (tools/js/rnnstate-stream) against ONNX Runtime (onnxruntime-node).
//
//   node stream_helper_test.mjs --rnnstate BINARY --models DIR --manifest FILE [--filter REGEX] [--workdir DIR]
//
// For every streaming entry of the manifest where ORT runs the model: `rnnstate rewrite ORIG
// --state-inputs required` (and again with `--pack tensor`: one packed tensor), then the helper streams the entry's chunks (the caller passes only data
// inputs) and must match one full run of the original (every original output, within the tolerance);
// after reset() a second pass must match again (a restart from the model's defaults); and a negative
// control - the same stream through a session whose state hand-over is broken (carried state halved) -
// must NOT match, proving the comparison can fail. Then the helper's contract on its edges: its metadata
// reader equals protobufjs on every rewritten model, and it refuses (with a clear message) a model
// without metadata, a defaults-mode model, a non-streamable one unless told to reset it, state inputs
// in the feeds and a batch change without reset(); {nonStreamable: "reset"} runs each call like the
// original. Output like verify.mjs: PASS/FAIL/SKIP lines, then "N passed, M failed"; exit 1 on failure.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as ort from 'onnxruntime-node';

import { readRnnstateMetadata, StreamingSession } from '../../tools/js/rnnstate-stream/index.mjs';
import { assembleChunks, chunkFeeds, compareOutputs, runExact, verdict } from './lib/checks.mjs';
import { buildFeeds, loadManifest, normalizeEntry } from './lib/manifest.mjs';
import { scanModel } from './lib/onnx-proto.mjs';
import { packRefusal } from './lib/pack_variants.mjs';
import { lastLines, RnnstateCli } from './lib/rnnstate-cli.mjs';
import { Results } from './lib/suite.mjs';
import { tensorFromValues } from './lib/tensors.mjs';

const { values: args } = parseArgs({
  options: {
    rnnstate: { type: 'string' }, models: { type: 'string' }, manifest: { type: 'string' },
    filter: { type: 'string' }, workdir: { type: 'string' }, tol: { type: 'string', default: '1e-5' },
    seed: { type: 'string', default: 'rnnstate-e2e' },
  },
});
for (const k of ['rnnstate', 'models', 'manifest']) {
  if (!args[k]) {
    console.error(`missing --${k}\nusage: node stream_helper_test.mjs --rnnstate BINARY --models DIR --manifest FILE [--filter REGEX] [--workdir DIR]`);
    process.exit(2);
  }
}
const cli = new RnnstateCli(resolve(args.rnnstate));
const modelsDir = resolve(args.models);
const tolDefault = Number(args.tol);
const workdir = args.workdir ? resolve(args.workdir) : mkdtempSync(join(tmpdir(), 'rnnstate-stream-'));
mkdirSync(workdir, { recursive: true });
// One thread per session: the models are tiny, and ORT's pool of one thread per core only spins against the
// other suites ctest runs beside this one (twice the time on 2 cores).
const sessionOptions = { logSeverityLevel: 3, intraOpNumThreads: 1, interOpNumThreads: 1 };

const results = new Results();
/** Expects `fn` to throw with a message matching `pattern`. */
async function expectError(label, name, pattern, fn) {
  await results.check(label, name, async () => {
    try {
      await fn();
    } catch (err) {
      return { ok: pattern.test(err.message), diff: NaN, detail: pattern.test(err.message) ? `refused: ${err.message.slice(0, 120)}` : `wrong message: ${err.message}` };
    }
    return { ok: false, diff: NaN, detail: 'not refused' };
  });
}

/** `rnnstate rewrite IN -o OUT --state-inputs MODE`; returns OUT. */
function rewrite(input, output, mode, args = []) {
  const r = cli.rewrite(input, output, mode, args);
  if (r.status !== 0 || !r.written) throw new Error(`'${r.command}' exited ${r.status}: ${lastLines(r.stderr)}`);
  return output;
}

/** A session whose run() halves every float state input fed after the first call: a broken hand-over. */
function brokenHandOver(session, stateInputs) {
  let calls = 0;
  return {
    inputNames: session.inputNames, outputNames: session.outputNames, inputMetadata: session.inputMetadata,
    async run(feeds) {
      calls++;
      const mutated = { ...feeds };
      for (const name of stateInputs) {
        const t = feeds[name];
        if (calls > 1 && t && (t.type === 'float32' || t.type === 'float64')) {
          mutated[name] = new ort.Tensor(t.type, t.data.map((v) => v * 0.5), t.dims);
        }
      }
      return session.run(mutated);
    },
  };
}

/**
 * Streams the entry's chunks (or calls) through `stream`, the caller passing only data inputs; returns
 * the assembled original outputs (state outputs that are original outputs, e.g. PyTorch's h_n, from
 * stream.state) and every call's result.
 */
async function streamEntry(m, stream, dataInputs) {
  const onlyData = (feeds) => Object.fromEntries(dataInputs.map((n) => [n, feeds[n]]));
  const calls = [];
  const plan = m.entry.chunkMode === 'calls' ? Array.from({ length: m.entry.chunks }, () => null) : m.entry.chunks;
  let offset = 0;
  for (const length of plan) {
    const feeds = length === null ? m.fullFeeds : chunkFeeds(m, offset, length);
    const out = await stream.run(onlyData(feeds));
    const names = Object.keys(out).sort().join();
    if (names !== [...stream.outputNames].sort().join()) throw new Error(`run() returned [${names}], expected [${stream.outputNames}]`);
    // The state outputs: what the helper carries (input name -> the tensor of its pair's output).
    // (A packed model returns them itself: the helper carries the packed value.)
    const state = stream.state;
    for (const st of stream.states) if (!(st.output in out) && state[st.input]) out[st.output] = state[st.input];
    calls.push(out);
    offset += length ?? 0;
  }
  return calls;
}

/**
 * Compares a streamed run with the reference: seq mode as verify's (2); calls mode: each call with its
 * reference (`ref.calls`, see callReferences), as far as there is one.
 */
function compareStream(m, calls, ref, names) {
  if (m.entry.chunkMode === 'calls') {
    let worst = { diff: 0, worst: '', why: '' };
    calls.slice(0, ref.calls.length).forEach((out, k) => {
      const cmp = compareOutputs(names, out, ref.calls[k]);
      if (!(cmp.diff <= worst.diff)) worst = cmp;
    });
    return worst;
  }
  return compareOutputs(names, assembleChunks(m, calls, names), ref);
}

/**
 * Calls mode: the original's output of each call. A branch not taken passes the state through: every
 * call is the first. Otherwise the state moves on: where the model's authors carry it (every state input
 * is the original's, every state output too), the original fed its own returned state; a state rnnstate
 * added has no reference after the first call (no time axis joins calls: verify says the same).
 */
async function callReferences(m, orig, stream, refFeeds, ref) {
  if (m.entry.branchTaken === false) return Array.from({ length: m.entry.chunks }, () => ref);
  const own = stream.states.every((st) => orig.inputNames.includes(st.input) && orig.outputNames.includes(st.output));
  if (!own) return [ref];
  const refs = [ref];
  while (refs.length < m.entry.chunks) {
    const feeds = { ...refFeeds };
    for (const st of stream.states) feeds[st.input] = refs[refs.length - 1][st.output];
    refs.push(await runExact(orig, feeds, `original model, call ${refs.length + 1}`));
  }
  return refs;
}


async function streamable(m, label, file) {
  const orig = await ort.InferenceSession.create(m.origPath, sessionOptions);
  let stream = null;
  try {
    m.fullFeeds = buildFeeds(orig, m.entry, m.seedBase);
    // A state batch without a name (Silero VAD's state [2, ?, 128]) is the caller's batch size: {batch}.
    const unnamedBatch = (await readRnnstateMetadata(file))?.states.some((st) => st.batch_axis >= 0 && st.shape[st.batch_axis] === null);
    const batch = unnamedBatch ? { batch: m.entry.dims.batch } : {};
    stream = await StreamingSession.create(file, { ort, sessionOptions, ...batch });
    const dataInputs = stream.dataInputNames;
    // The reference: one full run of the original; its own inputs that are state inputs (PyTorch's
    // h0/c0) get the helper's first feed, as the helper gives the stream.
    const refFeeds = { ...m.fullFeeds };
    const first = stream.firstFeedSpecs(Object.fromEntries(dataInputs.map((n) => [n, m.fullFeeds[n]])));
    for (const spec of first) {
      if (orig.inputNames.includes(spec.input)) refFeeds[spec.input] = tensorFromValues(spec.dtype, spec.shape, 0);
    }
    // Packed: the model's own state inputs are columns of the packed value, which an empty one fills
    // with their default, zeros (their init).
    for (const st of stream.metadata.packed ? stream.states : []) {
      const fed = refFeeds[st.input];
      if (fed && orig.inputNames.includes(st.input)) refFeeds[st.input] = tensorFromValues(fed.type, fed.dims, 0);
    }
    const ref = await runExact(orig, refFeeds, 'original model, full run');
    if (m.entry.chunkMode === 'calls') ref.calls = await callReferences(m, orig, stream, refFeeds, ref);
    const names = orig.outputNames.filter((n) => !m.entry.streamingSkipOutputs.includes(n));
    const plan = m.entry.chunkMode === 'calls' ? `${m.entry.chunks} calls` : `chunks [${m.entry.chunks}]`;

    const calls = await streamEntry(m, stream, dataInputs);
    const cmp = compareStream(m, calls, ref, names);
    results.record(label, 'helper stream==full run', verdict(cmp, m.tol, `${plan}; data inputs only: ${dataInputs.join(', ')}`));

    await results.check(label, 'helper reset()', async () => {
      await stream.reset();
      if (stream.state !== null) throw new Error('state kept after reset()');
      const again = compareStream(m, await streamEntry(m, stream, dataInputs), ref, names);
      return verdict(again, m.tol, 'second pass after reset() == full run');
    });

    await results.check(label, 'helper negative control', async () => {
      const session = (await ort.InferenceSession.create(file, sessionOptions));
      try {
        const broken = await StreamingSession.create(brokenHandOver(session, stream.stateInputNames), { ort, model: file, ...batch });
        const bad = compareStream(m, await streamEntry(m, broken, dataInputs), ref, names);
        if (bad.diff > m.tol) return { ok: true, diff: bad.diff, detail: 'carried state halved: mismatch detected as expected' };
        if (m.entry.chunkMode === 'calls' && ref.calls.length === 1 && m.entry.chunks > 1) {
          return { ok: null, diff: bad.diff, detail: 'no reference after the first call (states added by rnnstate, no time axis)' };
        }
        // Nothing to detect when every carried state is zero or empty (a branch never taken).
        const carried = calls.slice(0, -1).some((out) => stream.states.some((st) => {
          const t = out[st.output];
          return t && t.type.startsWith('float') && t.data.some((v) => v !== 0);
        }));
        const carriedPacked = calls.slice(0, -1).some((out) => stream.stateOutputNames.some((name) => {
          const t = out[name];
          return t && t.type.startsWith('float') && t.data.some((v) => v !== 0);
        }));
        return carried || carriedPacked ? { ok: false, diff: bad.diff, detail: 'carried state halved: NOT detected - the test cannot fail' }
          : { ok: null, diff: bad.diff, detail: 'no non-zero state is carried between calls (nothing to break)' };
      } finally {
        await session.release();
      }
    });
  } finally {
    await stream?.release();
    await orig.release();
  }
}

/** The helper's own metadata reader equals protobufjs's decoding of the same file. */
async function readerAgrees(label, file) {
  await results.check(label, 'helper metadata reader', async () => {
    const theirs = scanModel(file).metadata.rnnstate;
    const mine = await readRnnstateMetadata(file);
    const same = JSON.stringify(mine) === JSON.stringify(theirs === undefined ? null : JSON.parse(theirs));
    return { ok: same, diff: NaN, detail: same ? `${mine?.states.length ?? 0} states, as protobufjs reads them` : 'differs from protobufjs' };
  });
}

/** Refusals and the non-streamable policy, on a few models of the manifest. */
async function edges(entries) {
  const label = '(helper API)';
  const byFile = (f) => entries.find((e) => e.entry.file === f);
  const path = (f) => resolve(modelsDir, f);
  const dir = join(workdir, 'edges');
  mkdirSync(dir, { recursive: true });

  await expectError(label, 'no metadata refused', /no "rnnstate" metadata/, () =>
    StreamingSession.create(path('torch/rnn_dyn.onnx'), { ort, sessionOptions }));
  const defaults = rewrite(path('torch/rnn_dyn.onnx'), join(dir, 'rnn_dyn.defaults.onnx'), null);
  await expectError(label, 'defaults mode refused', /defaults mode.*--state-inputs required/s, () =>
    StreamingSession.create(defaults, { ort, sessionOptions }));
  await expectError(label, 'session without metadata source refused', /pass \{metadata\} or \{model\}/, async () => {
    const s = await ort.InferenceSession.create(path('torch/rnn_dyn.onnx'), sessionOptions);
    try { await StreamingSession.create(s, { ort }); } finally { await s.release(); }
  });

  const required = rewrite(path('torch/rnn_dyn.onnx'), join(dir, 'rnn_dyn.required.onnx'), 'required');
  const rnn = byFile('torch/rnn_dyn.onnx');
  if (rnn) {
    const orig = await ort.InferenceSession.create(rnn.origPath, sessionOptions);
    rnn.fullFeeds = buildFeeds(orig, rnn.entry, rnn.seedBase);
    await orig.release();
    const stream = await StreamingSession.create(required, { ort, sessionOptions });
    await expectError(label, 'state input in the feeds refused', /fed by the helper/, () =>
      stream.run({ x: rnn.fullFeeds.x, 'rnn.RNN.h_in': rnn.fullFeeds.x }));
    await expectError(label, 'missing data input refused', /missing data input/, () => stream.run({}));
    await stream.run({ x: rnn.fullFeeds.x });
    const x = rnn.fullFeeds.x;
    const other = new ort.Tensor(x.type, new Float32Array(x.dims[0] * 1 * x.dims[2]), [x.dims[0], 1, x.dims[2]]);
    await expectError(label, 'batch change without reset() refused', /reset\(\)/, () => stream.run({ x: other }));
    await results.check(label, 'batch change after reset()', async () => {
      await stream.reset();
      const out = await stream.run({ x: other });
      return { ok: out.y.dims[1] === 1, diff: NaN, detail: `y [${out.y.dims}]` };
    });
    await stream.release();
  }

  // Not streamable: refused by default; with {nonStreamable: "reset"} each call equals the original on its chunk.
  const reverse = byFile('handbuilt/gru_reverse.onnx');
  if (reverse) {
    const file = rewrite(reverse.origPath, join(dir, 'gru_reverse.required.onnx'), 'required');
    await expectError(label, 'not streamable refused', /do not stream.*nonStreamable/s, () =>
      StreamingSession.create(file, { ort, sessionOptions }));
    await results.check(label, 'nonStreamable "reset"', async () => {
      const orig = await ort.InferenceSession.create(reverse.origPath, sessionOptions);
      const stream = await StreamingSession.create(file, { ort, sessionOptions, nonStreamable: 'reset' });
      try {
        const m = { ...reverse, fullFeeds: buildFeeds(orig, reverse.entry, reverse.seedBase) };
        m.entry = { ...reverse.entry, chunkMode: 'seq', chunks: [2, 4] };
        let worst = { diff: 0, worst: '', why: '' };
        for (const [offset, length] of [[0, 2], [2, 4]]) {
          const feeds = chunkFeeds(m, offset, length);
          const got = await stream.run(Object.fromEntries(stream.dataInputNames.map((n) => [n, feeds[n]])));
          const want = await runExact(orig, feeds, 'original on the chunk');
          const cmp = compareOutputs(stream.outputNames, got, want);
          if (!(cmp.diff <= worst.diff)) worst = cmp;
        }
        return verdict(worst, m.tol, 'each call == the original on that chunk');
      } finally {
        await stream.release();
        await orig.release();
      }
    });
  }
}

async function main() {
  const filter = args.filter ? new RegExp(args.filter) : null;
  const raw = loadManifest(args.manifest);
  const count = {};
  for (const e of raw) count[e.file] = (count[e.file] ?? 0) + 1;
  const entries = raw.map((r, i) => {
    const entry = normalizeEntry(r);
    return {
      entry, index: i, label: count[entry.file] > 1 ? `${entry.file}#${i}` : entry.file,
      tol: entry.tolerance ?? tolDefault, seedBase: `${args.seed}|${entry.file}`,
      origPath: resolve(modelsDir, entry.file), dir: join(workdir, `${i}_${basename(entry.file, '.onnx')}`),
    };
  }).filter((m) => !filter || filter.test(m.entry.file));
  if (!entries.length) { console.error('no manifest entry matches'); console.log('0 passed, 0 failed'); process.exit(1); }

  // Every rewrite below, in a few batched rnnstate calls ahead of the models (RnnstateCli's prefetchRewrites).
  const rewritten = entries.filter((m) => m.entry.expectExit === 0);
  for (const m of rewritten) mkdirSync(m.dir, { recursive: true });
  cli.prefetchRewrites(rewritten.flatMap((m) => [
    { input: m.origPath, output: join(m.dir, 'required.onnx'), mode: 'required', args: m.entry.rewriteArgs },
    ...(m.entry.streaming && m.entry.ort ? [{ input: m.origPath, output: join(m.dir, 'packed.onnx'), mode: 'required',
      args: [...m.entry.rewriteArgs, '--pack', 'tensor'] }] : []),
  ]));
  for (const m of rewritten) {
    let file;
    try {
      file = rewrite(m.origPath, join(m.dir, 'required.onnx'), 'required', m.entry.rewriteArgs);
    } catch (err) {
      results.record(m.label, 'rewrite --state-inputs required', { ok: false, diff: NaN, detail: `error: ${err.message}` });
      continue;
    }
    if (m.entry.streaming && m.entry.ort) {
      try {
        await streamable(m, m.label, file);
      } catch (err) {
        results.record(m.label, 'helper stream==full run', { ok: false, diff: NaN, detail: `error: ${err.message}` });
      }
      // The same through one packed tensor (README's runtime table: --pack tensor for onnxruntime-node).
      const packedLabel = `${m.label} [--pack tensor]`;
      const r = cli.rewrite(m.origPath, join(m.dir, 'packed.onnx'), 'required', [...m.entry.rewriteArgs, '--pack', 'tensor']);
      const refused = packRefusal(r, { tensor: true, required: true });
      if (refused) {
        results.skip(packedLabel, 'helper stream==full run', `refused as documented: ${refused}`);
      } else if (r.status !== 0 || !r.written) {
        results.record(packedLabel, 'rewrite --pack tensor --state-inputs required', { ok: false, diff: NaN, detail: `exit ${r.status}: ${lastLines(r.stderr)}` });
      } else {
        try {
          await streamable(m, packedLabel, join(m.dir, 'packed.onnx'));
        } catch (err) {
          results.record(packedLabel, 'helper stream==full run', { ok: false, diff: NaN, detail: `error: ${err.message}` });
        }
        await readerAgrees(packedLabel, join(m.dir, 'packed.onnx'));
      }
    }
    await readerAgrees(m.label, file);
  }
  if (!filter) await edges(entries);
  if (!args.workdir) rmSync(workdir, { recursive: true, force: true });
  results.finish();
}

results.run(main);
