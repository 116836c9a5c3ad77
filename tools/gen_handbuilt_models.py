#!/usr/bin/python3
"""Builds the hand-made end-to-end test models of rnnstate with onnx.helper, checks them, and merges
the manifest.

    /usr/bin/python3 tools/gen_handbuilt_models.py [--ort-node DIR] [--skip-control]
    /usr/bin/python3 tools/gen_handbuilt_models.py --merge

Writes models/handbuilt/*.onnx, models/control/hb_*.onnx and their manifest entries to
models/handbuilt/manifest.part.json, then merges every models/*/manifest.part.json into
models/manifest.json (`--merge` only merges). See models/README.md for what each model is.

Every model is checked here: onnx.checker.check_model(full_check=True), IR <= 8, every graph input
and output fully typed and shaped (symbolic dims only 'batch' and 'seq'), size < 100 KB, a consistent
manifest entry, and a run in onnxruntime-node whose outputs must equal a NumPy reference of the
ONNX operator semantics (max abs diff <= 1e-5); a model marked "ort": false must be refused by ORT.

The module also holds the helpers that tools/gen_torch_models.py imports (ORT runner, checks,
manifest fragments). Needs Debian's python3-onnx and python3-numpy: run with /usr/bin/python3.
"""

import argparse
import base64
import json
import os
import subprocess
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(REPO, "models")
# The harness's own pinned copy (tests/e2e: npm ci --ignore-scripts); --ort-node overrides it.
DEFAULT_ORT_NODE = os.path.join(REPO, "tests", "e2e", "node_modules", "onnxruntime-node")
OPSET = 14
IR_VERSION = 7  # the IR of ONNX 1.9, which introduced opset 14 (onnx 1.12's checker refuses IR > 8)
MAX_BYTES = 100 * 1024
TOLERANCE = 1e-5
SYMBOLIC_DIMS = ("batch", "seq")
FRAGMENT = "manifest.part.json"

# ---------------------------------------------------------------------------------------------
# Shared helpers (also used by gen_torch_models.py)
# ---------------------------------------------------------------------------------------------


def value_info(name, shape, elem_type=TensorProto.FLOAT):
    """A tensor ValueInfo; `shape` items are ints (fixed) or 'batch'/'seq' (symbolic)."""
    return helper.make_tensor_value_info(name, elem_type, shape)


def set_shape(vi, shape):
    """Overwrites the shape of a ValueInfo (torch names its dims after nodes, e.g. 'Squeezey_dim_0')."""
    dims = vi.type.tensor_type.shape.dim
    del dims[:]
    for d in shape:
        dim = dims.add()
        if isinstance(d, str):
            dim.dim_param = d
        else:
            dim.dim_value = d


def declared_shape(vi):
    """The shape of a ValueInfo as a list of ints and dim_param strings (None: no shape)."""
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_param if d.HasField("dim_param") else (d.dim_value if d.HasField("dim_value") else None)
            for d in t.shape.dim]


def concrete_shape(shape, dims):
    return [dims[d] if isinstance(d, str) else d for d in shape]


NP_OF_ELEM = {TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64, TensorProto.INT32: np.int32,
              TensorProto.BOOL: np.bool_, TensorProto.DOUBLE: np.float64}
ORT_TYPE = {np.dtype(np.float32): "float32", np.dtype(np.int64): "int64", np.dtype(np.int32): "int32",
            np.dtype(np.bool_): "bool", np.dtype(np.float64): "float64"}
NP_OF_ORT = {v: k for k, v in ORT_TYPE.items()}


