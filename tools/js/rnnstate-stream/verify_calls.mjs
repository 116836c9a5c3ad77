// `verify` on a model with no time axis inside one call (one frame per call, as Silero VAD): no sequence
// to cut into chunks, so the rewrite is checked call by call. What applies:
//   first call        the rewrite, its state inputs fed the metadata's first feeds, gives the original's
//                     outputs (the original's own state inputs fed the same first feeds);
//   unfed             a rewrite whose state inputs have defaults, run without them, gives them too;
//   state round trip  calls 2..K: the rewrite fed the states it returned on call k-1 gives what the original
//                     gives fed its own returned states — for states the original takes as inputs (its
//                     authors'); a state rnnstate added has no such reference (the original restarts it on
//                     every call, and without a time axis no run of the original joins calls);
//   chunked = whole   never: there is no time axis to chunk.
// Each check says whether it ran and, if not, why.
import { firstFeedSpecs, firstFeedSpecsOf, firstFeedTensor } from './feeds.mjs';
import { StreamingSession } from './session.mjs';
import { compareTensors } from './tensors.mjs';
import { createSession, makeInput, runOrThrow, VerifyError } from './verify_inputs.mjs';

export const DEFAULT_CALLS = 3;

/**
 * The call-by-call check. `ctx` carries what verifyStreaming has opened and read: the sessions
 * (`original`, `rewritten` without state defaults), the rewrite's bytes and whether it had defaults,
 * the metadata and its state values, the data inputs with their declared metadata, the --inputs tensors
 * and shapes, the states' batch dimension names, and `noChunking` (why there is no time axis).
 * Resolves to {ok, mode: "calls", calls, batch, time_axes: {}, atol, rtol, checks: [{check, ran, what |
 * why}], compared: [{name, role, call, max_abs, max_rel, ok, why?}], state_inputs, predicted_difference}.
 */
export async function verifyCalls(ctx) {
  const { ort, options, metadata, values, original } = ctx;
  const atol = options.atol ?? 1e-5;
  const rtol = options.rtol ?? 1e-4;
  const calls = options.calls ?? DEFAULT_CALLS;
  if (!Number.isInteger(calls) || calls < 1) throw new VerifyError(2, `--calls must be a positive integer, not ${calls}`);
  const batch = options.batch ?? 1;
  const dims = { ...(options.dims ?? {}) };
  for (const b of ctx.batchNames) dims[b] ??= batch;

  const checks = [];
  const authors = values.filter((v) => original.inputNames.includes(v.input));
  const added = values.filter((v) => !authors.includes(v));
  const roundTrip = roundTripApplies(authors, added, calls);
  const runs = roundTrip.ran ? calls : 1;
  const firstFeeds = new Map([...firstFeedSpecs(metadata.states, { dims, batch }),
    ...firstFeedSpecsOf(metadata, { dims, batch })].map((s) => [s.input, s]));
  const first = (name) => firstFeedTensor(firstFeeds.get(name), ort.Tensor);
  const dataOf = (k) => Object.fromEntries(ctx.dataInputs.map((name) => [name, ctx.given[name] ??
    makeInput(ort, name, ctx.declared.get(name), { dims, seed: `${options.seed ?? 0}|call ${k}`, shape: ctx.shapes[name] })]));

  const compared = [];
  // The original's own state input fed back from an output the original does not have: the metadata
  // contradicts the authors' interface (rnnstate keeps their outputs), and no call after the first would
  // be compared.
  for (const v of authors.filter((a) => !original.outputNames.includes(a.output))) {
    compared.push({ name: v.output, role: 'state', call: 1, max_abs: Infinity, max_rel: Infinity, ok: false,
      why: `the metadata feeds the original's own input '${v.input}' from '${v.output}', which the original does not return` });
  }
  const stateOutputs = new Set(values.map((v) => v.output));
  const compare = (call, got, want) => {
    for (const name of original.outputNames) {
      const role = stateOutputs.has(name) ? 'state' : 'output';
      if (!got[name]) {
        compared.push({ name, role, call, max_abs: Infinity, max_rel: Infinity, ok: false, why: `the rewrite returned no '${name}'` });
        continue;
      }
      const cmp = compareTensors(got[name], want[name]);
      compared.push({ name, role, call, max_abs: cmp.diff, max_rel: cmp.rel, ok: !cmp.exceeds(atol, rtol),
        ...(cmp.why ? { why: cmp.why } : {}) });
    }
  };

  const stream = new StreamingSession(ctx.rewritten, metadata, { ort, batch, dims: options.dims, stateOutputs: true });
  let carried = null;  // the original's state inputs: its own state outputs of the call before
  let firstData, firstReference;
  for (let k = 1; k <= runs; k++) {
    const data = dataOf(k);
    const feeds = {};
    for (const name of original.inputNames) {
      if (data[name]) feeds[name] = data[name];
      else if (firstFeeds.has(name)) feeds[name] = carried ? carried[name] : first(name);
      else throw new VerifyError(3, `the original model's input '${name}' is neither a data input of the rewrite nor a state input`);
    }
    const want = await runOrThrow(() => original.run(feeds), `the original model, call ${k}`);
    const got = await runOrThrow(() => stream.run(data), `the rewritten model, call ${k}`);
    compare(k, got, want);
    carried = Object.fromEntries(authors.map((v) => [v.input, want[v.output] ?? first(v.input)]));
    if (k === 1) [firstData, firstReference] = [data, want];
  }
  checks.push({ check: 'first call', ran: true,
    what: "call 1: the rewrite, its state inputs fed the metadata's first feeds, = the original" });
  checks.push(await unfedCheck(ctx, firstData, firstReference, first, compare));
  checks.push(roundTrip);
  checks.push({ check: 'chunked = whole', ran: false, why: ctx.noChunking });
  return {
    ok: compared.length > 0 && compared.every((c) => c.ok), mode: 'calls', calls: runs, batch, time_axes: {}, atol, rtol,
    checks, compared, state_inputs: values.map((v) => v.input), predicted_difference: null,
  };
}

