#!/usr/bin/env node
// End-to-end verification of rnnstate-rewritten models with ONNX Runtime (onnxruntime-node, CPU).
//
//   node verify.mjs --rnnstate PATH_TO_BINARY --models DIR --manifest FILE
//                   [--filter REGEX] [--shard K/N] [--workdir DIR] [--tol 1e-5] [--seed S] [--timeout SEC] [--verbose]
//
// For every manifest entry: rewrite with the binary (defaults mode, then required mode from the
// rewritten model and directly from the original), check idempotence, then run the checks of the
// contract in ONNX Runtime: the defaults model and streaming (1)-(3), then the state contract as a
// runner that knows only the required models' metadata (routes, init feeds, shape feedable, (4), (5)). One line per model per check, then "N passed, M failed"; exit 1 on any
// failure. See README.md for the manifest format and what each check means.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { InferenceSession } from 'onnxruntime-node';

import * as checks from './lib/checks.mjs';
import * as exposure from './lib/exposure-checks.mjs';
import { metadataProblems } from './lib/json-schema.mjs';
import { buildFeeds, normalizeEntry } from './lib/manifest.mjs';
import { scanModel } from './lib/onnx-proto.mjs';
import { lastLines, RnnstateCli } from './lib/rnnstate-cli.mjs';
import { MANIFEST_OPTIONS, Results, runManifestSuite, suiteArgs } from './lib/suite.mjs';

const USAGE = 'usage: node verify.mjs --rnnstate BINARY --models DIR --manifest FILE [--filter REGEX] [--shard K/N] [--workdir DIR]\n' +
  '                        [--tol 1e-5] [--seed S] [--timeout SEC] [--threads N] [--verbose]';
const results = new Results();

// ---------------------------------------------------------------------------------------------
// Rewriting with the binary under test.

async function sha256(file) {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk);
  return hash.digest('hex');
}

/**
 * Produces the three models and the pairs. Returns {ok, diff, detail} for the "rewrite" line and
 * fills m.files / m.pairs. `noOutput` is set when the binary (correctly) wrote nothing because the
 * model has no recurrent nodes.
 */
