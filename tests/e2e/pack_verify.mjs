#!/usr/bin/env node
// End-to-end verification of packed and batch-first models (`rnnstate rewrite --pack tensor|sequence`,
// `--state-layout batch-first`) with ONNX Runtime (onnxruntime-node, CPU).
//
//   node pack_verify.mjs --rnnstate PATH_TO_BINARY --models DIR --manifest FILE
//                        [--filter REGEX] [--shard K/N] [--workdir DIR] [--tol 1e-5] [--seed S] [--timeout SEC] [--verbose]
//
// Same manifest, output format and exit status as verify.mjs; the checks are in lib/pack_checks.mjs and
// described in README.md ("Packed states").
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InferenceSession } from 'onnxruntime-node';

import { runExact } from './lib/checks.mjs';
import { metadataProblems } from './lib/json-schema.mjs';
import { buildFeeds } from './lib/manifest.mjs';
import { ELEM_TYPE, sequenceWrapper, withoutInitializers, writeModel } from './lib/onnx-edit.mjs';
import { scanModel } from './lib/onnx-proto.mjs';
import * as pack from './lib/pack_checks.mjs';
import { modelDir, packRefusal, prefetchRewrites, VARIANTS } from './lib/pack_variants.mjs';
import { lastLines, RnnstateCli } from './lib/rnnstate-cli.mjs';
import { MANIFEST_OPTIONS, Results, runManifestSuite, suiteArgs } from './lib/suite.mjs';
import { sliceAxis, zerosTensor } from './lib/tensors.mjs';

const USAGE = 'usage: node pack_verify.mjs --rnnstate BINARY --models DIR --manifest FILE [--filter REGEX] [--shard K/N]\n' +
  '                             [--workdir DIR] [--tol 1e-5] [--seed S] [--timeout SEC] [--verbose]';
const results = new Results();

// ---------------------------------------------------------------------------------------------
// The rewrites under test.


function metadataOf(file) {
  const value = scanModel(file).metadata.rnnstate;
  return value ? JSON.parse(value) : null;
}

