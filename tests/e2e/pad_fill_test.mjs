// Pads that fill otherwise than with zeros in ONNX Runtime (onnxruntime-node; issue 39): the reflect-, edge-
// and constant(0.5)-padded causal Conv1d models of models/conv_context, rewritten in both --state-inputs modes,
// record the Pad's mode on their contexts (and the reflecting one the first call's least length), stream at
// random chunkings (chunked == whole within 1e-5), through the helper with chunks of one frame too (ONNX
// Runtime refuses a chunk of zero frames: the Conv then sees only its context, shorter than its kernel, as
// with a context of zeros), and a rewrite of the rewrite changes no byte. Negative controls: a reflecting first chunk
// shorter than the recorded least length is refused by verify and by the helper; the required-mode rewrite
// with the mode taken out of its metadata (its first feed then one frame of zeros, not an empty context)
// no longer equals the whole run; --no-conv-context records chunk_exact false and verify fails.
//
// Usage: node pad_fill_test.mjs --rnnstate BIN --models DIR
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { readRnnstateMetadata, StreamingSession } from '../../tools/js/rnnstate-stream/index.mjs';
import { verifyStreaming } from '../../tools/js/rnnstate-stream/verify.mjs';
import { readModel, writeModel } from './lib/onnx-edit.mjs';
import { RnnstateCli } from './lib/rnnstate-cli.mjs';
import { Results, suiteArgs } from './lib/suite.mjs';

const SESSION_OPTIONS = { logSeverityLevel: 3, intraOpNumThreads: 1, interOpNumThreads: 1 };
const args = suiteArgs('usage: node pad_fill_test.mjs --rnnstate BIN --models DIR',
  { rnnstate: { type: 'string' }, models: { type: 'string' } }, ['rnnstate', 'models']);
const cli = new RnnstateCli(args.rnnstate);

// Each model with the modes its contexts record and the first call's least length (0: any).
const MODELS = [['reflect_pad_conv1d', ['reflect'], 3], ['edge_pad_conv1d', ['edge'], 0],
  ['const_pad_conv1d', ['constant', 'constant'], 0]];

const results = new Results();

const worst = (result) => Math.max(0, ...result.compared.map((c) => c.max_abs));
const metadataOf = (file) => readRnnstateMetadata(new Uint8Array(readFileSync(file)));

/** x [1, T, 4] of values in [-1, 1), the same for a given T. */
function input(T) {
  const data = Float32Array.from({ length: T * 4 }, (_, i) => Math.sin(1.7 * i + 0.3));
  return new ort.Tensor('float32', data, [1, T, 4]);
}

/** The frames [from, from + n) of x [1, T, 4]. */
const frames = (x, from, n) => new ort.Tensor('float32', x.data.slice(from * 4, (from + n) * 4), [1, n, 4]);

/** The helper over a required-mode rewrite, fed `chunks` of x: the largest difference
 * of the concatenated y from the original's whole run. */
async function helperDifference(original, rewritten, chunks) {
  const length = chunks.reduce((a, b) => a + b, 0);
  const x = input(length);
  const whole = await ort.InferenceSession.create(original, SESSION_OPTIONS);
  const want = (await whole.run({ x })).y.data;
  const stream = await StreamingSession.create(rewritten, { ort, sessionOptions: SESSION_OPTIONS });
  const got = [];
  let at = 0;
  for (const n of chunks) {
    got.push(...(await stream.run({ x: frames(x, at, n) })).y.data);
    at += n;
  }
  if (got.length !== want.length) return Infinity;
  return Math.max(...got.map((v, i) => Math.abs(v - want[i])));
}

