#!/usr/bin/env node
// Benchmark (not a test): the per-call cost of a packed model (`rnnstate rewrite --pack tensor`) against
// the same model with one state input and output each, in ONNX Runtime (onnxruntime-node, CPU), for a
// streaming call: batch 1, one frame.
//
//   node tools/bench_pack.mjs [--rnnstate build/rnnstate] [--layers 6] [--hidden 128] [--features 40]
//                             [--calls 2000] [--rounds 9] [--threads 1] [--workdir DIR]
//
// The model is generated here: `layers` stacked LSTMs without initial states (2 x layers states), opset
// 14. Both rewrites use --state-inputs required (onnxruntime-node ignores feeds for inputs that have a
// default). Each call feeds the previous call's state outputs back. Rounds alternate the two models
// (and their order) and report medians, so that a noisy machine shows as spread, not as a bias:
//   - per call, end to end from JavaScript (what a caller pays, including creating and binding every
//     input and output tensor: 2 x states + 2 for the unpacked model, 4 for the packed one);
//   - the packed model's own nodes alone (Size, Equal, If, Reshape, Transpose, Split, Concat, ...): the
//     packed model without its LSTMs (each final state read as the initial state) against a model that
//     only passes state_in to state_out, both binding the same four tensors. The difference is what
//     packing adds inside ONNX Runtime, without the JavaScript binding (ONNX Runtime's profiler is not
//     used: its per-node overhead would dwarf these small nodes).
// Outputs of both models are compared first (they must be equal).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
// The LSTM's state slots (initial value in, final value out), from the list rnnstate's table is tested against.
const LSTM_OP = JSON.parse(readFileSync(join(here, 'recurrent_ops.json'), 'utf8')).ops.find((op) => op.op_type === 'LSTM' && op.domain === '');
const LSTM_STATE_SLOTS = [[LSTM_OP.initial_h, LSTM_OP.y_h], [LSTM_OP.initial_c, LSTM_OP.y_c]];
const e2e = join(here, '..', 'tests', 'e2e');
const require = createRequire(join(e2e, 'package.json'));
const ort = require('onnxruntime-node');
const protobuf = require('protobufjs');

const { values: a } = parseArgs({
  options: {
    rnnstate: { type: 'string', default: join(here, '..', 'build', 'rnnstate') },
    layers: { type: 'string', default: '6' }, hidden: { type: 'string', default: '128' },
    features: { type: 'string', default: '40' }, calls: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '9' }, threads: { type: 'string', default: '1' },
    workdir: { type: 'string' },
  },
});
const L = Number(a.layers), H = Number(a.hidden), F = Number(a.features);
const calls = Number(a.calls), rounds = Number(a.rounds);
const dir = a.workdir ? resolve(a.workdir) : mkdtempSync(join(tmpdir(), 'rnnstate-bench-pack-'));

// ---------------------------------------------------------------------------------------------
// The model: layers stacked LSTMs (no initial state), Squeeze between them.
const Model = protobuf.loadSync('/usr/include/onnx/onnx.proto').lookupType('onnx.ModelProto');
let seed = 1;
function floats(n, scale) {
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    data[i] = (seed / 2147483648 * 2 - 1) * scale;
  }
  return Buffer.from(data.buffer);
}
const dim = (d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d });
const info = (name, dims) => ({ name, type: { tensorType: { elemType: 1, shape: { dim: dims.map(dim) } } } });
function buildModel(file) {
  const nodes = [], initializer = [];
  let x = 'x', width = F;
  initializer.push({ name: 'axis1', dims: [1], dataType: 7, rawData: Buffer.from(new BigInt64Array([1n]).buffer) });
  for (let l = 0; l < L; l++) {
    const scale = 1 / Math.sqrt(H);
    initializer.push({ name: `W${l}`, dims: [1, 4 * H, width], dataType: 1, rawData: floats(4 * H * width, scale) });
    initializer.push({ name: `R${l}`, dims: [1, 4 * H, H], dataType: 1, rawData: floats(4 * H * H, scale) });
    initializer.push({ name: `B${l}`, dims: [1, 8 * H], dataType: 1, rawData: floats(8 * H, scale) });
    nodes.push({ opType: 'LSTM', name: `lstm${l}`, input: [x, `W${l}`, `R${l}`, `B${l}`], output: [`y${l}`],
      attribute: [{ name: 'hidden_size', type: 2, i: H }] });
    nodes.push({ opType: 'Squeeze', name: `squeeze${l}`, input: [`y${l}`, 'axis1'], output: [`h${l}`] });
    x = `h${l}`;
    width = H;
  }
  nodes.push({ opType: 'Identity', name: 'out', input: [x], output: ['y'] });
  const model = {
    irVersion: 7, opsetImport: [{ domain: '', version: 14 }], producerName: 'rnnstate bench_pack',
    graph: { name: 'stacked_lstm', node: nodes, initializer, input: [info('x', ['seq', 'batch', F])],
      output: [info('y', ['seq', 'batch', H])] },
  };
  writeFileSync(file, Model.encode(Model.fromObject(model)).finish());
}