/** Rewrites the original every way; checks exits, `rnnstate check`, idempotence and refusal to pack twice. */
function rewriteAll(m, cli) {
  const problems = [];
  m.files = {};
  m.refused = {};
  for (const [name, variant] of Object.entries(VARIANTS)) {
    const out = join(m.dir, `${name}.onnx`);
    const r = cli.rewrite(m.origPath, out, variant.mode ?? null, [...m.entry.rewriteArgs, ...variant.args]);
    if (name === 'sequence' && r.status === 4 && /opset 11/.test(r.stderr)) { m.sequenceRefused = lastLines(r.stderr, 1); continue; }
    const refused = packRefusal(r, { tensor: name.startsWith('tensor'), required: variant.mode === 'required' });
    if (refused) {
      m.refused[name] = refused;
      continue;
    }
    if (r.status !== 0) { problems.push(`${name}: '${r.command}' exited ${r.status}: ${lastLines(r.stderr)}`); continue; }
    if (!r.written) { m.noOutput = true; continue; }
    m.files[name] = out;
  }
  if (m.noOutput && Object.keys(m.files).length === 0) return { ok: true, diff: NaN, detail: 'no recurrent nodes: nothing written', stop: true };
  for (const [name, file] of Object.entries(m.files)) {
    const c = cli.check(file);
    if (c.status !== 0) problems.push(`${name}: check exited ${c.status}: ${lastLines(c.stdout + c.stderr)}`);
    const again = file.replace(/\.onnx$/, '-again.onnx');
    const r = cli.rewrite(file, again, VARIANTS[name].mode ?? null, m.entry.rewriteArgs);
    if (r.status !== 0) problems.push(`${name}: rewriting it again exited ${r.status}`);
    else if (!readFileSync(file).equals(readFileSync(again))) problems.push(`${name}: rewriting it again changed it`);
  }
  if (m.files.tensor && metadataOf(m.files.tensor)?.packed) {
    const twice = cli.rewrite(m.files.tensor, join(m.dir, 'twice.onnx'), null, ['--pack', 'tensor']);
    if (twice.status !== 4 || !/packed already/.test(twice.stderr)) problems.push(`packing twice: exit ${twice.status}, expected 4 "packed already"`);
  }
  m.meta = Object.fromEntries(Object.entries(m.files).map(([name, file]) => [name, metadataOf(file)]));
  // Every document written conforms to the contract's schema (docs/metadata.schema.json).
  for (const [name, doc] of Object.entries(m.meta)) {
    const schemaProblems = metadataProblems(doc ?? {});
    if (schemaProblems.length) problems.push(`${name}: the metadata breaks docs/metadata.schema.json: ${schemaProblems.slice(0, 3).join('; ')}`);
  }
  // The node's own batch axis of each state output (the tensor packing keeps the node's layout).
  // The pairs as the state rewrite recorded them (node layout): from the tensor packing, or the sequence
  // packing where tensor packing is refused (a state without a batch axis).
  m.base = m.meta.tensor ?? m.meta.sequence;
  m.nodeBatchAxis = Object.fromEntries((m.base?.states ?? []).map((p) => [p.output, p.batch_axis]));
  if (!problems.length && !m.base?.states?.length) {
    const refused = Object.values(m.refused);
    const detail = refused.length ? `every packing refused (${refused[0]})` : 'no state pairs: nothing packed';
    return { ok: true, diff: NaN, detail, stop: true };
  }
  if (m.meta.tensor && !m.meta.tensor.packed) problems.push('the tensor-packed model has no "packed" metadata');
  // The fed path of the defaults-mode packed models, on copies without the packed input's default.
  for (const name of ['tensor', 'tensor+bf']) {
    const values = m.meta[name]?.packed?.values ?? [];
    if (!values.length) continue;
    m.files[`${name}-fed`] = join(m.dir, `${name}-fed.onnx`);
    withoutInitializers(m.files[name], values.map((v) => v.input), m.files[`${name}-fed`]);
    m.meta[`${name}-fed`] = m.meta[name];
  }
  const refused = Object.entries(m.refused).map(([k, v]) => `${k} refused: ${v}`);
  const detail = [`${Object.keys(m.files).length} models`, ...refused,
    ...(m.sequenceRefused ? [`sequence refused: ${m.sequenceRefused}`] : [])].join('; ');
  return problems.length ? { ok: false, diff: NaN, detail: problems.join('; ') } : { ok: true, diff: NaN, detail };
}

// ---------------------------------------------------------------------------------------------
// One manifest entry.

/** The name of the data's batch dimension, if the manifest gives it a value. */
function batchSymbol(m) {
  const value = m.meta.tensor?.packed?.values?.[0];
  const symbol = typeof value?.shape?.[0] === 'string' ? value.shape[0] : null;
  if (symbol && symbol in m.entry.dims) return symbol;
  return 'batch' in m.entry.dims ? 'batch' : null;
}

/** Full feeds and the original's outputs for `entry` (the original's own state inputs fed zeros). */
async function reference(m, entry, seedText) {
  const full = buildFeeds(m.sessions.orig, entry, seedText);
  const feeds = { ...full };
  for (const pair of m.base.states) {
    if (feeds[pair.input]) feeds[pair.input] = zerosTensor(feeds[pair.input].type, feeds[pair.input].dims);
  }
  return { full, out: await runExact(m.sessions.orig, feeds, 'original model') };
}

/**
 * The bound of an entry's checks at another batch size than its own. Where chunked runs only approximate one full
 * run (`chunking_exact: false`: a stacked dynamically quantized model, whose second layer quantizes each chunk of
 * the first's output with that chunk's own range) the entry's tolerance was measured at its own batch; at another
 * the chunks' ranges move as far as batch mates move them (1.1e-2 at batch 1 on a CPU without VNNI, against 3.4e-4
 * at the entry's batch), so those variants are held to the batch-mates bound.
 */