const work = mkdtempSync(join(tmpdir(), 'rnnstate-pad-fill-'));
try {
  for (const [name, modes, least] of MODELS) {
    const original = join(args.models, 'conv_context', `${name}.onnx`);
    for (const mode of ['defaults', 'required']) {
      const label = `${name} ${mode}`;
      const rewritten = join(work, `${name}.${mode}.onnx`);
      const done = cli.run(['rewrite', original, '--state-inputs', mode, '-o', rewritten]);
      results.report(done.status === 0, label, 'rewrite', done.stderr.trim());
      const metadata = await metadataOf(rewritten);
      const recorded = metadata.states.filter((st) => st.kind === 'context').map((st) => st.context.pad);
      results.report(JSON.stringify(recorded) === JSON.stringify(modes) && metadata.stream?.chunk_exact === true &&
        (metadata.stream?.first_chunk_min ?? 0) === least, label, `metadata: pad ${modes}, first_chunk_min ${least}`,
      JSON.stringify({ recorded, exact: metadata.stream?.chunk_exact, least: metadata.stream?.first_chunk_min }));
      const again = join(work, `${name}.${mode}.again.onnx`);
      cli.run(['rewrite', rewritten, '--state-inputs', mode, '-o', again]);
      results.report(Buffer.compare(readFileSync(rewritten), readFileSync(again)) === 0, label, 'a rewrite of the rewrite changes no byte');
      results.report(cli.run(['check', rewritten]).status === 0, label, 'check passes');
      for (const seed of [1, 2, 3, 4]) {
        const result = await verifyStreaming({ ort, original, rewritten, seed, length: 23, batch: 2, atol: 1e-5,
          rtol: 0, sessionOptions: SESSION_OPTIONS });
        results.report(result.ok, label, `verify --seed ${seed}: chunks ${result.chunks} = whole`, `max_abs ${worst(result).toExponential(2)}`);
      }
      if (mode !== 'required') continue;
      const chunks = [Math.max(least, 1), 1, 4, 1, 1, 6];
      const diff = await helperDifference(original, rewritten, chunks);
      results.report(diff <= 1e-5, label, `the helper, chunks ${chunks} = whole`, `max_abs ${diff.toExponential(2)}`);
      // Negative control: the pad mode taken out of the metadata, the first feed is one frame of zeros.
      const model = readModel(rewritten);
      const prop = model.metadataProps.find((p) => p.key === 'rnnstate');
      const doc = JSON.parse(prop.value);
      for (const st of doc.states) if (st.context) delete st.context.pad;
      prop.value = JSON.stringify(doc);
      const unmarked = join(work, `${name}.unmarked.onnx`);
      writeModel(model, unmarked);
      const wrong = await helperDifference(original, unmarked, [Math.max(least, 1), 4, 6]);
      results.report(wrong > 1e-3, label, 'without the recorded mode (a first context of one frame of zeros) it differs',
        `max_abs ${wrong.toExponential(2)}`);
    }
    const plain = join(work, `${name}.plain.onnx`);
    cli.run(['rewrite', original, '--no-conv-context', '-o', plain]);
    results.report((await metadataOf(plain)).stream?.chunk_exact === false, name, '--no-conv-context records chunk_exact false');
    const unstreamed = await verifyStreaming({ ort, original, rewritten: plain, chunks: [5, 7, 6], atol: 1e-5,
      sessionOptions: SESSION_OPTIONS });
    results.report(!unstreamed.ok, name, '--no-conv-context: verify fails', `max_abs ${worst(unstreamed).toExponential(2)}`);
  }
  // A reflecting first chunk shorter than the recorded least length: refused by verify and by the helper.
  const reflect = join(work, 'reflect_pad_conv1d.required.onnx');
  const original = join(args.models, 'conv_context', 'reflect_pad_conv1d.onnx');
  let refused = '';
  try {
    await verifyStreaming({ ort, original, rewritten: reflect, chunks: [2, 10], sessionOptions: SESSION_OPTIONS });
  } catch (err) {
    refused = err.message;
  }
  results.report(/first chunk must be longer than 2 frames/.test(refused), 'reflect_pad_conv1d', 'verify refuses a first chunk of 2', refused);
  refused = '';
  try {
    await helperDifference(original, reflect, [2, 10]);
  } catch (err) {
    refused = err.message;
  }
  results.report(/first chunk of 2 frames.*at least 3/.test(refused), 'reflect_pad_conv1d', 'the helper refuses a first chunk of 2', refused);
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(results.finish());
