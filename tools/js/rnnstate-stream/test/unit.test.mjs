// Unit tests of rnnstate-stream without onnxruntime: the metadata reader on hand-encoded protobuf, the
// metadata checks, the first-feed rules, and StreamingSession's bookkeeping against a fake session.
// Run: node --test tools/js/rnnstate-stream/test/   (ONNX Runtime end to end: tests/e2e/stream_helper_test.mjs)
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  firstFeedSpecs, parseRnnstateMetadata, readMetadataProps, readRnnstateMetadata, StreamingSession,
} from '../index.mjs';
import { entry, fakeSession, field, lengthDelimited, meta, model, ort, STATES, Tensor, varint, bytesOf, x } from '../testing/fakes.mjs';

test('metadata_props are read after a large graph, other fields of every wire type skipped', async () => {
  const graph = new Array(100000).fill(7);
  const bytes = model(
    field(1, 0, varint(8)),                          // ir_version (varint)
    lengthDelimited(2, bytesOf('pytorch')),          // producer_name
    entry('first', 'é ✓'),                           // metadata before the graph (UTF-8)
    lengthDelimited(7, graph),                       // graph: skipped by its length
    field(99, 5, [1, 2, 3, 4]), field(98, 1, [1, 2, 3, 4, 5, 6, 7, 8]), // unknown fixed32 / fixed64
    entry('rnnstate', JSON.stringify(STATES)),
  );
  assert.deepEqual(await readMetadataProps(bytes), [{ key: 'first', value: 'é ✓' }, { key: 'rnnstate', value: JSON.stringify(STATES) }]);
  assert.deepEqual(await readRnnstateMetadata(bytes.buffer), STATES);
  assert.deepEqual(await readRnnstateMetadata(new Blob([bytes])), STATES);
});

test('reading skips the graph: a few bytes per top-level field are read', async () => {
  const bytes = model(field(1, 0, varint(8)), lengthDelimited(7, new Array(1 << 20).fill(1)), entry('rnnstate', '{}'));
  let read = 0;
  const source = { size: bytes.length, read: async (offset, length) => { read += length; return bytes.subarray(offset, offset + length); } };
  assert.equal((await readMetadataProps(source)).length, 1);
  assert.ok(read < 100, `${read} bytes read`);
});

test('a model without rnnstate metadata gives null; two rnnstate entries are refused', async () => {
  assert.equal(await readRnnstateMetadata(model(entry('other', 'x'))), null);
  await assert.rejects(readRnnstateMetadata(model(entry('rnnstate', '{}'), entry('rnnstate', '{}'))), /2 "rnnstate" metadata entries/);
});

test('truncated or non-protobuf bytes are refused', async () => {
  const good = model(lengthDelimited(7, [1, 2, 3]), entry('rnnstate', JSON.stringify(STATES)));
  await assert.rejects(readMetadataProps(good.subarray(0, good.length - 3)), /truncated|past the end/);
  await assert.rejects(readMetadataProps(model(field(5, 3, []))), /wire type 3/);
  await assert.rejects(readMetadataProps(model([0x80])), /truncated/);
  await assert.rejects(readMetadataProps(42), /expected the model/);
});

test('metadata checks: older metadata, versions, unknown keys and kinds', () => {
  const st = STATES.states[0];
  const { dtype, ...old } = st;
  assert.throws(() => parseRnnstateMetadata({ version: 1, states: [old] }), /no dtype.*rewrite the model again/);
  assert.throws(() => parseRnnstateMetadata({ version: 2, states: [] }), /version 2/);
  assert.throws(() => parseRnnstateMetadata('{'), /not JSON/);
  assert.throws(() => parseRnnstateMetadata({ version: 1, states: [{ ...st, init: 'learned' }] }), /unknown "init"/);
  assert.throws(() => parseRnnstateMetadata({ version: 1, states: [{ ...st, batch_axis: 3 }] }), /batch_axis/);
  const future = { version: 1, future: true, states: [{ ...st, kind: 'x', someday: [1] }] };
  assert.equal(parseRnnstateMetadata(JSON.stringify(future)).states[0].kind, 'x');
});

