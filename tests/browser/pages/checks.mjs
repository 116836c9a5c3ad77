// The checks the browser pages run, given the onnxruntime-web module and the helper's StreamingSession, so
// that the page without a bundler, the worker and the esbuild and Vite bundles run the same code.
// expected.json (written by browser_test.mjs with onnxruntime-node) holds the reference numbers.

/** Posts a page's results to the test server, each as it comes (a page that hangs still tells how far it got). */
export function reporter(page) {
  const post = (body) => fetch('/report', { method: 'POST', body: JSON.stringify({ page, ...body }) });
  return {
    async check(name, fn) {
      const started = performance.now();
      let result;
      try {
        const { ok, detail } = await fn();
        result = { name, ok: Boolean(ok), detail };
      } catch (err) {
        result = { name, ok: false, detail: `error: ${err?.message ?? err}` };
      }
      result.seconds = (performance.now() - started) / 1000;
      await post({ result });
    },
    skip(name, detail) {
      return post({ result: { name, skip: true, detail } });
    },
    // The server answers a page's end with the path of the next page, in the same Chromium (or "ok" after
    // the last): the page goes there itself; a worker asks its page to (postMessage).
    async done() {
      const next = await (await post({ done: true })).text();
      if (!next.startsWith('/')) return;
      if (typeof window === 'undefined') self.postMessage({ next });
      else window.location.href = next;
    },
  };
}

export const maxDiff = (a, b) => (a.length !== b.length ? Infinity
  : a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0));

export async function expectedNumbers() {
  return (await fetch('/site/expected.json')).json();
}

/** The samples of a 16-bit PCM mono WAV file at `url`, in [-1, 1). */
export async function wavSamples(url) {
  const view = new DataView(await (await fetch(url)).arrayBuffer());
  for (let p = 12; p + 8 <= view.byteLength; p += 8 + view.getUint32(p + 4, true)) {
    const id = String.fromCharCode(...[0, 1, 2, 3].map((i) => view.getUint8(p + i)));
    if (id !== 'data') continue;
    const n = view.getUint32(p + 4, true) / 2;
    return Float32Array.from({ length: n }, (_, i) => view.getInt16(p + 8 + 2 * i, true) / 32768);
  }
  throw new Error(`${url}: no data chunk`);
}

/**
 * The bundled PyTorch LSTM+GRU (x [seq, batch, 4]) rewritten: streamed by the helper in the expected
 * chunks, its outputs must equal one whole run of the original here, and onnxruntime-node's numbers.
 * `model` is what StreamingSession.create gets (a URL object, a Blob, ...).
 */
export async function lstmChunkedEqualsWhole(ort, StreamingSession, model, expected, sessionOptions = {}) {
  const { x, dims, chunks, y } = expected.lstm;
  const original = await ort.InferenceSession.create('/site/lstm_gru_dyn.onnx', sessionOptions);
  const whole = await original.run({ x: new ort.Tensor('float32', Float32Array.from(x), dims) });
  const stream = await StreamingSession.create(model, { ort, sessionOptions });
  const step = dims[1] * dims[2];
  const ys = [];
  let start = 0;
  let last;
  for (const n of chunks) {
    const chunk = new ort.Tensor('float32', Float32Array.from(x.slice(start * step, (start + n) * step)), [n, dims[1], dims[2]]);
    last = await stream.run({ x: chunk }, { stateOutputs: true });
    ys.push(...last.y.data);
    start += n;
  }
  await stream.release();
  const chunked = Math.max(maxDiff(ys, [...whole.y.data]), maxDiff([...last.h_n.data], [...whole.h_n.data]));
  const node = maxDiff([...whole.y.data], y);
  return { ok: chunked <= 1e-6 && node <= 1e-5, detail: `chunks ${chunks}: chunked vs whole ${chunked}, browser vs onnxruntime-node ${node.toExponential(2)}` };
}

/**
 * Silero (rewritten with --input-context input:1:64) streamed by the helper, 512 samples a call; returns
 * each call's speech probability. `frames` is an array of Float32Array(512).
 */
export async function sileroStream(ort, StreamingSession, model, frames, options = {}) {
  const stream = options.stream ?? await StreamingSession.create(model, { ort, batch: 1, ...options });
  const outputs = [];
  for (const frame of frames) {
    const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);  // per call: proxy mode takes it
    const { output } = await stream.run({ input: new ort.Tensor('float32', frame.slice(), [1, 512]), sr });
    outputs.push(output.data[0]);
  }
  if (!options.stream) await stream.release();
  return outputs;
}

/** The 512-sample frames of `samples` (the last partial one left out). */
export const framesOf = (samples) => Array.from({ length: Math.floor(samples.length / 512) },
  (_, i) => samples.subarray(i * 512, (i + 1) * 512));

/** Silero on the speech file through the helper, against the authors' protocol as onnxruntime-node ran it. */
export async function sileroMatchesAuthors(ort, StreamingSession, model, expected, options = {}) {
  const frames = framesOf(await wavSamples('/site/speech.wav'));
  const outputs = await sileroStream(ort, StreamingSession, model, frames, options);
  const diff = maxDiff(outputs, expected.silero.outputs);
  const speech = outputs.filter((p) => p > 0.5).length;
  return { ok: diff <= 1e-5 && speech === expected.silero.speech, detail: `${frames.length} frames, speech in ${speech} (onnxruntime-node: ${expected.silero.speech}), max abs diff ${diff.toExponential(2)}` };
}

/** The authors' protocol on the original Silero, by hand: 64 samples of the previous frame in front. */
export async function sileroAuthors(ort, frames) {
  const original = await ort.InferenceSession.create('/site/silero_vad_v5.onnx');
  let state = new ort.Tensor('float32', new Float32Array(256), [2, 1, 128]);
  let context = new Float32Array(64);
  const outputs = [];
  for (const frame of frames) {
    const input = new Float32Array(576);
    input.set(context);
    input.set(frame, 64);
    const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
    const r = await original.run({ input: new ort.Tensor('float32', input, [1, 576]), state, sr });
    outputs.push(r.output.data[0]);
    state = r.stateN;
    context = frame.slice(448);
  }
  await original.release();
  return outputs;
}
