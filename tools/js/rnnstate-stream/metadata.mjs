// Reading the `rnnstate` metadata of an ONNX model, without onnxruntime's help.
//
// onnxruntime-node and onnxruntime-web (1.30) expose a session's input and output metadata but not the
// model's `metadata_props` (onnxruntime issue #16547), so the metadata is read from the model bytes:
// a dependency-free reader of the one protobuf field needed (ModelProto.metadata_props = 14, a repeated
// StringStringEntryProto {key = 1, value = 2}). Every other top-level field — the graph with its
// weights included — is skipped by its length, so reading a file or a Blob touches a few hundred bytes
// per top-level field, never the weights. Works in Node.js and in browsers: it imports nothing of Node.js
// (a file path is read by the ByteSource opener that the package's Node.js entry, index.mjs, passes in).

/** The `metadata_props` key rnnstate writes. */
export const METADATA_KEY = 'rnnstate';

const MODEL_METADATA_PROPS = 14;
const ENTRY_KEY = 1;
const ENTRY_VALUE = 2;
// Wire types (protobuf encoding).
const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;
// A tag (field number < 2^29: at most 5 bytes) plus a varint (at most 10 bytes).
const HEADER_BYTES = 15;

/**
 * Random access to the bytes of a model.
 * @typedef {object} ByteSource
 * @property {number} size  total length in bytes
 * @property {(offset: number, length: number) => Promise<Uint8Array>} read  bytes [offset, offset+length)
 *   (fewer at the end of the source)
 */

/** Decodes a varint at `pos` of `bytes`; returns [value, next position]. Values above 2^53 are refused. */
function varint(bytes, pos, what) {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (pos + i >= bytes.length) throw new Error(`not an ONNX model: truncated ${what}`);
    const b = bytes[pos + i];
    value += (b & 0x7f) * scale;
    if ((b & 0x80) === 0) {
      if (!Number.isSafeInteger(value)) throw new Error(`not an ONNX model: ${what} too large`);
      return [value, pos + i + 1];
    }
    scale *= 128;
  }
  throw new Error(`not an ONNX model: malformed ${what}`);
}

/**
 * Walks the fields of one message in `source` between `start` and `end`, calling
 * `onField(field, wireType, valueStart, valueLength)` for each length-delimited field.
 */
async function walkFields(source, start, end, onField) {
  let pos = start;
  while (pos < end) {
    const header = await source.read(pos, Math.min(HEADER_BYTES, end - pos));
    const [tag, afterTag] = varint(header, 0, 'field tag');
    const field = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (field === 0) throw new Error('not an ONNX model: field number 0');
    let next;
    if (wireType === VARINT) {
      next = varint(header, afterTag, 'varint field')[1];
      next += pos;
    } else if (wireType === FIXED64) {
      next = pos + afterTag + 8;
    } else if (wireType === FIXED32) {
      next = pos + afterTag + 4;
    } else if (wireType === LENGTH_DELIMITED) {
      const [length, afterLength] = varint(header, afterTag, 'field length');
      const valueStart = pos + afterLength;
      next = valueStart + length;
      if (next <= end) await onField(field, valueStart, length);
    } else {
      // Groups (3, 4) are not used by onnx.proto; anything else is not protobuf.
      throw new Error(`not an ONNX model: wire type ${wireType} at byte ${pos}`);
    }
    if (next > end) throw new Error(`not an ONNX model: field ${field} at byte ${pos} runs past the end (truncated?)`);
    pos = next;
  }
}

const utf8 = new TextDecoder('utf-8');

/** The bytes of a model in memory as a ByteSource. */
function memorySource(bytes) {
  return { size: bytes.length, read: async (offset, length) => bytes.subarray(offset, offset + length) };
}

/** A Blob (a browser File, or Node's Blob) as a ByteSource: only the slices read are loaded. */
function blobSource(blob) {
  return {
    size: blob.size,
    read: async (offset, length) => new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer()),
  };
}

/** Uint8Array view of an ArrayBuffer or any ArrayBufferView (no copy). */
export function asBytes(data) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return null;
}