function batchVariantTolerance(m) {
  if (m.entry.chunkingExact || m.entry.batchMatesTolerance === null) return m.tol;
  return Math.max(m.tol, m.entry.batchMatesTolerance);
}

async function tensorChecks(label, m, name, base, batches) {
  if (m.refused[name]) { results.skip(label, name, m.refused[name]); return; }
  const fed = { name, meta: m.meta[`${name}-fed`], req: m.sessions[`${name}-fed`] };
  await results.check(label, `(1) ${name} unfed==original`, () => pack.checkFirstCall(m, fed, m.sessions[name], false, base.full, base.out));
  await results.check(label, `(1) ${name} empty==original`, () => pack.checkFirstCall(m, fed, fed.req, true, base.full, base.out));
  if (m.entry.streaming) {
    const streaming = await results.check(label, `(2) ${name} streaming`, () => pack.checkStreaming(m, fed, base.full, base.out));
    if (m.entry.chunkMode !== 'calls' && streaming.ok) {
      await results.check(label, `(2) ${name} self-test`, () => pack.checkSelfTest(m, fed, base.full, base.out));
    }
    for (const b of batches) {
      const mb = { ...m, entry: b.entry, tol: batchVariantTolerance(m) };
      await results.check(label, `(1) ${name} empty==original batch=${b.size}`, () => pack.checkFirstCall(mb, fed, fed.req, true, b.full, b.out));
      await results.check(label, `(2) ${name} streaming batch=${b.size}`, () => pack.checkStreaming(mb, fed, b.full, b.out));
    }
  }
  // Packed directly in required mode (no default; zeros where the model's default is zeros).
  const direct = `${name}-required`;
  if (m.refused[direct]) { results.skip(label, `${direct}`, m.refused[direct]); return; }
  const req = { name: direct, meta: m.meta[direct], req: m.sessions[direct] };
  await results.check(label, `(1) ${direct} empty==original`, () => pack.checkFirstCall(m, req, req.req, true, base.full, base.out));
  if (m.entry.streaming) await results.check(label, `(2) ${direct} streaming`, () => pack.checkStreaming(m, req, base.full, base.out));
}

/** --state-layout batch-first alone: first feeds as `init` says, then every pair fed back. */
async function layoutChecks(label, m, base, batches) {
  const v = { name: 'batch-first', meta: m.meta['bf-required'], req: m.sessions['bf-required'] };
  if (!v.meta) return;
  await results.check(label, '(1) batch-first init feeds==original', () => pack.checkLayoutFirstCall(m, v, base.full, base.out));
  if (!m.entry.streaming) return;
  await results.check(label, '(2) batch-first streaming', () => pack.checkLayoutStreaming(m, v, base.full, base.out));
  for (const b of batches) {
    const mb = { ...m, entry: b.entry, tol: batchVariantTolerance(m) };
    await results.check(label, `(2) batch-first streaming batch=${b.size}`, () => pack.checkLayoutStreaming(mb, v, b.full, b.out));
  }
}