function rewriteAll(m, cli) {
  const { entry } = m;
  const args = entry.rewriteArgs;
  const f = (m.files = {
    orig: m.origPath,
    def: join(m.dir, 'rewritten.onnx'),
    req: join(m.dir, 'required.onnx'),
    reqDirect: join(m.dir, 'required-direct.onnx'),
  });
  const fail = (detail) => ({ ok: false, diff: NaN, detail });
  if (!existsSync(f.orig)) return fail(`model file ${f.orig} does not exist`);

  const recurrent = scanModel(f.orig).recurrentNodes;
  const r = cli.rewrite(f.orig, f.def, null, args);
  if (entry.expectExit !== 0) {
    return r.status === entry.expectExit ? { ok: true, diff: NaN, detail: `exit ${r.status} as expected`, stop: true }
      : fail(`expected exit ${entry.expectExit}, got ${r.status}: ${lastLines(r.stderr)}`);
  }
  if (r.status !== 0) return fail(`'${r.command}' exited ${r.status}: ${lastLines(r.stderr)}`);
  if (!r.written) {
    // Exit 0 without output is only acceptable for a model without recurrent nodes.
    const ok = recurrent.length === 0 && (entry.expectPairs ?? 0) === 0;
    return { ok, diff: NaN, detail: ok ? 'no recurrent nodes; no output written' : 'exit 0 but no output written', stop: true };
  }
  for (const [out, input] of [[f.req, f.def], [f.reqDirect, f.orig]]) {
    const rr = cli.rewrite(input, out, 'required', args);
    if (rr.status !== 0 || !rr.written) return fail(`'${rr.command}' exited ${rr.status}: ${lastLines(rr.stderr)}`);
  }

  const report = cli.report(f.def);
  if (!Array.isArray(report.pairs)) return fail('report --json has no "pairs" array');
  m.pairs = report.pairs;
  // States the original's authors already expose in their own tensors (PyTorch's (h0, c0) rows, h and c
  // packed in one tensor, caches, ...): the metadata records them as pairs with a region (or rows), and
  // feeding each such output back as its input, once per tensor pair, is the authors' own protocol.
  m.origReport = cli.report(f.orig);
  // The authors' own protocol streams the original only when every one of its states is theirs to feed.
  m.allOwn = m.origReport.nodes.every((n) => n.states.every((st) => st.exposure || st.stacked));
  const own = report.pairs.filter((p) => p.rows || p.region);
  m.stacked = [...new Map(own.map((p) => [`${p.input}->${p.output}`, { input: p.input, output: p.output }])).values()];

  // Every document written conforms to the contract's schema (docs/metadata.schema.json).
  for (const file of [f.def, f.req, f.reqDirect]) {
    const problems = metadataProblems(JSON.parse(scanModel(file).metadata.rnnstate ?? '{}'));
    if (problems.length) return fail(`the metadata of ${basename(file)} breaks docs/metadata.schema.json: ${problems.slice(0, 3).join('; ')}`);
  }
  // The report must reflect the file's metadata (it is documented to read it from there).
  const meta = scanModel(f.def).metadata.rnnstate;
  const metaStates = meta ? JSON.parse(meta).states ?? [] : [];
  if (!sameStates(metaStates, m.pairs)) {
    return fail('report "pairs" differ from the metadata_props "rnnstate" states of the file');
  }
  if (entry.expectPairs !== null && m.pairs.length !== entry.expectPairs) {
    return fail(`${m.pairs.length} pairs, manifest expects ${entry.expectPairs}`);
  }
  if (entry.expectPairs === null && recurrent.length > 0 && m.pairs.length === 0) {
    return fail(`no pairs although the model has ${recurrent.length} recurrent node(s)`);
  }
  if (entry.states !== null || entry.notStates.length) {
    const problem = expectedStatesProblem(entry, m.pairs);
    if (problem) return fail(problem);
  }
  const detail = `${m.pairs.length} pairs, ${recurrent.length} recurrent node(s)`;
  // Pairs with a region (or rows) take a region of one of the authors' tensors: for feeding state back,
  // one feedback per tensor pair. Every other name must belong to one pair only.
  const stackedKey = (p) => `${p.input}->${p.output}`;
  const regional = (p) => Boolean(p.rows || p.region);
  const rowsKeys = new Set(m.pairs.filter(regional).map(stackedKey));
  if (m.pairs.some((p) => !regional(p) && rowsKeys.has(stackedKey(p)))) return fail('a pair with a region shares its tensors with one without');
  m.pairs = [...new Map(m.pairs.map((p) => [regional(p) ? stackedKey(p) : `${m.pairs.indexOf(p)}`, p])).values()];
  const names = m.pairs.flatMap((p) => [p.input, p.output]);
  if (m.pairs.some((p) => !p.input || !p.output) || new Set(names).size !== names.length) {
    return fail('pairs must have distinct, non-empty input and output names');
  }
  return { ok: true, diff: NaN, detail };
}

/** Why the pairs do not hold the manifest's `states` (a loop's by its carried variable) or hold one of `not_states`; "". */
function expectedStatesProblem(entry, pairs) {
  const matches = (p, s) => p.node === s.node && (s.graph === undefined || p.graph === s.graph) &&
    (s.kind === undefined || p.kind === s.kind) && (s.body_input === undefined || p.variable === s.body_input);
  for (const s of entry.states ?? []) {
    if (!pairs.some((p) => matches(p, s))) return `no pair for expected state ${JSON.stringify(s)}`;
  }
  for (const s of entry.notStates) {
    if (pairs.some((p) => p.node === s.node && p.variable === s.body_input)) return `carried '${s.body_input}' of '${s.node}' must not be a state`;
  }
  if (entry.streamableFlag !== null && pairs.some((p) => p.streamable !== entry.streamableFlag)) {
    return `a pair's "streamable" is not ${entry.streamableFlag}, as the manifest says`;
  }
  if (entry.states !== null && entry.expectPairs === null && pairs.length !== entry.states.length) {
    return `${pairs.length} pairs, manifest lists ${entry.states.length} states`;
  }
  return '';
}

/** Report pairs equal metadata states: same order, same value for every metadata field (key order free). */
function sameStates(metaStates, pairs) {
  return metaStates.length === pairs.length && metaStates.every((st, i) =>
    Object.keys(st).every((k) => JSON.stringify(st[k]) === JSON.stringify(pairs[i][k])));
}