def make_feeds(model, entry, seed):
    """Inputs for one run at the manifest's dims: floats uniform [-1, 1], ints from inputs_int."""
    rng = np.random.RandomState(seed)
    initializers = {i.name for i in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in initializers:
            continue
        shape = concrete_shape(declared_shape(vi), entry.get("dims", {}))
        dtype = NP_OF_ELEM[vi.type.tensor_type.elem_type]
        if dtype == np.float32:
            feeds[vi.name] = rng.uniform(-1, 1, shape).astype(np.float32)
        else:
            feeds[vi.name] = np.array(entry["inputs_int"][vi.name], dtype=dtype).reshape(shape)  # [n] -> [] ok
    return feeds


_NODE_RUNNER = r"""
const ort = require(%s);
const fs = require('fs');
const jobs = JSON.parse(fs.readFileSync(0, 'utf8'));
const ctor = {float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array, bool: Uint8Array};
(async () => {
  const results = [];
  for (const job of jobs) {
    try {
      const session = await ort.InferenceSession.create(job.model);
      const feeds = {};
      for (const [name, t] of Object.entries(job.feeds)) {
        const bytes = Buffer.from(t.b64, 'base64');
        const copy = new Uint8Array(bytes).buffer;  // aligned
        feeds[name] = new ort.Tensor(t.type, new ctor[t.type](copy), t.dims);
      }
      const out = await session.run(feeds);
      const outputs = {};
      for (const [name, v] of Object.entries(out)) {
        const d = v.data;
        outputs[name] = {type: v.type, dims: v.dims,
                         b64: Buffer.from(d.buffer, d.byteOffset, d.byteLength).toString('base64')};
      }
      results.push({inputNames: session.inputNames, outputNames: session.outputNames, outputs});
    } catch (e) {
      results.push({error: String(e)});
    }
  }
  process.stdout.write(JSON.stringify(results));
})();
"""


def ort_run_many(ort_node, jobs):
    """Runs [(model_path, {name: ndarray})] in one onnxruntime-node process.

    Returns per job {"outputs": {name: ndarray}, "inputNames": [...], ...} or {"error": str}."""
    payload = []
    for path, feeds in jobs:
        payload.append({"model": path, "feeds": {
            name: {"type": ORT_TYPE[a.dtype], "dims": list(a.shape),
                   "b64": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}
            for name, a in feeds.items()}})
    proc = subprocess.run(["node", "-e", _NODE_RUNNER % json.dumps(ort_node)], input=json.dumps(payload),
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError("onnxruntime-node runner failed: " + proc.stderr)
    results = json.loads(proc.stdout)
    for r in results:
        if "outputs" in r:
            r["outputs"] = {name: np.frombuffer(base64.b64decode(o["b64"]), NP_OF_ORT[o["type"]])
                            .reshape(o["dims"]) for name, o in r["outputs"].items()}
    return results


def check_io_declared(model):
    """Every graph input has an element type and a full shape of ints or 'batch'/'seq'; so has every output,
    but outputs may keep other names an exporter gave their axes (a user's export, e.g. Looph_n_dim_1)."""
    for vi in list(model.graph.input) + list(model.graph.output):
        is_output = vi in model.graph.output
        t = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or t.elem_type == 0:
            raise AssertionError(f"{vi.name}: no tensor element type")
        shape = declared_shape(vi)
        if shape is None:
            raise AssertionError(f"{vi.name}: no shape")
        for d in shape:
            if not (isinstance(d, int) and d > 0) and d not in SYMBOLIC_DIMS and not (is_output and d):
                raise AssertionError(f"{vi.name}: bad dim {d!r} in {shape}")


def check_entry(model, entry):
    """The manifest entry agrees with the model: names, symbolic dims, sequence axes, chunks."""
    inputs = {vi.name: declared_shape(vi) for vi in model.graph.input}
    outputs = {vi.name: declared_shape(vi) for vi in model.graph.output}
    used = {d for s in list(inputs.values()) + list(outputs.values()) for d in s if isinstance(d, str)}
    missing = used - set(entry.get("dims", {}))
    assert not missing, f"dims lacks {missing}"
    mode = entry.get("chunk_mode", "seq")
    for name, axis in entry.get("seq_axes", {}).items():
        assert inputs[name][axis] == "seq", f"input {name} axis {axis} is not 'seq'"
    for name, axis in entry.get("output_seq_axes", {}).items():
        # "seq_out": time at another rate (a stride over time), still concatenated chunk by chunk.
        assert str(outputs[name][axis]).startswith("seq"), f"output {name} axis {axis} is not 'seq'"
    for name in entry.get("inputs_int", {}):
        assert name in inputs, f"inputs_int names unknown input {name}"
    for name in entry.get("streaming_skip_outputs", []):
        assert name in outputs, f"streaming_skip_outputs names unknown output {name}"
    assert mode in ("seq", "trip_count", "calls"), f"chunk_mode {mode}"
    assert "branch_taken" not in entry or mode == "calls", "branch_taken only in chunk_mode calls"
    if entry["streaming"] and mode == "calls":
        # K calls with the same inputs (tests/e2e/lib/checks.mjs checkCalls); branch_taken false: every
        # output of calls 2..K must equal call 1.
        chunks = entry["chunks"]
        assert isinstance(chunks, int) and 2 <= chunks <= 5, f"calls mode: chunks {chunks!r} is not a call count"
        assert entry.get("branch_taken") in (True, False), "calls mode: say whether the branch is taken"
    elif entry["streaming"]:
        chunks = entry["chunks"]
        assert 2 <= len(chunks) <= 3 and len(set(chunks)) == len(chunks), f"chunks {chunks}"
        assert sum(chunks) == entry["dims"]["seq"], "chunks do not sum to dims.seq"
        if mode == "seq":
            assert entry.get("seq_axes"), "streaming in seq mode needs seq_axes"
        else:
            assert mode == "trip_count" and inputs[entry["trip_count_input"]] == []
            assert entry["inputs_int"][entry["trip_count_input"]] == [entry["dims"]["seq"]]
    else:
        assert mode != "calls", "chunk_mode calls is only read when streaming is true"
        if entry.get("expect_chunking_differs"):  # a negative control: its chunks must not equal one run
            assert sum(entry["chunks"]) == entry["dims"]["seq"], "chunks do not sum to dims.seq"
        else:
            assert "chunks" not in entry, "chunks only for streaming models (and negative controls)"


def check_model_file(path, entry):
    """Static checks of one written model; returns the loaded ModelProto."""
    size = os.path.getsize(path)
    assert size < MAX_BYTES, f"{size} bytes"
    model = onnx.load(path)
    # A ModelProto, not the path: infer_shapes_path would write the inferred model over the file.
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version <= 8, f"IR {model.ir_version}"
    check_io_declared(model)
    check_entry(model, entry)
    return model


def shape_matches(got, declared):
    """got == declared; for an empty declared shape (a dim 0), ORT may also report 0 for every dim it did
    not know: a Loop that runs zero iterations gives its scan outputs the body output's shape with each
    symbolic dim replaced by 0 (ys [seq, batch, H] comes back as [0, 0, H], not [0, batch, H])."""
    got = list(got)
    if got == declared:
        return True
    return 0 in declared and len(got) == len(declared) and all(g in (d, 0) for g, d in zip(got, declared))


def compare_outputs(model, dims, got, expected, label):
    """ORT outputs have the declared names and shapes and equal `expected` (if given)."""
    declared = {vi.name: concrete_shape(declared_shape(vi), dims) for vi in model.graph.output}
    assert set(got) == set(declared), f"{label}: outputs {sorted(got)} != {sorted(declared)}"
    worst = 0.0
    for name, value in got.items():
        assert shape_matches(value.shape, declared[name]), f"{label}: {name} shape {value.shape} != {declared[name]}"
        if value.size == 0 and expected is not None:
            assert np.asarray(expected[name]).size == 0, f"{label}: {name} is empty, the reference is not"
            continue
        if expected is not None:
            ref = np.asarray(expected[name])
            assert ref.shape == value.shape, f"{label}: {name} reference shape {ref.shape} != {value.shape}"
            diff = float(np.max(np.abs(ref.astype(np.float64) - value.astype(np.float64)))) if value.size else 0.0
            assert diff <= TOLERANCE, f"{label}: {name} differs from the reference by {diff}"
            worst = max(worst, diff)
    return worst


def name_seed(name):
    """A fixed seed per model name, so adding a model does not change the others."""
    return zlib.crc32(name.encode()) % (2**31)


def write_model(model, relpath):
    path = os.path.join(MODELS, relpath)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(model.SerializeToString())
    os.replace(tmp, path)
    return path


def manifest_entry(file, dims, seq_axes=None, output_seq_axes=None, chunks=None, streaming=True,
                   zero_default=True, note="", ort=True, **extra):
    """One models/manifest.json entry (format: /work/contract_helpers.md, models/README.md)."""
    entry = {"file": file, "dims": dims, "seq_axes": seq_axes or {}, "output_seq_axes": output_seq_axes or {}}
    if streaming:
        entry["chunks"] = chunks
    entry.update({"streaming": streaming, "zero_default": zero_default, "rewrite_args": [], "ort": ort})
    entry.update(extra)
    entry["note"] = note
    return entry


def calls_entry(entry, inputs_int, note, calls=3, branch_taken=False):
    """A second entry for the same file: chunk_mode "calls" (`calls` calls with the same inputs, state fed
    back), with `inputs_int` overriding the entry's; branch_taken false: the recurrent node never runs, so
    every output of calls 2..K must equal call 1 (state passes through unchanged)."""
    e = {k: v for k, v in entry.items() if k != "note"}
    e["chunks"] = calls
    e["streaming"] = True
    e["inputs_int"] = dict(entry.get("inputs_int", {}), **inputs_int)
    e["chunk_mode"] = "calls"
    e["branch_taken"] = branch_taken
    e["note"] = note
    return e


def dump_manifest(path, entries):
    """{"models": [...]} with one entry per line (greppable, small diffs)."""
    with open(path, "w") as f:
        f.write('{"models": [\n' + ",\n".join(json.dumps(e) for e in entries) + "\n]}\n")


def write_fragment(subdir, entries):
    os.makedirs(os.path.join(MODELS, subdir), exist_ok=True)
    dump_manifest(os.path.join(MODELS, subdir, FRAGMENT), entries)


def merge_manifest():
    """models/manifest.json = all models/*/manifest.part.json entries, sorted by file."""
    entries = []
    for sub in sorted(os.listdir(MODELS)):
        part = os.path.join(MODELS, sub, FRAGMENT)
        if os.path.isfile(part):
            with open(part) as f:
                entries.extend(json.load(f)["models"])
    # A file may have several entries (other inputs_int / chunk modes); the harness labels them
    # file#index, and the notes tell them apart.
    keys = [(e["file"], e["note"]) for e in entries]
    assert len(keys) == len(set(keys)), "two entries with the same file and note"
    for e in entries:
        assert os.path.isfile(os.path.join(MODELS, e["file"])), f"{e['file']} is missing"
    entries.sort(key=lambda e: e["file"])
    dump_manifest(os.path.join(MODELS, "manifest.json"), entries)
    print(f"models/manifest.json: {len(entries)} entries, {len({e['file'] for e in entries})} models")


def verify_all(built, ort_node):
    """built: [(relpath, entry, cases)] where cases = [(feeds, dims, expected or None)]; `entry` may be a
    list of the file's manifest entries (the first one decides "ort"), each checked against the model.

    Static checks of every written file, then one ORT run per case; a model whose entry says
    "ort": false must be refused by ORT."""
    jobs, where, models = [], [], {}
    for relpath, entry, cases in built:
        path = os.path.join(MODELS, relpath)
        entries = entry if isinstance(entry, list) else [entry]
        entry = entries[0]
        model = models[relpath] = check_model_file(path, entry)
        for other in entries[1:]:
            assert other["file"] == relpath and other["ort"] == entry["ort"], f"{relpath}: extra entry {other}"
            check_entry(model, other)
        if not entry["ort"] and not cases:
            # Record why the model is structural only: ORT must still refuse it.
            cases = [(make_feeds(model, entry, 0), entry["dims"], None)]
        for case in cases:
            jobs.append((path, case[0]))
            where.append((relpath, entry, case))
    results = ort_run_many(ort_node, jobs)
    worst = {}
    for (relpath, entry, (feeds, dims, expected)), result in zip(where, results):
        if not entry["ort"]:
            assert "error" in result, f"{relpath}: ORT runs it now: set \"ort\": true"
            continue
        if "error" in result:
            raise AssertionError(f"{relpath}: onnxruntime-node: {result['error']}")
        assert sorted(result["inputNames"]) == sorted(feeds), f"{relpath}: ORT inputs {result['inputNames']}"
        diff = compare_outputs(models[relpath], dims, result["outputs"], expected, relpath)
        worst[relpath] = max(worst.get(relpath, 0.0), diff)
    for relpath, _, _ in built:
        size = os.path.getsize(os.path.join(MODELS, relpath))
        status = f"ORT max|diff| {worst[relpath]:.1e}" if relpath in worst else "ORT refuses it (ort: false)"
        print(f"ok {relpath:42s} {size:6d} B  {status}")


# ---------------------------------------------------------------------------------------------
# NumPy reference of ONNX RNN / GRU / LSTM (opset 14, default activations, no clip, no peepholes,
# linear_before_reset = 0, layout = 0, one direction)
# ---------------------------------------------------------------------------------------------


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def ref_cell(op, x, h, c, w, r, wb, rb):
    """One time step. x [B, I], h/c [B, H], w [G*H, I], r [G*H, H], wb/rb [G*H]; returns (h, c)."""
    if op == "RNN":
        return np.tanh(x @ w.T + h @ r.T + wb + rb), c
    if op == "GRU":
        wz, wr, wh = np.split(w, 3)
        rz, rr, rh = np.split(r, 3)
        wbz, wbr, wbh = np.split(wb, 3)
        rbz, rbr, rbh = np.split(rb, 3)
        z = _sigmoid(x @ wz.T + h @ rz.T + wbz + rbz)
        rg = _sigmoid(x @ wr.T + h @ rr.T + wbr + rbr)
        ht = np.tanh(x @ wh.T + (rg * h) @ rh.T + rbh + wbh)
        return (1 - z) * ht + z * h, c
    gates = x @ w.T + h @ r.T + wb + rb
    i, o, f, cc = np.split(gates, 4, axis=-1)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(cc)
    return _sigmoid(o) * np.tanh(c), c


def ref_recurrent(op, x, w, r, b=None, h0=None, c0=None, reverse=False, seq_lens=None):
    """ONNX operator semantics for num_directions 1. x [S, B, I] -> (Y [S,1,B,H], Y_h [1,B,H], Y_c)."""
    x, w, r = (np.asarray(a, np.float64) for a in (x, w, r))
    seq, batch, _ = x.shape
    hidden = r.shape[-1]
    gates = w.shape[1]
    b = np.zeros((1, 2 * gates)) if b is None else np.asarray(b, np.float64)
    h = np.zeros((batch, hidden)) if h0 is None else np.asarray(h0, np.float64)[0].copy()
    c = np.zeros((batch, hidden)) if c0 is None else np.asarray(c0, np.float64)[0].copy()
    lens = np.full(batch, seq) if seq_lens is None else np.asarray(seq_lens)
    y = np.zeros((seq, 1, batch, hidden))
    steps = range(seq - 1, -1, -1) if reverse else range(seq)
    for t in steps:
        nh, nc = ref_cell(op, x[t], h, c, w[0], r[0], b[0, :gates], b[0, gates:])
        live = (t < lens)[:, None]
        h, c = np.where(live, nh, h), np.where(live, nc, c)
        y[t, 0] = np.where(live, h, 0.0)
    return y, h[None], c[None]


# ---------------------------------------------------------------------------------------------
# Graph building helpers
# ---------------------------------------------------------------------------------------------

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


class Weights:
    """Seeded random W [1, G*H, I], R [1, G*H, H], B [1, 2*G*H] for one direction."""

    def __init__(self, op, input_size, hidden, rng, scale=0.6):
        g = GATES[op] * hidden
        self.w = rng.uniform(-scale, scale, (1, g, input_size)).astype(np.float32)
        self.r = rng.uniform(-scale, scale, (1, g, hidden)).astype(np.float32)
        self.b = rng.uniform(-scale, scale, (1, 2 * g)).astype(np.float32)

    def initializers(self, prefix):
        return [numpy_helper.from_array(self.w, prefix + "_W"), numpy_helper.from_array(self.r, prefix + "_R"),
                numpy_helper.from_array(self.b, prefix + "_B")]


def const(name, array):
    """A Constant node with output `name`."""
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(array), name + "_value"))


