// The first-call protocol of rnnstate's state contract, as data: which tensor to feed each state input
// on the first call (and after a reset), from the metadata alone. The same feeds `rnnstate init MODEL
// --batch N --json` prints.

/**
 * One state input's first feed (as `rnnstate init --json` prints it).
 * @typedef {object} FirstFeedSpec
 * @property {string} input   the state input
 * @property {string} dtype   its element type
 * @property {number[]} shape concrete shape; the batch axis is 0 when `init` is "empty"
 * @property {"zeros"|"empty"} init
 * @property {number} batchAxis
 */

/**
 * The state pairs grouped by state input, in metadata order: several pairs share one input when the
 * model exposes states in its own packed tensors (`region`, `rows`); such an input is fed once and its
 * output fed back once.
 * Throws when pairs of one input disagree (output, dtype, shape, batch axis or init).
 * @param {import('./metadata.mjs').StatePair[]} states
 * @returns {Array<{input: string, output: string, pairs: import('./metadata.mjs').StatePair[]}>}
 */
export function groupByInput(states) {
  const groups = new Map();
  for (const st of states) {
    const group = groups.get(st.input);
    if (!group) {
      groups.set(st.input, { input: st.input, output: st.output, pairs: [st] });
      continue;
    }
    const first = group.pairs[0];
    const same = st.output === first.output && st.dtype === first.dtype && st.init === first.init &&
      st.batch_axis === first.batch_axis && JSON.stringify(st.shape) === JSON.stringify(first.shape);
    if (!same) throw new Error(`rnnstate metadata: the pairs of state input '${st.input}' disagree (output, dtype, shape or init)`);
    group.pairs.push(st);
  }
  const outputs = new Map();
  for (const g of groups.values()) {
    if (outputs.has(g.output)) throw new Error(`rnnstate metadata: state output '${g.output}' feeds two inputs ('${outputs.get(g.output)}', '${g.input}')`);
    outputs.set(g.output, g.input);
  }
  return [...groups.values()];
}

/**
 * Concrete first feeds, one per state input.
 *
 * `dims` gives symbolic dimensions their values (usually read off the data feeds: the metadata names
 * a state's symbolic dimensions after the data inputs' own). `batch`, when given, is the batch size
 * whatever the batch axis is named (as `rnnstate init --batch`). A dimension without a value throws,
 * naming it.
 *
 * @param {import('./metadata.mjs').StatePair[]} states
 * @param {{dims?: Record<string, number>, batch?: number}} [values]
 * @returns {FirstFeedSpec[]}
 */
export function firstFeedSpecs(states, { dims = {}, batch } = {}) {
  return groupByInput(states).map(({ pairs: [st] }) => {
    // Empty along the batch, or (a loop's state without one: batch_axis -1) along axis 0.
    const emptyAxis = st.batch_axis >= 0 ? st.batch_axis : 0;
    const shape = st.shape.map((d, axis) => {
      if (axis === emptyAxis && st.init === 'empty') return 0;
      // A window that looked ahead (rewrite --lookahead): the first context is its padding before time alone;
      // one whose Pad fills in another mode (context.pad) or a window without padding ("valid"): empty (the
      // model pads what the context lacks; the valid window's first call emits fewer frames).
      if (st.kind === 'context' && (st.context?.lookahead > 0 || st.context?.pad || st.context?.valid === true) &&
          axis === st.context.axis) {
        return st.context.pad || st.context.valid === true ? 0 : st.context.frames - st.context.lookahead;
      }
      if (typeof d === 'number') return d;
      if (axis === st.batch_axis && batch !== undefined) return batch;
      // null (or "", as older rewrites wrote it): a dimension without a name, which no data feed gives.
      const named = typeof d === 'string' && d !== '';
      if (named && Object.hasOwn(dims, d)) return dims[d];
      // A context's zeros are broadcast by the model (the Expand in front of its Concat) to the value it is
      // concatenated with: one element stands for a dimension whose size no data feed gives.
      if (st.kind === 'context' && axis !== st.batch_axis) return 1;
      if (st.kind === 'context' && batch === undefined) return 1;
      const what = axis === st.batch_axis ? 'its batch dimension' : 'dimension';
      if (!named && axis !== st.batch_axis) {
        throw new Error(`state input '${st.input}': ${what} ${axis} has no name, so no data feed gives its size`);
      }
      const name = named ? `'${d}'` : '(unnamed)';
      throw new Error(`state input '${st.input}': ${what} ${name} (axis ${axis}) has no value: it is not a ` +
        `dimension of the data inputs fed; pass it as ${axis === st.batch_axis ? '{batch: N}' : `{dims: {'${d}': N}}`}`);
    });
    return { input: st.input, dtype: st.dtype, shape, init: st.init, batchAxis: st.batch_axis };
  });
}

