#!/usr/bin/env node
// rnnstate-stream: the command line of the helper package. One command today:
//
//   rnnstate-stream verify ORIGINAL REWRITTEN [--chunks 1,7,...] [--seed N [--length N]] [--inputs FILE.json]
//       [--time-axis INPUT:AXIS]... [--calls N] [--batch N] [--dim NAME=N]... [--atol X] [--rtol X] [--json FILE]
//       [--ort MODULE_DIR]
//
// Exit codes: 0 every output and final state within tolerance, 1 some past it, 2 usage error, 3 a model
// cannot be read or run, 4 refused (states marked not carried, a fixed-length time axis, inputs it cannot
// make up).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatReport, verifyStreaming, VerifyError } from './verify.mjs';

const USAGE = `usage: rnnstate-stream verify ORIGINAL REWRITTEN [options]

Runs ORIGINAL on a whole sequence and REWRITTEN (its rnnstate rewrite, either --state-inputs mode) in
chunks with the state fed back, in ONNX Runtime (onnxruntime-node), and compares every output and final
state. A model with no time axis inside one call (one frame per call: the rewrite records none, or no
data input names one; --time-axis chunks one anyway) is checked call by call instead: call 1 (and the
rewrite with its state defaults unfed) against the original, then calls 2..N with the returned states fed
back against the original fed its own; the report says which checks ran and why the others do not apply.

options:
  --chunks 1,7,...      chunk lengths along the time axis (default 1,2,5); the sequence is their sum
  --seed N              random chunk lengths from seed N (and data seed N)
  --length N            the sequence length for --seed (default 16)
  --inputs FILE.json    data inputs for the whole sequence: {"x": [[...]], "sr": 16000, "y": {"dims": [...], "data": [...]}}
                        (default: random floats in [-1, 1); {"dims": [...]} alone: random ones of that
                        shape; other types must be given)
  --time-axis IN:AXIS   the time axis of a chunked input (repeatable; default: the one named dimension of
                        the data inputs that is not the states' batch)
  --calls N             a model without a time axis inside one call: the number of calls (default 3)
  --batch N             batch size (default 1)
  --dim NAME=N          value of another symbolic dimension (repeatable)
  --atol X, --rtol X    pass when |chunked - reference| <= atol + rtol * |reference| (defaults 1e-5, 1e-4)
  --json FILE           also write the result as JSON ("-": stdout, instead of the text)
  --ort DIR             the onnxruntime-node package to use (default: resolved from here, then from the
                        current directory, then a clone's tests/e2e/node_modules)

exit codes: 0 pass (every check that applies), 1 differences past the tolerance, 2 usage, 3 cannot read
or run a model, 4 refused
`;

class UsageError extends Error {}

function parseArgs(argv) {
  const args = { positional: [], timeAxes: {}, dims: {} };
  const value = (i, flag) => {
    if (i + 1 >= argv.length) throw new UsageError(`${flag} needs a value`);
    return argv[i + 1];
  };
  const number = (text, flag, integer) => {
    const n = Number(text);
    if (text === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < 0) {
      throw new UsageError(`${flag}: '${text}' is not a ${integer ? 'non-negative integer' : 'non-negative number'}`);
    }
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') args.help = true;
    else if (a === '--chunks') args.chunks = value(i, a).split(',').map((c) => number(c, a, true)), i++;
    else if (a === '--seed') args.seed = number(value(i, a), a, true), i++;
    else if (a === '--length') args.length = number(value(i, a), a, true), i++;
    else if (a === '--inputs') args.inputs = value(i, a), i++;
    else if (a === '--batch') args.batch = number(value(i, a), a, true), i++;
    else if (a === '--calls') args.calls = number(value(i, a), a, true), i++;
    else if (a === '--atol') args.atol = number(value(i, a), a, false), i++;
    else if (a === '--rtol') args.rtol = number(value(i, a), a, false), i++;
    else if (a === '--json') args.json = value(i, a), i++;
    else if (a === '--ort') args.ort = value(i, a), i++;
    else if (a === '--time-axis' || a === '--dim') {
      const text = value(i, a);
      const at = text.lastIndexOf(a === '--dim' ? '=' : ':');
      if (at <= 0) throw new UsageError(`${a} '${text}': expected ${a === '--dim' ? 'NAME=N' : 'INPUT:AXIS'}`);
      (a === '--dim' ? args.dims : args.timeAxes)[text.slice(0, at)] = number(text.slice(at + 1), a, true);
      i++;
    } else if (a.startsWith('-') && a !== '-') throw new UsageError(`unknown option ${a}`);
    else args.positional.push(a);
  }
  return args;
}

