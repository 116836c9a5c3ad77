// `rnnstate-stream verify` (tools/js/rnnstate-stream/verify.mjs and cli.mjs) in onnxruntime-node:
//   - every streaming model of models/ (chunked by its manifest entry), rewritten in defaults mode and
//     in required mode, passes: every output and final state within tolerance;
//   - broken rewrites fail it: the outputs of two state pairs swapped in the metadata, and a state whose
//     recorded output is its input passed through (the state never moves on: not fed back);
//   - models whose metadata marks states not streamable are refused (exit 4, with the reason);
//   - the command line: exit codes, --json, the time axis found without --time-axis, --seed, usage errors;
//   - models with no time axis inside one call (models/frame: one block of samples per call, as Silero
//     VAD) are checked call by call: the checks that apply run (first call, unfed, the state round trip
//     of the authors' state), the others say why not, and broken rewrites (h and c rows of the returned
//     state swapped, a state never moved on) fail; a --time-axis given there chunks as asked.
//
// Usage: node stream_verify_test.mjs --rnnstate BIN --models DIR --manifest FILE
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { readRnnstateMetadata, StreamingSession, stateValues } from '../../tools/js/rnnstate-stream/index.mjs';
import { maxAbsDiff } from '../../tools/js/rnnstate-stream/tensors.mjs';
import { verifyStreaming, VerifyError } from '../../tools/js/rnnstate-stream/verify.mjs';
import { buildFeeds, loadManifest, normalizeEntry } from './lib/manifest.mjs';
import { readModel, writeModel } from './lib/onnx-edit.mjs';
import { RnnstateCli, lastLines } from './lib/rnnstate-cli.mjs';
import { Results, suiteArgs } from './lib/suite.mjs';

// One thread per session: tiny models, and a pool of one thread per core only spins against other suites.
const SESSION_OPTIONS = { logSeverityLevel: 3, intraOpNumThreads: 1, interOpNumThreads: 1 };
const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tools', 'js', 'rnnstate-stream', 'cli.mjs');

const results = new Results();

const worst = (result) => Math.max(0, ...result.compared.map((c) => c.max_abs));

/** The verify options of a manifest entry: its chunks, time axes, dims and data (ints, pinned ranges). */
async function optionsOf(entry, original, rewritten) {
  const session = await ort.InferenceSession.create(original, SESSION_OPTIONS);
  try {
    const feeds = buildFeeds(session, entry, `verify|${entry.file}`);
    return {
      ort, original, rewritten, chunks: entry.chunks, timeAxes: entry.seqAxes, inputs: feeds, dims: entry.dims,
      atol: entry.tolerance ?? 1e-5, sessionOptions: SESSION_OPTIONS,
    };
  } finally {
    await session.release();
  }
}

/** A copy of `file` whose metadata feeds state output `a` back to the input of `b`, and `b`'s to `a`'s. */
function swappedPairs(file, out, a, b) {
  const model = readModel(file);
  const entry = model.metadataProps.find((p) => p.key === 'rnnstate');
  const doc = JSON.parse(entry.value);
  for (const st of doc.states) {
    if (st.output === a) st.output = b;
    else if (st.output === b) st.output = a;
  }
  entry.value = JSON.stringify(doc);
  writeModel(model, out);
}

/** A copy of `file` whose state input `input` comes back unchanged (Identity): the state is never carried on. */
function stalePair(file, out, input) {
  const model = readModel(file);
  const entry = model.metadataProps.find((p) => p.key === 'rnnstate');
  const doc = JSON.parse(entry.value);
  const output = doc.states.find((st) => st.input === input).output;
  const stale = `${input}.stale`;
  model.graph.node.push({ opType: 'Identity', input: [input], output: [stale], name: stale });
  const declared = model.graph.output.find((o) => o.name === output);
  model.graph.output.push({ ...declared, name: stale });
  for (const st of doc.states) if (st.input === input) st.output = stale;  // every pair of that tensor
  entry.value = JSON.stringify(doc);
  writeModel(model, out);
}

/**
 * The state tensors a broken hand-over is seen through: from one run of the required model on the whole
 * sequence, the outputs whose final value is not all zeros (a state a branch never reaches stays as fed, and
 * no chunking can tell it was dropped), and two of one type and shape whose values differ (to swap).
 */