async function sequenceChecks(label, m, base) {
  if (m.sequenceRefused) { results.skip(label, 'sequence', `refused as expected below opset 11 (${m.sequenceRefused})`); return; }
  const meta = m.meta.sequence;
  if (!meta?.packed || meta.packed.values.length !== 1) { results.skip(label, 'sequence', 'not one packed value'); return; }
  const value = meta.packed.values[0];
  const ranks = [...value.members].sort((a, b) => a.position - b.position).map((x) => x.shape.length);
  const w = { members: [...value.members].sort((a, b) => a.position - b.position) };
  for (const first of [true, false]) {
    const { model, memberInputs, memberOutputs } = sequenceWrapper(m.files.sequence, value, ELEM_TYPE[value.dtype], ranks, first);
    const file = join(m.dir, `sequence-wrapper-${first ? 'first' : 'next'}.onnx`);
    writeModel(model, file);
    w[first ? 'first' : 'next'] = await InferenceSession.create(file, m.sessionOptions);
    Object.assign(w, { memberInputs, memberOutputs });
  }
  m.wrappers = w;
  await results.check(label, '(1) sequence empty==original', () => pack.checkSequenceFirstCall(m, w, base.full, base.out));
  if (!m.entry.streaming) return;
  const streaming = await results.check(label, '(2) sequence streaming', () => pack.checkSequenceStreaming(m, w, base.full, base.out));
  if (m.entry.chunkMode !== 'calls' && streaming.ok) {
    await results.check(label, '(2) sequence self-test', () => pack.checkSequenceSelfTest(m, w, base.full, base.out));
  }
}

/** Why the Triton-like run does not apply to this entry and variant, or ''. */
function tritonSkip(m, meta, symbol) {
  if (!m.entry.streaming || m.entry.chunkMode !== 'seq') return 'not a streaming entry in chunk mode "seq"';
  if (!symbol) return 'no symbolic batch in the manifest\'s dims';
  if (m.entry.rewriteArgs.includes('--time-axis')) {
    return 'the original runs only at its fixed time length (--time-axis): no reference run for the shorter sequences';
  }
  if (meta.states.some((p) => p.init !== 'zeros')) return 'a state\'s default is not zeros (Triton\'s zero_data cannot give it)';
  if (meta.states.some((p) => !p.rows && p.batch_axis !== 0 && !meta.packed)) return 'a state is not batch-first';
  if (meta.states.some((p) => p.rows && !meta.packed)) return 'stacked states keep their layout';
  return '';
}

async function tritonChecks(label, m, symbol) {
  const entryB1 = { ...m.entry, dims: { ...m.entry.dims, [symbol]: 1 } };
  const seqData = new Map();
  m.sequenceData = (s) => {
    if (!seqData.has(s)) seqData.set(s, buildFeeds(m.sessions.orig, entryB1, `${m.seedBase}|triton|${s}`));
    return seqData.get(s);
  };
  const batched = new Set(m.sessions.orig.inputMetadata.filter((x) => (x.shape ?? []).includes(symbol)).map((x) => x.name));
  const referenceRun = async (data, length) => {
    const feeds = {};
    for (const name of m.sessions.orig.inputNames) {
      if (!batched.has(name)) { feeds[name] = m.fullFeeds[name]; continue; }
      const axis = m.entry.seqAxes[name];
      feeds[name] = axis === undefined ? data[name] : sliceAxis(data[name], axis, 0, length);
      if (m.base.states.some((p) => p.input === name)) feeds[name] = zerosTensor(feeds[name].type, feeds[name].dims);
    }
    return runExact(m.sessions.orig, feeds, 'original model, one sequence');
  };
  for (const [name, file] of [['tensor+bf', 'tensor+bf-required'], ['batch-first', 'bf-required']]) {
    const meta = m.meta[file];
    const why = meta ? tritonSkip(m, meta, symbol) : m.refused[file] ?? 'no such rewrite';
    if (why) { results.skip(label, `(4) triton-like ${name}`, why); continue; }
    const states = meta.packed
      ? meta.packed.values.map((v) => ({ input: v.input, output: v.output, type: v.dtype, row: [v.shape[1]] }))
      : [...new Map(meta.states.map((p) => [p.input, { input: p.input, output: p.output, type: p.dtype,
        row: p.shape.slice(1) }])).values()];
    m.readState = (output, final) => {
      if (meta.packed) {
        for (const v of meta.packed.values) {
          const member = v.members.find((x) => x.output === output);
          if (member) return pack.inNodeLayout(m, meta, member.states[0], pack.unpackMember(final[v.output], member));
        }
        return undefined;
      }
      const state = meta.states.findIndex((p) => p.output === output);
      return state < 0 || !final[output] ? undefined : pack.inNodeLayout(m, meta, state, final[output]);
    };
    // Rows that share a quantization range depend on their batch mates: compared within that model's bound.
    const mt = m.entry.batchMatesTolerance === null ? m : { ...m, tol: Math.max(m.tol, m.entry.batchMatesTolerance) };
    await results.check(label, `(4) triton-like ${name}`, () => pack.checkTritonLike(mt, m.sessions[file], states, symbol, referenceRun));
  }
}