def batch_shape_nodes(x, batch_axis, hidden, out, prefix, first=1):
    """Nodes computing out = Concat([first], Unsqueeze(Gather(Shape(x), batch_axis)), [hidden])."""
    return [
        helper.make_node("Shape", [x], [prefix + "_shape"]),
        const(prefix + "_axis", np.array(batch_axis, np.int64)),
        helper.make_node("Gather", [prefix + "_shape", prefix + "_axis"], [prefix + "_batch"], axis=0),
        const(prefix + "_zero", np.array([0], np.int64)),
        helper.make_node("Unsqueeze", [prefix + "_batch", prefix + "_zero"], [prefix + "_batch1"]),
        const(prefix + "_first", np.array([first], np.int64)),
        const(prefix + "_hidden", np.array([hidden], np.int64)),
        helper.make_node("Concat", [prefix + "_first", prefix + "_batch1", prefix + "_hidden"], [out], axis=0),
    ]


def zero_state_nodes(x, hidden, out, prefix):
    """out = ConstantOfShape(Concat([1], batch of x (axis 1), [hidden])) = zeros [1, batch, hidden]."""
    return batch_shape_nodes(x, 1, hidden, prefix + "_dims", prefix) + [
        helper.make_node("ConstantOfShape", [prefix + "_dims"], [out],
                         value=numpy_helper.from_array(np.zeros(1, np.float32)))]


def squeeze_axis(inp, out, axis, prefix):
    return [const(prefix + "_axes", np.array([axis], np.int64)),
            helper.make_node("Squeeze", [inp, prefix + "_axes"], [out])]


