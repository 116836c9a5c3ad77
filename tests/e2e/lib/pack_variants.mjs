// The rewrites pack_verify.mjs checks (each model packed and laid out every way) and their batched
// prefetch: every rnnstate call of its rewriteAll() made ahead of the models, in a few processes.
import { existsSync, mkdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

import { normalizeEntry } from './manifest.mjs';

/** The rewrites under test: name -> the options added to the entry's own, and the mode. */
export const VARIANTS = {
  tensor: { args: ['--pack', 'tensor'] },
  'tensor-required': { args: ['--pack', 'tensor'], mode: 'required' },
  'tensor+bf': { args: ['--pack', 'tensor', '--state-layout', 'batch-first'] },
  'tensor+bf-required': { args: ['--pack', 'tensor', '--state-layout', 'batch-first'], mode: 'required' },
  'bf-required': { args: ['--state-layout', 'batch-first'], mode: 'required' },
  sequence: { args: ['--pack', 'sequence'] },
};

/** The work folder of manifest entry `index`. */
export const modelDir = (opts, index, entry) => join(opts.workdir, `${index}_${basename(entry.file, '.onnx')}`);

/**
 * Every rewrite rewriteAll() makes, in a few batched rnnstate calls ahead of the models (RnnstateCli's
 * prefetchRewrites): the variants of each original, then each written variant rewritten again and checked,
 * and the tensor-packed model packed twice. rewriteAll() then receives what each call would have given.
 */
export function prefetchRewrites(all, selected, opts) {
  const entries = selected.flatMap((index) => {
    try {
      const entry = normalizeEntry(all[index]);
      if (entry.expectExit !== 0) return [];
      const dir = modelDir(opts, index, entry);
      mkdirSync(dir, { recursive: true });
      return [{ entry, dir, origPath: resolve(opts.models, entry.file) }];
    } catch {
      return [];  // verifyModel reports the entry
    }
  });
  const variantJobs = entries.flatMap(({ entry, dir, origPath }) => Object.entries(VARIANTS).map(([name, variant]) => ({
    input: origPath, output: join(dir, `${name}.onnx`), mode: variant.mode ?? null, args: [...entry.rewriteArgs, ...variant.args],
    name, entry, dir,
  })));
  opts.cli.prefetchRewrites(variantJobs);
  const written = variantJobs.filter((job) => existsSync(job.output));
  opts.cli.prefetchChecks(written.map((job) => job.output));
  opts.cli.prefetchRewrites([
    ...written.map((job) => ({ input: job.output, output: job.output.replace(/\.onnx$/, '-again.onnx'),
      mode: VARIANTS[job.name].mode ?? null, args: job.entry.rewriteArgs })),
    ...written.filter((job) => job.name === 'tensor').map((job) => ({ input: job.output, output: join(job.dir, 'twice.onnx'),
      mode: null, args: ['--pack', 'tensor'] })),
  ]);
}

