// The helper where onnxruntime-web differs from onnxruntime-node (issue 40), against fakes that do what
// onnxruntime-web does: proxy mode transfers the model bytes and every fed buffer to its worker (even when
// the run fails); WebGPU keeps outputs on the GPU until dispose(). Also the browser entry (no `node:`
// module reachable from it), URL objects, and metadata whose unnamed dimensions are null.
// Run: node --test tools/js/rnnstate-stream/test/   (a real browser: tests/browser/)
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { firstFeedSpecs, parseRnnstateMetadata, StreamingSession } from '../index.mjs';
import { entry, fakeSession, meta, model, ort, STATES, Tensor, x } from '../testing/fakes.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const packageDir = resolve(here, '..');

/** Transfers `buffer` away as postMessage does: it is detached (length 0) here afterwards. */
const transfer = (buffer) => structuredClone(buffer, { transfer: [buffer] });

/** onnxruntime-web in proxy mode: create() transfers the model's bytes, run() every fed buffer. */
function proxyOrt(session) {
  return {
    Tensor,
    env: { wasm: { proxy: true } },
    InferenceSession: {
      async create(bytes) {
        if (typeof bytes !== 'string') transfer(bytes.buffer);
        return session;
      },
    },
  };
}

/** A fake session that transfers every fed buffer (DataCloneError when one is detached already). */
function transferringSession(failing = () => false) {
  const session = fakeSession();
  const run = session.run;
  session.run = async (feeds) => {
    const copies = Object.fromEntries(Object.entries(feeds).map(([name, t]) => [name, new Tensor(t.type, t.data.slice(), t.dims)]));
    for (const t of Object.values(feeds)) transfer(t.data.buffer);
    if (failing()) throw new Error('the run failed');
    return run(copies);
  };
  return session;
}

test('proxy mode: create() from bytes, an ArrayBuffer or a Blob reads the metadata before the worker takes them', async () => {
  const bytes = () => model(entry('rnnstate', JSON.stringify(meta())));
  for (const source of [bytes(), bytes().buffer, new Blob([bytes()])]) {
    const stream = await StreamingSession.create(source, { ort: proxyOrt(fakeSession()) });
    assert.equal(stream.states.length, 1);
  }
});

test('proxy mode: a failed call leaves the carried state as it was', async () => {
  let fail = false;
  const session = transferringSession(() => fail);
  const stream = await StreamingSession.create(session, { ort: proxyOrt(session), metadata: meta() });
  const fresh = () => x([1]);  // data feeds are transferred too: one tensor per call
  assert.equal((await stream.run({ x: fresh() })).y.data[0], 1);
  fail = true;
  await assert.rejects(stream.run({ x: fresh() }), /the run failed/);
  fail = false;
  assert.deepEqual([...stream.state.h_in.data], [1]);
  assert.equal((await stream.run({ x: fresh() })).y.data[0], 2);
  assert.equal((await stream.run({ x: fresh() })).y.data[0], 3);
});

test('WebGPU: a state kept on the GPU is disposed when replaced, reset or released, never while carried', async () => {
  const disposed = [];
  const session = fakeSession();
  const run = session.run;
  let made = 0;
  session.run = async (feeds) => {
    const out = await run(feeds);
    const gpu = Object.assign(out.h_out, { location: 'gpu-buffer', id: made++ });
    gpu.dispose = () => disposed.push(gpu.id);
    return out;
  };
  const stream = await StreamingSession.create(session, { ort, metadata: meta() });
  for (let i = 0; i < 3; i++) await stream.run({ x: x([1]) });
  assert.deepEqual(disposed, [0, 1]);
  await stream.reset();
  assert.deepEqual(disposed, [0, 1, 2]);
  await stream.run({ x: x([1]) });
  await stream.release();
  assert.deepEqual(disposed, [0, 1, 2, 3]);
  // CPU tensors (what the caller may still hold) are never disposed.
  const cpu = await StreamingSession.create(fakeSession(), { ort, metadata: meta() });
  await cpu.run({ x: x([1]) });
  const held = cpu.state.h_in;
  held.dispose = () => assert.fail('a CPU state was disposed');
  await cpu.run({ x: x([1]) });
  await cpu.reset();
});

/** Every module reachable from `file` by import (static or dynamic, with a literal specifier). */
function importGraph(file, seen = new Map()) {
  if (seen.has(file)) return seen;
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*(?:\/\*.*?\*\/\s*)*)['"]([^'"]+)['"]/g)].map((m) => m[1]);
  seen.set(file, specifiers);
  for (const s of specifiers) if (s.startsWith('.')) importGraph(resolve(dirname(file), s), seen);
  return seen;
}

test('the browser entry: package.json sends bundlers there, and no module reachable from it imports node:', () => {
  const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  assert.equal(pkg.exports['.'].browser, './index.browser.mjs');
  assert.equal(pkg.browser, './index.browser.mjs');
  const graph = importGraph(join(packageDir, 'index.browser.mjs'));
  const nodeImports = [...graph].flatMap(([file, specifiers]) => specifiers.filter((s) => s.startsWith('node:')).map((s) => `${file}: ${s}`));
  assert.deepEqual(nodeImports, []);
  assert.ok(graph.size >= 4, 'the graph was walked');
  for (const file of graph.keys()) assert.ok(pkg.files.includes(file.slice(packageDir.length + 1)), `${file} is shipped`);
  // The Node.js entry does reach one, through a dynamic import: the walk sees it.
  assert.ok([...importGraph(join(packageDir, 'index.mjs')).values()].flat().includes('node:fs/promises'));
});

test('a URL object is accepted: file: URLs in Node.js, and the browser entry exports the same API', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rnnstate-url-'));
  const path = join(dir, 'm.onnx');
  writeFileSync(path, model(entry('rnnstate', JSON.stringify(meta()))));
  let opened;
  const nodeOrt = { Tensor, InferenceSession: { create: async (p) => { opened = p; return fakeSession(); } } };
  const stream = await StreamingSession.create(pathToFileURL(path), { ort: nodeOrt });
  assert.equal(opened, path);
  assert.equal(stream.states.length, 1);
  const browser = await import('../index.browser.mjs');
  assert.deepEqual(Object.keys(browser).sort(), Object.keys(await import('../index.mjs')).sort());
  // Without the Node.js entry's file reader a path is refused, naming what to give instead.
  await assert.rejects(browser.readRnnstateMetadata(path), /a model path can only be read in Node\.js/);
});

test('unnamed dimensions written as null are read; the batch option fills one on the batch axis', () => {
  const st = { ...STATES.states[0], shape: [2, null, 64], batch_axis: 1 };
  const parsed = parseRnnstateMetadata({ version: 1, states: [st] });
  assert.deepEqual(firstFeedSpecs(parsed.states, { batch: 1 })[0].shape, [2, 1, 64]);
  assert.throws(() => firstFeedSpecs(parsed.states), /batch dimension \(unnamed\) \(axis 1\).*\{batch: N\}/);
  const other = { ...st, shape: [null, 'batch', 64] };
  assert.throws(() => firstFeedSpecs([other], { batch: 1 }), /dimension 0 has no name/);
});
