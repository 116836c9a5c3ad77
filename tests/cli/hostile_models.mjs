// Writes the models of the second hostile suite (hostile_test.sh) into OUT_DIR, from BASE (an rnnstate
// rewrite of a two-layer GRU, defaults mode) and PACKED (the same packed with --pack tensor):
//   meta_*.onnx   BASE with its `rnnstate` metadata made malformed, contradictory or huge;
//   graph_*.onnx  deep and wide graphs around one LSTM;
//   name_*.onnx   an LSTM whose node name is hostile (100,000 characters, quotes, braces, newlines).
// Usage: node hostile_models.mjs OUT_DIR BASE PACKED. Prints one line per model: NAME.
// Built with protobufjs against Debian's onnx.proto (tests/e2e's dependencies).
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(new URL('../e2e/package.json', import.meta.url));
const protobuf = require('protobufjs');
protobuf.util.recursionLimit = 1000;  // graph_if_depth_40 is deeper than protobuf's 100: rnnstate must refuse it
const Model = protobuf.loadSync('/usr/include/onnx/onnx.proto').lookupType('onnx.ModelProto');

const [outDir, basePath, packedPath] = process.argv.slice(2);
const read = (file) => Model.toObject(Model.decode(require('node:fs').readFileSync(file)), { longs: Number });
const write = (name, model) => {
  writeFileSync(join(outDir, `${name}.onnx`), Model.encode(Model.fromObject(model)).finish());
  console.log(name);
};

// ---------------------------------------------------------------------------------------------------
// Metadata

const base = read(basePath);
const metaOf = (model) => model.metadataProps.find((p) => p.key === 'rnnstate');
const document = JSON.parse(metaOf(base).value);
const inputs = base.graph.input.map((v) => v.name);

/** BASE with the metadata value `text` (a string) or the document `edit` returns. */
function withMeta(name, edit) {
  const model = read(basePath);
  const doc = structuredClone(document);
  const value = edit(doc, model);
  metaOf(model).value = typeof value === 'string' ? value : JSON.stringify(value ?? doc);
  write(`meta_${name}`, model);
}

withMeta('not_json', () => '{"version":1,"states":[');
withMeta('trailing_text', (doc) => `${JSON.stringify(doc)} and more`);
withMeta('deep_nesting', () => `${'['.repeat(100000)}${']'.repeat(100000)}`);
withMeta('key_twice', (doc) => JSON.stringify(doc).replace('"input":', '"input":"x","input":'));
withMeta('many_keys', (doc) => {
  for (let i = 0; i < 5000; i++) doc.states[0][`k${i}`] = i;
});
withMeta('integer_2p64', (doc) => JSON.stringify(doc).replace('"batch_axis":1', '"batch_axis":18446744073709551615'));
withMeta('version_2', (doc) => { doc.version = 2; });
withMeta('states_object', (doc) => { doc.states = {}; });
withMeta('pair_without_input', (doc) => { delete doc.states[1].input; });
withMeta('init_bogus', (doc) => { doc.states[0].init = 'ones'; });
withMeta('dtype_unknown', (doc) => { doc.states[0].dtype = 'complex128'; });
withMeta('dtype_contradicts', (doc) => { doc.states[0].dtype = 'float64'; });
withMeta('shape_contradicts', (doc) => { doc.states[0].shape = [3, 'batch', 99]; });
withMeta('rank_contradicts', (doc) => { doc.states[0].shape = [1, 'batch']; doc.states[0].batch_axis = 1; });
withMeta('batch_axis_out_of_range', (doc) => { doc.states[0].batch_axis = 9; });
withMeta('path_to_nothing', (doc) => { doc.states[0].path = [{ node: 'no_such_loop', attribute: 'body' }]; });
withMeta('graph_not_path', (doc) => { doc.states[0].graph = 'main/elsewhere:body'; });
withMeta('input_missing', (doc) => { doc.states[0].input = 'no_such_input'; });
withMeta('output_missing', (doc) => { doc.states[1].output = 'no_such_output'; });
withMeta('two_pairs_one_input', (doc) => { doc.states[1].input = doc.states[0].input; });
withMeta('two_pairs_one_output', (doc) => { doc.states[1].output = doc.states[0].output; });
withMeta('names_a_data_input', (doc) => { doc.states[0].input = inputs[0]; });
// Two values under the key: the second lists a pair for an input the first does not have.
{
  const model = read(basePath);
  const ghost = structuredClone(document);
  ghost.states[0].input = 'ghost_in';
  model.metadataProps.push({ key: 'rnnstate', value: JSON.stringify(ghost) });
  write('meta_key_twice_in_model', model);
}
// Huge: 100,000 pairs that name nothing of the model (cost must stay linear), and 2,000 on one input.
withMeta('pairs_100k', (doc) => {
  const pair = doc.states[0];
  doc.states = Array.from({ length: 100000 }, (_, i) => ({ ...pair, input: `in_${i}`, output: `out_${i}`, node: `n_${i}` }));
});
withMeta('pairs_2000_one_input', (doc) => {
  const pair = doc.states[0];
  doc.states = Array.from({ length: 2000 }, (_, i) => ({ ...pair, output: `out_${i}`, rows: [i, i + 1] }));
});
withMeta('string_1mb', (doc) => { doc.states[0].node = 'n'.repeat(1 << 20); });

