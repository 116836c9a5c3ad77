// The helper as shipped (index.mjs through an import map), onnxruntime-web's default settings (one thread):
// the bundled LSTM+GRU chunked == whole from a URL object and, packed, from a Blob; Silero from a URL
// string on the speech file; the microphone (Chromium's fake capture device playing the speech file)
// through the demo page's AudioWorklet, 512-sample frames, into the helper; WebGPU where the browser
// has an adapter.
import * as ort from 'onnxruntime-web';
import { StreamingSession } from 'rnnstate-stream';
import { expectedNumbers, lstmChunkedEqualsWhole, reporter, sileroMatchesAuthors } from './checks.mjs';
import { microphone, webgpu } from './live.mjs';

ort.env.wasm.numThreads = 1;
const r = reporter('main');
const expected = await expectedNumbers();
// The microphone first: Chromium's fake device plays the file from its start when capture begins.
if (expected.silero) {
  await r.check('microphone: getUserMedia (fake capture of speech.wav) -> AudioWorklet -> 512-sample frames -> helper',
    () => microphone(ort, StreamingSession, expected));
}
await r.check('bundled LSTM+GRU rewrite, created from a URL object: chunked == whole',
  () => lstmChunkedEqualsWhole(ort, StreamingSession, new URL('/site/lstm.required.onnx', location.href), expected));
await r.check('the same packed (--pack tensor), created from a Blob: chunked == whole', async () =>
  lstmChunkedEqualsWhole(ort, StreamingSession, await (await fetch('/site/lstm.packed.onnx')).blob(), expected));
if (expected.silero) {
  await r.check('Silero --input-context, from a URL string: speech.wav == the authors\' protocol (onnxruntime-node)',
    () => sileroMatchesAuthors(ort, StreamingSession, '/site/silero.js.onnx', expected));
  const adapter = await navigator.gpu?.requestAdapter();
  if (adapter) await r.check('WebGPU, states kept on the GPU: == wasm, each replaced state disposed', () => webgpu(ort, StreamingSession, expected));
  else await r.skip('WebGPU', 'this browser offers no WebGPU adapter');
} else {
  await r.skip('Silero', 'silero_vad_v5.onnx is absent (../shared/real-models)');
}
await r.done();
