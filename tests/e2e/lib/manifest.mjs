// Reads models/manifest.json (format: see tests/e2e/README.md and the project's contract) and
// turns each entry into a normalized, validated object, plus the input feeds for a session.
import { readFileSync } from 'node:fs';
import { isFloatType, isIntType, pinAlongAxis, randomTensor, tensorFromValues } from './tensors.mjs';

// "seq": chunk the seq_axes inputs; "trip_count": also set the Loop trip count per call; "calls":
// repeat the same call K times (If models). "sequence" is accepted as an alias of "seq".
export const CHUNK_MODES = ['seq', 'trip_count', 'calls'];

export function loadManifest(file) {
  const json = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(json.models)) throw new Error(`${file}: expected {"models": [...]}`);
  return json.models;
}

const isPositiveInt = (n) => Number.isInteger(n) && n > 0;

/** Validated copy of one manifest entry with every optional field defaulted. Throws on bad entries. */
export function normalizeEntry(raw) {
  if (typeof raw.file !== 'string' || !raw.file) throw new Error('entry without "file"');
  const e = {
    file: raw.file,
    note: raw.note ?? '',
    dims: raw.dims ?? {},
    inputShapes: raw.input_shapes ?? {},
    seqAxes: raw.seq_axes ?? {},
    outputSeqAxes: raw.output_seq_axes ?? {},
    streamingSkipOutputs: raw.streaming_skip_outputs ?? [],
    chunkMode: raw.chunk_mode === 'sequence' ? 'seq' : raw.chunk_mode ?? 'seq',
    tripInput: raw.trip_input ?? raw.trip_count_input ?? null,
    chunks: raw.chunks ?? null,
    streaming: raw.streaming ?? false,
    zeroDefault: raw.zero_default ?? false,
    rewriteArgs: raw.rewrite_args ?? [],
    inputsInt: raw.inputs_int ?? {},
    inputsBool: raw.inputs_bool ?? {},
    expectPairs: raw.expect_pairs ?? null,   // null: "non-empty iff the model has recurrent nodes"
    expectExit: raw.expect_exit ?? 0,        // non-zero: only check that `rewrite` fails this way
    branchTaken: raw.branch_taken ?? null,   // calls mode: false = state must pass through unchanged
    tolerance: raw.tolerance ?? null,
    exposed: raw.exposed ?? null,            // expected recognition of states the authors expose (models/exposed)
    ort: raw.ort ?? true,                    // false: ORT cannot run the model (e.g. layout=1): rewrite checks only
    rangePinning: raw.range_pinning ?? null, // {input, axis, values: {index: value}}: same range in every chunk
    batchMatesTolerance: raw.batch_mates_tolerance ?? null, // rows depend on the batch's other rows (shared quantization)
    chunkingExact: raw.chunking_exact ?? true, // false: chunked runs only approximate one full run (within `tolerance`)
    states: raw.states ?? null,              // [{node, graph, kind, body_input?}] the pairs must include
    notStates: raw.not_states ?? [],         // [{node, body_input}] no pair may be
    streamableFlag: raw.streamable ?? null,  // every pair's "streamable" must be this
    expectChunkingDiffers: raw.expect_chunking_differs ?? false,  // negative control: chunks must NOT equal a full run
  };
  const pin = e.rangePinning;
  if (pin && (typeof pin.input !== 'string' || !Number.isInteger(pin.axis) || typeof pin.values !== 'object')) {
    throw new Error('"range_pinning" needs {"input", "axis", "values": {index: value}}');
  }
  if (!CHUNK_MODES.includes(e.chunkMode)) throw new Error(`unknown chunk_mode '${e.chunkMode}'`);
  if (!Array.isArray(e.rewriteArgs)) throw new Error('"rewrite_args" must be an array');
  if (e.streaming) {
    if (e.chunkMode === 'calls') {
      if (!Number.isInteger(e.chunks) || e.chunks < 2) throw new Error('chunk_mode "calls" needs "chunks": K >= 2 (number of calls)');
    } else if (!Array.isArray(e.chunks) || e.chunks.length < 2 || !e.chunks.every(isPositiveInt)) {
      throw new Error('a streaming entry needs "chunks": [n1, n2, ...] with >= 2 positive lengths');
    }
    if (e.chunkMode === 'seq' && Object.keys(e.seqAxes).length === 0) {
      throw new Error('a streaming entry in chunk_mode "seq" needs "seq_axes"');
    }
    if (e.chunkMode === 'trip_count' && !e.tripInput) throw new Error('chunk_mode "trip_count" needs "trip_input"');
  }
  if (e.expectChunkingDiffers && (e.streaming || !Array.isArray(e.chunks) || e.chunks.length < 2)) {
    throw new Error('"expect_chunking_differs" needs "streaming": false and "chunks": [n1, n2, ...]');
  }
  return e;
}

