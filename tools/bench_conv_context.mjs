#!/usr/bin/env node
// Benchmark (not a test): the per-call cost of a model whose causal convolutions and pools over time carry
// their context as state (`rnnstate rewrite`, pairs of kind "context"), streamed one frame per call, against
// what users do today without context states: run the original model, for each new frame, on a sliding
// window of the last R frames (R, its receptive field over time: the frames of its context pairs + 1) and
// keep the window's last output frame. In ONNX Runtime (onnxruntime-node, CPU), batch 1. The models: the
// streaming test models below (tiny: a few channels) and, generated here, a larger one (--tcn: 6 dilated
// causal Conv1d of 64 channels, R = 127 frames, then a GRU) where the window's cost is the convolutions'.
//
//   node tools/bench_conv_context.mjs [--rnnstate build/rnnstate] [--model M.onnx ...] [--frames 200]
//                                     [--rounds 3] [--threads 1] [--tcn 6x64 | --tcn 0] [--workdir DIR]
//
// Each model is rewritten with --state-inputs required and streamed two ways, every state output fed back:
// through the StreamingSession of tools/js/rnnstate-stream ("streamed", what the helper's users write), and
// through the rewrite's own session with the caller carrying the state ("by hand": the same model without the
// helper's code). Before timing, every path is compared with one run of the original model on the whole
// sequence: the streamed outputs (frames joined call after call, final states of the last call) must equal it
// (max abs diff; the script fails past 1e-5). The sliding window is NOT the same computation where the model
// has a recurrence between or after its windows: the original's GRU/LSTM restarts from zeros on every window,
// so its outputs differ from the whole run (the table shows by how much); the point of the sliding column is
// the cost per call users pay today, not its outputs. The window's frames before the first are zeros (a ring
// buffer filled with zeros), so every call has R frames. Each round runs the paths one after the other
// (their order rotating from round to round) and times every call, from making the call's input tensor to
// its outputs; the table reports, over the rounds, the median of each round's median and 90th percentile,
// and of each round's ratio of medians (sliding / streamed: above 1, streaming is cheaper per call).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { StreamingSession, firstFeedTensor, readRnnstateMetadata } from './js/rnnstate-stream/index.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const require = createRequire(join(root, 'tests', 'e2e', 'package.json'));
const ort = require('onnxruntime-node');

const DEFAULT_MODELS = ['conv_context/causal_pad_conv1d_dil.onnx', 'conv_context/crn_like.onnx',
  'conv_context/causal_pad_pools.onnx', 'stream/conv_causal_front.onnx'].map((m) => join(root, 'models', m));
const { values: a } = parseArgs({
  options: {
    rnnstate: { type: 'string', default: join(root, 'build', 'rnnstate') },
    model: { type: 'string', multiple: true }, frames: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '3' }, threads: { type: 'string', default: '1' },
    tcn: { type: 'string', default: '6x64' }, workdir: { type: 'string' },
  },
});
const frames = Number(a.frames), rounds = Number(a.rounds);
const TOL = 1e-5;
const dir = a.workdir ? resolve(a.workdir) : mkdtempSync(join(tmpdir(), 'rnnstate-bench-conv-context-'));
mkdirSync(dir, { recursive: true });
const [TCN_LAYERS, TCN_CHANNELS] = a.tcn === '0' ? [0, 0] : a.tcn.split('x').map(Number);
if (!(TCN_LAYERS >= 0 && TCN_CHANNELS >= 0)) { console.error(`--tcn LAYERSxCHANNELS (6x64), or 0: not ${a.tcn}`); process.exit(2); }
const sessionOptions = { intraOpNumThreads: Number(a.threads), interOpNumThreads: 1, logSeverityLevel: 3 };

