// Tensor helpers for the e2e harness: seeded random data, slicing/concatenation along
// one axis, and element-wise comparison. Everything works on onnxruntime-node Tensors.
import { Tensor } from 'onnxruntime-node';

// ORT element type -> TypedArray constructor. 'bool' tensors are backed by Uint8Array.
// float16 is stored as raw Uint16 bits: we can carry such tensors around (slice/concat/feed
// back) but we cannot generate random float16 inputs or compare them numerically.
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

function arrayFor(type, length) {
  const Ctor = ARRAY_OF_TYPE[type];
  if (!Ctor) throw new Error(`tensor element type '${type}' is not supported by the harness`);
  return new Ctor(length);
}

// 32-bit FNV-1a: turns "seed|model|input" into a PRNG seed, so every input's data depends only
// on its own name (not on input order or on which other models were run).
export function hashSeed(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

// mulberry32: tiny, fast, deterministic across platforms/Node versions (Math.random is not seedable).
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Float tensor with values uniform in [-1, 1) from a seeded PRNG. */
export function randomTensor(type, dims, seedText) {
  if (!isFloatType(type)) throw new Error(`cannot generate random data of type '${type}'`);
  const next = mulberry32(hashSeed(seedText));
  const data = arrayFor(type, numel(dims));
  for (let i = 0; i < data.length; i++) data[i] = next() * 2 - 1;
  return new Tensor(type, data, dims);
}

/**
 * A copy of `t` with index k along `axis` set to values[k] everywhere (range pinning: every slice along
 * another axis then holds these values, e.g. the same minimum and maximum in every chunk).
 */
export function pinAlongAxis(t, axis, values) {
  const data = t.data.slice();
  const inner = numel(t.dims.slice(axis + 1));
  const size = t.dims[axis];
  for (const [k, value] of Object.entries(values)) {
    const index = Number(k);
    if (!Number.isInteger(index) || index < 0 || index >= size) throw new Error(`pinned index ${k} outside axis ${axis} (${size})`);
    for (let i = 0; i < data.length; i++) {
      if (Math.floor(i / inner) % size === index) data[i] = value;
    }
  }
  return new Tensor(t.type, data, t.dims);
}

export function zerosTensor(type, dims) {
  return new Tensor(type, arrayFor(type, numel(dims)), dims);
}

/**
 * Tensor of `type`/`dims` filled from manifest values: a number/boolean (broadcast to every
 * element) or a flat array of exactly numel(dims) values (row-major).
 */
export function tensorFromValues(type, dims, values) {
  const flat = Array.isArray(values) ? values.flat(Infinity) : null;
  const data = arrayFor(type, numel(dims));
  if (flat && flat.length !== data.length) {
    throw new Error(`${flat.length} values given for shape [${dims}] (${data.length} elements)`);
  }
  for (let i = 0; i < data.length; i++) {
    const v = flat ? flat[i] : values;
    data[i] = isBigIntType(type) ? BigInt(v) : type === 'bool' ? (v ? 1 : 0) : Number(v);
  }
  return new Tensor(type, data, dims);
}

// A tensor viewed as [outer, dims[axis], inner] - the layout slice/concat work on.
function axisView(dims, axis) {
  if (axis < 0 || axis >= dims.length) throw new Error(`axis ${axis} out of range for shape [${dims}]`);
  return { outer: numel(dims.slice(0, axis)), size: dims[axis], inner: numel(dims.slice(axis + 1)) };
}

/** Elements [start, start+length) of `t` along `axis`. */
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
  return new Tensor(t.type, data, dims);
}

/** Concatenation of tensors along `axis` (all other dims must agree). */
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
  return new Tensor(first.type, data, dims);
}

/**
 * Max absolute element difference between two tensors; Infinity (with a reason) when shapes or
 * types differ or exactly one side is NaN. Integer and bool tensors are compared the same way
 * (any difference >= 1 fails every sensible tolerance).
 */
export function maxAbsDiff(a, b) {
  if (a.type !== b.type) return { diff: Infinity, why: `type ${a.type} vs ${b.type}` };
  if (a.dims.join(',') !== b.dims.join(',')) return { diff: Infinity, why: `shape [${a.dims}] vs [${b.dims}]` };
  if (a.type === 'float16') throw new Error('float16 outputs cannot be compared numerically');
  let diff = 0;
  const big = isBigIntType(a.type);
  for (let i = 0; i < a.data.length; i++) {
    const x = a.data[i], y = b.data[i];
    let d;
    if (big) d = Number(x > y ? x - y : y - x);
    else if (Number.isNaN(x) || Number.isNaN(y)) d = Number.isNaN(x) && Number.isNaN(y) ? 0 : Infinity;
    else d = Math.abs(x - y);
    if (d > diff) diff = d;
  }
  return { diff, why: '' };
}
