// What every e2e suite shares around its checks: its command line, its PASS / FAIL / SKIP lines, and the
// closing "N passed, M failed" with exit status 1 on any failure.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { loadManifest, normalizeEntry } from './manifest.mjs';

/**
 * The suite's options (node:util parseArgs `options`, plus -h/--help printing `usage`); a missing one of
 * `required` prints `missing --NAME` and the usage on stderr and exits 2.
 */
export function suiteArgs(usage, options, required) {
  const { values } = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  for (const key of required) {
    if (!values[key]) {
      console.error(`missing --${key}\n${usage}`);
      process.exit(2);
    }
  }
  return values;
}

const formatDiff = (d) => (typeof d === 'number' && !Number.isNaN(d) ? d.toExponential(3) : '-');

/** The lines a suite prints, one a check, and their tally. */
export class Results {
  passed = 0;
  failed = 0;

  /** `PASS|FAIL  LABEL  WHAT[  DETAIL]`. */
  report(ok, label, what, detail = '') {
    if (ok) this.passed++;
    else this.failed++;
    console.log(`${ok ? 'PASS' : 'FAIL'}  ${label}  ${what}${detail ? `  ${detail}` : ''}`);
  }

  /** `PASS|FAIL  LABEL  CHECK  max_abs_diff=D[  DETAIL]` for a result {ok, diff, detail}. */
  record(label, check, result) {
    this.report(result.ok, label, `${check}  max_abs_diff=${formatDiff(result.diff)}`, result.detail);
  }

  /** `SKIP  LABEL  CHECK  WHY`: a check not run, counted neither way. */
  skip(label, check, why) {
    console.log(`SKIP  ${label}  ${check}  ${why}`);
  }

  /**
   * Runs one check `fn`: its result {ok, diff, detail}, or null where it does not apply, or {ok: null,
   * detail} where it cannot be made (both a SKIP line, the latter saying why); an exception is a FAIL.
   * Returns the result ({ok: false} for null, so that callers may read `.ok`).
   */
  async check(label, check, fn) {
    let result;
    try {
      result = await fn();
    } catch (err) {
      result = { ok: false, diff: NaN, detail: `error: ${err.message}` };
    }
    if (result === null) this.skip(label, check, 'not applicable');
    else if (result.ok === null) this.skip(label, check, result.detail);
    else this.record(label, check, result);
    return result ?? { ok: false };
  }

  /** Prints the tally; returns the exit status (1 on any failure) after setting it. */
  finish() {
    console.log(`${this.passed} passed, ${this.failed} failed`);
    process.exitCode = this.failed ? 1 : 0;
    return process.exitCode;
  }

  /** Runs a suite's `main`; a crash of the suite itself is printed and counted as one more failure. */
  run(main) {
    return main().catch((err) => {
      console.error(err.stack || String(err));
      this.failed++;
      this.finish();
    });
  }
}

/** The options of the suites over a manifest (verify.mjs, pack_verify.mjs), for suiteArgs. */
export const MANIFEST_OPTIONS = {
  rnnstate: { type: 'string' }, models: { type: 'string' }, manifest: { type: 'string' },
  filter: { type: 'string' }, shard: { type: 'string' }, workdir: { type: 'string' }, tol: { type: 'string', default: '1e-5' },
  seed: { type: 'string', default: 'rnnstate-e2e' }, timeout: { type: 'string', default: '600' },
  verbose: { type: 'boolean', default: false },
};

/**
 * The run of a suite over a manifest (verify.mjs, pack_verify.mjs), `opts` holding its `cli` (RnnstateCli):
 * the entries selectEntries takes, in --workdir or a temporary folder named from `prefix` (removed at the
 * end; a --workdir is kept for inspection); `prefetch(all, selected, opts)` once, then for each entry
 * `verifyModel(entry, index, label, opts)` with the entry normalized (an entry that is not valid is one FAIL
 * line of `results`, "manifest").
 */
export async function runManifestSuite(results, args, opts, prefix, prefetch, verifyModel) {
  if (!existsSync(opts.cli.binary)) {
    console.error(`rnnstate binary not found: ${opts.cli.binary}`);
    process.exit(2);
  }
  const all = loadManifest(args.manifest);
  const { labels, selected } = selectEntries(all, args);
  opts.workdir = args.workdir ? resolve(args.workdir) : mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(opts.workdir, { recursive: true });
  prefetch(all, selected, opts);
  for (const i of selected) {
    let entry;
    try {
      entry = normalizeEntry(all[i]);
    } catch (err) {
      results.record(labels[i], 'manifest', { ok: false, diff: NaN, detail: err.message });
      continue;
    }
    await verifyModel(entry, i, labels[i], opts);
  }
  if (!args.workdir) rmSync(opts.workdir, { recursive: true, force: true });
}

/**
 * The manifest entries a run takes: those whose file matches --filter, then with --shard K/N every Nth from
 * the Kth (so that ctest runs N processes side by side). Returns {labels, selected}: a line label for every
 * entry (the file, with "#index" where a file is in several entries) and the indexes taken. A bad --shard
 * exits 2; no entry taken exits 1.
 */
export function selectEntries(all, args) {
  const count = {};
  for (const e of all) count[e.file] = (count[e.file] ?? 0) + 1;
  const labels = all.map((e, i) => (count[e.file] > 1 ? `${e.file}#${i}` : `${e.file}`));
  const filter = args.filter ? new RegExp(args.filter) : null;
  const matching = all.map((e, i) => i).filter((i) => !filter || filter.test(all[i].file ?? ''));
  const [shard, shards] = (args.shard ?? '1/1').split('/').map(Number);
  if (!(shards >= 1 && shard >= 1 && shard <= shards)) {
    console.error(`--shard ${args.shard}: expected K/N with 1 <= K <= N`);
    process.exit(2);
  }
  const selected = matching.filter((i, k) => k % shards === shard - 1);
  if (selected.length === 0) {
    console.error('no manifest entry matches');
    console.log('0 passed, 0 failed');
    process.exit(1);
  }
  return { labels, selected };
}
