// The helper in a module Web Worker (no import map there: modules by URL).
import * as ort from '/ort/ort.min.mjs';
import { StreamingSession } from '/helper/index.mjs';
import { expectedNumbers, lstmChunkedEqualsWhole, reporter, sileroMatchesAuthors } from './checks.mjs';

ort.env.wasm.numThreads = 1;
const r = reporter('worker');
const expected = await expectedNumbers();
await r.check('bundled LSTM+GRU rewrite in a worker: chunked == whole',
  () => lstmChunkedEqualsWhole(ort, StreamingSession, '/site/lstm.required.onnx', expected));
if (expected.silero) {
  await r.check('Silero --input-context in a worker: == the authors\' protocol',
    () => sileroMatchesAuthors(ort, StreamingSession, '/site/silero.js.onnx', expected));
} else {
  await r.skip('Silero', 'silero_vad_v5.onnx is absent (../shared/real-models)');
}
await r.done();