test('first feeds: zeros of the shape, empty with batch 0, one per stacked input', () => {
  const states = [
    { ...STATES.states[0] },
    { ...STATES.states[0], input: 'c_in', output: 'c_out', shape: [1, 3, 2], init: 'empty' },
    { ...STATES.states[0], input: 'h0', output: 'h_n', shape: [2, 'batch', 'hidden'], rows: [0, 1] },
    { ...STATES.states[0], input: 'h0', output: 'h_n', shape: [2, 'batch', 'hidden'], rows: [1, 2] },
  ];
  const feeds = firstFeedSpecs(states, { dims: { batch: 4, hidden: 5 } });
  assert.deepEqual(feeds.map(({ input, shape, init }) => ({ input, shape, init })), [
    { input: 'h_in', shape: [1, 4, 2], init: 'zeros' },
    { input: 'c_in', shape: [1, 0, 2], init: 'empty' },
    { input: 'h0', shape: [2, 4, 5], init: 'zeros' },
  ]);
  // A loop's state without a batch axis (batch_axis -1) is empty along axis 0; a scalar cannot be empty.
  const unbatched = { ...STATES.states[0], input: 'q_in', output: 'q_out', shape: [4, 2], batch_axis: -1, init: 'empty' };
  assert.deepEqual(firstFeedSpecs([unbatched])[0].shape, [0, 2]);
  assert.throws(() => parseRnnstateMetadata({ version: 1, states: [{ ...unbatched, shape: [] }] }), /scalar/);
  assert.equal(parseRnnstateMetadata({ version: 1, states: [unbatched] }).states[0].batch_axis, -1);
  // `batch` wins on batch axes, whatever their name (as `rnnstate init --batch`).
  assert.deepEqual(firstFeedSpecs([states[0]], { batch: 7, dims: { batch: 4 } })[0].shape, [1, 7, 2]);
  assert.throws(() => firstFeedSpecs([states[0]]), /batch dimension 'batch'.*\{batch: N\}/);
  assert.throws(() => firstFeedSpecs([states[2]], { batch: 1 }), /dimension 'hidden'.*dims/);
  assert.throws(() => firstFeedSpecs([states[2], { ...states[3], shape: [2, 'batch', 6] }], { batch: 1 }), /disagree/);
});

test('first feeds: a context whose Pad fills in another mode starts empty on its time axis', () => {
  const context = { ...STATES.states[0], input: 'ctx_in', output: 'ctx_out', kind: 'context', shape: ['batch', 4, 'ctx_frames'],
    batch_axis: 0, context: { value: 'v', axis: 2, frames: 2, window: 'conv', pad: 'reflect' } };
  assert.deepEqual(firstFeedSpecs([context], { batch: 3 })[0].shape, [3, 4, 0]);
  // Without the mode, a context's dimension no data feed gives is one element (broadcast by the model).
  const { pad, ...zeros } = context.context;
  assert.deepEqual(firstFeedSpecs([{ ...context, context: zeros }], { batch: 3 })[0].shape, [3, 4, 1]);
});

test('StreamingSession: the first chunk holds stream.first_chunk_min frames; later ones any', async () => {
  const metadata = { ...meta(), stream: { version: 1, time: [{ input: 'x', axis: 0 }], first_chunk_min: 3 } };
  const stream = await StreamingSession.create(fakeSession(), { ort, metadata });
  await assert.rejects(stream.run({ x: x([1, 2]) }), /first chunk of 2 frames.*at least 3 frames/);
  assert.deepEqual([...(await stream.run({ x: x([1, 2, 3]) })).y.data], [1, 3, 6]);
  assert.deepEqual([...(await stream.run({ x: x([4]) })).y.data], [10]);
});

test('first feeds: an unnamed dimension is null (older metadata: ""), sized only by {batch}', () => {
  const stacked = { ...STATES.states[0], input: 'state', output: 'stateN', shape: [2, null, 128], rows: [0, 1] };
  assert.equal(parseRnnstateMetadata({ version: 1, states: [stacked] }).states[0].shape[1], null);
  assert.deepEqual(firstFeedSpecs([stacked], { batch: 1 })[0].shape, [2, 1, 128]);
  assert.deepEqual(firstFeedSpecs([{ ...stacked, shape: [2, '', 128] }], { batch: 3 })[0].shape, [2, 3, 128]);
  assert.throws(() => firstFeedSpecs([stacked], { dims: { '': 4, null: 4 } }), /batch dimension \(unnamed\) \(axis 1\).*\{batch: N\}/);
  assert.throws(() => parseRnnstateMetadata({ version: 1, states: [{ ...stacked, shape: [2, true, 128] }] }), /null/);
});