// ---------------------------------------------------------------------------------------------
// A larger model, generated here (not a test model): a TCN of L causal Conv1d (C channels, kernel 3,
// dilations 1, 2, 4, ..., each its own pads [2d, 0] before time) with Tanh, then a GRU of C units; x and y
// [batch, seq, C]. (A model without a recurrence is left as it is by rnnstate: "nothing to do".)
function buildTcn(file) {
  const Model = require('protobufjs').loadSync('/usr/include/onnx/onnx.proto').lookupType('onnx.ModelProto');
  let seed = 3;
  const floats = (n, scale) => {
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      data[i] = (seed / 2147483648 * 2 - 1) * scale;
    }
    return Buffer.from(data.buffer);
  };
  const C = TCN_CHANNELS, ints = (name, v) => ({ name, type: 7, ints: v });
  const info = (name) => ({ name, type: { tensorType: { elemType: 1, shape: { dim: [{ dimParam: 'batch' }, { dimParam: 'seq' }, { dimValue: C }] } } } });
  const nodes = [{ opType: 'Transpose', name: 'to_channels', input: ['x'], output: ['t0'], attribute: [ints('perm', [0, 2, 1])] }];
  const initializer = [];
  for (let l = 0; l < TCN_LAYERS; l++) {
    const d = 2 ** l;
    initializer.push({ name: `W${l}`, dims: [C, C, 3], dataType: 1, rawData: floats(3 * C * C, 1 / Math.sqrt(3 * C)) });
    initializer.push({ name: `B${l}`, dims: [C], dataType: 1, rawData: floats(C, 0.1) });
    nodes.push({ opType: 'Conv', name: `conv${l}`, input: [`t${l}`, `W${l}`, `B${l}`], output: [`c${l}`],
      attribute: [ints('kernel_shape', [3]), ints('dilations', [d]), ints('pads', [2 * d, 0])] });
    nodes.push({ opType: 'Tanh', name: `tanh${l}`, input: [`c${l}`], output: [`t${l + 1}`] });
  }
  // Then a GRU (PyTorch's batch_first export): rnnstate rewrites models with a recurrence.
  const H = C;
  initializer.push({ name: 'gru_W', dims: [1, 3 * H, C], dataType: 1, rawData: floats(3 * H * C, 1 / Math.sqrt(H)) });
  initializer.push({ name: 'gru_R', dims: [1, 3 * H, H], dataType: 1, rawData: floats(3 * H * H, 1 / Math.sqrt(H)) });
  initializer.push({ name: 'gru_B', dims: [1, 6 * H], dataType: 1, rawData: floats(6 * H, 1 / Math.sqrt(H)) });
  initializer.push({ name: 'axis1', dims: [1], dataType: 7, rawData: Buffer.from(new BigInt64Array([1n]).buffer) });
  nodes.push({ opType: 'Transpose', name: 'to_time', input: [`t${TCN_LAYERS}`], output: ['u'], attribute: [ints('perm', [2, 0, 1])] });
  nodes.push({ opType: 'GRU', name: 'gru', input: ['u', 'gru_W', 'gru_R', 'gru_B'], output: ['g'],
    attribute: [{ name: 'hidden_size', type: 2, i: H }, { name: 'linear_before_reset', type: 2, i: 1 }] });
  nodes.push({ opType: 'Squeeze', name: 'squeeze', input: ['g', 'axis1'], output: ['s'] });
  nodes.push({ opType: 'Transpose', name: 'to_batch', input: ['s'], output: ['y'], attribute: [ints('perm', [1, 0, 2])] });
  const model = {
    irVersion: 7, opsetImport: [{ domain: '', version: 14 }], producerName: 'rnnstate bench_conv_context',
    graph: { name: 'tcn', node: nodes, initializer, input: [info('x')], output: [info('y')] },
  };
  writeFileSync(file, Model.encode(Model.fromObject(model)).finish());
}

