#!/usr/bin/env node
// The published streaming models (../shared/real-models, never part of the project) as a user meets them:
//
//   node real_models_test.mjs --rnnstate BINARY --dir DIR --expectations FILE [--workdir DIR] [--require]
//
// Per model of the expectations file:
//   1. `check --streamable-only` exits 0 (the authors' state is recognized, nothing streamable is missing);
//   2. `rewrite --state-inputs required` keeps the graph's inputs and outputs (the authors expose all the
//      streamable state) and records exactly the expected pairs, each on the authors' own input/output;
//      the states that run within one call are left alone;
//   3. `rewrite` of that rewrite gives the same bytes;
//   4. ONNX Runtime: the JavaScript helper, fed only the data inputs (and the caches that are no recurrent
//      state), gives every call's outputs and the final state of the authors' own protocol (their state
//      outputs fed back by hand) - and a negative control (the same calls from the first call's state)
//      must differ, proving the comparison can fail.
// Without DIR the suite says so in one line and passes (a user's clone), unless --require or
// RNNSTATE_REQUIRE_REAL_MODELS=1 (CI, where the folder is present and must run).
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createRequire } from 'node:module';

const require = createRequire(join(resolve(import.meta.dirname, '../e2e'), 'package.json'));
const ort = require('onnxruntime-node');
const { StreamingSession, readRnnstateMetadata } = await import('../../tools/js/rnnstate-stream/index.mjs');
const { RnnstateCli, lastLines } = await import('../e2e/lib/rnnstate-cli.mjs');
const { randomTensor, tensorFromValues, zerosTensor, maxAbsDiff } = await import('../e2e/lib/tensors.mjs');

const { values: args } = parseArgs({
  options: {
    rnnstate: { type: 'string' }, dir: { type: 'string' }, expectations: { type: 'string' },
    workdir: { type: 'string' }, require: { type: 'boolean', default: false }, tol: { type: 'string', default: '1e-6' },
  },
});
for (const k of ['rnnstate', 'dir', 'expectations']) {
  if (!args[k]) {
    console.error(`missing --${k}\nusage: node real_models_test.mjs --rnnstate BINARY --dir DIR --expectations FILE [--require]`);
    process.exit(2);
  }
}
const dir = resolve(args.dir);
if (!existsSync(dir)) {
  console.log(`SKIP  real models: ${dir} is absent (the published models are test data outside the project)`);
  process.exit(args.require || process.env.RNNSTATE_REQUIRE_REAL_MODELS === '1' ? 1 : 0);
}
const cli = new RnnstateCli(resolve(args.rnnstate));
const tol = Number(args.tol);
const workdir = args.workdir ? resolve(args.workdir) : mkdtempSync(join(tmpdir(), 'rnnstate-real-'));
const { models } = JSON.parse(readFileSync(args.expectations, 'utf8'));
const sessionOptions = { logSeverityLevel: 3 };