/** Total length of the full (unchunked) run for sequence/trip_count modes. */
export const fullLength = (e) => (Array.isArray(e.chunks) ? e.chunks.reduce((a, b) => a + b, 0) : null);

/** Concrete shape of one session input: "input_shapes" wins, else metadata dims resolved with "dims". */
function resolveShape(meta, e, values) {
  if (e.inputShapes[meta.name]) return e.inputShapes[meta.name];
  return meta.shape.map((d, axis) => {
    if (typeof d === 'number' && d >= 0) return d;
    if (typeof d === 'string' && d !== '' && d in e.dims) return e.dims[d];
    // A 1-D integer/bool input given as a list: its length is its shape.
    if (Array.isArray(values) && meta.shape.length === 1) return values.flat(Infinity).length;
    const what = d === '' || typeof d === 'number' ? 'an unnamed dim' : `symbolic dim '${d}' with no value in "dims"`;
    throw new Error(`input '${meta.name}' axis ${axis} is ${what}; give its full shape in "input_shapes"`);
  });
}

/**
 * Feeds for every input listed by `session` (the ORIGINAL model's inputs): seeded random floats,
 * manifest-given ints/bools, and in trip_count mode the trip count of the full run.
 * The seed depends on seedBase + input name only, so the same model always gets the same data.
 */
export function buildFeeds(session, e, seedBase) {
  const feeds = {};
  for (const meta of session.inputMetadata) {
    const name = meta.name;
    if (!meta.isTensor) throw new Error(`input '${name}' is not a tensor; the harness cannot feed it`);
    if (e.chunkMode === 'trip_count' && name === e.tripInput) {
      feeds[name] = tensorFromValues(meta.type, resolveShape(meta, e, null), fullLength(e) ?? 1);
    } else if (isFloatType(meta.type)) {
      feeds[name] = randomTensor(meta.type, resolveShape(meta, e, null), `${seedBase}|${name}`);
    } else {
      // A bool input may also be given in inputs_int as 0/1 (generators often do).
      const values = meta.type === 'bool' ? e.inputsBool[name] ?? e.inputsInt[name]
        : isIntType(meta.type) ? e.inputsInt[name] : undefined;
      if (values === undefined) {
        const field = meta.type === 'bool' ? 'inputs_bool' : 'inputs_int';
        throw new Error(`input '${name}' (${meta.type}) needs values in "${field}"`);
      }
      feeds[name] = tensorFromValues(meta.type, resolveShape(meta, e, values), values);
    }
  }
  const pin = e.rangePinning;
  if (pin) {
    if (!feeds[pin.input]) throw new Error(`"range_pinning" names '${pin.input}', which is not a model input`);
    feeds[pin.input] = pinAlongAxis(feeds[pin.input], pin.axis, pin.values);
  }
  // Sequence inputs must be exactly as long as the chunks add up to, or (2) compares different runs.
  if ((e.streaming || e.expectChunkingDiffers) && Array.isArray(e.chunks)) {
    for (const [name, axis] of Object.entries(e.seqAxes)) {
      if (!feeds[name]) throw new Error(`"seq_axes" names '${name}', which is not a model input`);
      if (feeds[name].dims[axis] !== fullLength(e)) {
        throw new Error(`input '${name}' has length ${feeds[name].dims[axis]} on axis ${axis} but chunks sum to ${fullLength(e)}`);
      }
    }
  }
  return feeds;
}
