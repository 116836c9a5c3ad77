#!/usr/bin/env node
// Strided exposures on a published model (issue 21): UL-UNAS's ulunas_stream_simple.onnx keeps the state of
// 4 forward GRUs (batch 33 = frequency groups, hidden 8) in the flat cache inter_cache [1,1056], strided
// by 16 on the GRU batch. rnnstate must record them as the authors' pairs on the view [1,66,16] (and the
// 10 tfa_cache GRUs as plain regions; the 14 bidirectional GRUs are not streamable), `check
// --streamable-only` must pass, `rewrite --streamable-only` must add no input or output and be
// idempotent, and in ONNX Runtime each recorded region of the view must be exactly the GRU's initial_h
// (of the fed inter_cache) and Y_h (in inter_cache_out).
//
//   node real_models_strided_test.mjs --rnnstate BINARY --real-models DIR
//
// The model is test data in ../shared/real-models (never in the repository): when it is absent, one
// line says so and the test exits 77 (ctest: skipped).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as ort from 'onnxruntime-node';

import { sameSet } from './lib/checks.mjs';
import { readModel, writeModel } from './lib/onnx-edit.mjs';
import { scanModel } from './lib/onnx-proto.mjs';
import { lastLines, RnnstateCli } from './lib/rnnstate-cli.mjs';
import { randomTensor } from './lib/tensors.mjs';

