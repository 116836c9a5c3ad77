// rnnstate-stream for bundlers (package.json "exports", condition "browser": esbuild, Vite, webpack):
// the API of index.mjs without model paths, and no module that imports from `node:`. A model is given by
// URL (a string or a URL object), bytes, a Blob or File, or an InferenceSession. See README.md.
export { firstFeedSpecs, firstFeedSpecsOf, firstFeedTensor, groupByInput, stateValues } from './feeds.mjs';
export { METADATA_KEY, parseRnnstateMetadata, readMetadataProps, readRnnstateMetadata } from './metadata.mjs';
export { StreamingSession } from './session.mjs';