/** Whether calls 2..K can be compared with the original, as a check entry. */
function roundTripApplies(authors, added, calls) {
  const names = (vs) => vs.map((v) => `'${v.input}'`).join(', ');
  if (added.length) {
    return { check: 'state round trip', ran: false, why: `state input${added.length > 1 ? 's' : ''} ${names(added)} ` +
      'not in the original (added by rnnstate, or packed): the original restarts those states on every call, and ' +
      'without a time axis no run of the original joins calls, so nothing gives calls 2.. a reference' };
  }
  if (calls < 2) return { check: 'state round trip', ran: false, why: '--calls 1: one call only' };
  return { check: 'state round trip', ran: true, what: `calls 2..${calls}: the rewrite fed the states it returned ` +
    `= the original fed its own (${authors.map((v) => `${v.output} -> ${v.input}`).join(', ')})` };
}

/**
 * The rewrite as written, its state inputs with defaults not fed, on call 1's data against the original's
 * call 1: a check entry (a state input without a default is fed its first feed).
 */
async function unfedCheck(ctx, data, reference, first, compare) {
  if (!ctx.hasDefaults) {
    return { check: 'unfed', ran: false,
      why: 'no state input of the rewrite has a default (--state-inputs required, or the authors\' own inputs only)' };
  }
  // (Quiet: ONNX Runtime warns that an initializer which is also an input is not folded; that is the point.)
  const session = await createSession(ctx.ort, ctx.rewrittenAsWritten, { logSeverityLevel: 3, ...ctx.options.sessionOptions },
    'the rewritten model as written');
  try {
    const feeds = {};
    for (const name of session.inputNames) feeds[name] = data[name] ?? first(name);
    const got = await runOrThrow(() => session.run(feeds), 'the rewritten model as written, state inputs not fed');
    compare('unfed', got, reference);
  } finally {
    await session.release?.();
  }
  return { check: 'unfed', ran: true, what: 'the rewrite as written, state inputs with defaults not fed, = the original' };
}

/** The report of a call-by-call check as text: the checks, one line per compared value, the verdict. */
export function formatCallsReport(result, { original, rewritten }) {
  const calls = `${result.calls} call${result.calls > 1 ? 's' : ''}`;
  const carried = result.checks.some((c) => c.check === 'state round trip' && c.ran);
  const lines = [`${original}: ${calls} (batch ${result.batch})${carried ? ', its own state inputs fed back' : ''}`,
    `${rewritten}: ${calls}${result.calls > 1 ? ', the states it returns fed back' : ''}`];
  for (const c of result.checks) lines.push(`  ${c.ran ? 'ran ' : 'n/a '}  ${c.check}: ${c.ran ? c.what : c.why}`);
  const width = Math.max(...result.compared.map((c) => c.name.length), 4);
  const num = (x) => (x === Infinity ? 'inf' : x === 0 ? '0' : x.toExponential(2));
  for (const c of result.compared) {
    const call = c.call === 'unfed' ? 'unfed' : `call ${c.call}`;
    lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.role.padEnd(6)}  ${c.name.padEnd(width)}  ${call.padEnd(7)}  ` +
      `max abs ${num(c.max_abs).padStart(8)}  max rel ${num(c.max_rel).padStart(8)}${c.why ? `  (${c.why})` : ''}`);
  }
  const failed = result.compared.filter((c) => !c.ok).length;
  const skipped = result.checks.filter((c) => !c.ran).map((c) => c.check).join(', ');
  lines.push(failed
    ? `FAIL: ${failed} of ${result.compared.length} past atol ${result.atol} + rtol ${result.rtol} * |expected|`
    : `PASS: ${result.compared.length} values of ${calls} within atol ${result.atol} + rtol ${result.rtol} * |expected|` +
      (skipped ? `; not applicable: ${skipped}` : ''));
  return lines.join('\n') + '\n';
}