async function brokenCandidates(options) {
  const session = await ort.InferenceSession.create(options.rewritten, SESSION_OPTIONS);
  try {
    const metadata = await readRnnstateMetadata(options.rewritten);
    const stream = new StreamingSession(session, metadata, { ort, dims: options.dims, stateOutputs: true });
    const feeds = Object.fromEntries(stream.dataInputNames.map((n) => [n, options.inputs[n]]));
    const outputs = await stream.run(feeds);
    // Zeros first: a state whose first feed is empty takes the model's own default when it comes back
    // empty, which may read the same state from another tensor the model carries (its authors' own).
    const groups = stateValues(metadata).filter((g) => outputs[g.output].data.some((v) => Number(v) !== 0))
      .sort((a, b) => (a.init === 'zeros' ? 0 : 1) - (b.init === 'zeros' ? 0 : 1));
    let swap = null;
    for (let i = 0; i < groups.length && !swap; i++) {
      for (let j = i + 1; j < groups.length && !swap; j++) {
        const [a, b] = [outputs[groups[i].output], outputs[groups[j].output]];
        if (a.type === b.type && a.dims.join() === b.dims.join() && maxAbsDiff(a, b).diff > 0) swap = [groups[i], groups[j]];
      }
    }
    return { stale: groups[0] ?? null, swap };
  } finally {
    await session.release();
  }
}

/** A copy of `file` whose state output `output` [2, batch, H] comes back with its two rows swapped. */
function swappedRows(file, out, output) {
  const model = readModel(file);
  const producer = model.graph.node.find((n) => n.output.includes(output));
  const raw = `${output}.unswapped`;
  producer.output = producer.output.map((o) => (o === output ? raw : o));
  const tensor = { dims: [2], dataType: 7, int64Data: [1, 0] };
  model.graph.node.push({ opType: 'Constant', output: ['swap.rows'], name: 'swap.rows',
    attribute: [{ name: 'value', type: 4, t: tensor }] });
  model.graph.node.push({ opType: 'Gather', input: [raw, 'swap.rows'], output: [output], name: 'swap.gather' });
  writeModel(model, out);
}

/** verify on models with no time axis inside one call: the calls are checked, broken rewrites fail. */
async function callByCall(cli, models, work) {
  const x = new ort.Tensor('float32', Float32Array.from({ length: 2 * 64 }, (_, i) => Math.sin(i * 0.37)), [2, 64]);
  const base = { ort, inputs: { x }, batch: 2, sessionOptions: SESSION_OPTIONS };
  const ran = (result) => result.checks.filter((c) => c.ran).map((c) => c.check).join(', ');
  const authors = join(models, 'frame', 'frame_lstm_state.onnx');
  const added = join(models, 'frame', 'frame_lstm.onnx');
  for (const [original, mode] of [[authors, null], [authors, 'required'], [added, null], [added, 'required']]) {
    const label = `${original.split('/').slice(-2).join('/')} ${mode ?? 'defaults'}`;
    const rewritten = join(work, `frame.${mode ?? 'defaults'}.${original.endsWith('state.onnx') ? 'authors' : 'added'}.onnx`);
    cli.rewrite(original, rewritten, mode, []);
    const result = await verifyStreaming({ ...base, original, rewritten });
    const authorsOwn = original === authors;
    const want = authorsOwn ? 'first call, state round trip' : mode ? 'first call' : 'first call, unfed';
    results.report(result.ok && result.mode === 'calls' && ran(result) === want &&
      result.compared.length === (authorsOwn ? 6 : mode ? 1 : 2), label, 'calls checked',
    `ok ${result.ok}, ran: ${ran(result)}, ${result.compared.length} compared, max_abs=${worst(result)}`);
  }
  const rewritten = join(work, 'frame.required.authors.onnx');
  swappedRows(rewritten, join(work, 'frame.rows.onnx'), 'stateN');
  stalePair(rewritten, join(work, 'frame.stale.onnx'), 'state');
  for (const [what, file] of [['h and c rows swapped', 'frame.rows.onnx'], ['state not fed back', 'frame.stale.onnx']]) {
    const result = await verifyStreaming({ ...base, original: authors, rewritten: join(work, file) });
    const failedOn = result.compared.filter((c) => !c.ok).map((c) => `${c.name}@${c.call}`);
    results.report(!result.ok && failedOn.length > 0, 'frame/frame_lstm_state', `broken: ${what}`,
      result.ok ? 'NOT detected' : `detected: ${failedOn.join(' ')}`);
  }
  // The command line: random data of a given shape (the dims have no names), the checks listed.
  const inputs = join(work, 'frame.inputs.json');
  writeFileSync(inputs, JSON.stringify({ x: { dims: [1, 64] } }));
  const ok = runCli(['verify', authors, rewritten, '--inputs', inputs, '--calls', '4']);
  results.report(ok.status === 0 && /^ {2}n\/a {3}chunked = whole: the rewrite records no time axis inside one call/m.test(ok.stdout) &&
    /^ {2}ran {3}state round trip: calls 2\.\.4/m.test(ok.stdout) && /^PASS: 8 values of 4 calls/m.test(ok.stdout),
  'cli', 'one frame per call: exit 0, the checks listed', `exit ${ok.status} ${lastLines(ok.stdout + ok.stderr)}`);
  const broken = runCli(['verify', authors, join(work, 'frame.rows.onnx'), '--inputs', inputs]);
  results.report(broken.status === 1 && /^FAIL: /m.test(broken.stdout), 'cli', 'one frame per call, broken: exit 1', `exit ${broken.status}`);
  const bare = runCli(['verify', authors, rewritten]);
  results.report(bare.status === 4 && /dimension \(unnamed\) on axis 0 has no value: give the input in --inputs/.test(bare.stderr),
    'cli', 'unnamed dims without --inputs: exit 4, says what to give', bare.stderr.trim());
}

