// StreamingSession: one stream of a model rewritten by rnnstate, in onnxruntime-node or onnxruntime-web.
// Imports nothing of Node.js: the package's entries (index.mjs for Node.js and browsers without a bundler,
// index.browser.mjs for bundlers) export it, the former with a reader of file paths. See README.md.
import { firstFeedSpecsOf, firstFeedTensor, stateValues } from './feeds.mjs';
import { asBytes, METADATA_KEY, parseRnnstateMetadata, readRnnstateMetadata } from './metadata.mjs';

/**
 * The part of onnxruntime's JavaScript API (onnxruntime-common) the helper uses.
 * @typedef {object} OrtLike
 * @property {new (type: string, data: ArrayLike<unknown>, dims: readonly number[]) => OrtTensor} Tensor
 * @property {{create: (model: string | Uint8Array, options?: object) => Promise<OrtSession>}} [InferenceSession]
 *   needed only when the helper creates the session
 * @property {{wasm?: {proxy?: boolean}}} [env]  onnxruntime-web's settings: in proxy mode (a worker runs the
 *   session) every fed buffer is transferred to the worker, so the helper feeds copies of what it carries
 */

/**
 * @typedef {object} OrtTensor
 * @property {string} type
 * @property {readonly number[]} dims
 * @property {ArrayLike<unknown>} [data]  the values (CPU tensors)
 * @property {string} [location]  "cpu" (default), or where the values live ("gpu-buffer" on WebGPU, ...)
 * @property {() => void} [dispose]  frees a tensor's GPU memory
 */

/**
 * @typedef {object} OrtSession
 * @property {(feeds: Record<string, OrtTensor>) => Promise<Record<string, OrtTensor>>} run
 * @property {readonly string[]} [inputNames]
 * @property {readonly string[]} [outputNames]
 * @property {ReadonlyArray<{name: string, isTensor: boolean, shape?: ReadonlyArray<number|string>}>} [inputMetadata]
 * @property {() => Promise<void>} [release]
 */

/**
 * @typedef {object} StreamingOptions
 * @property {OrtLike} ort  the onnxruntime module (`import * as ort from 'onnxruntime-node'` or
 *   'onnxruntime-web'): its Tensor class makes the first-call feeds, its InferenceSession opens the model
 * @property {object} [sessionOptions]  passed to `ort.InferenceSession.create`
 * @property {string | object} [metadata]  the `rnnstate` metadata (JSON text or object); by default it
 *   is read from the model (needed when an existing session is passed without `model`)
 * @property {Uint8Array | ArrayBuffer | Blob | string} [model]  where to read the metadata from when an
 *   existing session is passed: the model's bytes, a Blob, or (Node.js) its path
 * @property {number} [batch]  the batch size of the state inputs; by default read off the data feeds
 *   (the metadata names a state's batch dimension after the data inputs' own dimension)
 * @property {Record<string, number>} [dims]  values of other symbolic dimensions of the states' shapes
 * @property {"error" | "reset"} [nonStreamable="error"]  a model with states that do not stream
 *   (bidirectional, reverse, sequence_lens): "error" refuses it; "reset" feeds those states their
 *   first-call value on every call (each call then starts them as the original model does) and carries
 *   the others
 * @property {boolean} [stateOutputs=false]  include the state outputs in what run() returns
 */

const isNode = () => typeof process === 'object' && typeof process.versions?.node === 'string';

/** Where a tensor's values live: only a CPU tensor's can be read or copied here. */
const onCpu = (tensor) => (tensor.location ?? 'cpu') === 'cpu';

/** Frees a tensor the helper owns that holds GPU memory (a CPU tensor is left to the garbage collector). */
function disposeDevice(tensor) {
  if (tensor && !onCpu(tensor) && typeof tensor.dispose === 'function') tensor.dispose();
}

/** A file: URL as a path of this machine (Node.js). */
function pathOfFileUrl(url) {
  const path = decodeURIComponent(url.pathname);
  return /^\/[A-Za-z]:\//.test(path) ? path.slice(1) : path;  // file:///C:/m.onnx on Windows
}

