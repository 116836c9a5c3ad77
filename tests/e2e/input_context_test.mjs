#!/usr/bin/env node
// `rnnstate rewrite --input-context` in ONNX Runtime (onnxruntime-node), issue 40:
//
//   node input_context_test.mjs --rnnstate BINARY --models DIR --real-models DIR [--workdir DIR]
//
// On models/context/conv_lstm_vad.onnx (Silero's calling convention, small; a strided Conv1d frame spans
// two chunks): the rewrite streamed by the helper equals the authors' protocol on the original (the last 8
// samples of the previous chunk prepended by hand, the state fed back by hand) call by call, and one run of
// the original on the whole audio with zeros in front; the unfed defaults-mode rewrite is the original on
// zeros + the chunk; --pack tensor carries the context too; a rewrite without the context must differ
// (negative control); the CLI keeps the pair on a second rewrite and refuses nonsense with exit 2.
// On Silero VAD v5 (../shared/real-models; a SKIP line when absent, a failure when
// RNNSTATE_REQUIRE_REAL_MODELS=1): the same protocol on a synthesized sentence (espeak-ng + sox) to 1e-5,
// frames > 0.5 counted three ways, and the README's quick start run as written.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as ort from 'onnxruntime-node';

import { readRnnstateMetadata, StreamingSession } from '../../tools/js/rnnstate-stream/index.mjs';
import { metadataProblems } from './lib/json-schema.mjs';
import { lastLines, RnnstateCli } from './lib/rnnstate-cli.mjs';
import { CONTEXT, FRAME, makeSpeechWav, readWav } from './lib/speech.mjs';

const { values: args } = parseArgs({
  options: { rnnstate: { type: 'string' }, models: { type: 'string' }, 'real-models': { type: 'string' }, workdir: { type: 'string' } },
});
if (!args.rnnstate || !args.models || !args['real-models']) {
  console.error('usage: node input_context_test.mjs --rnnstate BINARY --models DIR --real-models DIR [--workdir DIR]');
  process.exit(2);
}
const here = dirname(new URL(import.meta.url).pathname);
const repo = resolve(here, '..', '..');
const cli = new RnnstateCli(resolve(args.rnnstate));
const workdir = args.workdir ? resolve(args.workdir) : mkdtempSync(join(tmpdir(), 'rnnstate-context-'));
mkdirSync(workdir, { recursive: true });
const sessionOptions = { logSeverityLevel: 3, intraOpNumThreads: 1, interOpNumThreads: 1 };