function runCli(args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function main() {
  const args = suiteArgs('usage: node stream_verify_test.mjs --rnnstate BIN --models DIR --manifest FILE',
    { rnnstate: { type: 'string' }, models: { type: 'string' }, manifest: { type: 'string' } }, ['rnnstate', 'models', 'manifest']);
  const cli = new RnnstateCli(args.rnnstate);
  const work = mkdtempSync(join(tmpdir(), 'rnnstate-verify-'));
  try {
    const entries = loadManifest(args.manifest).map(normalizeEntry);
    const chunked = (entry) => entry.ort && entry.chunkMode === 'seq' && Array.isArray(entry.chunks) && entry.expectExit === 0;
    const filesOf = (entry, index) => ({ original: join(args.models, entry.file), defaults: join(work, `${index}.defaults.onnx`),
      required: join(work, `${index}.required.onnx`) });
    // Every rewrite and report below, in a few batched rnnstate calls ahead of the models (RnnstateCli).
    const files = entries.map((entry, i) => (chunked(entry) ? { ...filesOf(entry, i + 1), args: entry.rewriteArgs } : null)).filter(Boolean);
    cli.prefetchRewrites(files.flatMap((f) => [{ input: f.original, output: f.defaults, mode: null, args: f.args },
      { input: f.original, output: f.required, mode: 'required', args: f.args }]));
    cli.prefetchReports(files.map((f) => f.defaults).filter((f) => existsSync(f)));
    let index = 0;
    let negatives = 0;
    for (const entry of entries) {
      index++;
      if (!chunked(entry)) continue;
      const label = entry.file;
      const { original, defaults, required } = filesOf(entry, index);
      const d = cli.rewrite(original, defaults, null, entry.rewriteArgs);
      const r = cli.rewrite(original, required, 'required', entry.rewriteArgs);
      if (d.status !== 0 || r.status !== 0 || !d.written) {
        results.report(false, label, 'rewrite', lastLines(d.stderr + r.stderr));
        continue;
      }
      const pairs = cli.report(defaults).pairs;
      const streamable = pairs.length > 0 && pairs.every((p) => p.streamable);
      const carried = pairs.every((p) => (p.carried ?? p.streamable) !== false);
      // The analysis and the manifest (what ONNX Runtime was shown to do) agree on every model.
      if (pairs.length > 0) {
        results.report(streamable === entry.streaming, label, 'metadata agrees',
          `streamable ${streamable}, manifest streaming ${entry.streaming}`);
      }
      if (!entry.streaming) {
        if (streamable || pairs.length === 0) continue;
        try {
          const result = await verifyStreaming(await optionsOf(entry, original, defaults));
          // Carried states in a model whose operators make chunks differ: verify runs and shows it.
          results.report(carried && !result.ok && Boolean(result.predicted_difference), label, 'shows the difference',
            `ok ${result.ok}, max_abs=${worst(result)}, metadata: ${result.predicted_difference}`);
        } catch (err) {
          // States no recurrence carries are refused; a chunk too short for a window fails in ONNX Runtime.
          const refused = err instanceof VerifyError && err.code === 4 && /not carried/.test(err.message);
          const cannotRun = carried && err instanceof VerifyError && err.code === 3;
          results.report(refused === !carried && (refused || cannotRun), label, carried ? 'shows the difference' : 'refuses not carried',
            err.message.slice(0, 100));
        }
        continue;
      }
      for (const [mode, file] of [['defaults', defaults], ['required', required]]) {
        try {
          const result = await verifyStreaming(await optionsOf(entry, original, file));
          const bad = result.compared.filter((c) => !c.ok).map((c) => `${c.name} ${c.max_abs}${c.why ? ` (${c.why})` : ''}`);
          results.report(result.ok, label, `verify ${mode}`, `max_abs=${worst(result)} ${result.compared.length} compared ${bad.join('; ')}`);
        } catch (err) {
          results.report(false, label, `verify ${mode}`, err.message);
        }
      }
      // Broken rewrites must fail: a hand-over that carries the wrong state, or none.
      const options = await optionsOf(entry, original, required);
      let candidates;
      try {
        candidates = await brokenCandidates(options);
      } catch (err) {
        results.report(false, label, 'broken rewrites', err.message);
        continue;
      }
      const { stale, swap } = candidates;
      const broken = [];
      if (swap) {
        swappedPairs(required, join(work, `${index}.swapped.onnx`), swap[0].output, swap[1].output);
        broken.push([`swapped ${swap[0].output}<->${swap[1].output}`, join(work, `${index}.swapped.onnx`)]);
      }
      if (stale) {
        stalePair(required, join(work, `${index}.stale.onnx`), stale.input);
        broken.push([`${stale.input} not fed back`, join(work, `${index}.stale.onnx`)]);
      }
      for (const [what, file] of broken) {
        try {
          const result = await verifyStreaming({ ...options, rewritten: file });
          results.report(!result.ok, label, `broken: ${what}`, result.ok ? 'NOT detected' : `detected, max_abs=${worst(result)}`);
          negatives++;
        } catch (err) {
          results.report(false, label, `broken: ${what}`, err.message);
        }
      }
    }
    results.report(negatives >= 10, 'models/', 'broken rewrites tried', `${negatives}`);
    await callByCall(cli, args.models, work);

    // The command line, on a batch-first PyTorch export (time axis found: x [batch, seq, 3] -> seq).
    const torch = join(args.models, 'torch', 'lstm2_bf_dyn.onnx');
    const good = join(work, 'cli.good.onnx');
    cli.rewrite(torch, good, null, []);
    swappedPairs(good, join(work, 'cli.swapped.onnx'), 'rnn.LSTM.h_out', 'rnn.LSTM_1.c_out');
    const ok = runCli(['verify', torch, good, '--json', join(work, 'r.json')]);
    const json = JSON.parse(readFileSync(join(work, 'r.json'), 'utf8'));
    results.report(ok.status === 0 && /^PASS: /m.test(ok.stdout) && json.ok === true && json.time_axes.x === 1 &&
      json.chunks.join(',') === '1,2,5' && json.compared.length === 7, 'cli', 'pass, --json, time axis found',
      `exit ${ok.status} ${lastLines(ok.stderr)}`);
    const seeded = runCli(['verify', torch, good, '--seed', '5', '--length', '9', '--batch', '3', '--json', '-']);
    const seededJson = seeded.status === 0 ? JSON.parse(seeded.stdout) : {};
    results.report(seeded.status === 0 && seededJson.length === 9 && seededJson.batch === 3 &&
      seededJson.chunks.reduce((a, b) => a + b, 0) === 9, 'cli', '--seed random chunks', `exit ${seeded.status} ${seeded.stdout.slice(0, 80)}`);
    const swapped = runCli(['verify', torch, join(work, 'cli.swapped.onnx'), '--chunks', '3,5']);
    results.report(swapped.status === 1 && /^FAIL: /m.test(swapped.stdout), 'cli', 'swapped pairs: exit 1', `exit ${swapped.status}`);
    const reverse = join(work, 'cli.reverse.onnx');
    cli.rewrite(join(args.models, 'handbuilt', 'gru_reverse.onnx'), reverse, null, []);
    const refused = runCli(['verify', join(args.models, 'handbuilt', 'gru_reverse.onnx'), reverse]);
    results.report(refused.status === 4 && /not carried/.test(refused.stderr), 'cli', 'not streamable: exit 4', refused.stderr.trim());
    const plain = runCli(['verify', torch, torch]);
    results.report(plain.status === 3 && /no "rnnstate" metadata/.test(plain.stderr), 'cli', 'no metadata: exit 3', plain.stderr.trim());
    const usage = runCli(['verify', torch, good, '--chunks', '2,x']);
    results.report(usage.status === 2, 'cli', 'usage error: exit 2', usage.stderr.split('\n')[0]);
    const wrongAxis = runCli(['verify', torch, good, '--time-axis', 'nope:1']);
    results.report(wrongAxis.status === 2 && /not a data input/.test(wrongAxis.stderr), 'cli', '--time-axis of no input: exit 2', wrongAxis.stderr.split('\n')[0]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  results.finish();
}

results.run(main);
