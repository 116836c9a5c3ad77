#!/usr/bin/env node
// The JavaScript helper's own cost per call in a browser (issue 40): Silero VAD v5 rewritten with
// `--input-context input:1:64`, one 512-sample frame a call, in headless Chromium with onnxruntime-web
// (one wasm thread), through StreamingSession.run() against session.run() fed by hand; alternating rounds,
// medians (tests/browser/pages/bench.mjs). Needs what the browser suite needs (tools/setup.sh).
//
//   node tools/bench_browser.mjs [--rnnstate build/rnnstate] [--silero ../shared/real-models/silero_vad_v5.onnx]
//       [--rounds 15] [--calls 200] [--json FILE]
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { RnnstateCli } from '../tests/e2e/lib/rnnstate-cli.mjs';
import { makeSpeechWav } from '../tests/e2e/lib/speech.mjs';
import { launchChromium, startServer } from '../tests/browser/lib/harness.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    rnnstate: { type: 'string', default: join(repo, 'build', 'rnnstate') },
    silero: { type: 'string', default: join(repo, '..', 'shared', 'real-models', 'silero_vad_v5.onnx') },
    rounds: { type: 'string', default: '15' }, calls: { type: 'string', default: '200' }, json: { type: 'string' },
  },
});
const site = join(mkdtempSync(join(tmpdir(), 'rnnstate-bench-')), 'site');
mkdirSync(site);
copyFileSync(resolve(args.silero), join(site, 'silero_vad_v5.onnx'));
const r = new RnnstateCli(resolve(args.rnnstate)).rewrite(resolve(args.silero), join(site, 'silero.js.onnx'), 'required',
  ['--input-context', 'input:1:64']);
if (r.status !== 0) throw new Error(`${r.command}: ${r.stderr}`);
makeSpeechWav(site);

let finish;
const finished = new Promise((done) => { finish = done; });
let result = null;
const server = await startServer({
  '/site/': site, '/pages/': join(repo, 'tests', 'browser', 'pages'), '/helper/': join(repo, 'tools', 'js', 'rnnstate-stream'),
  '/ort/': join(repo, 'tests', 'browser', 'node_modules', 'onnxruntime-web', 'dist'),
}, (report) => (report.done ? finish() : (result = report.result)));
const browser = launchChromium(`${server.url}/pages/bench.html?rounds=${args.rounds}&calls=${args.calls}`);
await Promise.race([finished, browser.exited]);
await browser.stop();
await server.close();
if (!result?.ok) {
  console.error(`bench failed: ${result?.detail ?? 'no result'}`);
  process.exit(1);
}
const overhead = result.helper_ms - result.by_hand_ms;
const us = (ms) => `${(ms * 1000).toFixed(1)} us/call`;
const pct = (ms) => `${((ms / result.by_hand_ms) * 100).toFixed(1)} % of session.run fed by hand`;
console.log(`Silero v5 + --input-context, ${result.calls} calls x ${result.rounds} rounds (medians of the round means), onnxruntime-web ${result.ort}:`);
console.log(`  session.run fed by hand            ${us(result.by_hand_ms)}`);
console.log(`  StreamingSession.run               ${us(result.helper_ms)}  (difference ${us(overhead)}, ${pct(overhead)})`);
console.log(`  the helper's own code, per call    ${us(result.own_ms)}  (${pct(result.own_ms)}; its session.run took ${us(result.inner_run_ms)})`);
if (args.json) writeFileSync(args.json, JSON.stringify({ ...result, difference_ms: overhead }, null, 1));
