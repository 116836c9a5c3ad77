// Minimal read-only ONNX protobuf scanner. onnxruntime-node does not expose the graph, but the
// harness needs two facts from the files themselves: whether the ORIGINAL model contains
// recurrent nodes (to catch a rewrite that silently found nothing), and the `rnnstate`
// metadata_props entry of the REWRITTEN model (to cross-check `rnnstate report`).
// Only the few fields below are decoded; everything else (tensor data included) is skipped.
import { readFileSync } from 'node:fs';

// Field numbers from onnx.proto3.
const MODEL = { graph: 7, metadata_props: 14, functions: 25 };
const GRAPH = { node: 1 };
const FUNCTION = { node: 7 };
const NODE = { name: 3, op_type: 4, attribute: 5, domain: 7 };
const ATTRIBUTE = { g: 6, graphs: 11 };
const STRING_ENTRY = { key: 1, value: 2 };

const RECURRENT_OPS = new Set(['RNN', 'GRU', 'LSTM']);
const utf8 = new TextDecoder();

function readVarint(buf, pos) {
  let value = 0, scale = 1, byte;
  do {
    if (pos >= buf.length) throw new Error('truncated protobuf varint');
    byte = buf[pos++];
    value += (byte & 0x7f) * scale; // multiply, not shift: values may exceed 32 bits
    scale *= 128;
  } while (byte & 0x80);
  return [value, pos];
}

/** Yields {field, start, end} for every length-delimited field of the message buf[start:end]. */
function* lengthFields(buf, start, end) {
  let pos = start;
  while (pos < end) {
    let tag, len;
    [tag, pos] = readVarint(buf, pos);
    const field = Math.floor(tag / 8), wire = tag % 8;
    if (wire === 0) [, pos] = readVarint(buf, pos);
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      [len, pos] = readVarint(buf, pos);
      if (pos + len > end) throw new Error('truncated protobuf field');
      yield { field, start: pos, end: pos + len };
      pos += len;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
}

const text = (buf, f) => utf8.decode(buf.subarray(f.start, f.end));

function scanNodes(buf, start, end, nodeField, path, out) {
  for (const f of lengthFields(buf, start, end)) {
    if (f.field !== nodeField) continue;
    const node = { name: '', op: '', domain: '' };
    for (const nf of lengthFields(buf, f.start, f.end)) {
      if (nf.field === NODE.op_type) node.op = text(buf, nf);
      else if (nf.field === NODE.name) node.name = text(buf, nf);
      else if (nf.field === NODE.domain) node.domain = text(buf, nf);
      else if (nf.field === NODE.attribute) {
        // Subgraphs (If branches, Loop/Scan bodies) live in graph-valued attributes.
        for (const af of lengthFields(buf, nf.start, nf.end)) {
          if (af.field === ATTRIBUTE.g || af.field === ATTRIBUTE.graphs) {
            scanNodes(buf, af.start, af.end, GRAPH.node, `${path}/${node.name || node.op}`, out);
          }
        }
      }
    }
    if (RECURRENT_OPS.has(node.op) && (node.domain === '' || node.domain === 'ai.onnx')) {
      out.push({ ...node, graph: path });
    }
  }
}

/**
 * Reads an .onnx file and returns
 *   { recurrentNodes: [{name, op, domain, graph}], metadata: {key: value} }
 * recurrentNodes covers the main graph, all nested subgraphs and model-local functions.
 */
export function scanModel(file) {
  const buf = readFileSync(file);
  const recurrentNodes = [];
  const metadata = {};
  for (const f of lengthFields(buf, 0, buf.length)) {
    if (f.field === MODEL.graph) scanNodes(buf, f.start, f.end, GRAPH.node, '', recurrentNodes);
    else if (f.field === MODEL.functions) scanNodes(buf, f.start, f.end, FUNCTION.node, '(function)', recurrentNodes);
    else if (f.field === MODEL.metadata_props) {
      let key = '', value = '';
      for (const ef of lengthFields(buf, f.start, f.end)) {
        if (ef.field === STRING_ENTRY.key) key = text(buf, ef);
        else if (ef.field === STRING_ENTRY.value) value = text(buf, ef);
      }
      metadata[key] = value;
    }
  }
  return { recurrentNodes, metadata };
}
