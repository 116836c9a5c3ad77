#!/usr/bin/python3
"""Exports the PyTorch end-to-end test models of rnnstate and checks them against PyTorch.

    /usr/bin/python3 tools/gen_torch_models.py [--ort-node DIR] [--skip-control] [--patterns]

Writes models/torch/*.onnx, models/control/ts_*.onnx and their manifest entries to
models/torch/manifest.part.json, then merges all fragments into models/manifest.json.

Each export is checked like the hand-built models (see tools/gen_handbuilt_models.py, whose helpers
this script uses) and run in onnxruntime-node twice, at the traced dims and at the manifest's dims;
both runs must equal PyTorch's own outputs for the same inputs (max abs diff <= 1e-5).
--patterns prints, for every recurrent node, the expression that computes its initial_h/initial_c
(the exporter's default-state pattern). Needs Debian's python3-torch 1.13: run with /usr/bin/python3.
"""

import argparse
import io
import os
import sys
from typing import List

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

sys.dont_write_bytecode = True  # no tools/__pycache__ in the work tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_handbuilt_models as common  # noqa: E402  (shared helpers: checks, ORT runner, manifest)

OPSET = 14


class Returning(nn.Module):
    """Wraps a recurrent module so that forward returns a flat tuple (y, h_n[, c_n])."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, *state):
        if isinstance(self.rnn, nn.LSTM):
            y, (h, c) = self.rnn(x, tuple(state)) if state else self.rnn(x)
            return y, h, c
        y, h = self.rnn(x, state[0]) if state else self.rnn(x)
        return y, h


class LstmThenGru(nn.Module):
    """LSTM followed by GRU; only the GRU's outputs are returned."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 5)
        self.gru = nn.GRU(5, 3)

    def forward(self, x):
        y, _ = self.lstm(x)
        y, h = self.gru(y)
        return y, h


class Case:
    """One export: module factory, declared I/O (shapes with 'batch'/'seq'), dims, manifest entry."""

    def __init__(self, relpath, make, inputs, outputs, export_dims, entry, script=False, other_ints=None,
                 extra_entries=None, opset=None, as_exported=False):
        self.relpath = relpath
        # Keep the I/O shapes torch declares (its own names, such as Looph_n_dim_1), as a user's export has
        # them, instead of declaring the case's.
        self.as_exported = as_exported
        self.opset = opset or OPSET
        self.make = make
        self.inputs = inputs
        self.outputs = outputs
        self.export_dims = export_dims
        self.entry = entry
        self.script = script
        self.other_ints = other_ints or []  # extra runs with these integer inputs (e.g. the other If branch)
        self.extra_entries = extra_entries or []  # more manifest entries for the same file

    @property
    def entries(self):
        return [self.entry] + self.extra_entries