/**
 * The `metadata_props` of an ONNX model, in file order.
 *
 * @param {Uint8Array | ArrayBuffer | ArrayBufferView | Blob | string | ByteSource} model  the model's
 *   bytes; a Blob (e.g. a browser File); a file path (with `openFile`); or a ByteSource
 * @param {{openFile?: (path: string) => Promise<ByteSource & {close: () => Promise<void>}>}} [options]
 *   `openFile` reads a file path (Node.js: the package's main entry passes its reader)
 * @returns {Promise<Array<{key: string, value: string}>>}
 */
export async function readMetadataProps(model, { openFile } = {}) {
  let source = null;
  let close = null;
  const bytes = asBytes(model);
  if (bytes) source = memorySource(bytes);
  else if (typeof Blob !== 'undefined' && model instanceof Blob) source = blobSource(model);
  else if (typeof model === 'string') {
    if (!openFile) throw new Error('a model path can only be read in Node.js; pass the model bytes, a Blob or (to StreamingSession.create) a URL');
    source = await openFile(model);
    close = source.close;
  } else if (model && typeof model.read === 'function' && Number.isFinite(model.size)) source = model;
  else throw new Error('readMetadataProps: expected the model as bytes, a Blob, a file path (Node.js) or a ByteSource');

  try {
    const props = [];
    await walkFields(source, 0, source.size, async (field, start, length) => {
      if (field !== MODEL_METADATA_PROPS) return;
      const entry = await source.read(start, length);
      if (entry.length !== length) throw new Error('not an ONNX model: truncated metadata_props');
      const found = { key: '', value: '' };
      await walkFields(memorySource(entry), 0, length, async (f, s, n) => {
        if (f === ENTRY_KEY) found.key = utf8.decode(entry.subarray(s, s + n));
        else if (f === ENTRY_VALUE) found.value = utf8.decode(entry.subarray(s, s + n));
      });
      props.push(found);
    });
    return props;
  } finally {
    if (close) await close();
  }
}

/**
 * One state pair of the `rnnstate` metadata (see rnnstate's docs/metadata.md).
 * Readers ignore keys they do not know.
 * @typedef {object} StatePair
 * @property {string} input       graph input to feed
 * @property {string} output      graph output to feed back as `input` on the next call
 * @property {string} node        the recurrent node owning the state
 * @property {string} kind        "h" or "c" (others may appear)
 * @property {boolean} optional   the input has a default (defaults mode): onnxruntime-node/web hide it
 * @property {boolean} streamable chunked runs with the state fed back equal one full run
 * @property {boolean} [carried] the recurrence carries the state from call to call (absent: `streamable`)
 * @property {boolean} [carried] the recurrence carries the state from call to call (absent: `streamable`)
 * @property {string} dtype       element type of `input`: float32, float64, float16, bfloat16; a loop's state
 *   may be int8, uint8, int16, uint16, int32, uint32, int64, uint64 or bool
 * @property {Array<number|string|null>} shape  shape of the tensor fed as `input`: numbers, the data
 *   inputs' own symbolic dimension names, and null (or "", as older rewrites wrote it) for a dimension
 *   without a name
 * @property {number} batch_axis  axis of `shape` that is the batch (-1: none)
 * @property {"zeros"|"empty"} init  first call: zeros of `shape`, or an empty tensor (batch axis 0)
 *   meaning the model's own default
 * @property {[number, number]} [rows]  rows of a stacked input/output that are this state's
 */

/**
 * @typedef {object} RnnstateMetadata
 * @property {number} version  1
 * @property {StatePair[]} states
 * @property {{kind: "tensor"|"sequence", values: object[]}} [packed]  a packed model's values (rnnstate
 *   `--pack`): then the states' `input`/`output` are values inside the graph and the packed values are fed
 * @property {{version: number, time: Array<{input: string, axis: number}>, chunk_exact?: boolean,
 *   chunk_multiple?: number, delay?: number, flush?: number, flush_exact?: boolean, first_chunk_min?: number, reason?: string,
 *   outputs?: object[]}} [stream]  the whole model's verdict on chunked runs (rnnstate docs/metadata.md, "stream")
 */