/** The bytes at `url` (fetched once). */
async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot fetch ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * One stream: an InferenceSession of a model rewritten by `rnnstate rewrite --state-inputs required`,
 * plus the state carried from one run() to the next.
 */
export class StreamingSession {
  /** @type {OrtSession} */ session;
  /** @type {import('./metadata.mjs').RnnstateMetadata} */ metadata;
  /** Inputs a caller feeds (the session's inputs that are not state inputs). @type {string[]} */ dataInputNames;
  /** Outputs run() returns by default (the session's outputs that are not state outputs). @type {string[]} */ outputNames;

  #ort;
  #ownsSession;
  #options;
  #groups;          // [{input, output, pairs, carry}] one per state input
  #stateOutputs;    // Set of state output names
  #state = null;    // {input: tensor} fed on the next call, null: first call
  #queue = Promise.resolve();
  #inputMetadata;   // the session's input metadata, read once (it does not change)

  /**
   * Reads a file path for the metadata (metadata.mjs's `openFile`); the Node.js entry (index.mjs) sets it,
   * the browser entry leaves it unset (a path is then an error: give a URL).
   * @type {((path: string) => Promise<import('./metadata.mjs').ByteSource & {close: () => Promise<void>}>) | undefined}
   */
  static openFile = undefined;

  /**
   * Opens a model and its metadata.
   *
   * @param {string | URL | Uint8Array | ArrayBuffer | Blob | OrtSession} model  a file path or a `file:` URL
   *   (Node.js), a URL (a string or a `URL` object: fetched once), the model's bytes or a Blob, or an
   *   InferenceSession already created (then pass `metadata` or `model` in the options: onnxruntime does
   *   not expose a model's metadata)
   * @param {StreamingOptions} options
   * @returns {Promise<StreamingSession>}
   */
  static async create(model, options) {
    const ort = options?.ort;
    if (!ort || typeof ort.Tensor !== 'function') {
      throw new Error('StreamingSession.create: pass {ort} (the onnxruntime-node or onnxruntime-web module)');
    }
    if (model && typeof model.run === 'function') {
      if (options.metadata === undefined && options.model === undefined) {
        throw new Error('StreamingSession.create: with an existing session, pass {metadata} or {model} (its bytes or ' +
          'path): onnxruntime\'s JavaScript API does not expose a model\'s metadata');
      }
      const metadata = await StreamingSession.#metadataOf(options, options.model, this.openFile);
      return new this(model, metadata, { ...options, ownsSession: false });
    }
    if (!ort.InferenceSession) throw new Error('StreamingSession.create: {ort} has no InferenceSession');
    const source = await StreamingSession.#modelSource(model);
    // Read before the session is created: onnxruntime-web's proxy mode transfers (empties) the bytes it is
    // given to its worker.
    const metadata = await StreamingSession.#metadataOf(options, options.model ?? source, this.openFile);
    const session = await ort.InferenceSession.create(source, options.sessionOptions ?? {});
    try {
      return new this(session, metadata, { ...options, ownsSession: true });
    } catch (err) {
      await session.release?.();
      throw err;
    }
  }

