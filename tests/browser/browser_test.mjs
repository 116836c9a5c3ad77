#!/usr/bin/env node
// The JavaScript helper in a real browser (issue 40): Debian's Chromium, headless, with onnxruntime-web
// (pinned in tests/browser/package-lock.json; tools/setup.sh installs both), pages served from 127.0.0.1.
//
//   node tests/browser/browser_test.mjs --rnnstate BINARY --models DIR --real-models DIR [--workdir DIR]
//       [--pages main,proxy,worker,esbuild,vite] [--chromium BINARY]
//
// Pages (tests/browser/pages), one after the other in one Chromium (each page's end is answered with the
// next page's path): `main` (the helper as shipped, through an import map: the bundled LSTM+GRU chunked ==
// whole from a URL object and packed from a Blob; Silero --input-context on speech.wav; the microphone,
// Chromium's fake capture device playing speech.wav, through the demo's AudioWorklet in 512-sample frames;
// WebGPU where offered, else a SKIP line), `proxy` (onnxruntime-web's proxy worker), `worker` (a module Web
// Worker), and the same checks bundled by esbuild (--platform=browser) and by Vite. Reference numbers come
// from onnxruntime-node (expected.json). Without ../shared/real-models the Silero checks are SKIP lines (a
// failure when RNNSTATE_REQUIRE_REAL_MODELS=1).
// Prints PASS/FAIL/SKIP lines and how long each part took; exit 1 on a failure.
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { lastLines, RnnstateCli } from '../e2e/lib/rnnstate-cli.mjs';
import { FRAME, makeSpeechWav, readWav } from '../e2e/lib/speech.mjs';
import { launchChromium, startServer } from './lib/harness.mjs';