const tally = { passed: 0, failed: 0 };
function report(ok, model, check, detail = '') {
  if (ok) tally.passed++; else tally.failed++;
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${model}  ${check}${detail ? `  ${detail}` : ''}`);
}
async function step(model, check, fn) {
  try {
    const detail = await fn();
    report(true, model, check, detail || '');
  } catch (err) {
    report(false, model, check, err.message);
  }
}
function expect(condition, why) {
  if (!condition) throw new Error(why);
}

/** The data feeds of call `k`: seeded random floats, or the given values. */
function dataFeeds(name, spec, k) {
  const feeds = {};
  for (const [input, s] of Object.entries(spec.data)) {
    feeds[input] = s.values ? tensorFromValues(s.type, s.dims, s.values) : randomTensor(s.type, s.dims, `${name}/${input}/${k}`);
  }
  return feeds;
}

/** Zeros for every input of `session` that is not a data input, shaped as declared (or as given). */
function zeroStates(session, spec) {
  const feeds = {};
  for (const meta of session.inputMetadata) {
    if (spec.data[meta.name]) continue;
    const given = spec.authors_first?.[meta.name];
    const dims = given ? given.dims : meta.shape.map((d) => (typeof d === 'number' ? d : NaN));
    expect(dims.every(Number.isInteger), `no shape for the first feed of '${meta.name}'`);
    feeds[meta.name] = zerosTensor(given ? given.type : 'float32', dims);
  }
  return feeds;
}

/** The authors' protocol: every call's outputs, their state outputs fed back by hand. */
async function authorsRun(file, name, spec, fromFirstStateOnEveryCall = false) {
  const session = await ort.InferenceSession.create(file, sessionOptions);
  const first = zeroStates(session, spec);
  let carried = first;
  const calls = [];
  for (let k = 0; k < spec.calls; k++) {
    const out = await session.run({ ...dataFeeds(name, spec, k), ...carried });
    calls.push(out);
    const next = {};
    for (const [output, input] of Object.entries(spec.authors_feedback)) {
      const recurrent = !spec.carried_by_caller || !(output in spec.carried_by_caller);
      next[input] = fromFirstStateOnEveryCall && recurrent ? first[input] : out[output];
    }
    carried = next;
  }
  await session.release();
  return calls;
}

/** The helper on the rewrite: only data inputs (and the caller's own caches) fed. */
async function helperRun(file, name, spec) {
  const stream = await StreamingSession.create(file, { ort, sessionOptions, stateOutputs: true, ...spec.helper_options });
  const session = await ort.InferenceSession.create(file, sessionOptions);
  let caller = {};
  for (const input of Object.values(spec.carried_by_caller ?? {})) caller[input] = zeroStates(session, spec)[input];
  await session.release();
  const calls = [];
  for (let k = 0; k < spec.calls; k++) {
    const out = await stream.run({ ...dataFeeds(name, spec, k), ...caller });
    calls.push(out);
    caller = {};
    for (const [output, input] of Object.entries(spec.carried_by_caller ?? {})) caller[input] = out[output];
  }
  await stream.release();
  return calls;
}

function worstDifference(a, b) {
  let worst = { diff: 0, name: '' };
  for (let k = 0; k < a.length; k++) {
    for (const name of Object.keys(a[k])) {
      expect(b[k][name], `call ${k}: output '${name}' missing`);
      const { diff } = maxAbsDiff(a[k][name], b[k][name]);
      if (!(diff <= worst.diff)) worst = { diff, name: `${name} (call ${k})` };
    }
  }
  return worst;
}

for (const [name, spec] of Object.entries(models)) {
  const original = join(dir, `${name}.onnx`);
  if (!existsSync(original)) {
    report(false, name, 'present', `${original} is missing`);
    continue;
  }
  const rewritten = join(workdir, `${name}.rewritten.onnx`);
  const again = join(workdir, `${name}.again.onnx`);

  await step(name, 'check --streamable-only exits 0', () => {
    const r = cli.run(['check', '--streamable-only', original]);
    expect(r.status === 0, `exit ${r.status}: ${lastLines(r.stderr || r.stdout)}`);
  });
  await step(name, 'rewrite keeps the interface and records the authors\' pairs', async () => {
    const r = cli.rewrite(original, rewritten, 'required');
    expect(r.status === 0 && r.written, `exit ${r.status}: ${lastLines(r.stderr)}`);
    const [a, b] = await Promise.all([original, rewritten].map((f) => ort.InferenceSession.create(f, sessionOptions)));
    expect(JSON.stringify(a.inputNames) === JSON.stringify(b.inputNames), `inputs ${a.inputNames} became ${b.inputNames}`);
    expect(JSON.stringify(a.outputNames) === JSON.stringify(b.outputNames), `outputs ${a.outputNames} became ${b.outputNames}`);
    await Promise.all([a.release(), b.release()]);
    const meta = await readRnnstateMetadata(rewritten);
    expect(meta && meta.states.length === spec.pairs, `${meta ? meta.states.length : 0} pairs recorded, ${spec.pairs} expected`);
    for (const pair of meta.states) {
      expect(spec.authors_pairs[pair.input] === pair.output, `pair ${pair.input} -> ${pair.output} is not the authors'`);
      expect((pair.carried ?? pair.streamable) !== false, `pair ${pair.input} -> ${pair.output} marked not carried`);
      // Chunked along a time axis inside one call, the whole model's verdict (models called one frame at a
      // time have none: their pairs stream call by call).
      const exact = spec.chunk_exact ?? true;
      expect(pair.streamable === exact, `pair ${pair.input} -> ${pair.output}: streamable ${pair.streamable}, expected ${exact}`);
    }
    if (spec.chunk_exact === false) {
      expect(meta.stream && meta.stream.chunk_exact === false && meta.stream.reason.includes(spec.differs_at),
        `the metadata's reason '${meta.stream?.reason}' does not name ${spec.differs_at}`);
    }
    const skipped = (r.stderr.match(/runs within one call/g) || []).length;
    expect(skipped === (spec.within_call ?? 0), `${skipped} states said to run within one call, ${spec.within_call ?? 0} expected`);
    return `${meta.states.length} pairs`;
  });
  await step(name, 'rewrite of the rewrite is byte-identical', () => {
    const r = cli.rewrite(rewritten, again, null);
    expect(r.status === 0 && r.written, `exit ${r.status}: ${lastLines(r.stderr)}`);
    expect(readFileSync(rewritten).equals(readFileSync(again)), 'the second rewrite changed the bytes');
  });
  await step(name, 'ORT: the helper streams as the authors\' protocol does', async () => {
    const authors = await authorsRun(original, name, spec);
    const helper = await helperRun(rewritten, name, spec);
    const same = worstDifference(authors, helper);
    expect(same.diff <= tol, `differs by ${same.diff} at ${same.name}`);
    // Negative control: the state matters, so dropping it must show.
    const restarted = await authorsRun(original, name, spec, true);
    const control = worstDifference(authors, restarted);
    expect(control.diff > tol, `restarting every call from zeros gives the same outputs (diff ${control.diff}): the check cannot fail`);
    return `max_abs_diff=${same.diff.toExponential(3)}; control differs by ${control.diff.toExponential(3)}`;
  });
}

console.log(`${tally.passed} passed, ${tally.failed} failed`);
process.exit(tally.failed ? 1 : 0);
