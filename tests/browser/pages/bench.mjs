// The helper's own cost per call (tools/bench_browser.mjs): Silero rewritten with --input-context, one
// 512-sample frame a call, through StreamingSession.run() and through session.run() fed by hand (the state
// and the context carried by the caller, tensors made as the helper makes them), in alternating rounds on
// one session each; medians of the per-round mean call times. The helper's own cost is also measured
// directly in the same calls: a call's time less the time inside the session.run() it makes (what
// onnxruntime-web does), which a busy machine's noise in the runs themselves does not hide.
import * as ort from 'onnxruntime-web';
import { StreamingSession } from 'rnnstate-stream';
import { framesOf, wavSamples } from './checks.mjs';

const params = new URLSearchParams(location.search);
const rounds = Number(params.get('rounds') ?? 15);
const calls = Number(params.get('calls') ?? 200);
ort.env.wasm.numThreads = 1;
const post = (body) => fetch('/report', { method: 'POST', body: JSON.stringify({ page: 'bench', ...body }) });
try {
  const frames = framesOf(await wavSamples('/site/speech.wav'));
  const stream = await StreamingSession.create('/site/silero.js.onnx', { ort, batch: 1 });
  const session = await ort.InferenceSession.create('/site/silero.js.onnx');
  // Time inside the helper's session.run, accumulated.
  const inner = stream.session;
  const run = inner.run.bind(inner);
  let inside = 0;
  inner.run = async (feeds, options) => {
    const start = performance.now();
    try {
      return await run(feeds, options);
    } finally {
      inside += performance.now() - start;
    }
  };
  let state = null;
  const byHand = async (frame) => {
    state ??= { state: new ort.Tensor('float32', new Float32Array(256), [2, 1, 128]),
      'input.context_in': new ort.Tensor('float32', new Float32Array(64), [1, 64]) };
    const out = await session.run({ input: new ort.Tensor('float32', frame.slice(), [1, 512]),
      sr: new ort.Tensor('int64', BigInt64Array.from([16000n]), []), ...state });
    state = { state: out.stateN, 'input.context_in': out['input.context_out'] };
    return out.output.data[0];
  };
  const helper = async (frame) => (await stream.run({ input: new ort.Tensor('float32', frame.slice(), [1, 512]),
    sr: new ort.Tensor('int64', BigInt64Array.from([16000n]), []) })).output.data[0];
  const round = async (call) => {
    const start = performance.now();
    for (let i = 0; i < calls; i++) await call(frames[i % frames.length]);
    return (performance.now() - start) / calls;
  };
  await round(helper);
  await round(byHand);  // warm-up
  const times = { helper: [], byHand: [], own: [], inner: [] };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [['byHand', byHand], ['helper', helper]] : [['helper', helper], ['byHand', byHand]];
    for (const [name, call] of order) {
      inside = 0;
      const mean = await round(call);
      times[name].push(mean);
      if (name === 'helper') {
        times.own.push(mean - inside / calls);
        times.inner.push(inside / calls);
      }
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  await post({ result: { name: 'bench', ok: true, rounds, calls, helper_ms: median(times.helper), by_hand_ms: median(times.byHand),
    own_ms: median(times.own), inner_run_ms: median(times.inner),
    helper_rounds: times.helper, by_hand_rounds: times.byHand, ort: ort.env.versions?.web, isolated: crossOriginIsolated } });
} catch (err) {
  await post({ result: { name: 'bench', ok: false, detail: String(err?.stack ?? err) } });
}
await post({ done: true });
