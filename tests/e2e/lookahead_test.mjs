// `rewrite --lookahead` in ONNX Runtime (onnxruntime-node; issue 39): the "same" convolution models of
// models/conv_context (and models/conv_context_tf: the Conv's auto_pad SAME_UPPER / SAME_LOWER), and the
// upsamplings with PyTorch's symmetric padding (which lag), rewritten with --lookahead in both --state-inputs
// modes, stream with the delay the metadata records — the chunked outputs are the whole run's first N - delay
// frames, a flush of `flush` input frames of zeros (`delay`, but after an upsampling) brings the rest (judged
// where one window looks ahead) — at random chunkings (1e-5); a rewrite of the rewrite changes no byte.
// Negative controls: the default rewrite of the same models does not stream (verify fails), the verify with
// the recorded delay taken out fails, a first chunk not longer than the delay is refused, and the residual
// model is left as the default rewrite leaves it (not streamable, the Add named).
//
// Usage: node lookahead_test.mjs --rnnstate BIN --models DIR
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { readRnnstateMetadata } from '../../tools/js/rnnstate-stream/index.mjs';
import { verifyStreaming } from '../../tools/js/rnnstate-stream/verify.mjs';
import { readModel, writeModel } from './lib/onnx-edit.mjs';
import { RnnstateCli } from './lib/rnnstate-cli.mjs';
import { Results, suiteArgs } from './lib/suite.mjs';

const SESSION_OPTIONS = { logSeverityLevel: 3, intraOpNumThreads: 1, interOpNumThreads: 1 };
const args = suiteArgs('usage: node lookahead_test.mjs --rnnstate BIN --models DIR',
  { rnnstate: { type: 'string' }, models: { type: 'string' } }, ['rnnstate', 'models']);
const cli = new RnnstateCli(args.rnnstate);

// Each model with the delay its rewrite must record (frames at the outputs' rate) and the input frames of its
// flush: as many, but where a ConvTranspose that lags (PyTorch's symmetric padding) upsamples.
const STREAMING = [['same_conv1d', 1, 1], ['same_conv1d_dil', 4, 4], ['same_conv_chain', 3, 3],
  ['pad_same_conv1d', 2, 2], ['convtranspose_time', 2, 1], ['upsample_sym_k4', 2, 1], ['upsample_sym_k3_2d', 2, 1], ['upsample_sym_k8s4', 4, 1],
  // tf2onnx's "same" Conv (auto_pad) in place of pad_same_conv1d's Pad node (tools/gen_auto_pad_models.py)
  ['conv_context_tf/auto_pad_same_upper', 2, 2], ['conv_context_tf/auto_pad_same_lower', 1, 1]];

const results = new Results();

const worst = (result) => Math.max(0, ...result.compared.filter((c) => c.role !== 'flush?').map((c) => c.max_abs));
const metadataOf = (file) => readRnnstateMetadata(new Uint8Array(readFileSync(file)));  // (a promise)

const work = mkdtempSync(join(tmpdir(), 'rnnstate-lookahead-'));
try {
  for (const [file, delay, flushFrames] of STREAMING) {
    const name = basename(file);
    const original = join(args.models, file.includes('/') ? `${file}.onnx` : `conv_context/${file}.onnx`);
    for (const mode of ['defaults', 'required']) {
      const label = `${name} ${mode}`;
      const rewritten = join(work, `${name}.${mode}.onnx`);
      const done = cli.run(['rewrite', original, '--lookahead', '--state-inputs', mode, '-o', rewritten]);
      results.report(done.status === 0, label, 'rewrite --lookahead', done.stderr.trim());
      const metadata = await metadataOf(rewritten);
      const flushed = metadata.stream?.flush ?? metadata.stream?.delay;
      results.report(metadata.stream?.delay === delay && flushed === flushFrames && metadata.stream?.chunk_exact === true, label,
        `metadata: delay ${delay}, flush ${flushFrames}, chunk-exact`,
        JSON.stringify({ delay: metadata.stream?.delay, flush: metadata.stream?.flush, exact: metadata.stream?.chunk_exact }));
      const again = join(work, `${name}.${mode}.again.onnx`);
      cli.run(['rewrite', rewritten, '--lookahead', '--state-inputs', mode, '-o', again]);
      results.report(Buffer.compare(readFileSync(rewritten), readFileSync(again)) === 0, label, 'a rewrite of the rewrite changes no byte');
      results.report(cli.run(['check', rewritten]).status === 0, label, 'check passes');
      for (const seed of [1, 2, 3, 4]) {
        const result = await verifyStreaming({ ort, original, rewritten, seed, length: 23, batch: 2, atol: 1e-5,
          sessionOptions: SESSION_OPTIONS });
        const flush = result.compared.filter((c) => c.role.startsWith('flush')).map((c) => `${c.role} ${c.name}`);
        results.report(result.ok && flush.length > 0, label, `verify --seed ${seed}: chunks ${result.chunks} (delayed ${delay}) = whole`,
          `max_abs ${worst(result).toExponential(2)}; ${flush.join(', ')}`);
      }
    }
    // Negative controls: the recorded delay taken out (chunks compared frame for frame), the default rewrite.
    const rewritten = join(work, `${name}.defaults.onnx`);
    const model = readModel(rewritten);
    const prop = model.metadataProps.find((p) => p.key === 'rnnstate');
    const doc = JSON.parse(prop.value);
    delete doc.stream.delay;
    prop.value = JSON.stringify(doc);
    const undelayed = join(work, `${name}.undelayed.onnx`);
    writeModel(model, undelayed);
    // (A first chunk longer than the window: ONNX Runtime runs it, the comparison fails.)
    const without = await verifyStreaming({ ort, original, rewritten: undelayed, chunks: [12, 11], atol: 1e-5,
      sessionOptions: SESSION_OPTIONS });
    results.report(!without.ok, name, 'verify without the recorded delay fails',
      without.compared.filter((c) => !c.ok).map((c) => `${c.name}: ${c.why ?? c.max_abs}`).join('; '));
    const plain = join(work, `${name}.plain.onnx`);
    cli.run(['rewrite', original, '-o', plain]);
    results.report((await metadataOf(plain)).stream?.chunk_exact === false, name, 'the default rewrite records chunk_exact false');
    let refused = '';
    try {
      await verifyStreaming({ ort, original, rewritten, chunks: [flushFrames, 10], sessionOptions: SESSION_OPTIONS });
    } catch (err) {
      refused = err.message;
    }
    results.report(/first chunk must be longer/.test(refused), name, `a first chunk of ${flushFrames} frames is refused`, refused);
  }
  // The residual model: nothing is carried with a lookahead, the Add is named, the rewrite is the default one.
  const residual = join(args.models, 'conv_context', 'same_conv_residual.onnx');
  const asked = join(work, 'residual.lookahead.onnx');
  const plain = join(work, 'residual.plain.onnx');
  const run = cli.run(['rewrite', residual, '--lookahead', '-o', asked]);
  cli.run(['rewrite', residual, '-o', plain]);
  results.report(run.status === 0 && /--lookahead: .*Add '\/Add'/.test(run.stderr), 'same_conv_residual', 'the warning names the Add', run.stderr.split('\n')[0]);
  results.report(Buffer.compare(readFileSync(asked), readFileSync(plain)) === 0, 'same_conv_residual', 'rewritten as without --lookahead');
  const meta = await metadataOf(asked);
  results.report(meta.stream?.chunk_exact === false && meta.stream?.delay === undefined, 'same_conv_residual', 'not streamable, no delay');
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(results.finish());