const { values: args } = parseArgs({
  options: {
    rnnstate: { type: 'string' }, models: { type: 'string' }, 'real-models': { type: 'string' },
    workdir: { type: 'string' }, chromium: { type: 'string', default: '/usr/bin/chromium' }, pages: { type: 'string' },
  },
});
if (!args.rnnstate || !args.models || !args['real-models']) {
  console.error('usage: node browser_test.mjs --rnnstate BINARY --models DIR --real-models DIR [--workdir DIR]');
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const modules = join(here, 'node_modules');
for (const [what, path] of [['Chromium', args.chromium], ['onnxruntime-web', join(modules, 'onnxruntime-web')],
  ['esbuild', join(modules, 'esbuild')], ['vite', join(modules, 'vite')]]) {
  if (!existsSync(path)) {
    console.error(`FAIL  setup  ${what} is missing (${path}): run tools/setup.sh`);
    process.exit(1);
  }
}
const workdir = args.workdir ? resolve(args.workdir) : mkdtempSync(join(tmpdir(), 'rnnstate-browser-'));
const site = join(workdir, 'site');
mkdirSync(site, { recursive: true });
const cli = new RnnstateCli(resolve(args.rnnstate));
const started = Date.now();
const times = [];
const timed = async (what, fn) => {
  const t = Date.now();
  const result = await fn();
  times.push(`${what} ${((Date.now() - t) / 1000).toFixed(1)} s`);
  return result;
};

function rewrite(input, name, extra) {
  const r = cli.rewrite(input, join(site, name), 'required', extra);
  if (r.status !== 0) throw new Error(`'${r.command}' exited ${r.status}: ${lastLines(r.stderr)}`);
}

/** The models, the speech file and onnxruntime-node's numbers for the pages (site/expected.json). */
async function prepareSite() {
  const ort = createRequire(join(repo, 'tests', 'e2e', 'package.json'))('onnxruntime-node');
  const lstm = join(resolve(args.models), 'torch', 'lstm_gru_dyn.onnx');
  copyFileSync(lstm, join(site, 'lstm_gru_dyn.onnx'));
  rewrite(lstm, 'lstm.required.onnx', []);
  rewrite(lstm, 'lstm.packed.onnx', ['--pack', 'tensor']);
  const dims = [8, 2, 4];
  const x = Array.from({ length: dims[0] * dims[1] * dims[2] }, (_, i) => Math.sin(i * 0.7) * 0.9);
  const session = await ort.InferenceSession.create(lstm);
  const whole = await session.run({ x: new ort.Tensor('float32', Float32Array.from(x), dims) });
  const expected = { lstm: { x, dims, chunks: [3, 1, 4], y: [...whole.y.data] }, silero: null };
  const silero = join(resolve(args['real-models']), 'silero_vad_v5.onnx');
  const wav = makeSpeechWav(site);
  if (existsSync(silero)) {
    copyFileSync(silero, join(site, 'silero_vad_v5.onnx'));
    rewrite(silero, 'silero.js.onnx', ['--input-context', 'input:1:64']);
    expected.silero = await authorsProtocol(ort, silero, readWav(wav).samples);
  }
  writeFileSync(join(site, 'expected.json'), JSON.stringify(expected));
  return expected;
}

/** Silero's authors' protocol on the original in onnxruntime-node: 64 samples of the frame before in front. */
async function authorsProtocol(ort, path, samples) {
  const session = await ort.InferenceSession.create(path);
  let state = new ort.Tensor('float32', new Float32Array(256), [2, 1, 128]);
  let context = new Float32Array(64);
  const outputs = [];
  for (let t = 0; t + FRAME <= samples.length; t += FRAME) {
    const input = new Float32Array(FRAME + 64);
    input.set(context);
    input.set(samples.subarray(t, t + FRAME), 64);
    const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
    const r = await session.run({ input: new ort.Tensor('float32', input, [1, input.length]), state, sr });
    outputs.push(r.output.data[0]);
    state = r.stateN;
    context = input.slice(input.length - 64);
  }
  return { outputs, speech: outputs.filter((p) => p > 0.5).length };
}

/** esbuild (--platform=browser) and Vite bundles of pages/bundle-entry.mjs, from bare imports. */
async function bundle() {
  const source = join(workdir, 'bundle-src');
  mkdirSync(join(workdir, 'node_modules'), { recursive: true });
  symlinkSync(join(modules, 'onnxruntime-web'), join(workdir, 'node_modules', 'onnxruntime-web'));
  symlinkSync(join(repo, 'tools', 'js', 'rnnstate-stream'), join(workdir, 'node_modules', 'rnnstate-stream'));
  cpSync(join(here, 'pages'), source, { recursive: true });
  const page = (script) => `<!doctype html><meta charset="utf-8"><script type="module" src="${script}"></script>\n`;
  const esbuild = await import(join(modules, 'esbuild', 'lib', 'main.js'));
  await timed('esbuild', () => esbuild.build({ entryPoints: [join(source, 'bundle-entry.mjs')], bundle: true, platform: 'browser',
    format: 'esm', target: 'esnext', outfile: join(workdir, 'esbuild', 'bundle.js'), logLevel: 'error' }));
  writeFileSync(join(workdir, 'esbuild', 'index.html'), page('/esbuild/bundle.js'));
  writeFileSync(join(source, 'index.html'), page('./bundle-entry.mjs'));
  const vite = await import(join(modules, 'vite', 'dist', 'node', 'index.js'));
  await timed('vite build', () => vite.build({ root: source, base: '/vite/', logLevel: 'error', configFile: false,
    build: { outDir: join(workdir, 'vite'), emptyOutDir: true, target: 'esnext', chunkSizeWarningLimit: 100000 } }));
}

/**
 * Runs page `name` in `browser` (opened on its path, or arrived at from the page before) and collects its
 * results until it ends (90 s at most); its end is answered with `next`, the path of the page to go to in
 * the same Chromium (one process for all pages: a start costs seconds of CPU). Returns the results and
 * whether the browser can go on.
 */
async function runPage(browser, pages, name, next) {
  const results = [];
  // The deadline is cleared once the page ends: a pending 90 s timer keeps Node alive after the last page
  // (ctest measured 181 s for a suite whose pages took 99 s).
  let deadline;
  const ended = await Promise.race([
    new Promise((done) => pages.set(name, (report) => {
      if (!report.done) return void results.push(report.result);
      done('');
      return next ?? 'ok';
    })),
    new Promise((done) => { deadline = setTimeout(() => done('no report of its end in 90 s'), 90000); }),
    browser.exited.then(() => 'Chromium exited'),
  ]);
  clearTimeout(deadline);
  if (ended) results.push({ name: 'the page ends', ok: false, detail: ended });
  if (results.some((r) => r.ok === false)) console.log(`Chromium's last lines:\n${browser.log().split('\n').slice(-15).join('\n')}`);
  return { results, goesOn: !ended };
}

const tally = { passed: 0, failed: 0, skipped: 0 };
function print(page, result) {
  const status = result.skip ? 'SKIP' : result.ok ? 'PASS' : 'FAIL';
  tally[result.skip ? 'skipped' : result.ok ? 'passed' : 'failed']++;
  const seconds = result.seconds === undefined ? '' : `  (${result.seconds.toFixed(1)} s)`;
  console.log(`${status}  ${page}  ${result.name}${result.detail ? `  ${result.detail}` : ''}${seconds}`);
}

const expected = await timed('models, speech and expected numbers', prepareSite);
if (!expected.silero) {
  print('setup', { skip: true, name: 'Silero', detail: 'silero_vad_v5.onnx is absent from --real-models' });
  if (process.env.RNNSTATE_REQUIRE_REAL_MODELS === '1') tally.failed++;
}
try {
  await bundle();
} catch (err) {
  print('bundles', { ok: false, name: 'esbuild and Vite bundle the helper for the browser', detail: err.message.split('\n')[0] });
}
const pages = new Map();  // page name -> what takes its reports
const server = await startServer({
  '/site/': site, '/pages/': join(here, 'pages'), '/helper/': join(repo, 'tools', 'js', 'rnnstate-stream'),
  '/demo/': join(repo, 'tools', 'js', 'vad-demo'), '/ort/': join(modules, 'onnxruntime-web', 'dist'),
  '/esbuild/': join(workdir, 'esbuild'), '/vite/': join(workdir, 'vite'),
}, (report) => pages.get(report.page)?.(report));
// Every page in one Chromium, one after the other; after a page that did not end, a new Chromium.
const order = [['main', '/pages/main.html'], ['proxy', '/pages/proxy.html'], ['worker', '/pages/worker.html'],
  ['esbuild', '/esbuild/index.html'], ['vite', '/vite/index.html']]
  .filter(([name]) => !args.pages || args.pages.split(',').includes(name));
let browser = null;
try {
  for (const [i, [name, path]] of order.entries()) {
    browser ??= launchChromium(`${server.url}${path}`, { audioFile: join(site, 'speech.wav'), binary: args.chromium });
    const { results, goesOn } = await timed(`page ${name}`, () => runPage(browser, pages, name, order[i + 1]?.[1]));
    for (const result of results) print(name, result);
    if (!goesOn) {
      await browser.stop();
      browser = null;
    }
  }
} finally {
  await browser?.stop();
  await server.close();
}
console.log(`times: ${times.join(', ')}; total ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`${tally.passed} passed, ${tally.failed} failed, ${tally.skipped} skipped`);
process.exitCode = tally.failed ? 1 : 0;