def make_model(nodes, inputs, outputs, initializers, name, doc):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=initializers)
    model = helper.make_model(graph, producer_name="rnnstate/tools/gen_handbuilt_models.py",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    model.doc_string = doc
    return model


# ---------------------------------------------------------------------------------------------
# The hand-built models. Each builder returns (relpath, model, entry, reference) where
# reference(feeds) -> {output: array} is the NumPy result (None: not run).
# ---------------------------------------------------------------------------------------------


def lstm_init_state(rng):
    """LSTM whose initial_h (zeros) and initial_c (non-zero random) are initializers; batch fixed 2."""
    i, h, batch = 3, 4, 2
    wt = Weights("LSTM", i, h, rng)
    h0 = np.zeros((1, batch, h), np.float32)
    c0 = rng.uniform(-1, 1, (1, batch, h)).astype(np.float32)
    nodes = [helper.make_node("LSTM", ["x", "lstm_W", "lstm_R", "lstm_B", "", "lstm_h0", "lstm_c0"],
                              ["y", "h_n", "lstm_Y_c"], name="lstm", hidden_size=h)]
    inits = wt.initializers("lstm") + [numpy_helper.from_array(h0, "lstm_h0"), numpy_helper.from_array(c0, "lstm_c0")]
    model = make_model(nodes, [value_info("x", ["seq", batch, i])],
                       [value_info("y", ["seq", 1, batch, h]), value_info("h_n", [1, batch, h])], inits,
                       "lstm_init_state", lstm_init_state.__doc__)

    def reference(f):
        y, yh, _ = ref_recurrent("LSTM", f["x"], wt.w, wt.r, wt.b, h0, c0)
        return {"y": y, "h_n": yh}

    entry = manifest_entry("handbuilt/lstm_init_state.onnx", {"seq": 8}, {"x": 0}, {"y": 0}, [3, 5], True, False,
                           "initial_h = zero initializer, initial_c = non-zero random initializer (default "
                           "not zero: no check 3); batch fixed at 2; Y_c named but unused")
    return "handbuilt/lstm_init_state.onnx", model, entry, reference


def gru_expand_default(rng):
    """GRU with initial_h = Expand(Constant zeros[1,1,H], Concat([1], Unsqueeze(Gather(Shape(X),1)), [H]))."""
    i, h = 3, 5
    wt = Weights("GRU", i, h, rng)
    nodes = [const("zeros_1_1_h", np.zeros((1, 1, h), np.float32))]
    nodes += batch_shape_nodes("x", 1, h, "h0_dims", "h0")
    nodes += [helper.make_node("Expand", ["zeros_1_1_h", "h0_dims"], ["h0"]),
              helper.make_node("GRU", ["x", "gru_W", "gru_R", "gru_B", "", "h0"], ["gru_Y", "h_n"],
                               name="gru", hidden_size=h)]
    nodes += squeeze_axis("gru_Y", "y", 1, "y")
    model = make_model(nodes, [value_info("x", ["seq", "batch", i])],
                       [value_info("y", ["seq", "batch", h]), value_info("h_n", [1, "batch", h])],
                       wt.initializers("gru"), "gru_expand_default", gru_expand_default.__doc__)

    def reference(f):
        y, yh, _ = ref_recurrent("GRU", f["x"], wt.w, wt.r, wt.b)
        return {"y": y[:, 0], "h_n": yh}

    entry = manifest_entry("handbuilt/gru_expand_default.onnx", {"batch": 3, "seq": 9}, {"x": 0}, {"y": 0},
                           [2, 6, 1], True, True, "zero default by Expand of a [1,1,H] zero Constant to the "
                           "dynamic batch (the static-shape PyTorch pattern, hand-made with a dynamic batch)")
    return "handbuilt/gru_expand_default.onnx", model, entry, reference


def shared_default(rng):
    """RNN then GRU (stacked), both initial_h from ONE ConstantOfShape zeros [1, batch, H]."""
    i, h = 4, 6
    w1, w2 = Weights("RNN", i, h, rng), Weights("GRU", h, h, rng)
    nodes = zero_state_nodes("x", h, "shared_h0", "h0")
    nodes += [helper.make_node("RNN", ["x", "rnn_W", "rnn_R", "rnn_B", "", "shared_h0"], ["rnn_Y", "rnn_Y_h"],
                               name="rnn", hidden_size=h)]
    nodes += squeeze_axis("rnn_Y", "rnn_y", 1, "rnn_y")
    nodes += [helper.make_node("GRU", ["rnn_y", "gru_W", "gru_R", "gru_B", "", "shared_h0"], ["gru_Y", "h_n"],
                               name="gru", hidden_size=h)]
    nodes += squeeze_axis("gru_Y", "y", 1, "y")
    model = make_model(nodes, [value_info("x", ["seq", "batch", i])],
                       [value_info("y", ["seq", "batch", h]), value_info("h_n", [1, "batch", h])],
                       w1.initializers("rnn") + w2.initializers("gru"), "shared_default", shared_default.__doc__)

    def reference(f):
        y1, _, _ = ref_recurrent("RNN", f["x"], w1.w, w1.r, w1.b)
        y2, yh, _ = ref_recurrent("GRU", y1[:, 0], w2.w, w2.r, w2.b)
        return {"y": y2[:, 0], "h_n": yh}

    entry = manifest_entry("handbuilt/shared_default.onnx", {"batch": 2, "seq": 10}, {"x": 0}, {"y": 0},
                           [4, 1, 5], True, True, "one ConstantOfShape output is initial_h of both the RNN and "
                           "the GRU stacked on it; the RNN's Y_h is not a graph output")
    return "handbuilt/shared_default.onnx", model, entry, reference


def lstm_layout1(rng):
    """LSTM with layout=1 (batch-major X [batch, seq, I], Y [batch, seq, 1, H], state [batch, 1, H])."""
    i, h = 3, 4
    wt = Weights("LSTM", i, h, rng)
    nodes = batch_shape_nodes("x", 0, h, "h0_dims_t", "h0")
    # layout 1: state is [batch, num_directions, H]: reorder [1, batch, H] -> [batch, 1, H]
    nodes += [const("h0_perm", np.array([1, 0, 2], np.int64)),
              helper.make_node("Gather", ["h0_dims_t", "h0_perm"], ["h0_dims"], axis=0),
              helper.make_node("ConstantOfShape", ["h0_dims"], ["h0"],
                               value=numpy_helper.from_array(np.zeros(1, np.float32))),
              helper.make_node("LSTM", ["x", "lstm_W", "lstm_R", "lstm_B", "", "h0", "h0"], ["y", "h_n", "c_n"],
                               name="lstm", hidden_size=h, layout=1)]
    model = make_model(nodes, [value_info("x", ["batch", "seq", i])],
                       [value_info("y", ["batch", "seq", 1, h]), value_info("h_n", ["batch", 1, h]),
                        value_info("c_n", ["batch", 1, h])], wt.initializers("lstm"), "lstm_layout1",
                       lstm_layout1.__doc__)
    entry = manifest_entry("handbuilt/lstm_layout1.onnx", {"batch": 2, "seq": 7}, {"x": 1}, {"y": 1}, [2, 5],
                           True, True, "layout=1; ONNX Runtime CPU rejects layout=1 (structural test only); "
                           "state tensors are [batch, 1, H]", ort=False)
    return "handbuilt/lstm_layout1.onnx", model, entry, None


def rnn_seq_lens(rng):
    """RNN with a sequence_lens graph input (int32 [batch]); per-sample lengths make it non-streaming."""
    i, h = 2, 3
    wt = Weights("RNN", i, h, rng)
    nodes = zero_state_nodes("x", h, "h0", "h0")
    nodes += [helper.make_node("RNN", ["x", "rnn_W", "rnn_R", "rnn_B", "seq_lens", "h0"], ["y", "h_n"],
                               name="rnn", hidden_size=h)]
    model = make_model(nodes, [value_info("x", ["seq", "batch", i]),
                               value_info("seq_lens", ["batch"], TensorProto.INT32)],
                       [value_info("y", ["seq", 1, "batch", h]), value_info("h_n", [1, "batch", h])],
                       wt.initializers("rnn"), "rnn_seq_lens", rnn_seq_lens.__doc__)

    def reference(f):
        y, yh, _ = ref_recurrent("RNN", f["x"], wt.w, wt.r, wt.b, seq_lens=f["seq_lens"])
        return {"y": y, "h_n": yh}

    entry = manifest_entry("handbuilt/rnn_seq_lens.onnx", {"batch": 2, "seq": 7}, {"x": 0}, {"y": 0}, None, False,
                           True, "sequence_lens input: streaming false (checks 1 and 3 only)",
                           inputs_int={"seq_lens": [7, 4]})
    return "handbuilt/rnn_seq_lens.onnx", model, entry, reference


def name_collision(rng):
    """Unnamed LSTM among names a naive tool would generate: LSTM_0.h_in, LSTM_0.h_out, LSTM_0.c_in, ..."""
    i, h = 3, 4
    wt = Weights("LSTM", i, h, rng)
    scale = np.array([0.5], np.float32)
    nodes = zero_state_nodes("x", h, "initial_h", "h0")
    nodes += [helper.make_node("LSTM", ["x", "W", "R", "B", "", "initial_h", "initial_h"],
                               ["LSTM_0.h_out", "Y_h", "Y_c"], hidden_size=h)]
    nodes += squeeze_axis("LSTM_0.h_out", "LSTM_0.y", 1, "sq")
    for n in nodes:
        n.name = ""
    nodes += [helper.make_node("Mul", ["LSTM_0.y", "LSTM_0.c_in"], ["LSTM_0.scaled"]),
              # A node already named like the name a tool would give the unnamed LSTM.
              helper.make_node("Add", ["LSTM_0.scaled", "LSTM_0.h_in"], ["LSTM_0.c_out"], name="LSTM_0")]
    inits = [numpy_helper.from_array(wt.w, "W"), numpy_helper.from_array(wt.r, "R"), numpy_helper.from_array(wt.b, "B"),
             numpy_helper.from_array(scale, "LSTM_0.c_in")]
    model = make_model(nodes, [value_info("x", ["seq", "batch", i]), value_info("LSTM_0.h_in", ["batch", h])],
                       [value_info("LSTM_0.c_out", ["seq", "batch", h]), value_info("Y_h", [1, "batch", h])],
                       inits, "name_collision", name_collision.__doc__)

    def reference(f):
        y, yh, _ = ref_recurrent("LSTM", f["x"], wt.w, wt.r, wt.b)
        return {"LSTM_0.c_out": y[:, 0] * scale + f["LSTM_0.h_in"], "Y_h": yh}

    entry = manifest_entry("handbuilt/name_collision.onnx", {"batch": 2, "seq": 6}, {"x": 0},
                           {"LSTM_0.c_out": 0}, [1, 5], True, True,
                           "the LSTM is unnamed; graph input 'LSTM_0.h_in' (non-sequence), initializer "
                           "'LSTM_0.c_in', values 'LSTM_0.h_out' (the LSTM's Y) and 'LSTM_0.y', graph output "
                           "'LSTM_0.c_out', an Add node named 'LSTM_0', default state value 'initial_h', "
                           "Y_h graph output named 'Y_h', unused Y_c named 'Y_c'")
    return "handbuilt/name_collision.onnx", model, entry, reference


def lstm_then_gru(rng):
    """Unnamed LSTM then unnamed GRU; both initial states ABSENT (LSTM has inputs X,W,R,B; GRU X,W,R)."""
    i, h1, h2 = 3, 5, 4
    w1, w2 = Weights("LSTM", i, h1, rng), Weights("GRU", h1, h2, rng)
    nodes = [helper.make_node("LSTM", ["x", "lstm_W", "lstm_R", "lstm_B"], ["lstm_Y"], hidden_size=h1)]
    nodes += squeeze_axis("lstm_Y", "lstm_y", 1, "lstm_y")
    nodes += [helper.make_node("GRU", ["lstm_y", "gru_W", "gru_R"], ["gru_Y"], hidden_size=h2)]
    nodes += squeeze_axis("gru_Y", "y", 1, "y")
    for n in nodes:
        n.name = ""
    inits = w1.initializers("lstm") + [numpy_helper.from_array(w2.w, "gru_W"), numpy_helper.from_array(w2.r, "gru_R")]
    model = make_model(nodes, [value_info("x", ["seq", "batch", i])], [value_info("y", ["seq", "batch", h2])],
                       inits, "lstm_then_gru", lstm_then_gru.__doc__)

    def reference(f):
        y1, _, _ = ref_recurrent("LSTM", f["x"], w1.w, w1.r, w1.b)
        y2, _, _ = ref_recurrent("GRU", y1[:, 0], w2.w, w2.r)
        return {"y": y2[:, 0]}

    entry = manifest_entry("handbuilt/lstm_then_gru.onnx", {"batch": 3, "seq": 8}, {"x": 0}, {"y": 0}, [5, 3], True,
                           True, "unnamed nodes; no initial-state inputs at all (trailing optional inputs omitted, "
                           "GRU without B); only Y is produced (no Y_h/Y_c slots): the tool must add all 3 states")
    return "handbuilt/lstm_then_gru.onnx", model, entry, reference


def rnn_weights_as_inputs(rng):
    """RNN whose W, R, B are graph inputs fed on every call (not constants)."""
    i, h = 3, 4
    nodes = zero_state_nodes("x", h, "h0", "h0")
    nodes += [helper.make_node("RNN", ["x", "W", "R", "B", "", "h0"], ["rnn_Y", "h_n"], name="rnn", hidden_size=h)]
    nodes += squeeze_axis("rnn_Y", "y", 1, "y")
    model = make_model(nodes, [value_info("x", ["seq", "batch", i]), value_info("W", [1, h, i]),
                               value_info("R", [1, h, h]), value_info("B", [1, 2 * h])],
                       [value_info("y", ["seq", "batch", h]), value_info("h_n", [1, "batch", h])], [],
                       "rnn_weights_as_inputs", rnn_weights_as_inputs.__doc__)

    def reference(f):
        y, yh, _ = ref_recurrent("RNN", f["x"], f["W"], f["R"], f["B"])
        return {"y": y[:, 0], "h_n": yh}

    entry = manifest_entry("handbuilt/rnn_weights_as_inputs.onnx", {"batch": 2, "seq": 9}, {"x": 0}, {"y": 0},
                           [3, 2, 4], True, True, "W, R, B are graph inputs (non-sequence: the same on every call)")
    return "handbuilt/rnn_weights_as_inputs.onnx", model, entry, reference


def gru_nonzero_default(rng):
    """GRU whose initial_h = Expand(Add(Mul(Constant v[1,1,H], Constant 0.5), Constant 0.25), [1, batch, H])."""
    i, h = 4, 5
    wt = Weights("GRU", i, h, rng)
    v = rng.uniform(-1, 1, (1, 1, h)).astype(np.float32)
    half, quarter = np.float32(0.5), np.float32(0.25)
    nodes = [const("h0_v", v), const("h0_half", np.array(half)), const("h0_quarter", np.array(quarter)),
             helper.make_node("Mul", ["h0_v", "h0_half"], ["h0_scaled"]),
             helper.make_node("Add", ["h0_scaled", "h0_quarter"], ["h0_row"])]
    nodes += batch_shape_nodes("x", 1, h, "h0_dims", "h0")
    nodes += [helper.make_node("Expand", ["h0_row", "h0_dims"], ["h0"]),
              helper.make_node("GRU", ["x", "gru_W", "gru_R", "gru_B", "", "h0"], ["gru_Y", "h_n"], name="gru",
                               hidden_size=h)]
    nodes += squeeze_axis("gru_Y", "y", 1, "y")
    model = make_model(nodes, [value_info("x", ["seq", "batch", i])],
                       [value_info("y", ["seq", "batch", h]), value_info("h_n", [1, "batch", h])],
                       wt.initializers("gru"), "gru_nonzero_default", gru_nonzero_default.__doc__)

    def reference(f):
        batch = f["x"].shape[1]
        h0 = np.broadcast_to(v * half + quarter, (1, batch, h))
        y, yh, _ = ref_recurrent("GRU", f["x"], wt.w, wt.r, wt.b, h0)
        return {"y": y[:, 0], "h_n": yh}

    entry = manifest_entry("handbuilt/gru_nonzero_default.onnx", {"batch": 3, "seq": 7}, {"x": 0}, {"y": 0},
                           [2, 5], True, False, "non-zero, data-independent default computed by Mul/Add of "
                           "Constants, broadcast to the dynamic batch by Expand (no check 3)")
    return "handbuilt/gru_nonzero_default.onnx", model, entry, reference


def lstm_yh_consumed(rng):
    """LSTM whose Y_h feeds a MatMul head (not a graph output) and whose Y_c slot is empty ("")."""
    i, h, k = 5, 6, 2
    wt = Weights("LSTM", i, h, rng)
    head = rng.uniform(-1, 1, (h, k)).astype(np.float32)
    nodes = zero_state_nodes("x", h, "h0", "h0")
    nodes += [helper.make_node("LSTM", ["x", "lstm_W", "lstm_R", "lstm_B", "", "h0", "h0"], ["lstm_Y", "lstm_Y_h", ""],
                               name="lstm", hidden_size=h),
              helper.make_node("MatMul", ["lstm_Y_h", "head_W"], ["logits"], name="head")]
    nodes += squeeze_axis("lstm_Y", "y", 1, "y")
    model = make_model(nodes, [value_info("x", ["seq", "batch", i])],
                       [value_info("y", ["seq", "batch", h]), value_info("logits", [1, "batch", k])],
                       wt.initializers("lstm") + [numpy_helper.from_array(head, "head_W")], "lstm_yh_consumed",
                       lstm_yh_consumed.__doc__)

    def reference(f):
        y, yh, _ = ref_recurrent("LSTM", f["x"], wt.w, wt.r, wt.b)
        return {"y": y[:, 0], "logits": yh @ head}

    entry = manifest_entry("handbuilt/lstm_yh_consumed.onnx", {"batch": 2, "seq": 8}, {"x": 0}, {"y": 0}, [2, 1, 5],
                           True, True, "Y_h consumed by a MatMul head ('logits', compared on the last chunk), not "
                           "a graph output; Y_c is an empty output slot; h and c defaults share one "
                           "ConstantOfShape")
    return "handbuilt/lstm_yh_consumed.onnx", model, entry, reference


def gru_reverse(rng):
    """GRU with direction=reverse (state flows from the end: not streamable)."""
    i, h = 3, 4
    wt = Weights("GRU", i, h, rng)
    nodes = zero_state_nodes("x", h, "h0", "h0")
    nodes += [helper.make_node("GRU", ["x", "gru_W", "gru_R", "gru_B", "", "h0"], ["gru_Y", "h_n"], name="gru",
                               hidden_size=h, direction="reverse")]
    nodes += squeeze_axis("gru_Y", "y", 1, "y")
    model = make_model(nodes, [value_info("x", ["seq", "batch", i])],
                       [value_info("y", ["seq", "batch", h]), value_info("h_n", [1, "batch", h])],
                       wt.initializers("gru"), "gru_reverse", gru_reverse.__doc__)

    def reference(f):
        y, yh, _ = ref_recurrent("GRU", f["x"], wt.w, wt.r, wt.b, reverse=True)
        return {"y": y[:, 0], "h_n": yh}

    entry = manifest_entry("handbuilt/gru_reverse.onnx", {"batch": 2, "seq": 6}, {"x": 0}, {"y": 0}, None, False,
                           True, "direction=reverse: streaming false (checks 1 and 3 only)")
    return "handbuilt/gru_reverse.onnx", model, entry, reference


def lstm_shared_init(rng):
    """LSTM whose initial_h and initial_c are one non-zero initializer; batch fixed 2."""
    i, h, batch = 3, 4, 2
    wt = Weights("LSTM", i, h, rng)
    s0 = rng.uniform(-1, 1, (1, batch, h)).astype(np.float32)
    nodes = [helper.make_node("LSTM", ["x", "lstm_W", "lstm_R", "lstm_B", "", "lstm_s0", "lstm_s0"],
                              ["y", "h_n", "c_n"], name="lstm", hidden_size=h)]
    model = make_model(nodes, [value_info("x", ["seq", batch, i])],
                       [value_info("y", ["seq", 1, batch, h]), value_info("h_n", [1, batch, h]),
                        value_info("c_n", [1, batch, h])],
                       wt.initializers("lstm") + [numpy_helper.from_array(s0, "lstm_s0")],
                       "lstm_shared_init", lstm_shared_init.__doc__)

    def reference(f):
        y, yh, yc = ref_recurrent("LSTM", f["x"], wt.w, wt.r, wt.b, s0, s0)
        return {"y": y, "h_n": yh, "c_n": yc}

    entry = manifest_entry("handbuilt/lstm_shared_init.onnx", {"seq": 7}, {"x": 0}, {"y": 0}, [4, 3], True, False,
                           "initial_h and initial_c are ONE non-zero initializer: each state gets its own input "
                           "whose default is a copy of it (default not zero: no check 3)")
    return "handbuilt/lstm_shared_init.onnx", model, entry, reference


def lstm_big_fixed_batch(rng):
    """LSTM without initial state, batch fixed at 4200: a full zero default would be 1.08 MB per state."""
    i, h, batch = 4, 64, 4200
    wt = Weights("LSTM", i, h, rng)
    nodes = [helper.make_node("LSTM", ["x", "lstm_W", "lstm_R", "lstm_B"], ["y", "h_n", "c_n"],
                              name="lstm", hidden_size=h)]
    model = make_model(nodes, [value_info("x", ["seq", batch, i])],
                       [value_info("y", ["seq", 1, batch, h]), value_info("h_n", [1, batch, h])],
                       wt.initializers("lstm"), "lstm_big_fixed_batch", lstm_big_fixed_batch.__doc__)

    def reference(f):
        y, yh, _ = ref_recurrent("LSTM", f["x"], wt.w, wt.r, wt.b)
        return {"y": y, "h_n": yh}

    entry = manifest_entry("handbuilt/lstm_big_fixed_batch.onnx", {"seq": 6}, {"x": 0}, {"y": 0}, [2, 4], True, True,
                           "fixed batch 4200, hidden 64: a [1,4200,64] zero initializer would exceed rnnstate's "
                           "1 MiB limit, so the default is [1,1,64] zeros broadcast to the batch of X")
    return "handbuilt/lstm_big_fixed_batch.onnx", model, entry, reference


BUILDERS = [lstm_init_state, lstm_shared_init, gru_expand_default, shared_default, lstm_layout1, rnn_seq_lens, name_collision,
            lstm_then_gru, rnn_weights_as_inputs, gru_nonzero_default, lstm_yh_consumed, gru_reverse,
            lstm_big_fixed_batch]

# =============================================================================================
# Later work (issue 3): recurrent nodes inside control flow, hand-built. models/control/hb_*.onnx
# =============================================================================================



def control_entry(relpath, dims, seq_axes, output_seq_axes, chunks, streaming, zero_default, note, **extra):
    extra.setdefault("chunk_mode", "seq")
    return manifest_entry(relpath, dims, seq_axes, output_seq_axes, chunks, streaming, zero_default, note, issue=3,
                          **extra)


def flag_nodes(flag, out):
    """out = Greater(flag, 0): a bool [1] condition from an int64 [1] graph input."""
    return [const(out + "_zero", np.array([0], np.int64)), helper.make_node("Greater", [flag, out + "_zero"], [out])]


def step_lstm(wt, x, h, c):
    """NumPy: one LSTM step on x [B, I] from state [1, B, H]; returns (h, c) [1, B, H]."""
    _, h, c = ref_recurrent("LSTM", x[None], wt.w, wt.r, wt.b, h, c)
    return h, c


def hb_if_lstm_outer(rng):
    """If whose then-branch runs an LSTM on outer-scope x, weights (initializers) and default state."""
    i, h = 3, 4
    wt = Weights("LSTM", i, h, rng)
    proj = rng.uniform(-1, 1, (i, h)).astype(np.float32)
    then_nodes = [helper.make_node("LSTM", ["x", "lstm_W", "lstm_R", "lstm_B", "", "h0", "h0"],
                                   ["then_Y", "then_Y_h", "then_Y_c"], name="lstm", hidden_size=h)]
    then_nodes += squeeze_axis("then_Y", "then_y", 1, "then_y")
    then_branch = helper.make_graph(then_nodes, "then", [], [value_info("then_y", ["seq", "batch", h]),
                                                             value_info("then_Y_h", [1, "batch", h])])
    else_branch = helper.make_graph(
        [helper.make_node("MatMul", ["x", "else_P"], ["else_mm"]), helper.make_node("Tanh", ["else_mm"], ["else_y"]),
         helper.make_node("Identity", ["h0"], ["else_h"])], "else", [],
        [value_info("else_y", ["seq", "batch", h]), value_info("else_h", [1, "batch", h])])
    nodes = zero_state_nodes("x", h, "h0", "h0") + flag_nodes("use_lstm", "cond")
    nodes += [helper.make_node("If", ["cond"], ["y", "h_n"], name="branch", then_branch=then_branch,
                               else_branch=else_branch)]
    model = make_model(nodes, [value_info("x", ["seq", "batch", i]), value_info("use_lstm", [1], TensorProto.INT64)],
                       [value_info("y", ["seq", "batch", h]), value_info("h_n", [1, "batch", h])],
                       wt.initializers("lstm") + [numpy_helper.from_array(proj, "else_P")], "hb_if_lstm_outer",
                       hb_if_lstm_outer.__doc__)

    def reference(f):
        if f["use_lstm"][0] > 0:
            y, yh, _ = ref_recurrent("LSTM", f["x"], wt.w, wt.r, wt.b)
            return {"y": y[:, 0], "h_n": yh}
        return {"y": np.tanh(f["x"] @ proj), "h_n": np.zeros((1, f["x"].shape[1], h))}

    rel = "control/hb_if_lstm_outer.onnx"
    entry = control_entry(
        rel, {"batch": 2, "seq": 7}, {"x": 0}, {"y": 0}, [4, 3], True, True,
        "LSTM in an If then-branch (cond = use_lstm > 0); W/R/B are main-graph initializers and the default "
        "state a main-graph ConstantOfShape, all used from the branch as outer-scope names; else-branch: "
        "tanh(x P), h_n = Identity(default)", inputs_int={"use_lstm": [1]})
    return rel, model, [entry, calls_entry(
        entry, {"use_lstm": [0]}, "calls mode, use_lstm = 0: the LSTM branch is never taken, so over 3 calls "
        "with the state fed back every output (state included) must equal call 1")], reference


def ar_lstm_model(rng, i, h, name, doc):
    """The autoregressive decoder of hb_loop_ar_lstm (Loop with trip count input 'steps'); returns
    (model, reference)."""
    wt = Weights("LSTM", i, h, rng)
    proj = rng.uniform(-1, 1, (h, i)).astype(np.float32)
    body_nodes = [helper.make_node("MatMul", ["h_prev", "fb_P"], ["fb"]), helper.make_node("Tanh", ["fb"], ["fb_t"]),
                  helper.make_node("Add", ["fb_t", "context"], ["x_t"]),
                  helper.make_node("LSTM", ["x_t", "lstm_W", "lstm_R", "lstm_B", "", "h_prev", "c_prev"],
                                   ["step_Y", "h_next", "c_next"], name="lstm", hidden_size=h),
                  helper.make_node("Identity", ["cond_in"], ["cond_out"])]
    body_nodes += squeeze_axis("h_next", "y_t", 0, "y_t")
    body = helper.make_graph(
        body_nodes, "body",
        [value_info("iter", [], TensorProto.INT64), value_info("cond_in", [], TensorProto.BOOL),
         value_info("h_prev", [1, "batch", h]), value_info("c_prev", [1, "batch", h])],
        [value_info("cond_out", [], TensorProto.BOOL), value_info("h_next", [1, "batch", h]),
         value_info("c_next", [1, "batch", h]), value_info("y_t", ["batch", h])])
    nodes = batch_shape_nodes("context", 0, h, "h0_dims", "h0")
    nodes += [helper.make_node("ConstantOfShape", ["h0_dims"], ["h0"],
                               value=numpy_helper.from_array(np.zeros(1, np.float32))),
              helper.make_node("Loop", ["steps", "", "h0", "h0"], ["h_n", "loop_c_final", "ys"], name="decode",
                               body=body)]
    model = make_model(nodes, [value_info("context", ["batch", i]), value_info("steps", [], TensorProto.INT64)],
                       [value_info("ys", ["seq", "batch", h]), value_info("h_n", [1, "batch", h])],
                       wt.initializers("lstm") + [numpy_helper.from_array(proj, "fb_P")], name, doc)

    def reference(f):
        ctx = f["context"].astype(np.float64)
        hs = np.zeros((1, ctx.shape[0], h))
        cs = np.zeros_like(hs)
        ys = []
        for _ in range(int(f["steps"])):
            x_t = np.tanh(hs[0] @ proj) + ctx
            hs, cs = step_lstm(wt, x_t, hs, cs)
            ys.append(hs[0])
        return {"ys": np.stack(ys) if ys else np.zeros((0, ctx.shape[0], h)), "h_n": hs}

    return model, reference


def hb_loop_ar_lstm(rng):
    """Autoregressive Loop: x_t = tanh(h_{t-1} P) + context; LSTM state (h, c) is loop-carried."""
    model, reference = ar_lstm_model(rng, 3, 5, "hb_loop_ar_lstm", hb_loop_ar_lstm.__doc__)
    rel = "control/hb_loop_ar_lstm.onnx"
    return rel, model, control_entry(
        rel, {"batch": 2, "seq": 9}, {}, {"ys": 0}, [4, 2, 3], True, True,
        "autoregressive decoder: Loop with trip count 'steps' (no sequence input); LSTM state loop-carried "
        "from one ConstantOfShape; W/R/B and P outer-scope initializers, 'context' an outer-scope graph "
        "input; final c is a Loop output that is not a graph output. chunk_mode trip_count: each call "
        "runs steps = chunk length", chunk_mode="trip_count", trip_count_input="steps",
        inputs_int={"steps": [9]}), reference


def hb_scan_gru(rng):
    """Scan over x (axis 0), one GRU step per iteration; h is the Scan state."""
    i, h = 4, 3
    wt = Weights("GRU", i, h, rng)
    body_nodes = [const("x1_axes", np.array([0], np.int64)),
                  helper.make_node("Unsqueeze", ["x_t", "x1_axes"], ["x1"]),
                  helper.make_node("GRU", ["x1", "gru_W", "gru_R", "gru_B", "", "h_prev"], ["step_Y", "h_next"],
                                   name="gru", hidden_size=h)]
    body_nodes += squeeze_axis("h_next", "y_t", 0, "y_t")
    body = helper.make_graph(body_nodes, "body",
                             [value_info("h_prev", [1, "batch", h]), value_info("x_t", ["batch", i])],
                             [value_info("h_next", [1, "batch", h]), value_info("y_t", ["batch", h])])
    nodes = zero_state_nodes("x", h, "h0", "h0")
    nodes += [helper.make_node("Scan", ["h0", "x"], ["h_n", "ys"], name="scan", body=body, num_scan_inputs=1)]
    model = make_model(nodes, [value_info("x", ["seq", "batch", i])],
                       [value_info("ys", ["seq", "batch", h]), value_info("h_n", [1, "batch", h])],
                       wt.initializers("gru"), "hb_scan_gru", hb_scan_gru.__doc__)

    def reference(f):
        y, yh, _ = ref_recurrent("GRU", f["x"], wt.w, wt.r, wt.b)
        return {"ys": y[:, 0], "h_n": yh}

    rel = "control/hb_scan_gru.onnx"
    return rel, model, control_entry(
        rel, {"batch": 3, "seq": 8}, {"x": 0}, {"ys": 0}, [1, 4, 3], True, True,
        "GRU (seq 1) inside a Scan body, one step per iteration; h is the Scan state variable, initialised "
        "from a main-graph ConstantOfShape; W/R/B outer-scope initializers"), reference


def hb_loop_if_lstm(rng):
    """Loop over time -> If (cond = use_lstm > 0) -> LSTM one step; (h, c) loop-carried, passed through in else."""
    i, h = 2, 4
    wt = Weights("LSTM", i, h, rng)
    then_branch = helper.make_graph(
        [helper.make_node("LSTM", ["x1", "lstm_W", "lstm_R", "lstm_B", "", "h_prev", "c_prev"],
                          ["then_Y", "then_h", "then_c"], name="lstm", hidden_size=h)], "then", [],
        [value_info("then_h", [1, "batch", h]), value_info("then_c", [1, "batch", h])])
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["h_prev"], ["else_h"]), helper.make_node("Identity", ["c_prev"], ["else_c"])],
        "else", [], [value_info("else_h", [1, "batch", h]), value_info("else_c", [1, "batch", h])])
    body_nodes = [helper.make_node("Gather", ["x", "iter"], ["x_t"], axis=0),
                  const("x1_axes", np.array([0], np.int64)),
                  helper.make_node("Unsqueeze", ["x_t", "x1_axes"], ["x1"]),
                  helper.make_node("If", ["cond"], ["h_next", "c_next"], name="branch", then_branch=then_branch,
                                   else_branch=else_branch),
                  helper.make_node("Identity", ["cond_in"], ["cond_out"])]
    body_nodes += squeeze_axis("h_next", "y_t", 0, "y_t")
    body = helper.make_graph(
        body_nodes, "body",
        [value_info("iter", [], TensorProto.INT64), value_info("cond_in", [], TensorProto.BOOL),
         value_info("h_prev", [1, "batch", h]), value_info("c_prev", [1, "batch", h])],
        [value_info("cond_out", [], TensorProto.BOOL), value_info("h_next", [1, "batch", h]),
         value_info("c_next", [1, "batch", h]), value_info("y_t", ["batch", h])])
    nodes = zero_state_nodes("x", h, "h0", "h0") + flag_nodes("use_lstm", "cond")
    nodes += [helper.make_node("Shape", ["x"], ["x_shape"]), const("seq_axis", np.array(0, np.int64)),
              helper.make_node("Gather", ["x_shape", "seq_axis"], ["trip"], axis=0),
              helper.make_node("Loop", ["trip", "", "h0", "h0"], ["h_n", "c_n", "ys"], name="time", body=body)]
    model = make_model(nodes, [value_info("x", ["seq", "batch", i]), value_info("use_lstm", [1], TensorProto.INT64)],
                       [value_info("ys", ["seq", "batch", h]), value_info("h_n", [1, "batch", h]),
                        value_info("c_n", [1, "batch", h])],
                       wt.initializers("lstm"), "hb_loop_if_lstm", hb_loop_if_lstm.__doc__)

    def reference(f):
        batch = f["x"].shape[1]
        if f["use_lstm"][0] <= 0:
            z = np.zeros((1, batch, h))
            return {"ys": np.zeros((f["x"].shape[0], batch, h)), "h_n": z, "c_n": z}
        y, yh, yc = ref_recurrent("LSTM", f["x"], wt.w, wt.r, wt.b)
        return {"ys": y[:, 0], "h_n": yh, "c_n": yc}

    rel = "control/hb_loop_if_lstm.onnx"
    entry = control_entry(
        rel, {"batch": 2, "seq": 9}, {"x": 0}, {"ys": 0}, [2, 7], True, True,
        "Loop over time (trip = Shape(x)[0], x_t = Gather(x, iter)) -> If (cond from main graph) -> LSTM one "
        "step; h/c loop-carried from one main-graph ConstantOfShape, else-branch passes them through",
        inputs_int={"use_lstm": [1]})
    return rel, model, [entry, calls_entry(
        entry, {"use_lstm": [0]}, "calls mode, use_lstm = 0: inside the Loop the If never takes the LSTM "
        "branch, the else-branch passes h/c through every iteration; over 3 calls with the state fed back "
        "every output must equal call 1")], reference