const tally = { passed: 0, failed: 0 };
async function check(label, name, fn) {
  let ok = false;
  let detail;
  try {
    ({ ok, detail } = await fn());
  } catch (err) {
    detail = `error: ${err.message}`;
  }
  if (ok) tally.passed++; else tally.failed++;
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${label}  ${name}${detail ? `  ${detail}` : ''}`);
}

/** `rnnstate rewrite IN -o OUT --state-inputs MODE ARGS...`, which must succeed; returns OUT. */
function rewrite(input, name, mode, extra = []) {
  const output = join(workdir, name);
  const r = cli.rewrite(input, output, mode, extra);
  if (r.status !== 0) throw new Error(`'${r.command}' exited ${r.status}: ${lastLines(r.stderr)}`);
  return output;
}

const maxDiff = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), a.length === b.length ? 0 : Infinity);
const tensor = (data, dims) => new ort.Tensor('float32', Float32Array.from(data), dims);

/** Row-major [batch, length] audio: columns [start, end) of every row, with `front` [batch, k] before them. */
function columns(audio, batch, length, start, end, front = null) {
  const k = front ? front.length / batch : 0;
  const out = new Float32Array(batch * (k + end - start));
  for (let b = 0; b < batch; b++) {
    if (front) out.set(front.subarray(b * k, (b + 1) * k), b * (k + end - start));
    out.set(audio.subarray(b * length + start, b * length + end), b * (k + end - start) + k);
  }
  return { data: out, dims: [batch, k + end - start] };
}

/**
 * The authors' protocol on the original: per chunk, the previous chunk's last `context` columns (zeros
 * first) in front, the state output fed back by hand. `extra` feeds (Silero's `sr`) are made per call.
 */
async function authorsProtocol(session, names, audio, batch, chunks, context, stateDims, extra = () => ({})) {
  const length = audio.length / batch;
  let state = tensor(new Float32Array(stateDims.reduce((a, b) => a * b, 1)), stateDims);
  let front = new Float32Array(batch * context);
  const outputs = [];
  let start = 0;
  for (const n of chunks) {
    const x = columns(audio, batch, length, start, start + n, front);
    const r = await session.run({ [names.audio]: tensor(x.data, x.dims), [names.state]: state, ...extra() });
    outputs.push([...r[names.output].data]);
    state = r[names.stateOut];
    front = columns(x.data, batch, x.dims[1], x.dims[1] - context, x.dims[1]).data;
    start += n;
  }
  return { outputs, state: [...state.data] };
}

/** The helper on a rewrite, fed the chunks' data only; `extra` as above. */
async function helperStream(path, name, audio, batch, chunks, output, extra = () => ({}), options = {}) {
  const stream = await StreamingSession.create(path, { ort, sessionOptions, ...options });
  const length = audio.length / batch;
  const outputs = [];
  let start = 0;
  for (const n of chunks) {
    const x = columns(audio, batch, length, start, start + n);
    outputs.push([...(await stream.run({ [name]: tensor(x.data, x.dims), ...extra() }))[output].data]);
    start += n;
  }
  const state = stream.state;
  await stream.release();
  return { outputs, state };
}

const seeded = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37 + seed) * 0.8 + Math.cos(i * 1.3) * 0.1);

async function bundledModel() {
  const label = 'context/conv_lstm_vad';
  const original = join(resolve(args.models), 'context', 'conv_lstm_vad.onnx');
  const names = { audio: 'audio', state: 'state', output: 'prob', stateOut: 'stateN' };
  const [batch, chunks, context] = [2, [16, 24, 8, 32, 16], 8];
  const audio = seeded(batch * chunks.reduce((a, b) => a + b), 1);
  const required = rewrite(original, 'vad.required.onnx', 'required', ['--input-context', 'audio:1:8']);
  const orig = await ort.InferenceSession.create(original, sessionOptions);
  const authors = await authorsProtocol(orig, names, audio, batch, chunks, context, [2, batch, 8]);

  await check(label, 'rewrite of the rewrite: same bytes, check passes', async () => {
    const again = rewrite(required, 'vad.again.onnx', 'required', ['--input-context', 'audio:1:8']);
    const same = readFileSync(again).equals(readFileSync(required));
    const checked = cli.run(['check', required]);
    return { ok: same && checked.status === 0, detail: `same bytes ${same}, check exit ${checked.status}` };
  });
  await check(label, 'the metadata: a pair of kind "context", valid by docs/metadata.schema.json', async () => {
    const metadata = await readRnnstateMetadata(required);
    const pair = metadata.states.find((p) => p.kind === 'context');
    const problems = metadataProblems(metadata);
    const ok = problems.length === 0 && pair?.input === 'audio.context_in' && pair.output === 'audio.context_out' &&
      JSON.stringify(pair.context) === '{"value":"audio","axis":1,"frames":8}' && JSON.stringify(pair.shape) === '["batch",8]';
    return { ok, detail: problems.length ? problems.join('; ') : JSON.stringify(pair) };
  });
  await check(label, 'init lists the context', async () => {
    const out = cli.run(['init', required, '--batch', '2']).stdout;
    return { ok: /^audio\.context_in\s+float32\s+\[2,8\]\s+zeros$/m.test(out), detail: out.trim().split('\n').join(' | ') };
  });
  await check(label, 'helper on the rewrite == authors\' protocol on the original, every call', async () => {
    const got = await helperStream(required, 'audio', audio, batch, chunks, 'prob', () => ({}), { batch });
    const diff = Math.max(...got.outputs.map((o, i) => maxDiff(o, authors.outputs[i])), maxDiff([...got.state.state.data], authors.state));
    return { ok: diff <= 1e-6, detail: `max abs diff ${diff.toExponential(2)} over ${chunks.length} calls and the final state` };
  });
  await check(label, 'chunked with the context == one run on zeros + the whole audio', async () => {
    const whole = columns(audio, batch, audio.length / batch, 0, audio.length / batch, new Float32Array(batch * context));
    const r = await orig.run({ audio: tensor(whole.data, whole.dims), state: tensor(new Float32Array(2 * batch * 8), [2, batch, 8]) });
    const diff = Math.max(maxDiff([...r.prob.data], authors.outputs.at(-1)), maxDiff([...r.stateN.data], authors.state));
    return { ok: diff <= 1e-5, detail: `last output and final state, max abs diff ${diff.toExponential(2)}` };
  });
  await check(label, 'defaults mode, context unfed == the original on zeros + the chunk', async () => {
    const defaults = await ort.InferenceSession.create(rewrite(original, 'vad.defaults.onnx', 'defaults', ['--input-context', 'audio:1:8']), sessionOptions);
    const state = tensor(new Float32Array(2 * batch * 8), [2, batch, 8]);
    const x = columns(audio, batch, audio.length / batch, 0, 24);
    const zx = columns(audio, batch, audio.length / batch, 0, 24, new Float32Array(batch * context));
    const got = await defaults.run({ audio: tensor(x.data, x.dims), state });
    const want = await orig.run({ audio: tensor(zx.data, zx.dims), state });
    const diff = Math.max(maxDiff([...got.prob.data], [...want.prob.data]), maxDiff([...got.stateN.data], [...want.stateN.data]));
    return { ok: diff === 0 && !defaults.inputNames.includes('audio.context_in'), detail: `max abs diff ${diff}` };
  });
  await check(label, '--pack tensor carries the context: helper == authors\' protocol', async () => {
    const packed = rewrite(original, 'vad.packed.onnx', 'required', ['--input-context', 'audio:1:8', '--pack', 'tensor']);
    const got = await helperStream(packed, 'audio', audio, batch, chunks, 'prob');
    const diff = Math.max(...got.outputs.map((o, i) => maxDiff(o, authors.outputs[i])));
    return { ok: diff <= 1e-6, detail: `max abs diff ${diff.toExponential(2)}, carried: ${Object.keys(got.state)}` };
  });
  await check(label, 'negative control: without --input-context the calls differ', async () => {
    // Chunks of at least one frame (16 samples): without the context a shorter one has none.
    const long = [16, 24, 24, 32];
    const plain = rewrite(original, 'vad.plain.onnx', 'required');
    const got = await helperStream(plain, 'audio', audio, batch, long, 'prob', () => ({}), { batch });
    const want = await authorsProtocol(orig, names, audio, batch, long, context, [2, batch, 8]);
    const diff = Math.max(...got.outputs.map((o, i) => maxDiff(o, want.outputs[i])));
    return { ok: diff > 1e-4, detail: `max abs diff ${diff.toExponential(2)} (must be far above the 1e-6 above)` };
  });
  for (const [what, extra, input] of [
    ['N = 0', ['--input-context', 'audio:1:0'], original], ['an axis the input lacks', ['--input-context', 'audio:2:8'], original],
    ['a state input', ['--input-context', 'state:1:8'], original], ['not an input', ['--input-context', 'prob:1:8'], original],
    ['the input twice', ['--input-context', 'audio:1:8', '--input-context', 'audio:1:4'], original],
    ['another context on a rewrite', ['--input-context', 'audio:1:4'], required]]) {
    await check(label, `refused with exit 2: ${what}`, async () => {
      const r = cli.rewrite(input, join(workdir, 'refused.onnx'), 'required', extra);
      return { ok: r.status === 2 && !r.written, detail: `exit ${r.status}: ${lastLines(r.stderr).slice(0, 140)}` };
    });
  }
}

/** Silero VAD v5 on synthesized speech; the README's quick start as written. */
async function silero(realModels) {
  const label = 'silero_vad_v5';
  const original = join(realModels, 'silero_vad_v5.onnx');
  if (!existsSync(original)) {
    console.log(`SKIP  ${label}  ${original} is absent (the published models are test data outside the project)`);
    if (process.env.RNNSTATE_REQUIRE_REAL_MODELS === '1') tally.failed++;
    return;
  }
  const wav = makeSpeechWav(workdir);
  const { samples } = readWav(wav);
  const chunks = Array(Math.floor(samples.length / FRAME)).fill(FRAME);
  const audio = samples.subarray(0, chunks.length * FRAME);
  const sr = () => ({ sr: new ort.Tensor('int64', BigInt64Array.from([16000n]), []) });
  const names = { audio: 'input', state: 'state', output: 'output', stateOut: 'stateN' };
  const orig = await ort.InferenceSession.create(original, sessionOptions);
  const authors = await authorsProtocol(orig, names, audio, 1, chunks, CONTEXT, [2, 1, 128], sr);
  const contexted = rewrite(original, 'silero.js.onnx', 'required', ['--input-context', 'input:1:64']);
  const plain = rewrite(original, 'silero.plain.onnx', 'required');
  const speech = (outputs) => outputs.filter((o) => o[0] > 0.5).length;
  const silence = Math.floor(16000 / FRAME);  // the first and last second: sox's padding
  await check(label, 'rewrite of the rewrite: same bytes, check passes', async () => {
    const again = rewrite(contexted, 'silero.again.onnx', 'required', ['--input-context', 'input:1:64']);
    const checked = cli.run(['check', contexted]);
    return { ok: readFileSync(again).equals(readFileSync(contexted)) && checked.status === 0, detail: `check exit ${checked.status}` };
  });
  await check(label, 'helper on the rewrite == authors\' protocol (64 samples prepended by hand)', async () => {
    const got = await helperStream(contexted, 'input', audio, 1, chunks, 'output', sr, { batch: 1 });
    const diff = Math.max(...got.outputs.map((o, i) => maxDiff(o, authors.outputs[i])));
    const bare = await helperStream(plain, 'input', audio, 1, chunks, 'output', sr, { batch: 1 });
    const counts = `frames > 0.5 of ${chunks.length}: authors ${speech(authors.outputs)}, helper ${speech(got.outputs)}, ` +
      `bare 512-sample calls ${speech(bare.outputs)}`;
    const quiet = [...authors.outputs.slice(0, silence), ...authors.outputs.slice(-silence)].every((o) => o[0] <= 0.5);
    const ok = diff <= 1e-5 && speech(authors.outputs) >= 100 && speech(bare.outputs) * 10 < speech(authors.outputs) && quiet;
    return { ok, detail: `max abs diff ${diff.toExponential(2)}; ${counts}; silence silent ${quiet}` };
  });
  await check(label, 'the README quick start, as written, marks the speech', () => readmeQuickStart(original, speech(authors.outputs)));
}

/** Runs the README's quick start (its rewrite, recording and stream.mjs) in a fresh folder. */
async function readmeQuickStart(original, expected) {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## Prove a rewrite streams'));
  const dir = join(workdir, 'readme');
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  copyFileSync(original, join(dir, 'silero_vad.onnx'));  // what its curl line downloads
  symlinkSync(join(here, 'node_modules', 'onnxruntime-node'), join(dir, 'node_modules', 'onnxruntime-node'));
  symlinkSync(join(repo, 'tools', 'js', 'rnnstate-stream'), join(dir, 'node_modules', 'rnnstate-stream'));
  const commands = section.split('\n').filter((l) => /^(rnnstate rewrite|espeak-ng|sox) /.test(l)).map((l) => l.replace(/\s+#.*$/, ''));
  const script = section.slice(section.indexOf("cat > stream.mjs <<'EOF'\n") + 25, section.indexOf('\nEOF\n'));
  writeFileSync(join(dir, 'stream.mjs'), script + '\n');
  const sh = commands.map((c) => c.replace(/^rnnstate /, `${cli.binary} `)).join(' && ') + ' && node stream.mjs';
  const r = spawnSync('bash', ['-c', sh], { cwd: dir, encoding: 'utf8' });
  const printed = r.stdout.trim().split('\n').slice(-2).join('\n');  // stream.mjs's two lines
  const shown = section.match(/```console\n(speech in [^\n]*\n[^\n]*)\n```/)?.[1];
  const count = Number(printed.match(/^speech in (\d+) of/)?.[1]);
  const ok = r.status === 0 && commands.length === 3 && count === expected && printed === shown;
  return { ok, detail: `exit ${r.status}, ${printed.split('\n')[0]}; authors' protocol ${expected}; README shows it: ${printed === shown}${printed === shown ? "" : ` (printed ${JSON.stringify(printed)})`}${r.status ? `; ${lastLines(r.stderr)}` : ''}` };
}

await bundledModel();
await silero(resolve(args['real-models']));
console.log(`${tally.passed} passed, ${tally.failed} failed`);
process.exitCode = tally.failed ? 1 : 0;