test('StreamingSession: first feed per init, state fed back, reset(), state outputs on request', async () => {
  const session = fakeSession();
  const stream = await StreamingSession.create(session, { ort, metadata: meta() });
  assert.deepEqual(stream.dataInputNames, ['x']);
  assert.deepEqual(stream.outputNames, ['y']);
  assert.deepEqual([...(await stream.run({ x: x([1, 2]) })).y.data], [1, 3]);
  assert.deepEqual(session.calls[0].h_in.dims, [1, 1, 1]); // zeros of [1, batch, 1], batch from x's "batch"
  const second = await stream.run({ x: x([3]) }, { stateOutputs: true });
  assert.deepEqual([...second.y.data], [6]);
  assert.deepEqual([...second.h_out.data], [6]);
  assert.deepEqual([...stream.state.h_in.data], [6]);
  await stream.reset();
  assert.equal(stream.state, null);
  assert.deepEqual([...(await stream.run({ x: x([3]) })).y.data], [3]);
});

test('StreamingSession: runs and resets take effect in call order; a failed run keeps the state', async () => {
  const stream = await StreamingSession.create(fakeSession(), { ort, metadata: meta() });
  const a = stream.run({ x: x([1]) });
  const b = stream.run({ x: x([1]) });
  stream.reset();
  const c = stream.run({ x: x([1]) });
  assert.deepEqual([(await a).y.data[0], (await b).y.data[0], (await c).y.data[0]], [1, 2, 1]);
  await assert.rejects(stream.run({ x: x([1]), h_in: x([0]) }), /fed by the helper/);
  await assert.rejects(stream.run({ x: x([1]), other: x([0]) }), /not inputs of the model/);
  assert.equal((await stream.run({ x: x([1]) })).y.data[0], 2);
});

test('StreamingSession: stacked states (rows) are fed once and fed back once', async () => {
  const rows = (r) => ({ ...STATES.states[0], input: 'h0', output: 'h_n', shape: [1, 'batch', 1], rows: r });
  const session = fakeSession(['h0'], ['h_n']);
  const stream = await StreamingSession.create(session, { ort, metadata: { version: 1, states: [rows([0, 1]), rows([1, 2])] } });
  await stream.run({ x: x([1, 2], 2) });
  await stream.run({ x: x([1, 2], 2) });
  assert.deepEqual(Object.keys(session.calls[1]).sort(), ['h0', 'x']);
  assert.deepEqual([...session.calls[1].h0.data], [1, 2]);
});

test('StreamingSession: "empty" feeds batch 0; the batch comes from the data or the batch option', async () => {
  const session = fakeSession(['h_in'], ['h_out'], { dataShape: ['seq', 'n'] });
  const empty = { version: 1, states: [{ ...meta().states[0], init: 'empty', shape: [1, 'n', 1] }] };
  const stream = await StreamingSession.create(session, { ort, metadata: empty });
  await stream.run({ x: x([1, 2, 3], 3) });
  assert.deepEqual(session.calls[0].h_in.dims, [1, 0, 1]);
  await assert.rejects(stream.run({ x: x([1, 2], 2) }), /batch is 2 but state 'h_in' carries batch 3: call reset\(\)/);
  // A name no data input declares: refused unless {batch} says it.
  const unnamed = { version: 1, states: [{ ...meta().states[0], shape: [1, 'other', 1] }] };
  await assert.rejects((await StreamingSession.create(fakeSession(), { ort, metadata: unnamed })).run({ x: x([1]) }), /\{batch: N\}/);
  const given = fakeSession();
  await (await StreamingSession.create(given, { ort, metadata: unnamed, batch: 1 })).run({ x: x([1]) });
  assert.deepEqual(given.calls[0].h_in.dims, [1, 1, 1]);
});

test('StreamingSession: the batch option does not size a state whose batch has a name of its own', async () => {
  // A per-band recurrence's state (batch x bins, named 'bands' here): the model sizes it, not {batch}.
  const session = fakeSession(['h_in'], ['h_out'], { dataShape: ['seq', 'n'] });
  const perBand = { version: 1, states: [{ ...meta().states[0], init: 'empty', shape: [1, 'bands', 1] }] };
  const stream = await StreamingSession.create(session, { ort, metadata: perBand, batch: 1 });
  await stream.run({ x: x([1, 2, 3, 4], 2) });
  assert.deepEqual([...(await stream.run({ x: x([1, 1], 2) })).y.data], [5, 7]);
});