def hb_no_rnn_loop_if(rng):
    """No recurrent node: Loop over time accumulating If(use_relu > 0, Relu(x_t), Neg(x_t))."""
    i = 3
    then_branch = helper.make_graph([helper.make_node("Relu", ["x_t"], ["then_v"])], "then", [],
                                    [value_info("then_v", ["batch", i])])
    else_branch = helper.make_graph([helper.make_node("Neg", ["x_t"], ["else_v"])], "else", [],
                                    [value_info("else_v", ["batch", i])])
    body = helper.make_graph(
        [helper.make_node("Gather", ["x", "iter"], ["x_t"], axis=0),
         helper.make_node("If", ["cond"], ["v"], then_branch=then_branch, else_branch=else_branch),
         helper.make_node("Add", ["acc_prev", "v"], ["acc"]), helper.make_node("Identity", ["acc"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [value_info("iter", [], TensorProto.INT64), value_info("cond_in", [], TensorProto.BOOL),
         value_info("acc_prev", ["batch", i])],
        [value_info("cond_out", [], TensorProto.BOOL), value_info("acc", ["batch", i]),
         value_info("acc_out", ["batch", i])])
    nodes = flag_nodes("use_relu", "cond")
    nodes += [helper.make_node("Shape", ["x"], ["x_shape"]), const("seq_axis", np.array(0, np.int64)),
              helper.make_node("Gather", ["x_shape", "seq_axis"], ["trip"], axis=0),
              const("first", np.array(0, np.int64)), helper.make_node("Gather", ["x", "first"], ["x_first"], axis=0),
              helper.make_node("Sub", ["x_first", "x_first"], ["acc0"]),
              helper.make_node("Loop", ["trip", "", "acc0"], ["total", "cumsum"], body=body)]
    model = make_model(nodes, [value_info("x", ["seq", "batch", i]), value_info("use_relu", [1], TensorProto.INT64)],
                       [value_info("cumsum", ["seq", "batch", i]), value_info("total", ["batch", i])], [],
                       "hb_no_rnn_loop_if", hb_no_rnn_loop_if.__doc__)

    def reference(f):
        v = np.maximum(f["x"], 0) if f["use_relu"][0] > 0 else -f["x"]
        c = np.cumsum(v.astype(np.float64), axis=0)
        return {"cumsum": c, "total": c[-1]}

    rel = "control/hb_no_rnn_loop_if.onnx"
    return rel, model, control_entry(
        rel, {"batch": 2, "seq": 5}, {"x": 0}, {"cumsum": 0}, [2, 3], True, False,
        "no RNN/GRU/LSTM: Loop over time with an If inside (cumulative sum). Since issue 10 the loop-carried sum "
        "is a recurrence of its own (kind \"state\", carried 'acc_prev', initial value Sub(x[0], x[0]) selected "
        "when the state input is empty): exposed, and streamable (the loop walks x:0)",
        inputs_int={"use_relu": [1]}, expect_pairs=1,
        states=[{"node": "Loop_8", "graph": "main", "kind": "state", "body_input": "acc_prev"}]), reference


def hb_no_rnn_scan(rng):
    """No recurrent node: Scan keeping a running max s; outputs x_t - s_t."""
    i = 4
    body = helper.make_graph(
        [helper.make_node("Max", ["s_prev", "x_t"], ["s"]), helper.make_node("Sub", ["x_t", "s"], ["d"])], "body",
        [value_info("s_prev", ["batch", i]), value_info("x_t", ["batch", i])],
        [value_info("s", ["batch", i]), value_info("d", ["batch", i])])
    nodes = [const("first", np.array(0, np.int64)), helper.make_node("Gather", ["x", "first"], ["s0"], axis=0),
             helper.make_node("Scan", ["s0", "x"], ["running_max", "gap"], body=body, num_scan_inputs=1)]
    model = make_model(nodes, [value_info("x", ["seq", "batch", i])],
                       [value_info("gap", ["seq", "batch", i]), value_info("running_max", ["batch", i])], [],
                       "hb_no_rnn_scan", hb_no_rnn_scan.__doc__)

    def reference(f):
        m = np.maximum.accumulate(f["x"], axis=0)
        return {"gap": f["x"] - m, "running_max": m[-1]}

    rel = "control/hb_no_rnn_scan.onnx"
    return rel, model, control_entry(
        rel, {"batch": 3, "seq": 6}, {"x": 0}, {"gap": 0}, [2, 4], True, False,
        "no RNN/GRU/LSTM: Scan with a running-max state initialised from x[0]. Since issue 10 the Scan state is a "
        "recurrence of its own (kind \"state\", carried 's_prev'; its default selects x[0] when the state input is "
        "empty): exposed, and streamable (the Scan scans x:0)", expect_pairs=1,
        states=[{"node": "Scan_2", "graph": "main", "kind": "state", "body_input": "s_prev"}]), reference


def seq_trip_nodes(x, out):
    """out = Shape(x)[0]: the trip count of a Loop over the first axis of x."""
    return [helper.make_node("Shape", [x], [out + "_shape"]), const(out + "_axis", np.array(0, np.int64)),
            helper.make_node("Gather", [out + "_shape", out + "_axis"], [out], axis=0)]


def loop_body_io(state_inputs, outputs):
    """Loop body inputs (iter, cond_in, *state_inputs) and outputs (cond_out, *outputs)."""
    return ([value_info("iter", [], TensorProto.INT64), value_info("cond_in", [], TensorProto.BOOL)] + state_inputs,
            [value_info("cond_out", [], TensorProto.BOOL)] + outputs)


def hb_loop_window_gru(rng):
    """Loop over windows x[w] ([win, batch, I]); each iteration a GRU without initial state; Y_h a scan output."""
    win, i, h = 3, 3, 4
    wt = Weights("GRU", i, h, rng)
    body_nodes = [helper.make_node("Gather", ["x", "iter"], ["x_w"], axis=0),
                  helper.make_node("GRU", ["x_w", "gru_W", "gru_R", "gru_B"], ["", "win_h"], name="gru",
                                   hidden_size=h),
                  helper.make_node("Identity", ["cond_in"], ["cond_out"])]
    body_nodes += squeeze_axis("win_h", "y_w", 0, "y_w")
    body = helper.make_graph(body_nodes, "body", *loop_body_io([], [value_info("y_w", ["batch", h])]))
    nodes = seq_trip_nodes("x", "trip")
    nodes += [helper.make_node("Loop", ["trip", ""], ["ys"], name="windows", body=body)]
    model = make_model(nodes, [value_info("x", ["seq", win, "batch", i])], [value_info("ys", ["seq", "batch", h])],
                       wt.initializers("gru"), "hb_loop_window_gru", hb_loop_window_gru.__doc__)

    def reference(f):
        return {"ys": np.stack([ref_recurrent("GRU", xw, wt.w, wt.r, wt.b)[1][0] for xw in f["x"]])}

    rel = "control/hb_loop_window_gru.onnx"
    return rel, model, control_entry(
        rel, {"batch": 2, "seq": 4}, {"x": 0}, {"ys": 0}, None, False, True,
        "Loop over windows (x [windows=seq, 3, batch, 3], trip = Shape(x)[0], x_w = Gather(x, iter)); each "
        "iteration runs a GRU over its window with NO initial state (fresh zeros every iteration; Y slot empty) "
        "and emits the window's squeezed Y_h as a scan output; nothing is loop-carried. The tool adds a "
        "loop-carried state (zero iterations return the fed state) and feeds the state input to the GRU in "
        "every iteration, so chunked streaming does not hold: checks 1 and 3 only"), reference


def hb_loop_if_fresh_lstm(rng):
    """Loop over time -> If (cond = use_lstm > 0) -> LSTM one step whose zero state is built inside the branch."""
    i, h = 4, 3
    wt = Weights("LSTM", i, h, rng)
    proj = rng.uniform(-1, 1, (i, h)).astype(np.float32)
    then_nodes = batch_shape_nodes("x_t", 0, h, "then_h0_dims", "then_h0")
    then_nodes += [helper.make_node("ConstantOfShape", ["then_h0_dims"], ["then_h0"],
                                    value=numpy_helper.from_array(np.zeros(1, np.float32))),
                   helper.make_node("LSTM", ["x1", "lstm_W", "lstm_R", "lstm_B", "", "then_h0", "then_h0"],
                                    ["then_Y", "then_h"], name="lstm", hidden_size=h)]
    then_branch = helper.make_graph(then_nodes, "then", [], [value_info("then_h", [1, "batch", h])])
    else_branch = helper.make_graph(
        [helper.make_node("MatMul", ["x1", "else_P"], ["else_mm"]), helper.make_node("Tanh", ["else_mm"], ["else_h"])],
        "else", [], [value_info("else_h", [1, "batch", h])])
    body_nodes = [helper.make_node("Gather", ["x", "iter"], ["x_t"], axis=0),
                  const("x1_axes", np.array([0], np.int64)),
                  helper.make_node("Unsqueeze", ["x_t", "x1_axes"], ["x1"]),
                  helper.make_node("If", ["cond"], ["step_h"], name="branch", then_branch=then_branch,
                                   else_branch=else_branch),
                  helper.make_node("Identity", ["cond_in"], ["cond_out"])]
    body_nodes += squeeze_axis("step_h", "y_t", 0, "y_t")
    body = helper.make_graph(body_nodes, "body", *loop_body_io([], [value_info("y_t", ["batch", h])]))
    nodes = flag_nodes("use_lstm", "cond") + seq_trip_nodes("x", "trip")
    nodes += [helper.make_node("Loop", ["trip", ""], ["ys"], name="time", body=body)]
    model = make_model(nodes, [value_info("x", ["seq", "batch", i]), value_info("use_lstm", [1], TensorProto.INT64)],
                       [value_info("ys", ["seq", "batch", h])],
                       wt.initializers("lstm") + [numpy_helper.from_array(proj, "else_P")], "hb_loop_if_fresh_lstm",
                       hb_loop_if_fresh_lstm.__doc__)

    def reference(f):
        x = f["x"].astype(np.float64)
        if f["use_lstm"][0] <= 0:
            return {"ys": np.tanh(x @ proj)}
        zero = np.zeros((1, x.shape[1], h))
        return {"ys": np.stack([step_lstm(wt, x_t, zero, zero)[0][0] for x_t in x])}

    rel = "control/hb_loop_if_fresh_lstm.onnx"
    return rel, model, control_entry(
        rel, {"batch": 2, "seq": 6}, {"x": 0}, {"ys": 0}, None, False, True,
        "Loop over time (x_t = Gather(x, iter)) -> If (cond = use_lstm > 0, from the main graph) -> LSTM one step "
        "whose h/c default is a ConstantOfShape(Shape(x_t)...) computed INSIDE the then-branch every iteration "
        "(not carried; Y named but unused, no Y_c slot); else-branch tanh(x_t P). The state must be threaded "
        "through If and Loop; each iteration restarts from it, so no chunked streaming: checks 1 and 3 only",
        inputs_int={"use_lstm": [1]}), reference


def hb_scan_two_grus(rng):
    """Scan whose body runs two stacked GRUs, each with its own Scan state variable (h1, h2)."""
    i, h = 3, 4
    w1, w2 = Weights("GRU", i, h, rng), Weights("GRU", h, h, rng)
    body_nodes = [const("x1_axes", np.array([0], np.int64)),
                  helper.make_node("Unsqueeze", ["x_t", "x1_axes"], ["x1"]),
                  helper.make_node("GRU", ["x1", "gru1_W", "gru1_R", "gru1_B", "", "h1_prev"], ["gru1_Y", "h1_next"],
                                   name="gru1", hidden_size=h)]
    body_nodes += squeeze_axis("gru1_Y", "gru1_y", 1, "gru1_y")
    body_nodes += [helper.make_node("GRU", ["gru1_y", "gru2_W", "gru2_R", "gru2_B", "", "h2_prev"],
                                    ["gru2_Y", "h2_next"], name="gru2", hidden_size=h)]
    body_nodes += squeeze_axis("h1_next", "y1_t", 0, "y1_t") + squeeze_axis("h2_next", "y2_t", 0, "y2_t")
    body = helper.make_graph(
        body_nodes, "body",
        [value_info("h1_prev", [1, "batch", h]), value_info("h2_prev", [1, "batch", h]), value_info("x_t", ["batch", i])],
        [value_info("h1_next", [1, "batch", h]), value_info("h2_next", [1, "batch", h]),
         value_info("y1_t", ["batch", h]), value_info("y2_t", ["batch", h])])
    nodes = zero_state_nodes("x", h, "h0", "h0")
    nodes += [helper.make_node("Scan", ["h0", "h0", "x"], ["h1_n", "h2_n", "ys1", "ys2"], name="scan", body=body,
                               num_scan_inputs=1)]
    model = make_model(nodes, [value_info("x", ["seq", "batch", i])],
                       [value_info("ys1", ["seq", "batch", h]), value_info("ys2", ["seq", "batch", h]),
                        value_info("h1_n", [1, "batch", h]), value_info("h2_n", [1, "batch", h])],
                       w1.initializers("gru1") + w2.initializers("gru2"), "hb_scan_two_grus", hb_scan_two_grus.__doc__)

    def reference(f):
        y1, yh1, _ = ref_recurrent("GRU", f["x"], w1.w, w1.r, w1.b)
        y2, yh2, _ = ref_recurrent("GRU", y1[:, 0], w2.w, w2.r, w2.b)
        return {"ys1": y1[:, 0], "ys2": y2[:, 0], "h1_n": yh1, "h2_n": yh2}

    rel = "control/hb_scan_two_grus.onnx"
    return rel, model, control_entry(
        rel, {"batch": 3, "seq": 9}, {"x": 0}, {"ys1": 0, "ys2": 0}, [3, 2, 4], True, True,
        "Scan over x with two stacked GRUs (seq 1, same hidden size) in one body, each with its own Scan state "
        "variable (h1, h2; both initialised from ONE main-graph ConstantOfShape) and its own scan output "
        "(ys1, ys2); final h1_n, h2_n are graph outputs"), reference


def hb_if_both_branches(rng):
    """If (cond = flag > 0) whose then- and else-branch each run their own LSTM (no initial state)."""
    i, h = 3, 4
    wa, wb = Weights("LSTM", i, h, rng), Weights("LSTM", i, h, rng)
    branches = {}
    for side, prefix in (("then", "lstm_a"), ("else", "lstm_b")):
        branch_nodes = [helper.make_node("LSTM", ["x", prefix + "_W", prefix + "_R", prefix + "_B"],
                                         [side + "_Y", side + "_h"], name=prefix, hidden_size=h)]
        branch_nodes += squeeze_axis(side + "_Y", side + "_y", 1, side + "_y")
        branches[side] = helper.make_graph(branch_nodes, side, [], [value_info(side + "_y", ["seq", "batch", h]),
                                                                    value_info(side + "_h", [1, "batch", h])])
    nodes = flag_nodes("flag", "cond")
    nodes += [helper.make_node("If", ["cond"], ["y", "h_n"], name="branch", then_branch=branches["then"],
                               else_branch=branches["else"])]
    model = make_model(nodes, [value_info("x", ["seq", "batch", i]), value_info("flag", [1], TensorProto.INT64)],
                       [value_info("y", ["seq", "batch", h]), value_info("h_n", [1, "batch", h])],
                       wa.initializers("lstm_a") + wb.initializers("lstm_b"), "hb_if_both_branches",
                       hb_if_both_branches.__doc__)

    def reference(f):
        wt = wa if f["flag"][0] > 0 else wb
        y, yh, _ = ref_recurrent("LSTM", f["x"], wt.w, wt.r, wt.b)
        return {"y": y[:, 0], "h_n": yh}

    rel = "control/hb_if_both_branches.onnx"
    what = ("an LSTM in each branch of an If (cond = flag > 0): lstm_a in then, lstm_b in else, different weights "
            "(outer-scope initializers), inputs X/W/R/B only (initial state absent), outputs Y (squeezed) and Y_h "
            "(no Y_c slot); ")
    return rel, model, [
        control_entry(rel, {"batch": 2, "seq": 8}, {"x": 0}, {"y": 0}, [5, 3], True, True,
                      what + "flag = 1: then-branch (lstm_a) runs, lstm_b's state must pass through",
                      inputs_int={"flag": [1]}),
        control_entry(rel, {"batch": 2, "seq": 8}, {"x": 0}, {"y": 0}, [2, 6], True, True,
                      what + "flag = 0: else-branch (lstm_b) runs, lstm_a's state must pass through",
                      inputs_int={"flag": [0]})], reference


def hb_loop_zero_trip(rng):
    """Autoregressive Loop as hb_loop_ar_lstm, run with trip count 0: the state must come back unchanged."""
    model, reference = ar_lstm_model(rng, 4, 3, "hb_loop_zero_trip", hb_loop_zero_trip.__doc__)
    rel = "control/hb_loop_zero_trip.onnx"
    return rel, model, control_entry(
        rel, {"batch": 2, "seq": 0}, {}, {"ys": 0}, 3, True, True,
        "the autoregressive decoder of hb_loop_ar_lstm (other sizes and weights: context [batch,4], H 3; LSTM "
        "state loop-carried) run with steps = 0: the Loop runs zero iterations, so over 3 calls with the state "
        "fed back every output must equal call 1 (the incoming state is returned unchanged; ys is empty: ORT "
        "reports it as [0, 0, 3])", chunk_mode="calls", inputs_int={"steps": [0]}, branch_taken=False), reference


# Extra verification runs (integer inputs, and dims when they change) besides the manifest entries' own
# inputs, so that every If branch and the non-zero trip count are checked too.
OTHER_RUNS = {"hb_no_rnn_loop_if": [({"use_relu": [0]}, None)], "hb_loop_if_fresh_lstm": [({"use_lstm": [0]}, None)],
              "hb_loop_zero_trip": [({"steps": [6]}, {"batch": 2, "seq": 6})]}

def hb_scan_fresh_gru(rng):
    """Scan over x (axis 0); each element runs a one-step GRU with NO initial state; Y_h is the scan output.
    Batch fixed at 2: the zero default then has the state's full shape, as a Scan state variable needs."""
    i, h, batch = 4, 3, 2
    wt = Weights("GRU", i, h, rng)
    body_nodes = [const("x1_axes", np.array([0], np.int64)),
                  helper.make_node("Unsqueeze", ["x_t", "x1_axes"], ["x1"]),
                  helper.make_node("GRU", ["x1", "gru_W", "gru_R", "gru_B"], ["", "h_t"], name="gru", hidden_size=h)]
    body_nodes += squeeze_axis("h_t", "y_t", 0, "y_t")
    body = helper.make_graph(body_nodes, "body", [value_info("x_t", [batch, i])], [value_info("y_t", [batch, h])])
    nodes = [helper.make_node("Scan", ["x"], ["ys"], name="scan", body=body, num_scan_inputs=1)]
    model = make_model(nodes, [value_info("x", ["seq", batch, i])], [value_info("ys", ["seq", batch, h])],
                       wt.initializers("gru"), "hb_scan_fresh_gru", hb_scan_fresh_gru.__doc__)

    def reference(f):
        return {"ys": np.stack([ref_recurrent("GRU", xt[None], wt.w, wt.r, wt.b)[1][0] for xt in f["x"]])}

    rel = "control/hb_scan_fresh_gru.onnx"
    return rel, model, control_entry(
        rel, {"seq": 5}, {"x": 0}, {"ys": 0}, None, False, True,
        "Scan over x (batch fixed 2) with a one-step GRU per element and NO initial state (fresh zeros every "
        "step), nothing carried. The tool threads the final state out as a new Scan state variable (initial "
        "value: the state input, whose zero default has the full [1,2,3] shape) and feeds the state input to "
        "the GRU every step: checks 1 and 3 only"), reference


CONTROL_BUILDERS = [hb_if_lstm_outer, hb_scan_fresh_gru, hb_loop_ar_lstm, hb_scan_gru, hb_loop_if_lstm, hb_no_rnn_loop_if,
                    hb_no_rnn_scan, hb_loop_window_gru, hb_loop_if_fresh_lstm, hb_scan_two_grus, hb_if_both_branches,
                    hb_loop_zero_trip]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--merge", action="store_true", help="only merge the manifest fragments")
    parser.add_argument("--ort-node", default=DEFAULT_ORT_NODE, help="path of the onnxruntime-node package")
    parser.add_argument("--skip-control", action="store_true", help="do not build models/control/hb_*")
    args = parser.parse_args()
    if args.merge:
        merge_manifest()
        return 0
    builders = BUILDERS + ([] if args.skip_control else CONTROL_BUILDERS)
    built = []
    for builder in builders:
        seed = name_seed(builder.__name__)
        relpath, model, entries, reference = builder(np.random.RandomState(seed))
        entries = entries if isinstance(entries, list) else [entries]
        write_model(model, relpath)
        cases = []
        if reference is not None:
            # One run per manifest entry (its inputs_int and dims), then the extra runs.
            runs = [(e.get("inputs_int", {}), e["dims"]) for e in entries]
            runs += [(dict(entries[0].get("inputs_int", {}), **ints), dims or entries[0]["dims"])
                     for ints, dims in OTHER_RUNS.get(builder.__name__, [])]
            for ints, dims in runs:
                feeds = make_feeds(model, dict(entries[0], inputs_int=ints, dims=dims), seed + 1)
                cases.append((feeds, dims, reference(feeds)))
        built.append((relpath, entries, cases))
    verify_all(built, args.ort_node)
    write_fragment("handbuilt", [entry for _, entries, _ in built for entry in entries])
    merge_manifest()
    return 0


if __name__ == "__main__":
    sys.exit(main())
