#!/usr/bin/env node
// `rnnstate export triton` of time-major models (data [T, B, F]): the max_batch_size 0 configuration,
// run in ONNX Runtime the way Triton runs it (Triton itself is not installed here). Triton with
// max_batch_size 0 feeds the model a request's tensors as they are, and an implicit state of the `dims`
// the config gives, starting from its `initial_state` (zeros) and then from the previous request's output
// (triton-inference-server/core, SequenceStates::Initialize and the sequence batcher). So each request
// here is one chunk of one sequence, shaped as the config's input dims allow (-1: any length; fixed
// sizes, the batch 1 included, as written), its state the config's zeros first; the outputs must have the
// config's fixed dims, and the chunked outputs must equal one whole run of the original model.
//
//   node triton_unbatched_test.mjs --rnnstate BINARY --models DIR
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { InferenceSession } from 'onnxruntime-node';

import { RnnstateCli, lastLines } from './lib/rnnstate-cli.mjs';
import { concatAxis, maxAbsDiff, randomTensor, sliceAxis, zerosTensor } from './lib/tensors.mjs';

const { values: args } = parseArgs({ options: { rnnstate: { type: 'string' }, models: { type: 'string' } } });
const cli = new RnnstateCli(args.rnnstate);
const work = mkdtempSync(join(tmpdir(), 'rnnstate-triton-'));
let failures = 0;
const check = (name, ok, detail = '') => {
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${name}${ok || !detail ? '' : `: ${detail}`}`);
  if (!ok) failures++;
};

/** The config's entries of one list (`input`, `output`) or the states, each {name, dims}. */
function entries(config, list) {
  const body = list === 'state' ? config.slice(config.indexOf('sequence_batching')) : config.split(/^sequence_batching/m)[0];
  const section = body.match(new RegExp(`^${list === 'state' ? '  state' : list} \\[\\n([\\s\\S]*?)^${list === 'state' ? '  ' : ''}\\]`, 'm'));
  if (!section) return [];
  const key = list === 'state' ? 'input_name' : 'name';
  return [...section[1].matchAll(new RegExp(`${key}: "([^"]*)"[\\s\\S]*?dims: \\[([^\\]]*)\\]`, 'g'))]
    .map(([, name, dims]) => ({ name, dims: dims.split(',').map((d) => Number(d.trim())) }));
}

/**
 * Rewrites MODEL with REWRITE, exports it (no --max-batch-size), and streams the chunks CHUNKS through the
 * export as Triton would; compares with one run of MODEL fed ORIGINAL_FEEDS(x).
 */
async function caseOf(label, model, rewrite, timeAxis, originalFeeds) {
  const out = join(work, `${label}.onnx`);
  const r = cli.rewrite(join(args.models, model), out, null, rewrite);
  if (r.status !== 0) return check(`${label}: rewrite`, false, lastLines(r.stderr));
  const exported = cli.run(['export', 'triton', out]);
  check(`${label}: export triton (exit 0)`, exported.status === 0, lastLines(exported.stderr));
  if (exported.status !== 0) return;
  const config = exported.stdout;
  check(`${label}: max_batch_size 0`, /^max_batch_size: 0$/m.test(config));
  check(`${label}: a warning says why Triton does not batch it`, /has its batch on axis 1.*max_batch_size 0/.test(exported.stderr));
  const [input] = entries(config, 'input');
  const states = entries(config, 'state');
  const outputs = entries(config, 'output');
  check(`${label}: the data input's batch is 1`, input.dims[1] === 1, `dims [${input.dims}]`);
  const chunks = [1, 3, 2, 4];
  const length = chunks.reduce((a, b) => a + b, 0);
  const x = randomTensor('float32', input.dims.map((d, axis) => (axis === timeAxis ? length : d)), `${label}-x`);
  const session = await InferenceSession.create(out);
  let carried = Object.fromEntries(states.map((s) => [s.name, zerosTensor('float32', s.dims)]));
  const stateOut = Object.fromEntries([...config.matchAll(/input_name: "([^"]*)"\n\s*output_name: "([^"]*)"/g)].map((m) => [m[2], m[1]]));
  const pieces = Object.fromEntries(outputs.map((o) => [o.name, []]));
  let offset = 0;
  for (const n of chunks) {
    const result = await session.run({ [input.name]: sliceAxis(x, timeAxis, offset, n), ...carried });
    offset += n;
    for (const o of outputs) {
      const fixedOk = o.dims.length === result[o.name].dims.length && o.dims.every((d, i) => d === -1 || d === result[o.name].dims[i]);
      if (!fixedOk) check(`${label}: output '${o.name}' has the config's dims`, false, `[${result[o.name].dims}] vs [${o.dims}]`);
      pieces[o.name].push(result[o.name]);
    }
    carried = Object.fromEntries(Object.entries(stateOut).map(([output, stateInput]) => [stateInput, result[output]]));
  }
  const original = await InferenceSession.create(join(args.models, model));
  const whole = await original.run(originalFeeds(x));
  const y = outputs[0].name;
  const { diff, why } = maxAbsDiff(concatAxis(pieces[y], timeAxis), whole[y]);
  check(`${label}: ${chunks.length} requests of one sequence = one whole run ('${y}', max abs diff ${diff})`, !why && diff <= 1e-5, why);
}

try {
  // PyTorch's time-major LSTM with its own h0/c0 [2, batch, 3] inputs, packed.
  await caseOf('lstm_h0 packed', 'torch/lstm_h0.onnx', ['--pack', 'tensor', '--state-inputs', 'required'], 0,
    (x) => ({ x, h0: zerosTensor('float32', [2, 1, 3]), c0: zerosTensor('float32', [2, 1, 3]) }));
  // Time-major LSTM and GRU whose states are the nodes' own [1, batch, H]: unpacked, one state each.
  await caseOf('lstm_gru node states', 'torch/lstm_gru_dyn.onnx', ['--state-inputs', 'required'], 0, (x) => ({ x }));
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(failures ? `${failures} failed` : 'all passed');
process.exit(failures ? 1 : 0);
