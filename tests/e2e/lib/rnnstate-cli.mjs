// Thin wrapper around the rnnstate binary under test.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export class RnnstateCli {
  constructor(binary, { timeoutSec = 600, verbose = false } = {}) {
    this.binary = binary;
    this.timeoutMs = timeoutSec * 1000;
    this.verbose = verbose;
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
   * Returns the run result plus `written` (whether OUT exists afterwards).
   */
  rewrite(input, output, mode, extraArgs = []) {
    const args = ['rewrite', input, '-o', output];
    if (mode) args.push('--state-inputs', mode);
    const r = this.run([...args, ...extraArgs]);
    return { ...r, written: existsSync(output) };
  }

  /** `rnnstate report FILE --json` parsed; throws with the CLI's stderr on failure. */
  report(file) {
    const r = this.run(['report', file, '--json']);
    if (r.status !== 0) throw new Error(`'${r.command}' exited ${r.status}: ${lastLines(r.stderr)}`);
    try {
      return JSON.parse(r.stdout);
    } catch (e) {
      throw new Error(`'${r.command}' printed invalid JSON: ${e.message}`);
    }
  }
}

/** Last few lines of a CLI's stderr, for error messages. */
export function lastLines(text, n = 3) {
  return (text || '').trim().split('\n').slice(-n).join(' | ') || '(no stderr)';
}