  /** What InferenceSession.create is given for `model`: a path (Node.js) or the model's bytes. */
  static async #modelSource(model) {
    let url = model instanceof URL ? model : null;
    if (typeof model === 'string' && !isNode()) url = new URL(model, globalThis.location?.href);
    if (url) return url.protocol === 'file:' && isNode() ? pathOfFileUrl(url) : fetchBytes(url);
    if (typeof model === 'string') return model;
    if (typeof Blob !== 'undefined' && model instanceof Blob) return new Uint8Array(await model.arrayBuffer());
    const bytes = asBytes(model);
    if (!bytes) throw new Error('StreamingSession.create: expected a path, a URL, bytes, a Blob or an InferenceSession');
    return bytes;
  }

  /** The parsed metadata: given in the options, or read from `source` (a path with `openFile`). */
  static async #metadataOf(options, source, openFile) {
    if (options.metadata !== undefined) return parseRnnstateMetadata(options.metadata);
    const metadata = await readRnnstateMetadata(source, { openFile });
    if (!metadata) {
      throw new Error(`the model has no "${METADATA_KEY}" metadata: it was not rewritten by rnnstate ` +
        '(run `rnnstate rewrite MODEL --state-inputs required`)');
    }
    return metadata;
  }

  /**
   * Wraps a session whose metadata is already parsed (see create() for the usual way in).
   * @param {OrtSession} session
   * @param {import('./metadata.mjs').RnnstateMetadata} metadata  parsed (parseRnnstateMetadata)
   * @param {StreamingOptions & {ownsSession?: boolean}} options
   */
  constructor(session, metadata, options) {
    this.session = session;
    this.metadata = metadata;
    this.#inputMetadata = session.inputMetadata ?? [];
    this.#ort = options.ort;
    this.#ownsSession = options.ownsSession ?? false;
    this.#options = { nonStreamable: 'error', stateOutputs: false, dims: {}, ...options };
    if (!['error', 'reset'].includes(this.#options.nonStreamable)) {
      throw new Error(`nonStreamable must be "error" or "reset", not '${this.#options.nonStreamable}'`);
    }
    if (metadata.states.length === 0) throw new Error('the rnnstate metadata lists no state pairs: nothing to stream');

    // What is fed and fed back: the state inputs, or a packed model's packed tensors (--pack tensor).
    const groups = stateValues(metadata);
    // States whose recurrence does not carry them (bidirectional, reverse, sequence_lens); a model whose
    // operators around the recurrences make chunks differ (`streamable` false) still carries its states.
    const notStreamable = groups.filter((g) => !g.carried);
    if (notStreamable.length && this.#options.nonStreamable === 'error') {
      throw new Error(`state input(s) ${notStreamable.map((g) => `'${g.input}'`).join(', ')} do not stream (bidirectional, ` +
        'reverse or sequence_lens: their final state needs the whole sequence); chunked runs would not equal one full ' +
        'run. Pass {nonStreamable: "reset"} to restart those states on every call');
    }
    this.#groups = groups.map((g) => ({ ...g, carry: !notStreamable.includes(g) }));
    this.#stateOutputs = new Set(groups.map((g) => g.output));

    const inputNames = session.inputNames;
    if (Array.isArray(inputNames)) {
      const hidden = groups.filter((g) => !inputNames.includes(g.input));
      if (hidden.length) {
        const names = hidden.map((g) => `'${g.input}'`).join(', ');
        if (hidden.every((g) => (metadata.packed ? g.optional : g.pairs.every((p) => p.optional)))) {
          throw new Error(`the model was rewritten in defaults mode: its state inputs ${names} have defaults, which ` +
            'onnxruntime-node and onnxruntime-web do not list and silently ignore feeds for. Rewrite it with ' +
            '`rnnstate rewrite MODEL --state-inputs required` (or `rnnstate rewrite STREAMING.onnx --state-inputs required`)');
        }
        throw new Error(`the metadata names state inputs ${names} that the session does not have`);
      }
      this.dataInputNames = inputNames.filter((n) => !groups.some((g) => g.input === n));
    } else {
      this.dataInputNames = null;
    }
    const outputNames = session.outputNames;
    if (Array.isArray(outputNames)) {
      const missing = groups.filter((g) => !outputNames.includes(g.output));
      if (missing.length) throw new Error(`the metadata names state outputs ${missing.map((g) => `'${g.output}'`).join(', ')} that the session does not have`);
      this.outputNames = outputNames.filter((n) => !this.#stateOutputs.has(n));
    } else {
      this.outputNames = null;
    }
  }

  /** The state pairs of the metadata. */
  get states() {
    return this.metadata.states;
  }

  /** The inputs the helper feeds (state inputs, or a packed model's packed inputs), in metadata order. */
  get stateInputNames() {
    return this.#groups.map((g) => g.input);
  }

  /** The outputs the helper feeds back, in the order of stateInputNames. */
  get stateOutputNames() {
    return this.#groups.map((g) => g.output);
  }

  /** The state the next run() feeds ({input name: tensor}), or null when it starts from the defaults. */
  get state() {
    return this.#state ? { ...this.#state } : null;
  }

  /**
   * Values of the symbolic dimensions of the data inputs, read off `feeds` with the session's
   * inputMetadata, then the `dims` and `batch` options.
   * @param {Record<string, OrtTensor>} feeds
   */
  #dimValues(feeds) {
    const dims = {};
    const where = {};
    for (const meta of this.#inputMetadata) {
      const feed = feeds[meta.name];
      if (!feed || !meta.isTensor || !Array.isArray(meta.shape)) continue;
      meta.shape.forEach((d, axis) => {
        if (typeof d !== 'string' || d === '' || axis >= feed.dims.length) return;
        const value = feed.dims[axis];
        if (Object.hasOwn(dims, d) && dims[d] !== value) {
          throw new Error(`dimension '${d}' is ${dims[d]} in input '${where[d]}' but ${value} in input '${meta.name}'`);
        }
        dims[d] = value;
        where[d] = meta.name;
      });
    }
    return { ...dims, ...this.#options.dims };
  }

  /**
   * The first-call feeds for these data feeds: what `rnnstate init --batch N --json` prints.
   * @param {Record<string, OrtTensor>} dataFeeds
   * @returns {import('./feeds.mjs').FirstFeedSpec[]}
   */
  firstFeedSpecs(dataFeeds) {
    return firstFeedSpecsOf(this.metadata, { dims: this.#dimValues(dataFeeds), batch: this.#options.batch });
  }

  /**
   * Runs one chunk. `dataFeeds` holds the data inputs only; the helper adds the state inputs (on the
   * first call the metadata's first feeds, later the previous call's state outputs) and keeps the
   * state outputs for the next call. Calls (and reset()) take effect in call order.
   *
   * @param {Record<string, OrtTensor>} dataFeeds
   * @param {{stateOutputs?: boolean}} [options]  include the state outputs in the result
   * @returns {Promise<Record<string, OrtTensor>>} the outputs (without state outputs unless asked)
   */
  run(dataFeeds, options = {}) {
    const result = this.#queue.then(() => this.#run(dataFeeds, options));
    this.#queue = result.catch(() => {});
    return result;
  }

  /** A model with strides over time streams in chunks whose length is a multiple of them (metadata
   * `stream.chunk_multiple`): another length would end a chunk in mid-stride, and the outputs would differ.
   * The first call holds at least `stream.first_chunk_min` frames. */
  #checkChunkLength(dataFeeds) {
    const multiple = this.metadata.stream?.chunk_multiple ?? 1;
    // A context whose Pad reflects the first call's frames (metadata `stream.first_chunk_min`).
    const least = this.#state ? 0 : this.metadata.stream?.first_chunk_min ?? 0;
    for (const { input, axis } of this.metadata.stream?.time ?? []) {
      const length = dataFeeds[input]?.dims?.[axis];
      if (length !== undefined && length < least) {
        throw new Error(`a first chunk of ${length} frames along ${input}:${axis}: this model's first call needs at ` +
          `least ${least} frames (a Pad in reflect mode reflects the first frames); gather more before the first call`);
      }
      if (multiple <= 1) continue;
      if (length !== undefined && length % multiple !== 0) {
        throw new Error(`a chunk of ${length} frames along ${input}:${axis}: this model streams in chunks of a multiple of ` +
          `${multiple} frames (its strides over time); keep the rest for the next call`);
      }
    }
  }

  async #run(dataFeeds, options) {
    if (!this.session) throw new Error('the streaming session was released');
    const given = Object.keys(dataFeeds ?? {});
    const stateGiven = given.filter((n) => this.#groups.some((g) => g.input === n));
    if (stateGiven.length) {
      throw new Error(`state input(s) ${stateGiven.join(', ')} are fed by the helper; pass only data inputs (reset() restarts the state)`);
    }
    if (this.dataInputNames) {
      const unknown = given.filter((n) => !this.dataInputNames.includes(n));
      const missing = this.dataInputNames.filter((n) => !given.includes(n));
      if (unknown.length) throw new Error(`not inputs of the model (onnxruntime would ignore them): ${unknown.join(', ')}`);
      if (missing.length) throw new Error(`missing data input(s): ${missing.join(', ')}`);
    }
    this.#checkChunkLength(dataFeeds);
    const feeds = { ...dataFeeds };
    const dims = this.#dimValues(dataFeeds);
    const needFirst = !this.#state || this.#groups.some((g) => !g.carry);
    const first = needFirst
      ? new Map(firstFeedSpecsOf(this.metadata, { dims, batch: this.#options.batch }).map((s) => [s.input, s]))
      : null;
    // onnxruntime-web's proxy mode transfers every fed buffer to its worker, even when the run fails: the
    // carried state is fed as a copy, so that a failed call leaves it as it was.
    const transfers = this.#ort.env?.wasm?.proxy === true;
    for (const g of this.#groups) {
      if (this.#state && g.carry) {
        const carried = this.#state[g.input];
        this.#checkBatch(g, carried, dims);
        feeds[g.input] = transfers && onCpu(carried) ? new this.#ort.Tensor(carried.type, carried.data.slice(), carried.dims) : carried;
      } else {
        feeds[g.input] = firstFeedTensor(first.get(g.input), this.#ort.Tensor);
      }
    }
    const outputs = await this.session.run(feeds);
    const next = {};
    for (const g of this.#groups) {
      if (!outputs[g.output]) throw new Error(`the run returned no state output '${g.output}'`);
      next[g.input] = outputs[g.output];
    }
    this.#replaceState(next);
    if (options.stateOutputs ?? this.#options.stateOutputs) return outputs;
    const result = {};
    for (const [name, value] of Object.entries(outputs)) if (!this.#stateOutputs.has(name)) result[name] = value;
    return result;
  }

  /**
   * The state the next call feeds becomes `next`. A state tensor kept on a device (WebGPU's
   * `preferredOutputLocation: 'gpu-buffer'`) is the helper's: the one replaced is disposed, or its GPU
   * buffer would leak on every call.
   */
  #replaceState(next) {
    const kept = new Set(next ? Object.values(next) : []);
    for (const tensor of Object.values(this.#state ?? {})) if (!kept.has(tensor)) disposeDevice(tensor);
    this.#state = next;
  }

  /** A carried state whose batch differs from the data's: a clear error instead of onnxruntime's. */
  #checkBatch(group, state, dims) {
    const st = group;
    const axis = st.batch_axis;
    if (axis < 0 || state.dims[axis] === 0) return; // an empty state means "the default" again
    const d = st.shape[axis];
    // The batch option sizes a state whose batch has no name, or names the data's batch; a state's batch of
    // another name (a per-band recurrence's batch x bins) is the model's to size, known from the data only.
    const given = d === '' || d === '?' || dims[d] !== undefined ? this.#options.batch : undefined;
    const batch = typeof d === 'number' ? d : dims[d] ?? given;
    if (batch !== undefined && batch !== state.dims[axis]) {
      throw new Error(`the data batch is ${batch} but state '${group.input}' carries batch ${state.dims[axis]}: ` +
        'call reset() before changing the batch');
    }
  }

  /**
   * Forgets the carried state: the next run() starts from the model's defaults (the metadata's first
   * feeds), as a fresh stream. Takes effect after the runs already called.
   * @returns {Promise<void>}
   */
  reset() {
    const done = this.#queue.then(() => this.#replaceState(null));
    this.#queue = done.catch(() => {});
    return done;
  }

  /**
   * Releases the session if the helper created it (create() from a path, URL, bytes or Blob).
   * @returns {Promise<void>}
   */
  release() {
    const done = this.#queue.then(async () => {
      const session = this.session;
      this.session = null;
      this.#replaceState(null);
      if (session && this.#ownsSession) await session.release?.();
    });
    this.#queue = done.catch(() => {});
    return done;
  }
}
