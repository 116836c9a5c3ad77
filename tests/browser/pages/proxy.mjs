// onnxruntime-web in proxy mode (a worker runs the sessions; every buffer given to it is transferred):
// create() from a URL, bytes, an ArrayBuffer and a Blob; a call that fails leaves the state as it was.
import * as ort from 'onnxruntime-web';
import { StreamingSession } from 'rnnstate-stream';
import { expectedNumbers, framesOf, maxDiff, reporter, sileroMatchesAuthors, sileroStream, wavSamples } from './checks.mjs';

ort.env.wasm.proxy = true;
ort.env.wasm.numThreads = 1;
const r = reporter('proxy');
const expected = await expectedNumbers();
const bytes = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());
if (!expected.silero) {
  await r.skip('Silero', 'silero_vad_v5.onnx is absent (../shared/real-models)');
} else {
  const frames = framesOf(await wavSamples('/site/speech.wav'));
  const want = expected.silero.outputs;
  for (const [what, source] of [['a URL string', async () => '/site/silero.js.onnx'], ['bytes', () => bytes('/site/silero.js.onnx')],
    ['an ArrayBuffer', async () => (await bytes('/site/silero.js.onnx')).buffer],
    ['a Blob', async () => (await fetch('/site/silero.js.onnx')).blob()]]) {
    await r.check(`create() from ${what}, 40 calls == the authors' protocol`, async () => {
      const diff = maxDiff(await sileroStream(ort, StreamingSession, await source(), frames.slice(0, 40)), want.slice(0, 40));
      return { ok: diff <= 1e-5, detail: `max abs diff ${diff.toExponential(2)}` };
    });
  }
  await r.check('a call that fails leaves the state as it was: the stream goes on as if it had not been made', async () => {
    const stream = await StreamingSession.create('/site/silero.js.onnx', { ort, batch: 1 });
    const first = await sileroStream(ort, StreamingSession, null, frames.slice(0, 60), { stream });
    let refused = '';
    try {
      await stream.run({ input: new ort.Tensor('float32', new Float32Array(512), [512]), sr: new ort.Tensor('int64', BigInt64Array.from([16000n]), []) });
    } catch (err) {
      refused = err.message.split('\n')[0].slice(0, 80);
    }
    const rest = await sileroStream(ort, StreamingSession, null, frames.slice(60, 120), { stream });
    await stream.release();
    const diff = maxDiff([...first, ...rest], want.slice(0, 120));
    return { ok: refused !== '' && diff <= 1e-5, detail: `the bad call: ${refused || 'not refused'}; 120 calls around it: max abs diff ${diff.toExponential(2)}` };
  });
  await r.check('the whole speech file in proxy mode', () => sileroMatchesAuthors(ort, StreamingSession, '/site/silero.js.onnx', expected));
}
await r.done();
