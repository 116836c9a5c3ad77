// Tensor helpers for the e2e harness: seeded random data, slicing/concatenation along one axis, and
// element-wise comparison on onnxruntime-node Tensors. The arithmetic is the streaming helper's own
// (tools/js/rnnstate-stream/tensors.mjs, what `rnnstate-stream verify` compares with); this file adds
// what only the harness needs.
import { Tensor } from 'onnxruntime-node';
import * as helper from '../../../tools/js/rnnstate-stream/tensors.mjs';

export { concatAxis, hashSeed, isFloatType, isIntType, maxAbsDiff, numel, sliceAxis } from '../../../tools/js/rnnstate-stream/tensors.mjs';

const { arrayFor, numel } = helper;
const isBigIntType = (type) => type === 'int64' || type === 'uint64';

/** Float tensor with values uniform in [-1, 1) from a seeded PRNG. */
export const randomTensor = (type, dims, seedText) => helper.randomTensor(Tensor, type, dims, seedText);

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
