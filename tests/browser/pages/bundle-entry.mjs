// The entry esbuild and Vite bundle (bare imports: the packages' own "exports" choose the files; the
// helper's "browser" condition gives index.browser.mjs). The page is named by the folder it is served from.
import * as ort from 'onnxruntime-web';
import { StreamingSession } from 'rnnstate-stream';
import { expectedNumbers, lstmChunkedEqualsWhole, reporter, sileroMatchesAuthors } from './checks.mjs';

ort.env.wasm.wasmPaths = '/ort/';  // the bundlers do not copy onnxruntime-web's .wasm files: served beside
ort.env.wasm.numThreads = 1;
const r = reporter(location.pathname.split('/')[1]);
const expected = await expectedNumbers();
await r.check('bundled: LSTM+GRU rewrite chunked == whole',
  () => lstmChunkedEqualsWhole(ort, StreamingSession, '/site/lstm.required.onnx', expected));
if (expected.silero) {
  await r.check('bundled: Silero --input-context == the authors\' protocol',
    () => sileroMatchesAuthors(ort, StreamingSession, '/site/silero.js.onnx', expected));
}
await r.done();
