#!/usr/bin/env node
// Part of tools/bench.py: runs an original model and its rnnstate rewrite in ONNX Runtime
// (onnxruntime-node, CPU) with the same non-state inputs and compares every original output.
//
//   node tools/bench_ort_check.mjs --original A.onnx --rewritten B.onnx --vocab V
//        [--input tokens] [--seq 3] [--batch 2] [--tol 1e-5] [--ort-dir tests/e2e]
//
// The input is an int64 [seq, batch] tensor of token ids below V (the bench's LSTM model). No state is
// fed: onnxruntime-node does not list inputs that have an initializer and ignores feeds for them, so
// both models get exactly the same feeds (and each session's inputNames must be exactly those feeds).
// Prints one JSON line: {ok, max_abs_diff, compared, extra_outputs, inputs_original, inputs_rewritten, ...}.
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const { values: a } = parseArgs({
  options: {
    original: { type: 'string' }, rewritten: { type: 'string' }, vocab: { type: 'string' },
    input: { type: 'string', default: 'tokens' }, seq: { type: 'string', default: '3' },
    batch: { type: 'string', default: '2' }, tol: { type: 'string', default: '1e-5' },
    'ort-dir': { type: 'string', default: join(here, '..', 'tests', 'e2e') },
  },
});
for (const k of ['original', 'rewritten', 'vocab']) {
  if (!a[k]) { console.error(`missing --${k}`); process.exit(2); }
}
const require = createRequire(join(resolve(a['ort-dir']), 'package.json'));
const ort = require('onnxruntime-node');

const seq = Number(a.seq), batch = Number(a.batch), vocab = Number(a.vocab), tol = Number(a.tol);
const ids = new BigInt64Array(seq * batch);
let s = 12345;
for (let i = 0; i < ids.length; i++) {
  s = (s * 1103515245 + 12345) % 2147483648;
  ids[i] = BigInt(s % vocab);
}
ids[0] = BigInt(vocab - 1); // the last row of the table too

async function run(path) {
  const t0 = Date.now();
  const session = await ort.InferenceSession.create(path);
  const inputs = [...session.inputNames], outputs = [...session.outputNames];
  if (inputs.length !== 1 || inputs[0] !== a.input) {
    throw new Error(`${path}: session inputs are ${JSON.stringify(inputs)}, expected only ${a.input}`);
  }
  const feeds = { [a.input]: new ort.Tensor('int64', ids, [seq, batch]) };
  const res = await session.run(feeds);
  const out = {};
  for (const name of outputs) out[name] = { dims: [...res[name].dims], data: res[name].data.slice() };
  await session.release();
  return { inputs, outputs, out, ms: Date.now() - t0 };
}

try {
  const A = await run(a.original);
  const B = await run(a.rewritten);
  let maxDiff = 0, ok = true;
  const problems = [];
  for (const name of A.outputs) {
    const x = A.out[name], y = B.out[name];
    if (!y) { ok = false; problems.push(`output ${name} missing`); continue; }
    if (JSON.stringify(x.dims) !== JSON.stringify(y.dims)) {
      ok = false; problems.push(`output ${name} dims ${x.dims} vs ${y.dims}`); continue;
    }
    for (let i = 0; i < x.data.length; i++) {
      const d = Math.abs(x.data[i] - y.data[i]);
      if (!(d <= maxDiff)) maxDiff = Number.isNaN(d) ? Infinity : d;
    }
  }
  if (maxDiff > tol) ok = false;
  const extra = {};
  for (const name of B.outputs) if (!A.outputs.includes(name)) extra[name] = B.out[name].dims;
  if (Object.keys(extra).length === 0) { ok = false; problems.push('rewritten model has no new (state) outputs'); }
  console.log(JSON.stringify({
    ok, max_abs_diff: maxDiff, tol, compared: A.outputs, elements: A.outputs.reduce((n, k) => n + A.out[k].data.length, 0),
    extra_outputs: extra, inputs_original: A.inputs, inputs_rewritten: B.inputs,
    ms_original: A.ms, ms_rewritten: B.ms, problems,
  }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, error: String(err.message || err) }));
}