def torch_cases():
    def c(name, make, inputs, outputs, export_dims, dims, seq_axes, out_axes, chunks, streaming, zero, note,
          opset=None, **kw):
        rel = f"torch/{name}.onnx"
        return Case(rel, make, inputs, outputs, export_dims,
                    common.manifest_entry(rel, dims, seq_axes, out_axes, chunks, streaming, zero, note, **kw),
                    opset=opset)

    def opset_sweep(opset):
        """The same modules exported at another opset: the tracer's default-state expressions change
        (opset 9: Slice/Unsqueeze with attributes; 10+: Slice with inputs; 13+: Unsqueeze with inputs)."""
        return [
            c(f"lstm2_bf_dyn_op{opset}", lambda: Returning(nn.LSTM(3, 4, num_layers=2, batch_first=True)),
              [("x", ["batch", "seq", 3])],
              [("y", ["batch", "seq", 4]), ("h_n", [2, "batch", 4]), ("c_n", [2, "batch", 4])], tb,
              {"batch": 3, "seq": 8}, {"x": 1}, {"y": 1}, [2, 5, 1], True, True,
              f"as lstm2_bf_dyn, exported at opset {opset}", opset=opset),
            c(f"gru2_dyn_op{opset}", lambda: Returning(nn.GRU(4, 6, num_layers=2)), [("x", ["seq", "batch", 4])],
              [("y", ["seq", "batch", 6]), ("h_n", [2, "batch", 6])], tb, {"batch": 2, "seq": 10}, {"x": 0},
              {"y": 0}, [3, 7], True, True, f"as gru2_dyn, exported at opset {opset}", opset=opset),
        ]

    tb, ts = {"batch": 2, "seq": 5}, {}
    return [
        c("rnn_dyn", lambda: Returning(nn.RNN(3, 5)), [("x", ["seq", "batch", 3])],
          [("y", ["seq", "batch", 5]), ("h_n", [1, "batch", 5])], tb, {"batch": 3, "seq": 9}, {"x": 0}, {"y": 0},
          [5, 1, 3], True, True, "nn.RNN, 1 layer, dynamic batch+seq, no h0: ConstantOfShape default"),
        c("gru2_dyn", lambda: Returning(nn.GRU(4, 6, num_layers=2)), [("x", ["seq", "batch", 4])],
          [("y", ["seq", "batch", 6]), ("h_n", [2, "batch", 6])], tb, {"batch": 2, "seq": 10}, {"x": 0}, {"y": 0},
          [3, 7], True, True, "nn.GRU, 2 layers, dynamic batch+seq, no h0: one ConstantOfShape [2,B,H], a Slice "
          "per layer; h_n = Concat of the layers' Y_h"),
        c("lstm2_bf_dyn", lambda: Returning(nn.LSTM(3, 4, num_layers=2, batch_first=True)),
          [("x", ["batch", "seq", 3])],
          [("y", ["batch", "seq", 4]), ("h_n", [2, "batch", 4]), ("c_n", [2, "batch", 4])], tb,
          {"batch": 3, "seq": 8}, {"x": 1}, {"y": 1}, [2, 5, 1], True, True,
          "nn.LSTM, 2 layers, batch_first (Transpose + layout 0), dynamic batch+seq, no h0: one ConstantOfShape, "
          "one Slice per layer per state (4 Slices)"),
        c("lstm2_bf_static", lambda: Returning(nn.LSTM(3, 4, num_layers=2, batch_first=True)),
          [("x", [2, 5, 3])], [("y", [2, 5, 4]), ("h_n", [2, 2, 4]), ("c_n", [2, 2, 4])], ts, {}, {}, {}, None,
          False, True, "as lstm2_bf_dyn with all shapes static: Expand(Constant zeros[1,2,4], Concat(...)) per "
          "layer and state; the sequence axis is fixed, so no chunked streaming (checks 1 and 3 only)"),
        c("lstm_h0", lambda: Returning(nn.LSTM(5, 3, num_layers=2)),
          [("x", ["seq", "batch", 5]), ("h0", [2, "batch", 3]), ("c0", [2, "batch", 3])],
          [("y", ["seq", "batch", 3]), ("h_n", [2, "batch", 3]), ("c_n", [2, "batch", 3])], tb,
          {"batch": 2, "seq": 6}, {"x": 0}, {"y": 0}, [2, 4], True, False,
          "nn.LSTM, 2 layers, h0/c0 given as graph inputs (sliced per layer): the state is already exposed "
          "stacked (a caller streams by feeding h_n/c_n back as h0/c0, checked on the original); the rewrite "
          "only records pairs with rows (h0[0:1] -> h_n[0:1], ...)"),
        c("gru_fixed_batch", lambda: Returning(nn.GRU(2, 7)), [("x", ["seq", 3, 2])],
          [("y", ["seq", 3, 7]), ("h_n", [1, 3, 7])], {"seq": 5}, {"seq": 7}, {"x": 0}, {"y": 0}, [5, 2], True,
          True, "nn.GRU, batch fixed at 3, only seq dynamic"),
        c("lstm_bidir", lambda: Returning(nn.LSTM(3, 4, num_layers=2, bidirectional=True)),
          [("x", ["seq", "batch", 3])],
          [("y", ["seq", "batch", 8]), ("h_n", [4, "batch", 4]), ("c_n", [4, "batch", 4])], tb,
          {"batch": 2, "seq": 6}, {"x": 0}, {"y": 0}, None, False, True,
          "bidirectional 2-layer nn.LSTM (one node per layer, num_directions 2): streaming false"),
        c("lstm_gru_dyn", LstmThenGru, [("x", ["seq", "batch", 4])],
          [("y", ["seq", "batch", 3]), ("h_n", [1, "batch", 3])], tb, {"batch": 2, "seq": 9}, {"x": 0}, {"y": 0},
          [2, 3, 4], True, True, "nn.LSTM then nn.GRU in one module; only the GRU's y/h_n are outputs"),
    ] + [case for opset in (9, 11, 17) for case in opset_sweep(opset)]