/** onnxruntime-node: --ort, else resolved from this package, the current directory, a clone's tests/e2e. */
async function loadOrt(dir) {
  const here = dirname(fileURLToPath(import.meta.url));
  // Each base resolves like a file in that directory would: up through its node_modules folders.
  const bases = [here, process.cwd(), join(here, '..', '..', '..', 'tests', 'e2e')];
  const candidates = dir ? [() => createRequire(join(here, 'x.js')).resolve(resolve(dir))]
    : bases.map((base) => () => createRequire(join(base, 'x.js')).resolve('onnxruntime-node'));
  for (const candidate of candidates) {
    let entry;
    try {
      entry = candidate();
    } catch {
      continue;
    }
    return import(pathToFileURL(entry).href);
  }
  if (dir) throw new VerifyError(3, `cannot find onnxruntime-node in ${dir}`);
  // The one step that installs it: in a clone, the setup script; elsewhere, npm where verify runs (the
  // variable skips the postinstall's GPU download, which fails offline; the CPU runtime is in the package).
  const clone = join(here, '..', '..', '..');
  throw new VerifyError(3, existsSync(join(clone, 'tools', 'setup.sh'))
    ? `cannot find onnxruntime-node: run ${join(clone, 'tools', 'setup.sh')} (it installs it into tests/e2e), ` +
      'or pass --ort DIR'
    : 'cannot find onnxruntime-node: install it where you run verify, with ' +
      '`ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node`, or pass --ort DIR');
}

async function main(argv) {
  const [command, ...rest] = argv;
  if (!command || command === '-h' || command === '--help') {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  if (command !== 'verify') throw new UsageError(`unknown command '${command}' (rnnstate-stream has: verify)`);
  const args = parseArgs(rest);
  if (args.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (args.positional.length !== 2) throw new UsageError('verify takes ORIGINAL and REWRITTEN');
  if (args.chunks && args.seed !== undefined) throw new UsageError('--chunks and --seed are exclusive');
  let inputs;
  if (args.inputs) {
    try {
      inputs = JSON.parse(readFileSync(args.inputs, 'utf8'));
    } catch (err) {
      throw new UsageError(`--inputs ${args.inputs}: ${err.message}`);
    }
  }
  const ort = await loadOrt(args.ort);
  const [original, rewritten] = args.positional;
  const result = await verifyStreaming({
    ort, original, rewritten, chunks: args.chunks, seed: args.seed, length: args.length, inputs,
    timeAxes: Object.keys(args.timeAxes).length ? args.timeAxes : undefined, batch: args.batch, calls: args.calls,
    dims: args.dims, atol: args.atol, rtol: args.rtol,
  });
  const json = JSON.stringify({ original, rewritten, ...result }, (k, v) => (v === Infinity ? null : v)) + '\n';
  if (args.json === '-') process.stdout.write(json);
  else {
    process.stdout.write(formatReport(result, { original, rewritten }));
    if (args.json) writeFileSync(args.json, json);
  }
  return result.ok ? 0 : 1;
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
}, (err) => {
  if (err instanceof UsageError || (err instanceof VerifyError && err.code === 2)) {
    process.stderr.write(`rnnstate-stream: usage: ${err.message}\n(rnnstate-stream verify --help)\n`);
    process.exitCode = 2;
  } else if (err instanceof VerifyError) {
    process.stderr.write(`rnnstate-stream: error: ${err.message}\n`);
    process.exitCode = err.code;
  } else {
    process.stderr.write(`rnnstate-stream: internal error: ${err.stack ?? err}\n`);
    process.exitCode = 3;
  }
});
