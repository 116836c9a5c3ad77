// The metadata JSON Schema (docs/metadata.schema.json) and its validator (lib/json-schema.mjs): the
// examples of docs/metadata.md pass, and documents that break the contract fail, each for its reason.
// The e2e suites validate the metadata of every model they rewrite (verify.mjs, pack_verify.mjs).
// Run: node --test tests/e2e/schema.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { metadataProblems, validate } from './lib/json-schema.mjs';

const state = {
  input: 'lstm.LSTM.h_in', output: 'h_n', node: '/lstm/LSTM', graph: 'main', kind: 'h', optional: true,
  streamable: true, dtype: 'float32', shape: [1, 'batch', 64], batch_axis: 1, init: 'zeros', path: [],
};
const doc = (states, extra = {}) => ({ version: 1, states, ...extra });

test('documents rnnstate writes pass', () => {
  assert.deepEqual(metadataProblems(doc([state])), []);
  assert.deepEqual(metadataProblems(doc([])), []);
  const exposed = { ...state, input: 'state', output: 'stateN', optional: false, region: [0, null, [0, 4]],
    axes: ['batch', 'hidden_size'], rows: [0, 1], path: [{ node: 'If_0', attribute: 'then_branch' }] };
  const loop = { ...state, kind: 'state', variable: 'h', dtype: 'int64', shape: [2], batch_axis: -1, init: 'empty',
    layout: 'batch-first', path: [{ node: 'Loop_1', attribute: 'body', index: 0 }] };
  assert.deepEqual(metadataProblems(doc([exposed, loop])), []);
  const packed = { kind: 'tensor', values: [{ input: 'state_in', output: 'state_out', dtype: 'float32',
    shape: ['batch', 128], batch_axis: 0, init: 'empty', optional: true, streamable: true, members: [
      { states: [0], input: 'lstm.h_in', output: 'h_n', shape: [1, 'batch', 64], batch_axis: 1, offset: 0, length: 64,
        row_shape: [1, 64], layout: 'batch-first' }] }] };
  assert.deepEqual(metadataProblems(doc([state], { packed })), []);
  const sequence = { kind: 'sequence', values: [{ input: 's', output: 't', dtype: 'float32', init: 'empty',
    optional: false, streamable: true, members: [{ states: [0], input: 'a', output: 'b', shape: [1, 'batch', 64],
      batch_axis: 1, position: 0 }] }] };
  assert.deepEqual(metadataProblems(doc([state], { packed: sequence })), []);
  // Readers ignore keys they do not know, and so does the schema.
  assert.deepEqual(metadataProblems(doc([{ ...state, later: 1 }], { later: true })), []);
});

test('documents that break the contract fail, naming the key', () => {
  const problems = (d) => metadataProblems(d).join('\n');
  assert.match(problems({ states: [] }), /no "version"/);
  assert.match(problems(doc([state], { version: 2 })), /\$\.version/);
  const { init, ...noInit } = state;
  assert.match(problems(doc([noInit])), /\$\.states\[0\]: no "init"/);
  assert.match(problems(doc([{ ...state, dtype: 'float' }])), /\$\.states\[0\]\.dtype/);
  assert.match(problems(doc([{ ...state, shape: [1, -1, 64] }])), /\$\.states\[0\]\.shape\[1\]/);
  assert.match(problems(doc([{ ...state, shape: [1, '', 64] }])), /\$\.states\[0\]\.shape\[1\]/);
  assert.match(problems(doc([{ ...state, batch_axis: -2 }])), /batch_axis/);
  assert.match(problems(doc([{ ...state, init: 'ones' }])), /init/);
  assert.match(problems(doc([{ ...state, kind: '' }])), /kind/);
  assert.match(problems(doc([{ ...state, optional: 'yes' }])), /optional/);
  assert.match(problems(doc([{ ...state, rows: [0] }])), /rows/);
  assert.match(problems(doc([{ ...state, region: [0, 'all'] }])), /region\[1\]/);
  assert.match(problems(doc([{ ...state, path: [{ node: 'x' }] }])), /path\[0\]: no "attribute"/);
  assert.match(problems(doc([state], { packed: { kind: 'flat', values: [] } })), /packed\.kind[\s\S]*packed\.values/);
});

test('the validator refuses a keyword it does not implement', () => {
  assert.throws(() => validate({ pattern: '^a' }, 'a'), /keyword 'pattern'/);
  assert.deepEqual(validate({ anyOf: [{ type: 'integer' }, { type: 'null' }] }, null), []);
  assert.equal(validate({ anyOf: [{ type: 'integer' }, { type: 'null' }] }, 'x').length, 1);
});