// A packed model whose width contradicts its input (export triton wrote dims of 2^62).
{
  const model = read(packedPath);
  const doc = JSON.parse(metaOf(model).value);
  doc.packed.values[0].shape[1] = 2 ** 62;
  doc.packed.values[0].members[0].length = 2 ** 62;
  metaOf(model).value = JSON.stringify(doc);
  write('meta_packed_width', model);
}

// ---------------------------------------------------------------------------------------------------
// Graphs and names: one LSTM (input 2, hidden 3) over x [seq, batch, 2].

const FLOAT = 1;
const tensorInfo = (name, dims) => ({
  name,
  type: { tensorType: { elemType: FLOAT, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } },
});
const floats = (name, dims) => ({ name, dataType: FLOAT, dims, floatData: Array.from({ length: dims.reduce((a, b) => a * b, 1) }, (_, i) => ((i % 7) - 3) / 10) });
const node = (opType, input, output, name = output[0], attribute = []) => ({ opType, input, output, name, attribute });
const lstm = (name, x = 'x') => node('LSTM', [x, 'W', 'R'], ['y', 'y_h'], name, [{ name: 'hidden_size', type: 2, i: 3 }]);

function lstmModel(nodes, { inputs: extraInputs = [], outputs = [tensorInfo('y_h', [1, 'batch', 3])] } = {}) {
  return {
    irVersion: 7,
    opsetImport: [{ domain: '', version: 14 }],
    graph: {
      name: 'g',
      node: nodes,
      input: [tensorInfo('x', ['seq', 'batch', 2]), ...extraInputs],
      output: outputs,
      initializer: [floats('W', [1, 12, 2]), floats('R', [1, 12, 3])],
    },
  };
}

// Wide: 20,000 Identity nodes beside the LSTM, and one Sum of 5,000 inputs.
{
  const wide = Array.from({ length: 20000 }, (_, i) => node('Identity', ['x'], [`copy_${i}`]));
  const sum = node('Sum', Array.from({ length: 5000 }, (_, i) => `copy_${i}`), ['total']);
  write('graph_wide', lstmModel([...wide, sum, lstm('lstm', 'total')]));
}
// Long: a chain of 50,000 nodes before the LSTM.
{
  const chain = Array.from({ length: 50000 }, (_, i) => node(i % 2 ? 'Neg' : 'Identity', [i ? `c_${i - 1}` : 'x'], [`c_${i}`]));
  write('graph_chain', lstmModel([...chain, lstm('lstm', 'c_49999')]));
}
// Deep: the LSTM in the then_branch of an If nested `depth` levels deep (outer-scope x, W, R; every
// else_branch gives a zero state).
function nested(depth) {
  const anyShape = (name) => ({ name, type: { tensorType: { elemType: FLOAT, shape: { dim: [{}, {}, {}] } } } });
  let branch = { name: `level_${depth}`, node: [lstm('lstm')], output: [anyShape('y_h')] };
  for (let level = depth - 1; level >= 1; --level) {
    const otherwise = { name: `else_${level}`, node: [node('Identity', ['zero_state'], [`e_${level}`])], output: [anyShape(`e_${level}`)] };
    const ifNode = node('If', ['flag'], [`h_${level}`], `if_${level}`,
      [{ name: 'then_branch', type: 5, g: branch }, { name: 'else_branch', type: 5, g: otherwise }]);
    branch = { name: `level_${level}`, node: [ifNode], output: [anyShape(`h_${level}`)] };
  }
  const flag = { name: 'flag', type: { tensorType: { elemType: 9, shape: { dim: [] } } } };
  const model = lstmModel(branch.node, { inputs: [flag], outputs: [anyShape('h_1')] });
  model.graph.initializer.push(floats('zero_state', [1, 1, 3]));
  return model;
}
write('graph_if_depth_8', nested(8));
write('graph_if_depth_40', nested(40));  // deeper than protobuf's 100 nested messages: refused

// Names.
write('name_100k', lstmModel([lstm('a'.repeat(100000))]));
write('name_quotes_braces', lstmModel([lstm(`l"s't{node}{kind} m\n/x:y[0]`)]));
write('name_collides', lstmModel([lstm('lstm')], { inputs: [tensorInfo('lstm.h_in', [1])] }));