async function verifyModel(entry, index, label, opts) {
  if (entry.expectExit !== 0) { results.skip(label, 'pack', `the plain rewrite is expected to exit ${entry.expectExit}`); return; }
  const m = {
    entry, label, tol: entry.tolerance ?? opts.tol, seedBase: `${opts.seed}|${entry.file}`,
    origPath: resolve(opts.models, entry.file), dir: modelDir(opts, index, entry),
    // One thread per session: tiny models; a pool of one thread per core only spins against the other suites.
    sessions: {}, sessionOptions: { logSeverityLevel: 3, intraOpNumThreads: 1, interOpNumThreads: 1 },
  };
  mkdirSync(m.dir, { recursive: true });
  const rw = await results.check(label, 'pack rewrite', () => rewriteAll(m, opts.cli));
  if (!rw.ok || rw.stop) return;
  if (!entry.ort) { results.skip(label, 'onnxruntime checks', 'manifest says "ort": false'); return; }
  try {
    m.sessions.orig = await InferenceSession.create(m.origPath, m.sessionOptions);
    for (const [name, file] of Object.entries(m.files)) {
      if (name !== 'sequence') m.sessions[name] = await InferenceSession.create(file, m.sessionOptions);
    }
    m.origOutputNames = m.sessions.orig.outputNames;
  } catch (err) {
    results.record(label, 'load', { ok: false, diff: NaN, detail: `error: ${err.message}` });
    return;
  }
  let base;
  try {
    base = await reference(m, entry, m.seedBase);
    m.fullFeeds = base.full;
  } catch (err) {
    results.record(label, 'reference', { ok: false, diff: NaN, detail: `error: ${err.message}` });
    return;
  }
  const symbol = batchSymbol(m);
  m.dataBatch = (e) => (symbol ? e.dims[symbol] : undefined);
  const batches = [];
  if (symbol && entry.streaming && entry.chunkMode !== 'calls') {
    for (const size of [1, 3]) {
      const sized = { ...entry, dims: { ...entry.dims, [symbol]: size } };
      try {
        batches.push({ size, entry: sized, ...(await reference(m, sized, `${m.seedBase}|batch${size}`)) });
      } catch (err) {
        results.record(label, `reference batch=${size}`, { ok: false, diff: NaN, detail: `error: ${err.message}` });
      }
    }
  }
  await tensorChecks(label, m, 'tensor', base, batches);
  await tensorChecks(label, m, 'tensor+bf', base, batches);
  await layoutChecks(label, m, base, batches);
  await sequenceChecks(label, m, base);
  await tritonChecks(label, m, symbol);
  for (const s of [...Object.values(m.sessions), m.wrappers?.first, m.wrappers?.next]) await s?.release().catch(() => {});
}

async function main() {
  const args = suiteArgs(USAGE, MANIFEST_OPTIONS, ['rnnstate', 'models', 'manifest']);
  const opts = {
    models: resolve(args.models), tol: Number(args.tol), seed: args.seed,
    cli: new RnnstateCli(resolve(args.rnnstate), { timeoutSec: Number(args.timeout), verbose: args.verbose }),
  };
  await runManifestSuite(results, args, opts, 'rnnstate-pack-e2e-', prefetchRewrites, verifyModel);
  results.finish();
}

results.run(main);
