// The contract of `rnnstate rewrite` on whole folders of models (models/, and the published models of
// ../shared/real-models when present), whatever rnnstate recognizes in them:
//   - idempotence: rewriting any output of rnnstate again (in its mode) gives the same bytes, for the
//     defaults and required modes, the defaults output taken to required mode, packed and batch-first
//     outputs; a required-mode output rewritten in defaults mode stays the same too;
//   - route equality: `rewrite --state-inputs required` of the original and of its defaults-mode rewrite
//     give one interface (inputs and outputs: names, element types, shapes) and one `rnnstate` metadata.
// Each folder is rewritten by one rnnstate process per variant (its many-files mode), so a folder of a
// hundred models takes seconds.
// Usage: node contract_check.mjs --rnnstate BIN --models DIR [--models DIR ...] [--optional]
//   --optional: a folder that does not exist is skipped with one line (a user's clone has no
//   ../shared/real-models).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { canonicalJson } from './lib/contract.mjs';
import { readModel } from './lib/onnx-edit.mjs';

const args = process.argv.slice(2);
const option = (name) => args.flatMap((a, i) => (a === name ? [args[i + 1]] : []));
const [bin] = option('--rnnstate');
const folders = option('--models');
const optional = args.includes('--optional');

const REQUIRED = ['--state-inputs', 'required'];
const VARIANTS = {
  defaults: [],
  required: REQUIRED,
  pack: ['--pack', 'tensor'],
  'pack-required': ['--pack', 'tensor', ...REQUIRED],
  'batch-first': ['--state-layout', 'batch-first'],
};

let passed = 0;
let failed = 0;
const check = (name, problems) => {
  if (problems.length === 0) {
    passed++;
    console.log(`PASS  ${name}`);
    return;
  }
  failed++;
  console.log(`FAIL  ${name}`);
  for (const p of problems.slice(0, 10)) console.log(`  ${p}`);
  if (problems.length > 10) console.log(`  (${problems.length - 10} more)`);
};

/** Rewrites every model under `input` into `output`; returns the JSON Lines records by relative path. */
function rewriteFolder(input, output, extra) {
  let text;
  try {
    text = execFileSync(bin, ['-q', 'rewrite', input, '--out-dir', output, '--json', ...extra],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 28 });
  } catch (e) {
    text = e.stdout ?? '';  // some files failed: their records say how
  }
  const records = new Map();
  for (const line of text.split('\n').filter(Boolean)) {
    const record = JSON.parse(line);
    if (record.path == null) continue;  // the summary record
    records.set(relative(input, record.path), record);
  }
  return records;
}

/** `rnnstate init --json` of every model under `folder`: the records by relative path. */
function initFolder(folder) {
  let text;
  try {
    text = execFileSync(bin, ['-q', 'init', folder, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 28 });
  } catch (e) {
    text = e.stdout ?? '';
  }
  const records = new Map();
  for (const line of text.split('\n').filter(Boolean)) {
    const record = JSON.parse(line);
    if (record.path != null) records.set(relative(folder, record.path), record);
  }
  return records;
}

const written = (record) => record && (record.status === 'ok' || record.status === 'unchanged');

/** Inputs and outputs (name, element type, shape) and the `rnnstate` metadata of a model file. */
function modelInterface(file) {
  const model = readModel(file);
  const describe = (values) => values.map((v) => {
    const tensor = v.type?.tensorType;
    if (!tensor) return `${v.name}:non-tensor`;
    const dims = (tensor.shape?.dim ?? []).map((d) => d.dimParam || (d.dimValue != null ? String(d.dimValue) : '?'));
    return `${v.name}:${tensor.elemType}[${dims}]`;
  });
  const meta = (model.metadataProps ?? []).filter((p) => p.key === 'rnnstate').map((p) => canonicalJson(JSON.parse(p.value)));
  return { inputs: describe(model.graph.input), outputs: describe(model.graph.output), meta };
}

function interfaceDifferences(a, b) {
  const problems = [];
  for (const what of ['inputs', 'outputs']) {
    if (a[what].join() !== b[what].join()) problems.push(`${what}: [${a[what]}] vs [${b[what]}]`);
  }
  if (a.meta.join() !== b.meta.join()) problems.push(`metadata: ${a.meta} vs ${b.meta}`);
  return problems;
}

function checkFolder(folder) {
  const work = mkdtempSync(join(tmpdir(), 'rnnstate-contract-'));
  try {
    const first = {};
    for (const [name, extra] of Object.entries(VARIANTS)) first[name] = rewriteFolder(folder, join(work, name), extra);
    first['defaults-required'] = rewriteFolder(join(work, 'defaults'), join(work, 'defaults-required'), REQUIRED);
    const label = relative(process.cwd(), folder) || folder;
    // Idempotence: each output rewritten again in its own mode (packing and layout are final).
    const again = [
      ...Object.keys(first).map((name) => [name, name.endsWith('required') ? REQUIRED : []]),
      ['required', []],
    ];
    for (const [name, extra] of again) {
      const suffix = extra.length ? 'again-required' : 'again-defaults';
      const second = rewriteFolder(join(work, name), join(work, `${name}.${suffix}`), extra);
      const problems = [];
      let count = 0;
      for (const [rel, record] of first[name]) {
        if (!written(record)) continue;
        const redo = second.get(rel);
        count++;
        if (!written(redo)) {
          problems.push(`${rel}: rewriting the ${name} output fails: ${redo ? redo.error : 'no record'}`);
        } else if (!readFileSync(join(work, name, rel)).equals(readFileSync(join(work, `${name}.${suffix}`, rel)))) {
          problems.push(`${rel}: rewriting the ${name} output changes it`);
        }
      }
      check(`${label}: ${name} outputs rewritten again (${extra.length ? 'required' : 'defaults'} mode) are byte-identical (${count} models)`, problems);
    }
    // Every output's metadata passes the validation every command applies (init refuses what breaks it).
    for (const name of Object.keys(first)) {
      const problems = [];
      const init = initFolder(join(work, name));
      for (const [rel, record] of first[name]) {
        if (written(record) && init.get(rel)?.status !== 'ok') problems.push(`${rel}: ${init.get(rel)?.error ?? 'no record'}`);
      }
      check(`${label}: init accepts the metadata of every ${name} output`, problems);
    }
    // Route equality: the original and its defaults output, both taken to required mode.
    const problems = [];
    let count = 0;
    for (const [rel, direct] of first.required) {
      const defaults = first.defaults.get(rel);
      const routed = first['defaults-required'].get(rel);
      if (!written(direct) || !written(defaults) || !written(routed)) {
        if (written(direct) !== (written(defaults) && written(routed))) {
          problems.push(`${rel}: one route fails: direct ${direct?.error ?? 'ok'}, defaults ${defaults?.error ?? 'ok'}, ` +
            `then required ${routed?.error ?? 'ok'}`);
        }
        continue;
      }
      count++;
      const differences = interfaceDifferences(modelInterface(join(work, 'required', rel)),
        modelInterface(join(work, 'defaults-required', rel)));
      for (const d of differences) problems.push(`${rel}: ${d}`);
    }
    check(`${label}: both routes to required mode give one interface and metadata (${count} models)`, problems);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

for (const folder of folders) {
  if (!existsSync(folder)) {
    if (optional) {
      console.log(`SKIP  ${folder}: not present (the published models are read from ../shared/real-models)`);
      continue;
    }
    check(`${folder} exists`, [`${folder}: no such folder`]);
    continue;
  }
  checkFolder(folder);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