// Element type -> TypedArray constructor for the tensors the helper makes. float16 tensors of
// onnxruntime's JavaScript API take their raw bits as a Uint16Array (zero bits are 0.0).
const ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array,
  int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array, int32: Int32Array,
  uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

/**
 * The tensor of one first feed: zeros of its shape, or the empty tensor.
 * @param {FirstFeedSpec} spec
 * @param {new (type: string, data: ArrayLike<unknown>, dims: readonly number[]) => unknown} Tensor
 *   the `Tensor` class of the onnxruntime package in use
 */
export function firstFeedTensor(spec, Tensor) {
  const Array = ARRAYS[spec.dtype];
  if (!Array) {
    throw new Error(`state input '${spec.input}' is ${spec.dtype}, which onnxruntime's JavaScript API has no tensors of`);
  }
  return new Tensor(spec.dtype, new Array(spec.shape.reduce((a, b) => a * b, 1)), spec.shape);
}

/**
 * The state values a caller carries, one per fed tensor: for a packed model (metadata `packed`, rnnstate
 * `--pack tensor`) one per packed value, holding its members' states; otherwise the state inputs
 * (groupByInput). Each has the shape, batch axis, dtype and init of what is fed.
 * Throws for a sequence-packed model: onnxruntime's JavaScript API cannot feed a Sequence.
 * @param {import('./metadata.mjs').RnnstateMetadata} metadata
 * @returns {Array<{input: string, output: string, pairs: import('./metadata.mjs').StatePair[], dtype: string,
 *   shape: Array<number|string|null>, batch_axis: number, init: string, streamable: boolean, carried: boolean}>}
 * `streamable`: chunked runs equal one full run; `carried`: the recurrences carry these states from call to
 * call (a runner feeds them back), also where the model around them makes chunked runs differ.
 */
export function stateValues(metadata) {
  const packed = metadata.packed;
  if (!packed) {
    return groupByInput(metadata.states).map((g) => ({
      ...g, dtype: g.pairs[0].dtype, shape: g.pairs[0].shape, batch_axis: g.pairs[0].batch_axis, init: g.pairs[0].init,
      streamable: g.pairs.every((p) => p.streamable !== false), carried: g.pairs.every(carriedPair),
    }));
  }
  if (packed.kind !== 'tensor') {
    throw new Error(`the model's states are packed in a ${packed.kind}, which onnxruntime's JavaScript API cannot feed: ` +
      'rewrite the original model with `rnnstate rewrite MODEL --pack tensor --state-inputs required`');
  }
  return packed.values.map((v) => {
    const pairs = v.members.flatMap((m) => m.states.map((i) => metadata.states[i]));
    return {
      input: v.input, output: v.output, pairs, dtype: v.dtype, shape: v.shape, batch_axis: v.batch_axis, init: v.init,
      streamable: v.streamable !== false, carried: pairs.every(carriedPair), optional: v.optional === true,
    };
  });
}

/** Whether a pair's recurrence carries its state between calls (`carried`; older metadata: `streamable`). */
function carriedPair(pair) {
  return (pair.carried ?? pair.streamable) !== false;
}

/**
 * Concrete first feeds of the values stateValues() gives: a packed tensor is fed empty ([0, N]); the
 * state inputs of an unpacked model as firstFeedSpecs() says.
 * @param {import('./metadata.mjs').RnnstateMetadata} metadata
 * @param {{dims?: Record<string, number>, batch?: number}} [values]
 * @returns {FirstFeedSpec[]}
 */
export function firstFeedSpecsOf(metadata, values = {}) {
  if (!metadata.packed) return firstFeedSpecs(metadata.states, values);
  return stateValues(metadata).map((v) => ({
    input: v.input, dtype: v.dtype, shape: v.shape.map((d, axis) => (axis === v.batch_axis ? 0 : d)), init: v.init,
    batchAxis: v.batch_axis,
  }));
}
