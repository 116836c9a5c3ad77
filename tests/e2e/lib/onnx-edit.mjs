// Builds the harness models `--pack sequence` is tested through. onnxruntime-node cannot feed or return
// a Sequence, so the packed model's graph is inlined, unchanged, into a wrapper whose interface is
// tensors only:
//   first call:  SequenceEmpty ─> S ─> (the packed model's nodes) ─> Q ─SequenceAt(i)─> member_i outputs
//   later calls: member_i inputs ─SequenceConstruct─> S ─> (the same nodes) ─> Q ─SequenceAt(i)─> ...
// The model is edited with protobufjs against Debian's onnx.proto (as lib/onnx-proto.mjs reads it).
import { readFileSync, writeFileSync } from 'node:fs';
import protobuf from 'protobufjs';

const ONNX_PROTO = '/usr/include/onnx/onnx.proto';
let root = null;
const types = () => {
  root ??= protobuf.loadSync(ONNX_PROTO);
  return { Model: root.lookupType('onnx.ModelProto') };
};

const ATTRIBUTE_INT = 2;
const ATTRIBUTE_TENSOR = 4;
const INT64 = 7;

/** The ONNX element type number of an ORT type name. */
export const ELEM_TYPE = { float32: 1, float16: 10, float64: 11, bfloat16: 16 };

/** Reads a model file as a plain object (protobufjs message). */
export function readModel(file) {
  return types().Model.decode(readFileSync(file));
}

export function writeModel(model, file) {
  writeFileSync(file, types().Model.encode(types().Model.fromObject(types().Model.toObject(model))).finish());
}

function int64Scalar(value) {
  const raw = Buffer.alloc(8);
  raw.writeBigInt64LE(BigInt(value));
  return { dataType: INT64, rawData: raw };
}

const node = (opType, input, output, attribute = []) => ({ opType, input, output, name: output[0], attribute });
const tensorInfo = (name, elemType, rank) =>
  ({ name, type: { tensorType: { elemType, shape: { dim: Array.from({ length: rank }, () => ({})) } } } });

/**
 * The wrapper of a sequence-packed model: `value` is the packed value of its metadata (one element
 * type), `ranks[i]` the rank of member i. `first`: the sequence starts empty (no member inputs).
 * Returns {model, memberInputs, memberOutputs} (names, in member position order).
 */
export function sequenceWrapper(file, value, elemType, ranks, first) {
  const model = readModel(file);
  const graph = model.graph;
  const members = [...value.members].sort((a, b) => a.position - b.position);
  const memberInputs = members.map((m, i) => `${value.input}.member${i}`);
  const memberOutputs = members.map((m, i) => `${value.output}.member${i}`);
  const before = first
    ? [node('SequenceEmpty', [], [value.input], [{ name: 'dtype', type: ATTRIBUTE_INT, i: elemType }])]
    : [node('SequenceConstruct', memberInputs, [value.input])];
  const after = [];
  members.forEach((m, i) => {
    const position = `${value.output}.position${i}`;
    after.push(node('Constant', [], [position], [{ name: 'value', type: ATTRIBUTE_TENSOR, t: int64Scalar(i) }]));
    after.push(node('SequenceAt', [value.output, position], [memberOutputs[i]]));
  });
  graph.node = [...before, ...graph.node, ...after];
  graph.input = graph.input.filter((v) => v.name !== value.input);
  if (!first) graph.input.push(...members.map((m, i) => tensorInfo(memberInputs[i], elemType, ranks[i])));
  graph.output = graph.output.filter((v) => v.name !== value.output);
  graph.output.push(...members.map((m, i) => tensorInfo(memberOutputs[i], elemType, ranks[i])));
  return { model, memberInputs, memberOutputs };
}

/**
 * A copy of a model without the initializers named `names` (the packed input's default): onnxruntime-node
 * hides an input that has one and ignores a feed for it, so the fed path is run on this copy.
 */
export function withoutInitializers(file, names, out) {
  const model = readModel(file);
  model.graph.initializer = model.graph.initializer.filter((t) => !names.includes(t.name));
  writeModel(model, out);
}
