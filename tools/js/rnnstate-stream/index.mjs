// rnnstate-stream: stream a model rewritten by rnnstate through onnxruntime-node or onnxruntime-web,
// chunk by chunk, passing only the data inputs. See README.md.
//
//   import * as ort from 'onnxruntime-node';            // or 'onnxruntime-web'
//   import { StreamingSession } from 'rnnstate-stream';
//   const stream = await StreamingSession.create('model.required.onnx', { ort });
//   for (const x of chunks) console.log((await stream.run({ x })).y);
//   await stream.reset();                                // the next call starts from the model's defaults
//
// The entry for Node.js and for browsers without a bundler (an import map): it reads model files by path
// in Node.js, loading node_file.mjs only then. Bundlers take index.browser.mjs (package.json "exports",
// condition "browser"), which has no path to a `node:` module.
import { readMetadataProps as readProps, readRnnstateMetadata as readMetadata } from './metadata.mjs';
import { StreamingSession as Session } from './session.mjs';

export { firstFeedSpecs, firstFeedSpecsOf, firstFeedTensor, groupByInput, stateValues } from './feeds.mjs';
export { METADATA_KEY, parseRnnstateMetadata } from './metadata.mjs';

/** Node.js: reads a model file by path (the import is never reached in a browser, which has no paths). */
const openFile = async (path) => (await import('./node_file.mjs')).openFile(path);

/** See session.mjs: here a model may also be given by path in Node.js. */
export class StreamingSession extends Session {
  static openFile = openFile;
}

/** The `metadata_props` of a model (metadata.mjs), from bytes, a Blob, a ByteSource or (Node.js) a path. */
export const readMetadataProps = (model) => readProps(model, { openFile });

/** The parsed `rnnstate` metadata of a model, or null (metadata.mjs); a model may be given by path. */
export const readRnnstateMetadata = (model) => readMetadata(model, { openFile });