/** Rewriting a rewritten model again (in either mode) must reproduce it byte for byte. */
async function checkIdempotent(m, cli) {
  const problems = [];
  for (const [file, mode] of [[m.files.def, null], [m.files.req, 'required']]) {
    const again = file.replace(/\.onnx$/, '-again.onnx');
    const r = cli.rewrite(file, again, mode, m.entry.rewriteArgs);
    if (r.status !== 0 || !r.written) problems.push(`'${r.command}' exited ${r.status}: ${lastLines(r.stderr)}`);
    else if ((await sha256(file)) !== (await sha256(again))) problems.push(`${basename(file)} changed when rewritten again`);
  }
  return { ok: problems.length === 0, diff: NaN, detail: problems.join('; ') };
}

// ---------------------------------------------------------------------------------------------
// One manifest entry.

/** The work folder of manifest entry `index`. */
const modelDir = (opts, index, entry) => join(opts.workdir, `${index}_${basename(entry.file, '.onnx')}`);

/**
 * Every rewrite of rewriteAll() and checkIdempotent(), in a few batched rnnstate calls ahead of the models
 * (RnnstateCli's prefetchRewrites): the originals in both modes, then the defaults rewrite in required mode
 * and again, then the required rewrite again; and the reports of the original and the defaults rewrite.
 * Those functions then receive what each call would have given.
 */
function prefetchRewrites(all, selected, opts) {
  const models = selected.flatMap((index) => {
    try {
      const entry = normalizeEntry(all[index]);
      const dir = modelDir(opts, index, entry);
      mkdirSync(dir, { recursive: true });
      const f = { orig: resolve(opts.models, entry.file), def: join(dir, 'rewritten.onnx'), req: join(dir, 'required.onnx') };
      return [{ args: entry.rewriteArgs, f, reqDirect: join(dir, 'required-direct.onnx') }];
    } catch {
      return [];  // runManifestSuite reports the entry
    }
  });
  const again = (file) => file.replace(/\.onnx$/, '-again.onnx');
  opts.cli.prefetchRewrites(models.flatMap(({ args, f, reqDirect }) => [
    { input: f.orig, output: f.def, mode: null, args }, { input: f.orig, output: reqDirect, mode: 'required', args }]));
  const written = models.filter(({ f }) => existsSync(f.def));
  opts.cli.prefetchRewrites(written.flatMap(({ args, f }) => [
    { input: f.def, output: f.req, mode: 'required', args }, { input: f.def, output: again(f.def), mode: null, args }]));
  opts.cli.prefetchRewrites(written.filter(({ f }) => existsSync(f.req)).map(({ args, f }) =>
    ({ input: f.req, output: again(f.req), mode: 'required', args })));
  opts.cli.prefetchReports(written.flatMap(({ f }) => [f.def, f.orig]));
}