function rewrite(input, output, args) {
  const r = spawnSync(a.rnnstate, ['-q', 'rewrite', input, '-o', output, '--state-inputs', 'required', ...args],
    { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`rnnstate rewrite ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
}

// ---------------------------------------------------------------------------------------------
// Streaming calls: batch 1, one frame; every state output fed back.
const frame = (i) => new ort.Tensor('float32', Float32Array.from({ length: F }, (_, k) => Math.sin(i * 0.37 + k)), [1, 1, F]);
const frames = Array.from({ length: 64 }, (_, i) => frame(i));

function stateFeeds(session, pairs) {
  // The first feed as each input's metadata says: the packed value empty, the states zeros (required).
  const feeds = {};
  for (const p of pairs) {
    const dims = p.shape.map((d, axis) => (axis === p.batch_axis ? (p.init === 'empty' ? 0 : 1) : d));
    feeds[p.input] = new ort.Tensor(p.dtype, new Float32Array(dims.reduce((x, y) => x * y, 1)), dims);
  }
  return feeds;
}

async function stream(session, pairs, count, collect = null) {
  let state = stateFeeds(session, pairs);
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    const out = await session.run({ x: frames[i % frames.length], ...state });
    const next = {};
    for (const p of pairs) next[p.input] = out[p.output];
    state = next;
    if (collect) collect.push(out.y.data.slice());
  }
  return Number(process.hrtime.bigint() - start) / 1e3 / count;  // microseconds per call
}

function metadataPairs(file) {
  const model = Model.decode(readFileSync(file));
  const doc = JSON.parse(model.metadataProps.find((p) => p.key === 'rnnstate').value);
  // The tensors a caller feeds: the packed values, or one per state pair.
  return doc.packed ? doc.packed.values.map((v) => ({ ...v })) : doc.states;
}

const median = (xs) => [...xs].sort((p, q) => p - q)[xs.length >> 1];

/** The packed model without its LSTMs: each final state is its initial state (y = x). */
function packingOnly(file, out) {
  const model = Model.decode(readFileSync(file));
  const g = model.graph;
  const same = new Map();  // final state -> initial state
  for (const node of g.node) {
    if (node.opType === 'LSTM') for (const [from, to] of LSTM_STATE_SLOTS) same.set(node.output[to], node.input[from]);
  }
  g.node = g.node.filter((n) => n.opType !== 'LSTM' && !(n.opType === 'Squeeze' && n.name.startsWith('squeeze')) && n.name !== 'out');
  for (const node of g.node) node.input = node.input.map((name) => same.get(name) ?? name);
  g.node.push({ opType: 'Identity', name: 'out', input: ['x'], output: ['y'] });
  g.output = g.output.map((o) => (o.name === 'y' ? info('y', ['seq', 'batch', F]) : o));
  writeFileSync(out, Model.encode(model).finish());
}

/** A model that only passes x to y and state_in to state_out. */
function passThrough(packedFile, out) {
  const model = Model.decode(readFileSync(packedFile));
  const g = model.graph;
  g.node = [{ opType: 'Identity', name: 'out', input: ['x'], output: ['y'] },
    { opType: 'Identity', name: 'state', input: ['state_in'], output: ['state_out'] }];
  g.initializer = [];
  g.output = g.output.map((o) => (o.name === 'y' ? info('y', ['seq', 'batch', F]) : o));
  model.metadataProps = [];
  writeFileSync(out, Model.encode(model).finish());
}

async function main() {
  const original = join(dir, 'stacked_lstm.onnx'), unpacked = join(dir, 'unpacked.onnx'), packed = join(dir, 'packed.onnx');
  buildModel(original);
  rewrite(original, unpacked, []);
  rewrite(original, packed, ['--pack', 'tensor']);
  const unpackedPairs = metadataPairs(unpacked), packedPairs = metadataPairs(packed);
  const options = { intraOpNumThreads: Number(a.threads), interOpNumThreads: 1, logSeverityLevel: 3 };
  const sessions = { unpacked: await ort.InferenceSession.create(unpacked, options),
    packed: await ort.InferenceSession.create(packed, options) };
  const pairs = { unpacked: unpackedPairs, packed: packedPairs };

  // Same outputs, call after call.
  const ya = [], yb = [];
  await stream(sessions.unpacked, pairs.unpacked, 50, ya);
  await stream(sessions.packed, pairs.packed, 50, yb);
  let diff = 0;
  ya.forEach((v, i) => v.forEach((x, k) => { diff = Math.max(diff, Math.abs(x - yb[i][k])); }));
  if (diff > 1e-5) throw new Error(`packed and unpacked outputs differ (max abs diff ${diff})`);

  for (const k of Object.keys(sessions)) await stream(sessions[k], pairs[k], 200);  // warm-up
  const times = { unpacked: [], packed: [] }, ratios = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? ['packed', 'unpacked'] : ['unpacked', 'packed'];
    for (const k of order) times[k].push(await stream(sessions[k], pairs[k], calls));
    ratios.push(times.packed[r] / times.unpacked[r]);
  }
  for (const s of Object.values(sessions)) await s.release();

  // What the packing nodes cost inside ONNX Runtime: packing nodes alone against a pass-through.
  const only = join(dir, 'packing-only.onnx'), pass = join(dir, 'pass-through.onnx');
  packingOnly(packed, only);
  passThrough(packed, pass);
  const bare = { only: await ort.InferenceSession.create(only, options), pass: await ort.InferenceSession.create(pass, options) };
  const stateOnly = [{ ...packedPairs[0], input: 'state_in', output: 'state_out' }];
  for (const k of Object.keys(bare)) await stream(bare[k], stateOnly, 200);
  const bareTimes = { only: [], pass: [] };
  for (let r = 0; r < rounds; r++) {
    for (const k of r % 2 ? ['pass', 'only'] : ['only', 'pass']) bareTimes[k].push(await stream(bare[k], stateOnly, calls));
  }
  for (const s of Object.values(bare)) await s.release();
  const nodeCount = (file) => Model.decode(readFileSync(file)).graph.node.filter((n) => n.opType !== 'Constant').length;
  const added = median(bareTimes.only.map((t, r) => t - bareTimes.pass[r]));

  const states = unpackedPairs.length;
  const fmt = (x) => x.toFixed(1);
  console.log(`model: ${L} stacked LSTMs, hidden ${H}, ${F} features: ${states} states ` +
    `(${packedPairs[0].shape[1]} floats per batch row packed); batch 1, one frame per call; ` +
    `onnxruntime-node ${ort.env.versions?.common ?? ''}, ${a.threads} thread(s); outputs equal (max abs diff ${diff})`);
  console.log(`end to end from JavaScript, ${rounds} rounds x ${calls} calls:`);
  console.log(`  unpacked ${fmt(median(times.unpacked))} us/call (${2 * states + 2} tensors bound per call)`);
  console.log(`  packed   ${fmt(median(times.packed))} us/call (4 tensors bound per call)`);
  console.log(`  packed / unpacked: median ${median(ratios).toFixed(3)} (rounds ${Math.min(...ratios).toFixed(3)}` +
    `..${Math.max(...ratios).toFixed(3)})`);
  console.log(`the packing nodes alone (${nodeCount(packed) - nodeCount(unpacked)} nodes besides Constants), ` +
    `same ${rounds} rounds: ${fmt(median(bareTimes.only))} us/call against ${fmt(median(bareTimes.pass))} for a ` +
    `pass-through: ${fmt(added)} us per call, ${(100 * added / median(times.unpacked)).toFixed(1)}% of the ` +
    'unpacked model\'s call');
  if (!a.workdir) rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err.stack || String(err));
  process.exitCode = 1;
});
