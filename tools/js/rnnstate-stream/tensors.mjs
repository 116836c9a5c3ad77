// Tensor arithmetic for checking streams: seeded random data, slicing and concatenation along one axis,
// element-wise comparison. Works on any onnxruntime Tensor (node or web): new tensors are made with the
// class of the tensor given (`t.constructor`), or with a `Tensor` class passed in.

// Element type -> TypedArray constructor. 'bool' is backed by Uint8Array; float16 by its raw Uint16 bits
// (carried, sliced and concatenated, never generated or compared numerically).
const ARRAY_OF_TYPE = {
  float32: Float32Array, float64: Float64Array,
  int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array,
  int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  bool: Uint8Array, float16: Uint16Array,
};

export const isFloatType = (type) => type === 'float32' || type === 'float64';
export const isIntType = (type) => /^u?int(8|16|32|64)$/.test(type);
const isBigIntType = (type) => type === 'int64' || type === 'uint64';

export const numel = (dims) => dims.reduce((a, b) => a * b, 1);

/** A zero-filled TypedArray of `length` elements of `type`. */
export function arrayFor(type, length) {
  const Ctor = ARRAY_OF_TYPE[type];
  if (!Ctor) throw new Error(`tensor element type '${type}' is not supported`);
  return new Ctor(length);
}

// 32-bit FNV-1a: turns "seed|model|input" into a PRNG seed, so that every input's data depends only on
// its own name (not on input order or on which other models were run).
export function hashSeed(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** mulberry32: a small deterministic PRNG (Math.random cannot be seeded); returns () => [0, 1). */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A float tensor of `Tensor` with values uniform in [-1, 1), seeded by `seedText`. */
export function randomTensor(Tensor, type, dims, seedText) {
  if (!isFloatType(type)) throw new Error(`cannot generate random data of type '${type}'`);
  const next = seededRandom(hashSeed(seedText));
  const data = arrayFor(type, numel(dims));
  for (let i = 0; i < data.length; i++) data[i] = next() * 2 - 1;
  return new Tensor(type, data, dims);
}

// A tensor viewed as [outer, dims[axis], inner]: the layout slicing and concatenation work on.
function axisView(dims, axis) {
  if (axis < 0 || axis >= dims.length) throw new Error(`axis ${axis} out of range for shape [${dims}]`);
  return { outer: numel(dims.slice(0, axis)), size: dims[axis], inner: numel(dims.slice(axis + 1)) };
}

/** Elements [start, start+length) of `t` along `axis`, a tensor of the same class. */
export function sliceAxis(t, axis, start, length) {
  const { outer, size, inner } = axisView(t.dims, axis);
  if (start + length > size) throw new Error(`slice [${start}, ${start + length}) exceeds dim ${size}`);
  const data = arrayFor(t.type, outer * length * inner);
  for (let o = 0; o < outer; o++) {
    const from = (o * size + start) * inner;
    data.set(t.data.subarray(from, from + length * inner), o * length * inner);
  }
  const dims = [...t.dims];
  dims[axis] = length;
  return new t.constructor(t.type, data, dims);
}

/** Concatenation of tensors along `axis` (all other dims must agree), a tensor of the first's class. */
export function concatAxis(tensors, axis) {
  const first = tensors[0];
  const total = tensors.reduce((n, t) => n + t.dims[axis], 0);
  const dims = [...first.dims];
  dims[axis] = total;
  const { outer, inner } = axisView(dims, axis);
  const data = arrayFor(first.type, numel(dims));
  let offset = 0;
  for (const t of tensors) {
    const rest = (d) => d.filter((_, i) => i !== axis).join(',');
    if (t.type !== first.type || rest(t.dims) !== rest(first.dims)) {
      throw new Error(`cannot concatenate [${t.dims}] ${t.type} with [${first.dims}] ${first.type} on axis ${axis}`);
    }
    const block = t.dims[axis] * inner;
    for (let o = 0; o < outer; o++) {
      data.set(t.data.subarray(o * block, (o + 1) * block), (o * total + offset) * inner);
    }
    offset += t.dims[axis];
  }
  return new first.constructor(first.type, data, dims);
}

/**
 * Element-wise comparison of `got` against `want`:
 * `diff` the max absolute difference, `rel` the max of |got - want| / |want| over elements where want is
 * not 0, and `exceeds(atol, rtol)` whether some element breaks |got - want| <= atol + rtol * |want| (numpy's
 * allclose). Differing types or shapes, or NaN on one side only, give Infinity with `why`. Integer and bool
 * tensors are compared as numbers.
 */
export function compareTensors(got, want) {
  const infinite = (why) => ({ diff: Infinity, rel: Infinity, why, exceeds: () => true });
  if (got.type !== want.type) return infinite(`type ${got.type} vs ${want.type}`);
  if (got.dims.join(',') !== want.dims.join(',')) return infinite(`shape [${got.dims}] vs [${want.dims}]`);
  if (got.type === 'float16') throw new Error('float16 tensors cannot be compared numerically');
  const big = isBigIntType(got.type);
  let diff = 0;
  let rel = 0;
  const pairs = [];  // |got - want|, |want| of every element that differs: what exceeds() decides on
  for (let i = 0; i < got.data.length; i++) {
    const x = got.data[i], y = want.data[i];
    let d, w;
    if (big) {
      d = Number(x > y ? x - y : y - x);
      w = Math.abs(Number(y));
    } else if (Number.isNaN(x) || Number.isNaN(y)) {
      if (Number.isNaN(x) && Number.isNaN(y)) continue;
      return infinite(`NaN at element ${i}`);
    } else {
      d = Math.abs(x - y);
      w = Math.abs(y);
    }
    if (d === 0) continue;
    if (d > diff) diff = d;
    if (w > 0 && d / w > rel) rel = d / w;
    pairs.push(d, w);
  }
  const exceeds = (atol, rtol) => {
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] > atol + rtol * pairs[i + 1]) return true;
    return false;
  };
  return { diff, rel, why: '', exceeds };
}

/** Max absolute element difference, as compareTensors: {diff, why}. */
export function maxAbsDiff(a, b) {
  const { diff, why } = compareTensors(a, b);
  return { diff, why };
}
