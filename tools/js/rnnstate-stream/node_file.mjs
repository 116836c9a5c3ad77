// Node.js only: a model file as a ByteSource (metadata.mjs) that reads only the bytes asked for. The
// package's Node.js entry (index.mjs) loads this module when it is given a path; its browser entry
// (index.browser.mjs) never does, so that no bundler meets a `node:` import.
import { open } from 'node:fs/promises';

/**
 * Opens `path` for reading; `close()` the result when done.
 * @param {string} path
 * @returns {Promise<import('./metadata.mjs').ByteSource & {close: () => Promise<void>}>}
 */
export async function openFile(path) {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    return {
      size,
      read: async (offset, length) => {
        const buffer = new Uint8Array(Math.max(0, Math.min(length, size - offset)));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
        return buffer.subarray(0, bytesRead);
      },
      close: () => handle.close(),
    };
  } catch (err) {
    await handle.close();
    throw err;
  }
}