function rewrite(input, output) {
  const r = spawnSync(a.rnnstate, ['-q', 'rewrite', input, '-o', output, '--state-inputs', 'required'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`rnnstate rewrite ${input} exited ${r.status}: ${r.stderr}`);
}

// ---------------------------------------------------------------------------------------------
// Float tensors as {data, dims}, sliced and joined along one axis.
const product = (xs) => xs.reduce((p, q) => p * q, 1);
function sliceAxis({ data, dims }, axis, from, to) {
  const outer = product(dims.slice(0, axis)), inner = product(dims.slice(axis + 1)), n = dims[axis];
  const out = new Float32Array(outer * (to - from) * inner);
  for (let o = 0; o < outer; o++) out.set(data.subarray((o * n + from) * inner, (o * n + to) * inner), o * (to - from) * inner);
  return { data: out, dims: dims.map((d, i) => (i === axis ? to - from : d)) };
}
function concatAxis(parts, axis) {
  const dims = parts[0].dims.map((d, i) => (i === axis ? parts.reduce((s, p) => s + p.dims[axis], 0) : d));
  const outer = product(dims.slice(0, axis)), inner = product(dims.slice(axis + 1));
  const out = new Float32Array(product(dims));
  let at = 0;
  for (let o = 0; o < outer; o++) {
    for (const p of parts) {
      const size = p.dims[axis] * inner;
      out.set(p.data.subarray(o * size, (o + 1) * size), at);
      at += size;
    }
  }
  return { data: out, dims };
}
function maxAbsDiff(x, y) {
  if (JSON.stringify(x.dims) !== JSON.stringify(y.dims)) return Infinity;
  let m = 0;
  for (let i = 0; i < x.data.length; i++) {
    const d = Math.abs(x.data[i] - y.data[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d;
  }
  return m;
}
const plain = (t) => ({ data: t.data, dims: [...t.dims] });
const tensor = (t) => new ort.Tensor('float32', t.data, t.dims);

const sorted = (xs) => [...xs].sort((p, q) => p - q);
const median = (xs) => sorted(xs)[xs.length >> 1];
const p90 = (xs) => sorted(xs)[Math.min(xs.length - 1, Math.floor(0.9 * xs.length))];
const now = () => process.hrtime.bigint();
const micros = (t0) => Number(process.hrtime.bigint() - t0) / 1e3;

// ---------------------------------------------------------------------------------------------
/** The model's one data input with its time axis, R, and the outputs that are frames over time. */
async function describe(original, rewritten) {
  const meta = await readRnnstateMetadata(rewritten);
  if (!meta?.stream?.chunk_exact) throw new Error(`${rewritten}: the metadata does not say the rewrite streams`);
  if ((meta.stream.chunk_multiple ?? 1) > 1) throw new Error(`${rewritten}: streams in chunks of ${meta.stream.chunk_multiple} frames, not one`);
  if (meta.stream.time.length !== 1) throw new Error(`${rewritten}: ${meta.stream.time.length} inputs over time; one expected`);
  const { input, axis } = meta.stream.time[0];
  const contexts = meta.states.filter((s) => s.kind === 'context');
  const session = await ort.InferenceSession.create(original, sessionOptions);
  const info = session.inputMetadata.find((m) => m.name === input);
  if (session.inputNames.length !== 1 || !info) throw new Error(`${original}: inputs ${session.inputNames}; only '${input}' expected`);
  const dims = info.shape.map((d, i) => (i === axis ? frames : typeof d === 'number' ? d : 1));
  const frameOutputs = new Map(meta.stream.outputs.filter((o) => o.chunked === 'frames').map((o) => [o.output, o.axis]));
  return { session, input, axis, dims, frameOutputs, contexts, states: meta.states.length,
    receptive: contexts.reduce((s, c) => s + c.context.frames, 0) + 1 };
}

/** A whole sequence of pseudo-random frames in [-1, 1]. */
function sequence(dims) {
  const data = new Float32Array(product(dims));
  let seed = 7;
  for (let i = 0; i < data.length; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    data[i] = seed / 2147483648 * 2 - 1;
  }
  return { data, dims };
}

/** The three paths, each one call for frame t; `carry` holds what the path keeps between calls. */
const PATHS = {
  /** The rewrite through the StreamingSession (what the helper's users write). */
  streamed: (stream, m, x, padded, t, carry) =>
    stream.run({ [m.input]: tensor(sliceAxis(x, m.axis, t, t + 1)) }, { stateOutputs: carry.all }),
  /** The rewrite's own session fed by hand: the caller carries the state (no helper code). */
  'by hand': async (stream, m, x, padded, t, carry) => {
    const feeds = { [m.input]: tensor(sliceAxis(x, m.axis, t, t + 1)) };
    if (t === 0) {
      carry.state = Object.fromEntries(stream.firstFeedSpecs(feeds).map((s) => [s.input, firstFeedTensor(s, ort.Tensor)]));
    }
    const out = await stream.session.run({ ...feeds, ...carry.state });
    carry.state = Object.fromEntries(stream.states.map((p) => [p.input, out[p.output]]));
    return out;
  },
  /** The original model on frames t-R+1..t (zeros before the first): what users do today. */
  sliding: (stream, m, x, padded, t) => m.session.run({ [m.input]: tensor(sliceAxis(padded, m.axis, t, t + m.receptive)) }),
};

/** Every path against one run of the original on the whole sequence: max abs diff over all outputs. */
async function compare(m, stream, x, padded) {
  const whole = await m.session.run({ [m.input]: tensor(x) });
  const diffs = {};
  for (const [path, call] of Object.entries(PATHS)) {
    await stream.reset();
    const carry = { all: true }, frameParts = new Map([...m.frameOutputs.keys()].map((n) => [n, []]));
    let last = null;
    for (let t = 0; t < frames; t++) {
      last = await call(stream, m, x, padded, t, carry);
      for (const [name, axis] of m.frameOutputs) {
        if (path === 'sliding' && t < m.receptive - 1) continue;  // its first windows start with zeros
        const y = plain(last[name]);
        frameParts.get(name).push(path === 'sliding' ? sliceAxis(y, axis, y.dims[axis] - 1, y.dims[axis]) : y);
      }
    }
    diffs[path] = 0;
    for (const name of m.session.outputNames) {
      const axis = m.frameOutputs.get(name);
      if (axis === undefined && path === 'sliding') continue;  // its final states are its last window's
      // Outputs over time are joined call after call; the others (final states) are the last call's.
      const got = axis === undefined ? plain(last[name]) : concatAxis(frameParts.get(name), axis);
      const want = path === 'sliding' ? sliceAxis(plain(whole[name]), axis, m.receptive - 1, frames) : plain(whole[name]);
      diffs[path] = Math.max(diffs[path], maxAbsDiff(got, want));
    }
  }
  return diffs;
}

/** One round: every call of every path timed, in the given order. */
async function round(m, stream, x, padded, order) {
  const times = {};
  for (const path of order) {
    await stream.reset();
    const carry = { all: false };
    times[path] = [];
    for (let t = 0; t < frames; t++) {
      const t0 = now();
      await PATHS[path](stream, m, x, padded, t, carry);
      times[path].push(micros(t0));
    }
  }
  return times;
}

async function bench(file) {
  const name = basename(file, '.onnx');
  const rewritten = join(dir, `${name}.required.onnx`);
  rewrite(file, rewritten);
  const m = await describe(file, rewritten);
  const stream = await StreamingSession.create(rewritten, { ort, sessionOptions });
  const x = sequence(m.dims);
  const zeroDims = m.dims.map((d, i) => (i === m.axis ? m.receptive - 1 : d));
  const zeros = { data: new Float32Array(product(zeroDims)), dims: zeroDims };
  const padded = concatAxis([zeros, x], m.axis);
  const diffs = await compare(m, stream, x, padded);  // also the warm-up
  const names = Object.keys(PATHS);
  const per = Object.fromEntries(names.map((p) => [p, { median: [], p90: [] }]));
  const ratios = { streamed: [], 'by hand': [] };
  for (let r = 0; r < rounds; r++) {
    const times = await round(m, stream, x, padded, names.map((_, i) => names[(i + r) % names.length]));
    for (const path of names) {
      per[path].median.push(median(times[path]));
      per[path].p90.push(p90(times[path]));
    }
    for (const path of Object.keys(ratios)) ratios[path].push(median(times.sliding) / median(times[path]));
  }
  await stream.release();
  await m.session.release();
  return { name, m, diffs, per, ratios };
}

function row({ name, m, diffs, per, ratios }) {
  const us = (path) => `${median(per[path].median).toFixed(0)} / ${median(per[path].p90).toFixed(0)}`;
  const ratio = (xs) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}..${Math.max(...xs).toFixed(2)})`;
  const e = (v) => (v === 0 ? '0' : v.toExponential(1));
  const exact = Math.max(diffs.streamed, diffs['by hand']);
  return `| ${name} | ${m.receptive} (${m.contexts.length}) | ${us('streamed')} | ${us('by hand')} | ${us('sliding')} | ` +
    `${ratio(ratios.streamed)} | ${ratio(ratios['by hand'])} | ${e(exact)}${exact > TOL ? ' DIFFERS' : ''} | ${e(diffs.sliding)} |`;
}

async function main() {
  const models = [...(a.model ?? DEFAULT_MODELS)];
  if (TCN_LAYERS > 0) {
    models.push(join(dir, `tcn_${TCN_LAYERS}x${TCN_CHANNELS}.onnx`));
    buildTcn(models.at(-1));
  }
  const results = [];
  for (const file of models) results.push(await bench(resolve(file)));
  console.log(`batch 1, one frame per call, ${frames} calls a round, ${rounds} rounds rotating the paths' order; ` +
    `onnxruntime-node ${ort.env.versions?.common ?? ''}, ${a.threads} thread(s); medians over the rounds`);
  console.log('streamed: the rewrite through StreamingSession; by hand: its session, the caller feeding the state back; ' +
    'sliding: the original model on the last R frames per call (zeros before the first), its last output frame ' +
    'kept -- its recurrences restart every call, so its outputs are not the streamed ones');
  console.log('| model | R frames (context states) | streamed µs/call median / p90 | by hand | sliding | ' +
    'sliding / streamed (rounds\' range) | sliding / by hand | streamed vs whole run, max abs diff | ' +
    'sliding vs whole run, frames R.. |');
  console.log('|---|---|---:|---:|---:|---|---|---|---|');
  for (const r of results) console.log(row(r));
  if (!a.workdir) rmSync(dir, { recursive: true, force: true });
  if (results.some((r) => !(Math.max(r.diffs.streamed, r.diffs['by hand']) <= TOL))) {
    console.error(`streamed outputs differ from the whole run past ${TOL}`);
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err.stack || String(err));
  process.exitCode = 1;
});
