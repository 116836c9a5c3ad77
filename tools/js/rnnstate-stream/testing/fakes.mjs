// Test helpers of rnnstate-stream: ModelProto bytes encoded by hand, and a fake onnxruntime (Tensor and
// a session) whose "model" carries one running sum per state input.

// ---------------------------------------------------------------------------------------------
// Protobuf encoding, just enough to build ModelProto bytes by hand.
export const varint = (n) => {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
};
export const bytesOf = (s) => [...new TextEncoder().encode(s)];
export const field = (number, wire, payload) => [...varint(number * 8 + wire), ...payload];
export const lengthDelimited = (number, payload) => field(number, 2, [...varint(payload.length), ...payload]);
export const entry = (key, value) => lengthDelimited(14, [...lengthDelimited(1, bytesOf(key)), ...lengthDelimited(2, bytesOf(value))]);
export const model = (...parts) => new Uint8Array(parts.flat());

export const STATES = {
  version: 1,
  states: [{ input: 'h_in', output: 'h_out', node: 'gru', graph: 'main', kind: 'h', optional: false, streamable: true,
    dtype: 'float32', shape: [1, 'batch', 2], batch_axis: 1, init: 'zeros', path: [] }],
};

// ---------------------------------------------------------------------------------------------
// A fake onnxruntime: Tensor, and a session of a "model" with one state per input name:
// y[t] = x[t] + h (running sum, per batch element), final h = h + sum_t x[t]. Chunked == full run.
export class Tensor {
  constructor(type, data, dims) {
    Object.assign(this, { type, data, dims: [...dims] });
  }
}
export const ort = { Tensor };

export function fakeSession(stateInputs = ['h_in'], stateOutputs = ['h_out'], { dataShape = ['seq', 'batch'] } = {}) {
  const calls = [];
  return {
    calls,
    inputNames: ['x', ...stateInputs],
    outputNames: ['y', ...stateOutputs],
    inputMetadata: [{ name: 'x', isTensor: true, type: 'float32', shape: dataShape },
      ...stateInputs.map((name) => ({ name, isTensor: true, type: 'float32', shape: [1, 'batch', 1] }))],
    async run(feeds) {
      calls.push(feeds);
      const [T, B] = feeds.x.dims;
      const out = { y: new Tensor('float32', new Float32Array(T * B), [T, B]) };
      stateInputs.forEach((name, i) => {
        const fed = feeds[name];
        const h = Float32Array.from({ length: B }, (_, b) => (fed.dims[1] === 0 ? 0 : fed.data[b]));
        for (let t = 0; t < T; t++) for (let b = 0; b < B; b++) { h[b] += feeds.x.data[t * B + b]; if (i === 0) out.y.data[t * B + b] = h[b]; }
        out[stateOutputs[i]] = new Tensor('float32', h, [1, B, 1]);
      });
      return out;
    },
  };
}
export const meta = (overrides = []) => ({
  version: 1,
  states: [{ ...STATES.states[0], input: 'h_in', output: 'h_out', shape: [1, 'batch', 1] }, ...overrides],
});
export const x = (values, B = 1) => new Tensor('float32', Float32Array.from(values), [values.length / B, B]);