def export(case):
    """torch.onnx.export of the case's module; returns (ModelProto with declared I/O shapes, module)."""
    module = case.make().eval()
    example = make_inputs(case, case.export_dims, seed=7)
    if case.script:
        module = torch.jit.script(module)
    dynamic = {}
    for name, shape in case.inputs + case.outputs:
        axes = {axis: d for axis, d in enumerate(shape) if isinstance(d, str)}
        if axes:
            dynamic[name] = axes
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, tuple(example.values()), buf, opset_version=case.opset,
                          input_names=[n for n, _ in case.inputs], output_names=[n for n, _ in case.outputs],
                          dynamic_axes=dynamic or None)
    model = onnx.load_from_string(buf.getvalue())
    declared = dict(case.inputs + case.outputs)
    for vi in list(model.graph.input) + list(model.graph.output):
        # Below IR 4 (opset 7 and 8 exports) every initializer is a graph input too: left as exported.
        if not case.as_exported and vi.name in declared:
            common.set_shape(vi, declared[vi.name])
    model.doc_string = case.entry["note"]
    return model, module


def make_inputs(case, dims, seed, ints=None):
    """Float inputs uniform [-1, 1] at `dims`; int inputs from `ints` or the entry's inputs_int."""
    rng = np.random.RandomState(seed)
    ints = dict(case.entry.get("inputs_int", {}), **(ints or {}))
    out = {}
    for name, shape in case.inputs:
        if name in ints:
            out[name] = torch.tensor(ints[name], dtype=torch.int64)
        else:
            shape = common.concrete_shape(shape, dims)
            out[name] = torch.from_numpy(rng.uniform(-1, 1, shape).astype(np.float32))
    return out


def torch_reference(case, module, inputs):
    with torch.no_grad():
        result = module(*inputs.values())
    if not isinstance(result, tuple):
        result = (result,)
    return {name: r.numpy() for (name, _), r in zip(case.outputs, result)}


# ---------------------------------------------------------------------------------------------
# Default-state patterns: the expression computing each recurrent node's initial_h / initial_c
# ---------------------------------------------------------------------------------------------


def _describe(name, scopes, depth):
    if name == "":
        return "(absent)"
    for level in range(len(scopes) - 1, -1, -1):
        producers, inputs, inits = scopes[level]
        if name in producers:
            node = producers[name]
            break
        if name in inits:
            arr = numpy_helper.to_array(inits[name])
            return f"initializer {name}{list(arr.shape)}"
        if name in inputs:
            return f"input {name}" if level == 0 else f"subgraph input {name}"
    else:
        return f"outer {name}"
    if node.op_type == "Constant":
        arr = numpy_helper.to_array(node.attribute[0].t)
        if arr.size <= 3:
            return f"Constant{list(arr.shape)}={arr.tolist()}"
        return f"Constant{list(arr.shape)}" + ("(zeros)" if not arr.any() else "")
    if depth == 0:
        return node.op_type + "(...)"
    args = ", ".join(_describe(i, scopes, depth - 1) for i in node.input)
    if node.op_type == "ConstantOfShape" and node.attribute:
        return f"ConstantOfShape[{numpy_helper.to_array(node.attribute[0].t).tolist()}]({args})"
    return f"{node.op_type}({args})"


def loop_carried(node, body):
    """[(body input, outer initial value)] of a Loop's or Scan's loop-carried values."""
    if node.op_type == "Loop":
        return [(i.name, v) for i, v in zip(body.input[2:], node.input[2:])]
    if node.op_type == "Scan":
        states = len(body.input) - next(a.i for a in node.attribute if a.name == "num_scan_inputs")
        return [(i.name, v) for i, v in zip(body.input[:states], node.input[:states])]
    return []


def default_state_patterns(model):
    """Lines 'path node slot = expression' for every RNN/GRU/LSTM in the model and its subgraphs."""
    lines = []

    def walk(graph, scopes, path):
        scope = ({o: n for n in graph.node for o in n.output}, {i.name for i in graph.input},
                 {i.name: i for i in graph.initializer})
        scopes = scopes + [scope]
        users = {}
        for n in graph.node:
            if n.op_type in ("RNN", "GRU", "LSTM"):
                slots = [5] + ([6] if n.op_type == "LSTM" else [])
                for slot in slots:
                    value = n.input[slot] if slot < len(n.input) else ""
                    users.setdefault(value, []).append(n.name)
                    lines.append(f"{path} {n.op_type} '{n.name}' {'initial_h' if slot == 5 else 'initial_c'} = "
                                 f"{_describe(value, scopes, 8)}")
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    carried = loop_carried(n, a.g)
                    for inner, outer in carried:
                        lines.append(f"{path}/{n.op_type}:{a.name} carried '{inner}' starts as "
                                     f"{_describe(outer, scopes, 8)}")
                    walk(a.g, scopes, f"{path}/{n.op_type}:{a.name}")
        for value, names in users.items():
            if value and len(names) > 1:
                lines.append(f"{path} value '{value}' feeds {len(names)} state slots ({', '.join(names)})")

    walk(model.graph, [], "main")
    return lines


