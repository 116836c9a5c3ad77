// What `verify` feeds and how it fails: the error type with its exit code, sessions and runs that fail
// with it, the --inputs values as tensors, and the random data inputs it makes up.
import { arrayFor, isFloatType, numel, randomTensor } from './tensors.mjs';

/** A refusal or failure with the exit code the CLI gives it (3: cannot run, 4: refused). */
export class VerifyError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** An onnxruntime session of `bytes` (or a path); a model that does not load is a VerifyError (3). */
export async function createSession(ort, bytes, sessionOptions, what) {
  try {
    return await ort.InferenceSession.create(bytes, sessionOptions);
  } catch (err) {
    throw new VerifyError(3, `${what} does not load in ONNX Runtime: ${err.message}`);
  }
}

/** The result of `run()`; a run that fails is a VerifyError (3) saying which. */
export async function runOrThrow(run, what) {
  try {
    return await run();
  } catch (err) {
    throw new VerifyError(3, `${what}: ${err.message}`);
  }
}

/**
 * A data input's tensor of random floats (or false bools), or a refusal naming what to give. Its shape:
 * `shape` when --inputs gave one without values, else the declared one with symbolic dimensions from
 * `dims`; the time axis, when there is one, is `length` long.
 */
export function makeInput(ort, name, meta, { dims, timeAxis, length, seed, shape: given }) {
  if (!meta || !Array.isArray(meta.shape)) throw new VerifyError(4, `input '${name}' has no declared shape: give it in --inputs`);
  const shape = (given ?? meta.shape).map((d, axis) => {
    if (axis === timeAxis) return length;
    if (typeof d === 'number') return d;
    if (d && Object.hasOwn(dims, d)) return dims[d];
    throw new VerifyError(4, `input '${name}': dimension ${d ? `'${d}'` : '(unnamed)'} on axis ${axis} has no value: ` +
      (d ? `pass --dim ${d}=N` : `give the input in --inputs (its values, or {"${name}": {"dims": [...]}} for random ones)`));
  });
  if (meta.type === 'bool') return new ort.Tensor('bool', arrayFor('bool', numel(shape)), shape);
  if (!isFloatType(meta.type)) {
    throw new VerifyError(4, `input '${name}' is ${meta.type}: random values could be out of its range; give it in --inputs`);
  }
  return randomTensor(ort.Tensor, meta.type, shape, `${seed}|${name}`);
}

/**
 * --inputs values as tensors of the declared element types: `tensors` by name; `shapes` holds the inputs
 * given as {dims} without data (random values of that shape).
 */
export async function parseInputs(ort, inputs, declared) {
  const tensors = {};
  const shapes = {};
  for (const [name, value] of Object.entries(inputs)) {
    const meta = declared.get(name);
    if (!meta) throw new VerifyError(2, `--inputs names '${name}', which is not an input of the rewritten model`);
    if (value instanceof ort.Tensor) {
      tensors[name] = value;
      continue;
    }
    let dims, flat;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      dims = value.dims;
      flat = value.data;
      if (flat === undefined && Array.isArray(dims) && dims.every((d) => Number.isInteger(d) && d >= 0)) {
        shapes[name] = dims;
        continue;
      }
    } else if (Array.isArray(value)) {
      dims = [];
      for (let v = value; Array.isArray(v); v = v[0]) dims.push(v.length);
      flat = value.flat(Infinity);
    } else {
      dims = (meta.shape ?? []).map((d) => (typeof d === 'number' ? d : 1));
      flat = new Array(numel(dims)).fill(value);
    }
    if (!Array.isArray(dims) || !Array.isArray(flat) || flat.length !== numel(dims)) {
      throw new VerifyError(2, `--inputs '${name}': ${flat?.length} values for shape [${dims}]`);
    }
    const data = arrayFor(meta.type, flat.length);
    const big = meta.type === 'int64' || meta.type === 'uint64';
    flat.forEach((v, i) => {
      data[i] = big ? BigInt(v) : meta.type === 'bool' ? (v ? 1 : 0) : Number(v);
    });
    tensors[name] = new ort.Tensor(meta.type, data, dims);
  }
  return { tensors, shapes };
}