/**
 * Parses and checks the `rnnstate` metadata value (a JSON text or the parsed object).
 * Throws with the reason when it is not version 1 or a pair lacks a field a runner needs
 * (metadata written before `dtype`/`shape`/`batch_axis`/`init` existed: rewrite the model again).
 * @param {string | object} value
 * @returns {RnnstateMetadata}
 */
export function parseRnnstateMetadata(value) {
  let doc = value;
  if (typeof value === 'string') {
    try {
      doc = JSON.parse(value);
    } catch (err) {
      throw new Error(`rnnstate metadata is not JSON: ${err.message}`);
    }
  }
  if (!doc || typeof doc !== 'object') throw new Error('rnnstate metadata is not a JSON object');
  if (doc.version !== 1) throw new Error(`rnnstate metadata version ${doc.version} is not supported (this helper reads version 1)`);
  if (!Array.isArray(doc.states)) throw new Error('rnnstate metadata has no "states" array');
  doc.states.forEach((st, i) => {
    const where = `rnnstate metadata, state ${i}` + (st && typeof st.input === 'string' ? ` ('${st.input}')` : '');
    if (!st || typeof st !== 'object') throw new Error(`${where}: not an object`);
    for (const key of ['input', 'output']) {
      if (typeof st[key] !== 'string' || !st[key]) throw new Error(`${where}: "${key}" is missing`);
    }
    const missing = ['dtype', 'shape', 'batch_axis', 'init'].filter((k) => st[k] === undefined);
    if (missing.length) {
      throw new Error(`${where}: no ${missing.join('/')} (metadata of an rnnstate older than the state contract: ` +
        'rewrite the model again)');
    }
    if (!Array.isArray(st.shape) || !st.shape.every((d) => (Number.isInteger(d) && d >= 0) || typeof d === 'string' || d === null)) {
      throw new Error(`${where}: "shape" must be an array of non-negative integers, dimension names and nulls`);
    }
    if (!Number.isInteger(st.batch_axis) || st.batch_axis < -1 || st.batch_axis >= st.shape.length) {
      throw new Error(`${where}: "batch_axis" ${st.batch_axis} is not an axis of shape [${st.shape}]`);
    }
    if (st.init !== 'zeros' && st.init !== 'empty') {
      throw new Error(`${where}: unknown "init" '${st.init}' (this helper knows "zeros" and "empty")`);
    }
    if (st.init === 'empty' && st.shape.length === 0) throw new Error(`${where}: "init" is "empty" but the state is a scalar`);
    if (st.rows !== undefined && !(Array.isArray(st.rows) && st.rows.length === 2 && st.rows.every(Number.isInteger))) {
      throw new Error(`${where}: "rows" must be [begin, end]`);
    }
  });
  if (doc.packed !== undefined) checkPacked(doc.packed, doc.states.length);
  return doc;
}

/** Checks the `packed` object of a packed model (rnnstate's docs/metadata.md, "Packed models"). */
function checkPacked(packed, stateCount) {
  if (!packed || typeof packed !== 'object' || !Array.isArray(packed.values) || packed.values.length === 0) {
    throw new Error('rnnstate metadata: "packed" has no "values"');
  }
  if (packed.kind !== 'tensor' && packed.kind !== 'sequence') throw new Error(`rnnstate metadata: unknown packed kind '${packed.kind}'`);
  packed.values.forEach((v, i) => {
    const where = `rnnstate metadata, packed value ${i}`;
    for (const key of ['input', 'output', 'dtype']) {
      if (typeof v?.[key] !== 'string' || !v[key]) throw new Error(`${where}: "${key}" is missing`);
    }
    if (v.init !== 'empty') throw new Error(`${where}: unknown "init" '${v.init}' (a packed value is fed empty first)`);
    if (packed.kind === 'tensor' && !(Array.isArray(v.shape) && v.shape.length === 2 && Number.isInteger(v.shape[1]) &&
      v.batch_axis === 0)) {
      throw new Error(`${where}: "shape" must be [batch, N] with "batch_axis" 0`);
    }
    if (!Array.isArray(v.members) || !v.members.every((m) => Array.isArray(m?.states) &&
      m.states.every((s) => Number.isInteger(s) && s >= 0 && s < stateCount))) {
      throw new Error(`${where}: "members" must name states of "states"`);
    }
  });
}

