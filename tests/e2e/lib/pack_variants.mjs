// The rewrites pack_verify.mjs checks (each model packed and laid out every way) and their batched
// prefetch: every rnnstate call of its rewriteAll() made ahead of the models, in a few processes.
import { existsSync, mkdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

import { normalizeEntry } from './manifest.mjs';
import { lastLines } from './rnnstate-cli.mjs';

/** The rewrites under test: name -> the options added to the entry's own, and the mode. */
export const VARIANTS = {
  tensor: { args: ['--pack', 'tensor'] },
  'tensor-required': { args: ['--pack', 'tensor'], mode: 'required' },
  'tensor+bf': { args: ['--pack', 'tensor', '--state-layout', 'batch-first'] },
  'tensor+bf-required': { args: ['--pack', 'tensor', '--state-layout', 'batch-first'], mode: 'required' },
  'bf-required': { args: ['--state-layout', 'batch-first'], mode: 'required' },
  sequence: { args: ['--pack', 'sequence'] },
};

/**
 * The refusals of `--pack` that the README documents (exit 4), each with the rewrites it may answer: `tensor`,
 * only a packing into one tensor; `required`, only a rewrite in required mode.
 */
const PACK_REFUSALS = [
  // A state without a batch axis (a loop's state too) has no row in a tensor [batch, N].
  { tensor: true, pattern: /no batch axis \(use --pack sequence\)/ },
  // The authors' state whose batch has no name (Silero VAD's state [2, ?, 128]): an empty packed value
  // cannot be sized; packing refuses and says what works instead.
  { pattern: /cannot pack state .* leaves unnamed, which no data input declares/ },
  // Required mode has no default to size the zeros of a state whose batch no input names.
  { required: true, pattern: /which no graph input declares/ },
  // A context state below opset 8 (its zero default tiled to the batch).
  { tensor: true, pattern: /cannot pack context state .* below ai\.onnx opset 8/ },
  // A context whose first call holds fewer frames than the later ones (a Pad filling in another mode, a
  // valid window), or a state whose size is not fixed.
  { pattern: /cannot pack context state .* holds fewer frames than the later ones|cannot pack state .* its size on axis \d+ is not fixed/ },
  // The states of one element type must share one batch: a per-frame recurrence's state (batch x frames,
  // GTCRN's intra-frame GRU, exposed while the time analysis cannot reach it) does not.
  { tensor: true, pattern: /cannot pack state .*: its batch '.*' is not the batch '.*' of the other/ },
];

/**
 * The documented refusal that the run `r` of a rewrite with `--pack` (`tensor`: into one tensor; `required`:
 * in required mode) answered, as its last line of stderr; null when it was not one of them.
 */
export function packRefusal(r, { tensor, required }) {
  if (r.status !== 4) return null;
  const documented = PACK_REFUSALS.some((refusal) => (!refusal.tensor || tensor) && (!refusal.required || required) &&
    refusal.pattern.test(r.stderr));
  return documented ? lastLines(r.stderr, 1) : null;
}

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
      return [];  // runManifestSuite reports the entry
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