# =============================================================================================
# Later work (issue 3): TorchScript control flow around an LSTM. models/control/ts_*.onnx
# =============================================================================================


class LstmInLoop(nn.Module):
    """torch.jit.script: one LSTM call per time step in a Python loop (exports as an ONNX Loop)."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4)

    def forward(self, x):
        h = torch.zeros(1, x.size(1), 4)
        c = torch.zeros(1, x.size(1), 4)
        ys: List[torch.Tensor] = []
        for t in range(x.size(0)):
            y, (h, c) = self.lstm(x[t:t + 1], (h, c))
            ys.append(y)
        return torch.cat(ys, 0), h, c


class LstmInIf(nn.Module):
    """torch.jit.script: the LSTM runs only when flag > 0 (exports as an ONNX If)."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 5)

    def forward(self, x, flag):
        if bool(flag.sum() > 0):
            y, (h, c) = self.lstm(x)
        else:
            y = torch.zeros(x.size(0), x.size(1), 5)
            h = torch.zeros(1, x.size(1), 5)
            c = torch.zeros(1, x.size(1), 5)
        return y, h, c


def control_cases():
    tb = {"batch": 2, "seq": 5}
    rel_loop, rel_if = "control/ts_lstm_loop.onnx", "control/ts_lstm_if.onnx"
    loop_entry = common.control_entry(
        rel_loop, {"batch": 2, "seq": 7}, {"x": 0}, {"y": 0}, [3, 4], True, True,
        "TorchScript loop over time: LSTM (seq 1) inside a Loop body, h/c loop-carried from one shared main-graph "
        "ConstantOfShape, weights main-graph Constants sliced in the body; trip count = Shape(x)[0]")
    if_entry = common.control_entry(
        rel_if, {"batch": 2, "seq": 8}, {"x": 0}, {"y": 0}, [6, 2], True, True,
        "TorchScript if: LSTM in the then-branch of an If (cond = flag.sum() > 0), its default state computed "
        "inside the branch; the else-branch outputs zeros", inputs_int={"flag": [1]})
    return [
        Case(rel_loop, LstmInLoop, [("x", ["seq", "batch", 3])],
             [("y", ["seq", "batch", 4]), ("h_n", [1, "batch", 4]), ("c_n", [1, "batch", 4])], tb, loop_entry,
             script=True),
        Case(rel_if, LstmInIf, [("x", ["seq", "batch", 3]), ("flag", [1])],
             [("y", ["seq", "batch", 5]), ("h_n", [1, "batch", 5]), ("c_n", [1, "batch", 5])], tb, if_entry,
             script=True, other_ints=[{"flag": [0]}],
             extra_entries=[common.calls_entry(
                 if_entry, {"flag": [0]}, "calls mode, flag = 0: the LSTM branch is never taken, so over 3 calls "
                 "with the state fed back every output (state included) must equal call 1")]),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ort-node", default=common.DEFAULT_ORT_NODE, help="path of the onnxruntime-node package")
    parser.add_argument("--skip-control", action="store_true", help="do not export models/control/ts_*")
    parser.add_argument("--patterns", action="store_true", help="print each export's default-state expressions")
    args = parser.parse_args()
    cases = torch_cases() + ([] if args.skip_control else control_cases())
    built = []
    for case in cases:
        torch.manual_seed(common.name_seed(case.relpath))
        model, module = export(case)
        common.write_model(model, case.relpath)
        runs = []
        runs_spec = [(case.export_dims, 11, None), (case.entry["dims"], 12, None)]
        runs_spec += [(case.entry["dims"], 13, ints) for ints in case.other_ints]
        for dims, seed, ints in runs_spec:
            inputs = make_inputs(case, dims, seed, ints)
            feeds = {name: t.numpy() for name, t in inputs.items()}
            runs.append((feeds, dims, torch_reference(case, module, inputs)))
        built.append((case.relpath, case.entries, runs))
        if args.patterns:
            print(f"--- {case.relpath}")
            for line in default_state_patterns(model):
                print("   ", line)
    common.verify_all(built, args.ort_node)
    common.write_fragment("torch", [entry for case in cases for entry in case.entries])
    common.merge_manifest()
    return 0


if __name__ == "__main__":
    sys.exit(main())
