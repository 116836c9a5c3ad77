#!/usr/bin/python3
"""Emulates, in ONNX itself, the rewrite a streaming tool would make, and checks chunked runs against one
full run. Shared by tools/gen_quantized_models.py and tools/gen_loop_models.py (not a generator itself).

    expose(model, node_name, pairs)   # a copy whose state slots are graph inputs / outputs
    run_chains(ort_node, jobs)        # onnxruntime-node: calls in order, state fed back from call to call
    chunked_vs_full(...)              # max |chunked - full| over the compared outputs

The exposed copies are built in memory (written to a temporary directory for ORT), never committed.
"""

import base64
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import helper

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_handbuilt_models as common  # noqa: E402

_CHAIN_RUNNER = r"""
const ort = require(%s);
const fs = require('fs');
const jobs = JSON.parse(fs.readFileSync(0, 'utf8'));
const ctor = {float32: Float32Array, int64: BigInt64Array, int32: Int32Array, bool: Uint8Array,
              int8: Int8Array, uint8: Uint8Array};
function decode(t) {
  const bytes = Buffer.from(t.b64, 'base64');
  return new ort.Tensor(t.type, new ctor[t.type](new Uint8Array(bytes).buffer), t.dims);
}
function encode(v) {
  const d = v.data;
  return {type: v.type, dims: v.dims, b64: Buffer.from(d.buffer, d.byteOffset, d.byteLength).toString('base64')};
}
(async () => {
  const results = [];
  for (const job of jobs) {
    try {
      const session = await ort.InferenceSession.create(job.model, job.options || {});
      const calls = [];
      let prev = null;
      for (const call of job.calls) {
        const feeds = {};
        for (const [name, t] of Object.entries(call.feeds)) feeds[name] = decode(t);
        for (const [input, output] of Object.entries(call.carry || {})) {
          if (prev === null) throw new Error('carry on the first call');
          feeds[input] = prev[output];
        }
        const missing = session.inputNames.filter((n) => !(n in feeds));
        const extra = Object.keys(feeds).filter((n) => !session.inputNames.includes(n));
        if (missing.length || extra.length) throw new Error(`feeds: missing ${missing} extra ${extra}`);
        prev = await session.run(feeds);
        const outputs = {};
        for (const [name, v] of Object.entries(prev)) outputs[name] = encode(v);
        calls.push(outputs);
      }
      results.push({calls});
    } catch (e) {
      results.push({error: String(e)});
    }
  }
  process.stdout.write(JSON.stringify(results));
})();
"""

_TYPES = dict(common.ORT_TYPE)
_TYPES.update({np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8"})
_NP = {v: k for k, v in _TYPES.items()}


def _encode(a):
    a = np.ascontiguousarray(a)
    return {"type": _TYPES[a.dtype], "dims": list(a.shape), "b64": base64.b64encode(a.tobytes()).decode()}


def run_chains(ort_node, jobs):
    """jobs: [{"model": path, "options": {...} (ORT session options), "calls": [(feeds, carry)]}] where carry maps
    an input name to an output name of the previous call. One Node process for all jobs.

    Returns per job a list (one per call) of {output: ndarray}; raises on any ORT error."""
    payload = [{"model": j["model"], "options": j.get("options", {}),
                "calls": [{"feeds": {n: _encode(a) for n, a in feeds.items()}, "carry": carry or {}}
                          for feeds, carry in j["calls"]]} for j in jobs]
    proc = subprocess.run(["node", "-e", _CHAIN_RUNNER % json.dumps(ort_node)], input=json.dumps(payload),
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError("onnxruntime-node chain runner failed: " + proc.stderr)
    out = []
    for job, r in zip(jobs, json.loads(proc.stdout)):
        if "error" in r:
            raise RuntimeError(f"{job['model']}: onnxruntime-node: {r['error']}")
        out.append([{n: np.frombuffer(base64.b64decode(o["b64"]), _NP[o["type"]]).reshape(o["dims"])
                     for n, o in call.items()} for call in r["calls"]])
    return out


def find_node(graph, name):
    for node in graph.node:
        if node.name == name:
            return node
    raise KeyError(f"no node named {name!r} in graph {graph.name!r}")


def expose(model, node_name, pairs):
    """A copy of `model` in which main-graph node `node_name` takes each state from a new graph input and
    gives its final value as a new graph output (the rewrite a streaming tool would make, without defaults).

    pairs: [(in_slot, out_slot, in_name, out_name, shape, elem_type)]: node input `in_slot` (Loop: 2 + carried
    index; Scan: state index; LSTM-like: 5 = initial_h, 6 = initial_c) is replaced by graph input `in_name`,
    node output `out_slot` (Loop / Scan: the carried index; LSTM-like: 1 = Y_h, 2 = Y_c) becomes graph output
    `out_name` (through an Identity when that output is already named)."""
    m = type(model)()
    m.CopyFrom(model)
    node = find_node(m.graph, node_name)
    for in_slot, out_slot, in_name, out_name, shape, elem_type in pairs:
        while len(node.input) <= in_slot:
            node.input.append("")
        node.input[in_slot] = in_name
        m.graph.input.append(helper.make_tensor_value_info(in_name, elem_type, shape))
        while len(node.output) <= out_slot:
            node.output.append("")
        if node.output[out_slot] == "":
            node.output[out_slot] = out_name
        else:
            m.graph.node.append(helper.make_node("Identity", [node.output[out_slot]], [out_name]))
        m.graph.output.append(helper.make_tensor_value_info(out_name, elem_type, shape))
    return m


def split_feeds(feeds, seq_axes, chunks):
    """[feeds of chunk k]: inputs named in seq_axes sliced along their axis, the others unchanged."""
    parts, start = [], 0
    for n in chunks:
        part = {}
        for name, value in feeds.items():
            if name in seq_axes:
                part[name] = np.take(value, np.arange(start, start + n), axis=seq_axes[name])
            else:
                part[name] = value
        parts.append(part)
        start += n
    return parts


def write_temp(model, tmpdir, name):
    path = os.path.join(tmpdir, name)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def compare_chunked(full, calls, output_seq_axes, compare_last):
    """max |chunked - full|: outputs in output_seq_axes concatenated over the calls, `compare_last` (final
    states, other outputs) from the last call."""
    worst = 0.0
    for name, axis in output_seq_axes.items():
        got = np.concatenate([c[name] for c in calls], axis=axis)
        assert got.shape == full[name].shape, f"{name}: chunked {got.shape} != full {full[name].shape}"
        worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - full[name].astype(np.float64)))))
    for name_full, name_last in compare_last.items():
        worst = max(worst, float(np.max(np.abs(calls[-1][name_last].astype(np.float64)
                                               - full[name_full].astype(np.float64)))))
    return worst


def new_tmpdir():
    return tempfile.TemporaryDirectory(prefix="rnnstate-emulation-")
