// Checks of states their authors already expose (manifest field "exposed", see models/exposed/README.md):
// what `rnnstate report` recognizes must be what the entry expects, and a model whose every state is
// exposed keeps its interface through every rewrite.
import { sameSet } from './checks.mjs';

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Every expected pair is recognized with its input, output and region (and view); every state expected without a
 * pair (a negative control) is not exposed, unless the entry calls it a default path (the state of a
 * branch that runs only when the fed state is empty), which shares the pair of the state it stands for.
 */
export function checkRecognition(m, report) {
  const states = new Map();
  for (const node of report.nodes) {
    // A loop's states are all of kind "state": its carried variable tells them apart.
    for (const st of node.states) states.set(`${node.graph}|${node.name}|${st.kind}${st.variable ? `|${st.variable}` : ''}`, st);
  }
  const problems = [];
  let pairs = 0;
  for (const want of m.entry.exposed) {
    const key = `${want.graph}|${want.node}|${want.kind}${want.variable ? `|${want.variable}` : ''}`;
    const got = states.get(key);
    if (!got) {
      problems.push(`${key}: no such state in the report`);
      continue;
    }
    const e = got.exposure;
    if (want.pair) {
      pairs++;
      const p = want.pair;
      // A strided state's region is on a view of the tensor (`view`, its shape); absent: the tensor itself.
      const where = (region, view) => JSON.stringify(region) + (view ? ` of view ${JSON.stringify(view)}` : '');
      if (!e || e.input !== p.input || e.output !== p.output || !same(e.region, p.input_region) ||
          !same(e.view ?? null, p.view ?? null)) {
        problems.push(`${key}: expected ${p.input}${where(p.input_region, p.view)} -> ${p.output}, got ` +
          (e ? `${e.input}${where(e.region, e.view)} -> ${e.output}` : `none (${got.not_exposed_because ?? 'no reason'})`));
      }
    } else if (e && !(e.default_path_of && /default path/.test(want.reason ?? ''))) {
      problems.push(`${key}: must not be exposed (${want.reason}), got ${e.input}${JSON.stringify(e.region)} -> ${e.output}`);
    }
  }
  return problems.length ? { ok: false, diff: NaN, detail: problems.join('; ') }
    : { ok: true, diff: NaN, detail: `${pairs} exposed states recognized, ${m.entry.exposed.length - pairs} not claimed` };
}

/** When every state is exposed by its authors, no rewrite adds or removes a graph input or output. */
export function checkInterfaceUnchanged(m) {
  const { orig, def, req, reqDirect } = m.sessions;
  const problems = [];
  for (const [what, s] of [['defaults', def], ['required', req], ['direct required', reqDirect]]) {
    if (!sameSet(s.inputNames, orig.inputNames)) problems.push(`${what} inputs [${s.inputNames}] != [${orig.inputNames}]`);
    if (!sameSet(s.outputNames, orig.outputNames)) problems.push(`${what} outputs [${s.outputNames}] != [${orig.outputNames}]`);
  }
  return problems.length ? { ok: false, diff: NaN, detail: problems.join('; ') }
    : { ok: true, diff: NaN, detail: 'inputs and outputs are the original ones' };
}
