// Reads the two facts the harness needs from the .onnx files themselves (ONNX Runtime does not expose
// the graph): the recurrent nodes of the ORIGINAL model (to catch a rewrite that silently found
// nothing) and the `rnnstate` metadata_props entry of the REWRITTEN model (to cross-check `rnnstate
// report`). The model is decoded with protobufjs against onnx.proto as Debian's libonnx-dev ships it;
// the recurrent operators come from tools/recurrent_ops.json, the list rnnstate's own table is tested
// against.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const ONNX_PROTO = '/usr/include/onnx/onnx.proto';
const OPS_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'tools', 'recurrent_ops.json');

let modelType = null;
function ModelProto() {
  modelType ??= protobuf.loadSync(ONNX_PROTO).lookupType('onnx.ModelProto');
  return modelType;
}

const sameDomain = (a, b) => (a || 'ai.onnx') === (b || 'ai.onnx');

/** The recurrent operators of tools/recurrent_ops.json: [{domain, op_type, ...}]. */
export const RECURRENT_OPS = JSON.parse(readFileSync(OPS_FILE, 'utf8')).ops;

export const isRecurrentOp = (node) =>
  RECURRENT_OPS.some((op) => op.op_type === node.opType && sameDomain(op.domain, node.domain));

function collectNodes(nodes, path, out) {
  for (const node of nodes ?? []) {
    for (const attribute of node.attribute ?? []) {
      // Subgraphs (If branches, Loop/Scan bodies) live in graph-valued attributes.
      for (const graph of [attribute.g, ...(attribute.graphs ?? [])].filter(Boolean)) {
        collectNodes(graph.node, `${path}/${node.name || node.opType}`, out);
      }
    }
    if (isRecurrentOp(node)) out.push({ name: node.name ?? '', op: node.opType, domain: node.domain ?? '', graph: path });
  }
}

/**
 * Reads an .onnx file and returns
 *   { recurrentNodes: [{name, op, domain, graph}], metadata: {key: value}, inputs: [name], outputs: [name] }
 * recurrentNodes covers the main graph, all nested subgraphs and model-local functions.
 */
export function scanModel(file) {
  const model = ModelProto().decode(readFileSync(file));
  const recurrentNodes = [];
  collectNodes(model.graph?.node, '', recurrentNodes);
  for (const fn of model.functions ?? []) collectNodes(fn.node, '(function)', recurrentNodes);
  const metadata = Object.fromEntries((model.metadataProps ?? []).map((p) => [p.key ?? '', p.value ?? '']));
  const names = (infos) => (infos ?? []).map((i) => i.name ?? '');
  return { recurrentNodes, metadata, inputs: names(model.graph?.input), outputs: names(model.graph?.output) };
}