async function verifyModel(entry, index, label, opts) {
  const m = {
    entry, label,
    tol: entry.tolerance ?? opts.tol,
    seedBase: `${opts.seed}|${entry.file}`,
    origPath: resolve(opts.models, entry.file),
    dir: modelDir(opts, index, entry),
    pairs: [],
    sessions: {},
  };
  mkdirSync(m.dir, { recursive: true });
  const cli = opts.cli;

  const rw = await results.check(label, 'rewrite', () => rewriteAll(m, cli));
  if (!rw.ok || rw.stop) return;
  await results.check(label, 'idempotent', () => checkIdempotent(m, cli));
  if (!entry.ort) {
    results.skip(label, 'onnxruntime checks', 'manifest says "ort": false');
    return;
  }

  try {
    const sessionOptions = { logSeverityLevel: 3, intraOpNumThreads: opts.threads, interOpNumThreads: 1 };
    for (const k of ['orig', 'def', 'req', 'reqDirect']) m.sessions[k] = await InferenceSession.create(m.files[k], sessionOptions);
    m.fullFeeds = buildFeeds(m.sessions.orig, entry, m.seedBase);
  } catch (err) {
    results.record(label, 'load', { ok: false, diff: NaN, detail: `error: ${err.message}` });
    await releaseAll(m);
    return;
  }
  m.requiredBytesNote = (await sha256(m.files.req)) === (await sha256(m.files.reqDirect))
    ? 'byte-identical' : 'files differ';
  // The contract as a runner sees it: the required models' own metadata.
  const metaOf = (file) => JSON.parse(scanModel(file).metadata.rnnstate ?? '{"version":1,"states":[]}');
  m.required = [
    { name: 'required.onnx', file: m.files.req, session: m.sessions.req, meta: metaOf(m.files.req) },
    { name: 'required-direct.onnx', file: m.files.reqDirect, session: m.sessions.reqDirect, meta: metaOf(m.files.reqDirect) },
  ];

  await results.check(label, 'interface', () => checks.checkInterface(m));
  if (entry.exposed) {
    await results.check(label, 'exposed: recognized', () => exposure.checkRecognition(m, m.origReport));
    // States that run within one call (their authors restart them from zeros) are left alone too.
    if (entry.exposed.every((x) => x.pair || /default path|runs within one call/.test(x.reason ?? ''))) {
      await results.check(label, 'exposed: interface unchanged', () => exposure.checkInterfaceUnchanged(m));
    }
  }
  await results.check(label, '(1) defaults-unfed==original', () => checks.checkDefaultsUnfed(m));
  if (entry.streaming && entry.chunkMode === 'calls') {
    await results.check(label, '(2) calls', () => checks.checkCalls(m));
  } else if (entry.streaming) {
    const streaming = await results.check(label, '(2) streaming', () => checks.checkStreaming(m));
    // The self-test proves that a PASS of (2) means something; after a FAIL it has nothing to prove.
    if (streaming.ok) await results.check(label, '(2) self-test', () => checks.checkSelfTest(m));
    else results.skip(label, '(2) self-test', 'not run: (2) failed');
  }
  // A fixed-length original (streamed only after `--time-axis`) refuses chunks: only its rewrite is chunked.
  const originalTakesChunks = !entry.rewriteArgs.includes('--time-axis');
  if (entry.streaming && m.stacked.length && m.allOwn && entry.chunkMode === 'seq' && !originalTakesChunks) {
    results.skip(label, '(2) stacked, original model', 'the original has a fixed length: only the rewrite takes chunks');
  } else if (entry.streaming && m.stacked.length && m.allOwn && entry.chunkMode === 'seq') {
    const stacked = await results.check(label, '(2) stacked, original model', () => checks.checkStackedStreaming(m));
    if (stacked.ok) await results.check(label, '(2) stacked self-test', () => checks.checkStackedSelfTest(m));
  }
  if (entry.expectChunkingDiffers) await results.check(label, '(2) not streamable', () => checks.checkChunkingDiffers(m));
  if (entry.zeroDefault) await results.check(label, '(3) zeros==defaults', () => checks.checkZeroState(m));
  if (m.pairs.length) await results.check(label, 'required-direct', () => checks.checkRequiredDirect(m));
  if (m.pairs.length) await results.check(label, 'state inputs live', () => checks.checkStateInputsLive(m));
  if (m.pairs.length) await contractChecks(m, label, opts.cli);
  await releaseAll(m);
}

/** The state contract in required mode, following only the required model's metadata (issue 11). */
async function contractChecks(m, label, cli) {
  const { entry } = m;
  await results.check(label, 'routes', () => checks.checkRoutes(m));
  await results.check(label, 'init feeds', () => checks.checkInitFeeds(m, cli));
  await results.check(label, 'shape feedable', () => checks.checkShapeFeedable(m));
  const first = await results.check(label, '(4) required-first-call==original', () => checks.checkRequiredFirstCall(m));
  const empty = m.required.some((r) => r.meta.states.some((st) => st.init === 'empty'));
  if (first.ok && empty) await results.check(label, '(4) self-test', () => checks.checkRequiredFirstCallSelfTest(m));
  if (entry.streaming) {
    if (first.ok) await results.check(label, '(5) required streaming', () => checks.checkRequiredStreaming(m));
    else results.skip(label, '(5) required streaming', 'not run: (4) failed');
  }
}

async function releaseAll(m) {
  for (const s of Object.values(m.sessions)) await s.release().catch(() => {});
}

async function main() {
  const args = suiteArgs(USAGE, { ...MANIFEST_OPTIONS, threads: { type: 'string', default: '1' } }, ['rnnstate', 'models', 'manifest']);
  const opts = {
    models: resolve(args.models),
    tol: Number(args.tol),
    seed: args.seed,
    threads: Number(args.threads),
    cli: new RnnstateCli(resolve(args.rnnstate), { timeoutSec: Number(args.timeout), verbose: args.verbose }),
  };
  await runManifestSuite(results, args, opts, 'rnnstate-e2e-', prefetchRewrites, verifyModel);
  results.finish();
}

results.run(main);