const { values: args } = parseArgs({ options: { rnnstate: { type: 'string' }, 'real-models': { type: 'string' } } });
if (!args.rnnstate || !args['real-models']) {
  console.error('usage: node real_models_strided_test.mjs --rnnstate BINARY --real-models DIR');
  process.exit(2);
}
const model = join(resolve(args['real-models']), 'ulunas_stream_simple.onnx');
if (!existsSync(model)) {
  console.log(`SKIP  real models: ${model} not found (the shared test models are not in a user's clone)`);
  process.exit(77);
}
const cli = new RnnstateCli(resolve(args.rnnstate));
const work = mkdtempSync(join(tmpdir(), 'rnnstate-real-strided-'));
const tally = { passed: 0, failed: 0 };
async function check(name, fn) {
  let r;
  try {
    r = await fn();
  } catch (err) {
    r = { ok: false, detail: err.message };
  }
  if (r.ok) tally.passed++; else tally.failed++;
  console.log(`${r.ok ? 'PASS' : 'FAIL'}  ulunas_stream_simple  ${name}  ${r.detail ?? ''}`);
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

const VIEW = [1, 66, 16];
const INTER = { GRU_2652: [0, [0, 33], [0, 8]], GRU_2712: [0, [0, 33], [8, 16]],
  GRU_3175: [0, [33, 66], [0, 8]], GRU_3235: [0, [33, 66], [8, 16]] };

const report = cli.report(model);
const states = report.nodes.flatMap((n) => n.states.map((st) => ({ node: n, st })));

await check('inter_cache GRUs exposed on view [1,66,16]', () => {
  const problems = [];
  for (const [name, region] of Object.entries(INTER)) {
    const found = states.find(({ node }) => node.name === name);
    const e = found?.st.exposure;
    if (!e || e.input !== 'inter_cache' || e.output !== 'inter_cache_out' || !same(e.region, region) ||
        !same(e.view, VIEW) || !same(e.axes, ['batch', 'hidden_size'])) {
      problems.push(`${name}: ${e ? JSON.stringify(e) : `not exposed (${found?.st.not_exposed_because})`}`);
    }
  }
  return { ok: problems.length === 0, detail: problems.join('; ') || '4 states, regions [0, 0:33|33:66, 0:8|8:16]' };
});

await check('tfa_cache GRUs exposed, bidirectional GRUs not streamable', () => {
  const tfa = states.filter(({ st }) => st.exposure?.input === 'tfa_cache' && !st.exposure.view);
  const bidir = report.nodes.filter((n) => n.direction === 'bidirectional');
  const streamingBidir = bidir.filter((n) => n.streamable !== false);
  const ok = tfa.length === 10 && bidir.length === 14 && streamingBidir.length === 0;
  return { ok, detail: `${tfa.length} tfa_cache regions, ${bidir.length} bidirectional (${streamingBidir.length} streamable)` };
});

await check('check --streamable-only', () => {
  const r = cli.run(['check', '--streamable-only', model]);
  return { ok: r.status === 0, detail: `exit ${r.status} ${lastLines(r.stderr)}` };
});

const out = join(work, 'streaming.onnx');
await check('rewrite --streamable-only keeps the interface and records the view', () => {
  const r = cli.rewrite(model, out, null, ['--streamable-only']);
  if (r.status !== 0 || !r.written) return { ok: false, detail: `exit ${r.status}: ${lastLines(r.stderr)}` };
  const before = scanModel(model), after = scanModel(out);
  if (!sameSet(after.inputs, before.inputs) || !sameSet(after.outputs, before.outputs)) {
    return { ok: false, detail: `inputs [${after.inputs}] outputs [${after.outputs}]` };
  }
  const pairs = JSON.parse(after.metadata.rnnstate).states.filter((p) => p.input === 'inter_cache');
  const ok = pairs.length === 4 && pairs.every((p) => p.output === 'inter_cache_out' && same(p.region, INTER[p.node]) &&
    same(p.view, VIEW) && same(p.shape, [1, 1056]) && p.batch_axis === -1 && p.init === 'zeros' && p.streamable);
  return { ok, detail: `${pairs.length} inter_cache pairs; inputs unchanged: ${after.inputs.join(', ')}` };
});

await check('rewrite of the rewrite is byte-identical', () => {
  const again = join(work, 'again.onnx');
  const r = cli.rewrite(out, again, null, ['--streamable-only']);
  const ok = r.status === 0 && r.written && readFileSync(out).equals(readFileSync(again));
  return { ok, detail: ok ? '' : `exit ${r.status}` };
});

await check('init feeds inter_cache zeros', () => {
  const r = cli.run(['init', out]);
  return { ok: r.status === 0 && /^inter_cache\s+float32\s+\[1,1056\]\s+zeros$/m.test(r.stdout), detail: r.stdout.trim().split('\n').join('; ') };
});

// ONNX Runtime: the model with each inter GRU's initial_h and Y_h as extra outputs, one call with a
// random cache; each must be exactly the recorded region of the view of inter_cache / inter_cache_out.
await check('ORT: the recorded regions are initial_h and Y_h', async () => {
  const proto = readModel(model);
  const taps = {};
  for (const node of proto.graph.node) {
    if (!(node.name in INTER)) continue;
    taps[node.name] = [node.input[5], node.output[1]];
    for (const name of taps[node.name]) {
      if (!proto.graph.output.some((o) => o.name === name)) {
        proto.graph.output.push({ name, type: { tensorType: { elemType: 1 } } });
      }
    }
  }
  const tapped = join(work, 'taps.onnx');
  writeModel(proto, tapped);
  const session = await ort.InferenceSession.create(tapped, { logSeverityLevel: 3 });
  const feeds = {};
  const dims = { mix: [1, 257, 1, 2], conv_cache: [1, 5358], tfa_cache: [1, 402], inter_cache: [1, 1056] };
  for (const name of session.inputNames) feeds[name] = randomTensor('float32', dims[name], `ulunas ${name}`);
  const got = await session.run(feeds);
  const regionOf = (flat, [, rows, cols]) => {
    const values = [];
    for (let b = rows[0]; b < rows[1]; b++) for (let k = cols[0]; k < cols[1]; k++) values.push(flat[b * VIEW[2] + k]);
    return values;
  };
  const problems = [];
  for (const [name, region] of Object.entries(INTER)) {
    const [h0, yh] = taps[name];
    if (!same(Array.from(got[h0].data), regionOf(feeds.inter_cache.data, region))) problems.push(`${name} initial_h`);
    if (!same(Array.from(got[yh].data), regionOf(got.inter_cache_out.data, region))) problems.push(`${name} Y_h`);
  }
  return { ok: problems.length === 0, detail: problems.length ? `not the region: ${problems.join(', ')}` : '8 regions exact' };
});

rmSync(work, { recursive: true, force: true });
console.log(`${tally.passed} passed, ${tally.failed} failed`);
process.exit(tally.failed ? 1 : 0);