/**
 * The parsed `rnnstate` metadata of a model, or null when the model has none (not rewritten by rnnstate).
 * @param {Parameters<typeof readMetadataProps>[0]} model
 * @param {Parameters<typeof readMetadataProps>[1]} [options]
 * @returns {Promise<RnnstateMetadata | null>}
 */
export async function readRnnstateMetadata(model, options) {
  const found = (await readMetadataProps(model, options)).filter((p) => p.key === METADATA_KEY);
  if (found.length === 0) return null;
  if (found.length > 1) throw new Error(`the model has ${found.length} "${METADATA_KEY}" metadata entries`);
  return parseRnnstateMetadata(found[0].value);
}

const MODEL_GRAPH = 7;
const GRAPH_INITIALIZER = 5;
const TENSOR_NAME = 8;

/**
 * Calls `onField(field, wireType, start, valueStart, end)` for every field of the message in
 * bytes[begin, end): `start` is where its tag begins, [valueStart, end) its value (for a length-delimited
 * field the bytes after the length).
 */
function forEachField(bytes, begin, end, onField) {
  let pos = begin;
  while (pos < end) {
    const [tag, afterTag] = varint(bytes, pos, 'field tag');
    const field = Math.floor(tag / 8);
    const wireType = tag % 8;
    let valueStart = afterTag;
    let next;
    if (wireType === VARINT) next = varint(bytes, afterTag, 'varint field')[1];
    else if (wireType === FIXED64) next = afterTag + 8;
    else if (wireType === FIXED32) next = afterTag + 4;
    else if (wireType === LENGTH_DELIMITED) {
      const [length, afterLength] = varint(bytes, afterTag, 'field length');
      valueStart = afterLength;
      next = afterLength + length;
    } else throw new Error(`not an ONNX model: wire type ${wireType} at byte ${pos}`);
    if (field === 0 || next > end) throw new Error(`not an ONNX model: field ${field} at byte ${pos} is malformed or truncated`);
    onField(field, wireType, pos, valueStart, next);
    pos = next;
  }
}

function encodeVarint(value) {
  const out = [];
  let v = value;
  while (v >= 128) {
    out.push((v % 128) | 128);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Uint8Array.from(out);
}

function concatBytes(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/**
 * A copy of a model's bytes without the main graph's initializers named `names`, every other byte as it
 * was. Used to feed the state inputs of a defaults-mode rewrite from onnxruntime-node or -web, which do not
 * list an input that has an initializer of its name and ignore a feed for it: without the initializer
 * the input is required, and the metadata's first feeds ("zeros" or "empty") give what the default gave.
 * @param {Uint8Array | ArrayBuffer | ArrayBufferView} model  the model's bytes
 * @param {Iterable<string>} names
 * @returns {Uint8Array}
 */
export function withoutInitializers(model, names) {
  const bytes = asBytes(model);
  if (!bytes) throw new Error('withoutInitializers: expected the model as bytes');
  const drop = new Set(names);
  const nameOf = (tensor) => {
    let name = '';
    forEachField(tensor, 0, tensor.length, (field, wireType, start, valueStart, end) => {
      if (field === TENSOR_NAME && wireType === LENGTH_DELIMITED) name = utf8.decode(tensor.subarray(valueStart, end));
    });
    return name;
  };
  const parts = [];
  forEachField(bytes, 0, bytes.length, (field, wireType, start, valueStart, end) => {
    if (field !== MODEL_GRAPH || wireType !== LENGTH_DELIMITED) {
      parts.push(bytes.subarray(start, end));
      return;
    }
    const graph = bytes.subarray(valueStart, end);
    const kept = [];
    forEachField(graph, 0, graph.length, (f, w, s, vs, e) => {
      if (f === GRAPH_INITIALIZER && w === LENGTH_DELIMITED && drop.has(nameOf(graph.subarray(vs, e)))) return;
      kept.push(graph.subarray(s, e));
    });
    const body = concatBytes(kept);
    parts.push(bytes.subarray(start, valueStart - encodeVarint(end - valueStart).length), encodeVarint(body.length), body);
  });
  return concatBytes(parts);
}
