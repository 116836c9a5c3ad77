// Thin wrapper around the rnnstate binary under test.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

export class RnnstateCli {
  constructor(binary, { timeoutSec = 600, verbose = false } = {}) {
    this.binary = binary;
    this.timeoutMs = timeoutSec * 1000;
    this.verbose = verbose;
    /** Results of prefetched rewrites by rewriteKey(), each handed out once by rewrite(). */
    this.prefetched = new Map();
    /** Results of prefetched checks by file, each handed out once by check(). */
    this.checked = new Map();
    /** Prefetched reports by file, each handed out once by report(). */
    this.reported = new Map();
  }

  /** Runs the binary; returns {status, stdout, stderr, command}. Never throws on a non-zero exit. */
  run(args) {
    const command = [this.binary, ...args].join(' ');
    if (this.verbose) console.log(`  $ ${command}`);
    const r = spawnSync(this.binary, args, { encoding: 'utf8', timeout: this.timeoutMs, maxBuffer: 256 << 20 });
    if (r.error) throw new Error(`cannot run '${command}': ${r.error.message}`);
    return { status: r.status ?? `signal ${r.signal}`, stdout: r.stdout, stderr: r.stderr, command };
  }

  /**
   * `rnnstate rewrite IN -o OUT [--state-inputs MODE] EXTRA...`; mode null = the CLI's default.
   * Returns the run result plus `written` (whether OUT exists afterwards). A rewrite prefetched by
   * prefetchRewrites() returns what that batch recorded for the file instead of running again (its
   * stdout is empty: no caller reads the one line a rewrite prints there).
   */
  rewrite(input, output, mode, extraArgs = []) {
    const args = ['rewrite', input, '-o', output];
    if (mode) args.push('--state-inputs', mode);
    args.push(...extraArgs);
    const key = rewriteKey(input, output, mode, extraArgs);
    const done = this.prefetched.get(key);
    this.prefetched.delete(key);
    const r = done ? { ...done, command: [this.binary, ...args].join(' ') } : this.run(args);
    return { ...r, written: existsSync(output) };
  }

  /**
   * Runs many rewrites in few processes: starting rnnstate (loading ONNX's operator schemas) costs more
   * CPU than rewriting a small model, and the e2e suites rewrite about a thousand. The jobs
   * ([{input, output, mode, args}]) are grouped by mode and options, each group one
   * `rnnstate rewrite FILES... --out-dir DIR --json -j 1`; a file given twice is rewritten once and copied
   * to each output. --out-dir names each output after its input's base name: an input whose base name is
   * taken already goes in as a hard link of another name. A model with external data is left to its own
   * call: its output's data is written beside the output. What rnnstate recorded for each file (its exit code; its warnings and error as
   * the one-file call prints them on stderr; the output, copied to the job's path) is what rewrite()
   * returns for that job. A file the batch has no record of (the batch crashed) is left to rewrite() to run
   * on its own, which then reports it.
   */
  prefetchRewrites(jobs) {
    const groups = new Map();
    for (const job of jobs) {
      const key = JSON.stringify([job.mode ?? null, job.args ?? []]);
      if (!groups.has(key)) groups.set(key, new Map());
      const group = groups.get(key);
      if (!group.has(job.input)) group.set(job.input, []);
      group.get(job.input).push(job);
    }
    for (const group of groups.values()) {
      const [first] = group.values();
      this.#rewriteBatch(group, first[0].mode ?? null, first[0].args ?? []);
    }
  }

  /** One `rewrite --out-dir` call for `batch` (a Map: input -> its jobs). */
  #rewriteBatch(batch, mode, extraArgs) {
    const work = mkdtempSync(join(tmpdir(), 'rnnstate-batch-'));
    try {
      const given = new Map();  // the path rnnstate is given -> the input it stands for
      const names = new Set();
      for (const input of batch.keys()) {
        // External data is written beside the output too: such a model (or one that merely holds the word
        // "location", an external tensor's key) runs on its own.
        if (readFileSync(input).includes('location')) continue;
        let path = input;
        if (names.has(basename(input))) {
          path = join(work, `${given.size}_${basename(input)}`);
          linkSync(input, path);
        }
        names.add(basename(path));
        given.set(path, input);
      }
      if (!given.size) return;
      const outDir = join(work, 'out');
      const args = ['rewrite', ...given.keys(), '--out-dir', outDir, '--json', '-j', '1'];
      if (mode) args.push('--state-inputs', mode);
      const r = this.run([...args, ...extraArgs]);
      for (const line of r.stdout.split('\n')) {
        const record = line.startsWith('{"path"') ? JSON.parse(line) : null;
        const input = record && given.get(record.path);
        if (!input) continue;
        const stderr = [...record.warnings.map((w) => `rnnstate: warning: ${input}: ${w}\n`),
          record.error === null ? '' : `rnnstate: error: ${input}: ${record.error}\n`].join('');
        for (const job of batch.get(input)) {
          rmSync(job.output, { force: true });
          if (record.output) copyFileSync(record.output, job.output);
          this.prefetched.set(rewriteKey(job.input, job.output, mode, extraArgs), { status: record.exit_code, stdout: '', stderr });
        }
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }

  /** `rnnstate check FILE`; a check prefetched by prefetchChecks() returns what that batch recorded. */
  check(file) {
    const done = this.checked.get(file);
    this.checked.delete(file);
    return done ? { ...done, command: `${this.binary} check ${file}` } : this.run(['check', file]);
  }

  /**
   * `rnnstate check FILES... --json -j 1` in one process: each file's exit code, and its problems as the
   * one-file call prints them on stdout (its error on stderr), for check() to hand out once.
   */
  prefetchChecks(files) {
    if (!files.length) return;
    const r = this.run(['check', ...new Set(files), '--json', '-j', '1']);
    for (const line of r.stdout.split('\n')) {
      const record = line.startsWith('{"path"') ? JSON.parse(line) : null;
      if (!record) continue;
      const stdout = record.problems.map((p) => `${record.path}: ${p.message}\n`).join('');
      const stderr = record.error === null || record.problems.length ? '' : `rnnstate: error: ${record.path}: ${record.error}\n`;
      this.checked.set(record.path, { status: record.exit_code, stdout, stderr });
    }
  }

  /**
   * `rnnstate report FILES... --json -j 1` in one process: each file's report (its record's "report", the
   * document the one-file call prints), for report() to hand out once.
   */
  prefetchReports(files) {
    if (!files.length) return;
    const r = this.run(['report', ...new Set(files), '--json', '-j', '1']);
    for (const line of r.stdout.split('\n')) {
      const record = line.startsWith('{"path"') ? JSON.parse(line) : null;
      if (record?.exit_code === 0 && record.report) this.reported.set(record.path, record.report);
    }
  }

  /** `rnnstate report FILE --json` parsed; throws with the CLI's stderr on failure. */
  report(file) {
    const done = this.reported.get(file);
    this.reported.delete(file);
    if (done) return done;
    const r = this.run(['report', file, '--json']);
    if (r.status !== 0) throw new Error(`'${r.command}' exited ${r.status}: ${lastLines(r.stderr)}`);
    try {
      return JSON.parse(r.stdout);
    } catch (e) {
      throw new Error(`'${r.command}' printed invalid JSON: ${e.message}`);
    }
  }
}

const rewriteKey = (input, output, mode, args) => JSON.stringify([input, output, mode ?? null, args ?? []]);

/** Last few lines of a CLI's stderr, for error messages. */
export function lastLines(text, n = 3) {
  return (text || '').trim().split('\n').slice(-n).join(' | ') || '(no stderr)';
}
