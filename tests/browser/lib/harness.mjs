// What the browser suite runs its pages with: a static server on 127.0.0.1 (a free port) that also takes
// each page's report (POST /report), and Debian's Chromium, headless, one process per page.
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve } from 'node:path';

const TYPES = {
  '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.json': 'application/json',
  '.wasm': 'application/wasm', '.onnx': 'application/octet-stream', '.wav': 'audio/wav', '.css': 'text/css',
};

/**
 * Serves `mounts` ({'/url/prefix/': '/dir'}, longest prefix first) on 127.0.0.1; POST /report bodies (JSON)
 * go to `onReport`, whose answer (a string: the next page's path after a page's end) is the response's
 * body ("ok" when it has none). Cross-origin isolated (COOP/COEP), so that onnxruntime-web may use threads.
 * @returns {Promise<{url: string, close: () => Promise<void>}>}
 */
export function startServer(mounts, onReport) {
  const prefixes = Object.keys(mounts).sort((a, b) => b.length - a.length);
  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/report') {
      let body = '';
      req.on('data', (chunk) => { body += chunk; });
      req.on('end', () => {
        let answer;
        try { answer = onReport(JSON.parse(body)); } catch (err) { onReport({ page: '?', error: `bad report: ${err.message}` }); }
        res.end(typeof answer === 'string' ? answer : 'ok');
      });
      return;
    }
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const prefix = prefixes.find((p) => path.startsWith(p));
    const root = prefix && resolve(mounts[prefix]);
    const file = root && normalize(join(root, path.slice(prefix.length)));
    if (!file || !file.startsWith(root) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp',
    });
    createReadStream(file).pipe(res);
  });
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => done({
      url: `http://127.0.0.1:${server.address().port}`,
      close: () => new Promise((closed) => { server.closeAllConnections(); server.close(() => closed()); }),
    }));
  });
}

/**
 * Debian's Chromium, headless, on `url`, with the flags this closed network needs (no background
 * connections), a fresh profile, and the microphone played from `audioFile` (Chromium's fake capture
 * device). Returns {stop, log}: stop() ends the process (and its children) and removes the profile.
 */
export function launchChromium(url, { audioFile, binary = '/usr/bin/chromium' } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'rnnstate-chromium-'));
  const flags = ['--headless', '--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-default-apps', '--mute-audio', `--user-data-dir=${profile}`,
    '--autoplay-policy=no-user-gesture-required', '--enable-unsafe-webgpu',
    '--disable-background-timer-throttling', '--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows',
    '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'];
  if (audioFile) flags.push(`--use-file-for-fake-audio-capture=${audioFile}`);
  const child = spawn(binary, [...flags, url], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let log = '';
  child.stderr.on('data', (chunk) => { log = (log + chunk).slice(-20000); });
  const exited = new Promise((done) => child.once('exit', done));
  return {
    log: () => log,
    exited,
    async stop() {
      // Chromium starts helpers (zygote, renderers, GPU) in its own process group: end the group.
      try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone already */ }
      let grace;
      const killed = await Promise.race([exited.then(() => true), new Promise((r) => { grace = setTimeout(() => r(false), 3000); })]);
      clearTimeout(grace);
      if (!killed) try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