test('StreamingSession: not streamable states are refused, or restarted every call with {nonStreamable: "reset"}', async () => {
  const ns = { version: 1, states: [{ ...meta().states[0], streamable: false }] };
  await assert.rejects(StreamingSession.create(fakeSession(), { ort, metadata: ns }), /do not stream.*nonStreamable/s);
  const stream = await StreamingSession.create(fakeSession(), { ort, metadata: ns, nonStreamable: 'reset' });
  await stream.run({ x: x([1]) });
  assert.equal((await stream.run({ x: x([1]) })).y.data[0], 1);
});

test('StreamingSession: defaults-mode models and sessions without a metadata source are refused', async () => {
  const hidden = { ...fakeSession(), inputNames: ['x'] };
  const optional = { version: 1, states: [{ ...meta().states[0], optional: true }] };
  await assert.rejects(StreamingSession.create(hidden, { ort, metadata: optional }), /defaults mode.*--state-inputs required/s);
  await assert.rejects(StreamingSession.create(hidden, { ort, metadata: meta() }), /does not have/);
  await assert.rejects(StreamingSession.create(fakeSession(), { ort }), /pass \{metadata\} or \{model\}/);
  await assert.rejects(StreamingSession.create(fakeSession(), {}), /pass \{ort\}/);
  // An existing session with the metadata read from the model's bytes.
  const bytes = model(entry('rnnstate', JSON.stringify(meta())));
  const stream = await StreamingSession.create(fakeSession(), { ort, model: bytes });
  assert.equal(stream.states.length, 1);
  await stream.release();
  await assert.rejects(stream.run({ x: x([1]) }), /released/);
});

// A packed model (--pack tensor): one [batch, 1] tensor carries the state; the pairs name values inside.
const PACKED = {
  version: 1,
  states: [{ ...STATES.states[0], input: 'h_in', output: 'h_out', shape: [1, 'batch', 1], optional: false }],
  packed: { kind: 'tensor', values: [{ input: 'state_in', output: 'state_out', dtype: 'float32', shape: ['batch', 1],
    batch_axis: 0, init: 'empty', optional: false, streamable: true,
    members: [{ states: [0], input: 'h_in', output: 'h_out', shape: [1, 'batch', 1], batch_axis: 1, offset: 0, length: 1,
      row_shape: [1], layout: 'batch-first' }] }] },
};

test('StreamingSession: a packed tensor model is fed its packed value, empty first, then its output', async () => {
  const session = fakeSession(['state_in'], ['state_out']);
  // The fake reads the state as [., B, .]: give it the packed value's [B, 1] as [1, B, 1].
  const run = session.run;
  session.run = async (feeds) => {
    const s = feeds.state_in;
    const out = await run({ ...feeds, state_in: new Tensor('float32', s.data, [1, s.dims[0], 1]) });
    const f = out.state_out;
    return { ...out, state_out: new Tensor('float32', f.data, [f.dims[1], 1]) };
  };
  const stream = await StreamingSession.create(session, { ort, metadata: PACKED });
  assert.deepEqual(stream.stateInputNames, ['state_in']);
  assert.deepEqual(stream.dataInputNames, ['x']);
  assert.deepEqual(stream.firstFeedSpecs({ x: x([1, 2]) }), [{ input: 'state_in', dtype: 'float32', shape: [0, 1], init: 'empty', batchAxis: 0 }]);
  assert.deepEqual([...(await stream.run({ x: x([1, 2]) })).y.data], [1, 3]);
  assert.deepEqual(session.calls[0].state_in.dims, [1, 0, 1]); // [0, 1] fed: empty
  assert.deepEqual([...(await stream.run({ x: x([3]) })).y.data], [6]);
  assert.deepEqual([...stream.state.state_in.data], [6]);
});

test('StreamingSession: a sequence-packed model is refused (JavaScript cannot feed a Sequence)', async () => {
  const metadata = { ...PACKED, packed: { ...PACKED.packed, kind: 'sequence' } };
  await assert.rejects(StreamingSession.create(fakeSession(['state_in'], ['state_out']), { ort, metadata }), /--pack tensor/);
  assert.throws(() => parseRnnstateMetadata({ ...PACKED, packed: { kind: 'tensor', values: [] } }), /no "values"/);
});
