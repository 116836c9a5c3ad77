#!/usr/bin/python3
"""Builds the test models of issue 9: recurrent state that a model ALREADY exposes, in its authors' own
packed layouts (models/exposed/*.onnx), checks them, and writes their manifest entries.

    /usr/bin/python3 tools/gen_exposed_models.py [--ort-node DIR]

Writes models/exposed/*.onnx and models/exposed/manifest.part.json (merge into models/manifest.json with
`tools/gen_handbuilt_models.py --merge`). See models/exposed/README.md for each model,
the region notation of the "exposed" field and the published models these forms were taken from.

Every model is checked like the other generators' (tools/gen_handbuilt_models.py, whose helpers this
script imports): onnx.checker.check_model(full_check=True), IR <= 8, every graph input and output typed
and shaped (symbolic dims only 'batch' / 'seq'), size < 100 KB, a consistent manifest entry. Then in
onnxruntime-node:
  1. one full run equals PyTorch's outputs (exports) or a NumPy reference (hand-built), max abs diff <= 1e-5;
  2. region check (recurrent nodes of the main graph): a copy of the model that also outputs every
     initial_h/initial_c and Y_h/Y_c shows that each state's initial value IS the claimed region of the
     claimed input and its final value IS the claimed region of the claimed output (exactly);
  3. the authors' own protocol: the sequence in chunks, each call fed the previous call's state outputs
     through the entry's "own_protocol" feedback; positive models must equal one full run (<= 1e-5),
     negative controls must NOT (the diff is printed and must exceed the entry's stated minimum).
Needs Debian's python3-torch 1.13, python3-onnx 1.12, python3-numpy: run with /usr/bin/python3.
"""

import argparse
import copy
import io
import json
import os
import sys
import warnings
import zlib
from typing import Tuple

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
from torch import nn

sys.dont_write_bytecode = True  # no tools/__pycache__ in the work tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_handbuilt_models as common  # noqa: E402  (shared helpers: checks, ORT runner, manifest)

SUBDIR = "exposed"
PENDING = os.path.join(common.MODELS, SUBDIR, common.FRAGMENT)
INT64_MAX = 9223372036854775807
DIMS = {"batch": 2, "seq": 8}
CHUNKS = [3, 5]
EXPORT_DIMS = {"batch": 3, "seq": 5}
NEGATIVE_MIN_DIFF = 1e-3  # a negative control's chunked run must differ from the full run by more


# ---------------------------------------------------------------------------------------------
# Regions: which elements of a graph input/output hold one recurrent state
# ---------------------------------------------------------------------------------------------
# A region of a rank-r tensor is a list of r items, one per axis:
#   null      every index of the axis (the axis is kept)
#   [b, e]    indices b .. e-1 (the axis is kept, length e-b)
#   k (int)   the single index k (the axis is dropped)
# "axes" names, in order, what each KEPT axis is in the recurrent node's initial_h / initial_c / Y_h / Y_c
# ([num_directions, batch, hidden], layout 0): "dir", "batch" or "hidden". A state axis not named has
# size 1 (it is added by Unsqueeze / Reshape on the way in, dropped on the way out); a name order other
# than dir, batch, hidden means the region holds the state transposed.

STATE_AXES = ("dir", "batch", "hidden")


def region_index(region):
    return tuple(slice(None) if r is None else (slice(r[0], r[1]) if isinstance(r, list) else r) for r in region)


def region_to_state(tensor, region, axes, view=None):
    """The region of `tensor` (of its elements seen row-major as `view`, when given), arranged as a
    [dir, batch, hidden] state."""
    tensor = np.asarray(tensor)
    part = (tensor if view is None else tensor.reshape(view))[region_index(region)]
    assert part.ndim == len(axes), f"region {region} keeps {part.ndim} axes, axes names {axes}"
    order = [axes.index(a) for a in STATE_AXES if a in axes]
    part = part.transpose(order)
    for i, a in enumerate(STATE_AXES):
        if a not in axes:
            part = np.expand_dims(part, i)
    return part


def place(name, region=None, axes=("dir", "batch", "hidden"), view=None):
    """Where a state value lives: a graph input or output `name`, the elements `region` (None: all) of the
    tensor, or of its elements seen row-major with shape `view` (a strided state in a flat cache)."""
    p = {"tensor": name, "region": region, "axes": list(axes)}
    if view is not None:
        p["view"] = list(view)
    return p


def state(node, kind, reads, writes, exposed, reason=None, graph="main", relation=None):
    """One recurrent state and what a correct tool must conclude about it.

    reads / writes: place() of the initial / final value in the main graph's inputs / outputs (None:
    not read from a graph input / not written to a graph output, e.g. overwritten). exposed: True when
    the final value lands exactly where the initial value was read from and nothing else reads or
    writes those elements; then reads == writes is the pair."""
    return {"graph": graph, "node": node, "kind": kind, "reads": reads, "writes": writes, "exposed": exposed,
            "reason": reason, "relation": relation}


def full(t, rank):
    return [None] * rank if t is None else t


def expected_json(states):
    """The manifest's "exposed" field: per state {graph, node, kind, pair | null, reason, relation}."""
    out = []
    for s in states:
        e = {"graph": s["graph"], "node": s["node"], "kind": s["kind"]}
        if s["exposed"]:
            r, w = s["reads"], s["writes"]
            e["pair"] = {"input": r["tensor"], "input_region": r["region"], "output": w["tensor"],
                         "output_region": w["region"], "axes": r["axes"]}
            if "view" in r:
                e["pair"]["view"] = r["view"]
        else:
            e["pair"] = None
            e["reason"] = s["reason"]
            rel = {}
            if s["reads"]:
                rel.update({"input": s["reads"]["tensor"], "input_region": s["reads"]["region"],
                            "input_axes": s["reads"]["axes"]})
            if s["writes"]:
                rel.update({"output": s["writes"]["tensor"], "output_region": s["writes"]["region"],
                            "output_axes": s["writes"]["axes"]})
            if s["relation"]:
                rel["note"] = s["relation"]
            e["relation"] = rel or None
        out.append(e)
    return out


# ---------------------------------------------------------------------------------------------
# One model
# ---------------------------------------------------------------------------------------------


class Spec:
    """A model of models/exposed/: how it was made, its states' expected recognition, its own protocol.

    protocol: {"first_call": [variant, ...], "feedback": [item, ...]} where a variant maps every state
    input to "random" | "zeros" | "empty" (a zero-size batch axis: the authors' "empty means default"),
    and a feedback item {"output", "input", "output_region"?, "input_region"?} copies the output (or its
    region) into the input (or its region) for the next call; regions here are plain index regions
    (no axes: the same element order on both sides)."""

    def __init__(self, name, form, how, note, states, protocol, negative=False, ints=None, extra_ints=None,
                 seq_axes=None, output_seq_axes=None, chunks=None, dims=None, defect=None):
        self.name = name
        self.rel = f"{SUBDIR}/{name}.onnx"
        self.form = form
        self.how = how
        self.note = note
        self.states = states
        self.protocol = protocol
        self.negative = negative
        self.ints = ints or {}
        self.extra_ints = extra_ints or []  # more entries (e.g. the other If branch) with these inputs_int
        self.seq_axes = seq_axes or {"x": 0}
        self.output_seq_axes = output_seq_axes or {"y": 0}
        self.chunks = chunks or CHUNKS
        self.dims = dims or DIMS
        self.defect = defect
        self.min_diff = NEGATIVE_MIN_DIFF  # a negative control's naive chunked run must differ by more
        self.breaks_on = None  # a negative's first-call variants whose naive run breaks (None: all; others stream)
        self.empty_like_zeros = True  # a full run fed the empty state equals one fed zeros
        self.feedback_type_error = False  # the naive feedback is refused by ORT (another element type)
        self.model = None
        self.reference = None  # feeds -> {output: array}

    def entries(self):
        base = dict(exposed=expected_json(self.states), own_protocol=dict(self.protocol, chunks=self.chunks,
                    dims=self.dims, streams=not self.negative), form=self.form, made_by=self.how)
        if self.defect:
            base["defect"] = self.defect
        out = []
        for ints in [self.ints] + self.extra_ints:
            extra = dict(base)
            if ints:
                extra["inputs_int"] = ints
            note = self.note if ints == self.ints else f"{self.note} (inputs_int {json.dumps(ints)})"
            out.append(common.manifest_entry(self.rel, self.dims, self.seq_axes, self.output_seq_axes, self.chunks,
                                             True, False, note, **extra))
        return out


# ---------------------------------------------------------------------------------------------
# PyTorch exports
# ---------------------------------------------------------------------------------------------


def torch_export(spec, module, inputs, outputs, opset, script=False):
    """torch.onnx.export (of torch.jit.script(module) when `script`); declared I/O shapes from the specs."""
    torch.manual_seed(common.name_seed(spec.rel))
    module = module().eval()
    example = torch_inputs(inputs, EXPORT_DIMS, spec.ints, seed=7)
    exported = torch.jit.script(module) if script else module
    dynamic = {name: {a: d for a, d in enumerate(shape) if isinstance(d, str)} for name, shape in inputs + outputs}
    dynamic = {k: v for k, v in dynamic.items() if v}
    buf = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(exported, tuple(example.values()), buf, opset_version=opset,
                          input_names=[n for n, _ in inputs], output_names=[n for n, _ in outputs],
                          dynamic_axes=dynamic)
    model = onnx.load_from_string(buf.getvalue())
    declared = dict(inputs + outputs)
    for vi in list(model.graph.input) + list(model.graph.output):
        common.set_shape(vi, declared[vi.name])
    model.doc_string = spec.note
    spec.model = model
    spec.torch_io = (inputs, outputs)

    def reference(feeds):
        args = [torch.from_numpy(np.asarray(feeds[n])) for n, _ in inputs]
        with torch.no_grad():
            result = module(*args)
        result = result if isinstance(result, tuple) else (result,)
        return {name: r.numpy() for (name, _), r in zip(outputs, result)}

    spec.reference = reference
    return spec


def torch_inputs(inputs, dims, ints, seed):
    rng = np.random.RandomState(seed)
    out = {}
    for name, shape in inputs:
        if name in ints:
            out[name] = torch.tensor(ints[name], dtype=torch.int64)
        else:
            out[name] = torch.from_numpy(rng.uniform(-1, 1, common.concrete_shape(shape, dims)).astype(np.float32))
    return out


# --- form 1: h and c in one tensor ------------------------------------------------------------


class F1Gather(nn.Module):
    """Silero VAD v5's chain: state[0] / state[1] (Gather + Unsqueeze), finals Concat(Unsqueeze(Squeeze(...)))."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4)

    def forward(self, x, state):
        y, (h, c) = self.lstm(x, (state[0].unsqueeze(0), state[1].unsqueeze(0)))
        return y, torch.cat([h.squeeze(0).unsqueeze(0), c.squeeze(0).unsqueeze(0)], 0)


class F1Slice(nn.Module):
    """Rows by slicing (state[0:1], state[1:2]), finals torch.stack([h[0], c[0]]): Gather + Unsqueeze + Concat."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(2, 5)

    def forward(self, x, state):
        y, (h, c) = self.lstm(x, (state[0:1], state[1:2]))
        return y, torch.stack([h[0], c[0]])


class F1Layers(nn.Module):
    """A 2-layer LSTM whose (h0, c0) are state[0] and state[1] of one [2, L, B, H] tensor."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4, num_layers=2)

    def forward(self, x, state):
        y, (h, c) = self.lstm(x, (state[0], state[1]))
        return y, torch.stack([h, c])


def f1_states(node, inp, out, h_row=0, c_row=1):
    h_reg = [h_row, None, None]
    c_reg = [c_row, None, None]
    ax = ("batch", "hidden")
    return [state(node, "h", place(inp, h_reg, ax), place(out, h_reg, ax), True),
            state(node, "c", place(inp, c_reg, ax), place(out, c_reg, ax), True)]


FEED_STATE = {"first_call": [{"state": "random"}, {"state": "zeros"}], "feedback": [{"output": "stateN", "input": "state"}]}


def f1_torch_gather():
    s = Spec("f1_torch_gather", 1, "torch.onnx.export, opset 14",
             "LSTM (I 3, H 4) whose h and c are rows 0 and 1 of one input state [2,batch,4] read by "
             "Unsqueeze(Gather(state, i)); stateN = Concat(Unsqueeze(Squeeze(Y_h)), Unsqueeze(Squeeze(Y_c))) "
             "(Silero VAD v5's chain)", f1_states("/lstm/LSTM", "state", "stateN"), FEED_STATE)
    return torch_export(s, F1Gather, [("x", ["seq", "batch", 3]), ("state", [2, "batch", 4])],
                        [("y", ["seq", "batch", 4]), ("stateN", [2, "batch", 4])], 14)


def f1_torch_slice_op11():
    s = Spec("f1_torch_slice_op11", 1, "torch.onnx.export, opset 11",
             "LSTM (I 2, H 5), h = Slice(state, rows [0:1]), c = rows [1:2] of state [2,batch,5]; stateN = "
             "Concat(Unsqueeze{axes}(Gather(Y_h, 0)), Unsqueeze{axes}(Gather(Y_c, 0))) (torch.stack at opset "
             "11: Squeeze/Unsqueeze take attributes)",
             None, FEED_STATE)
    s.states = [state("/lstm/LSTM", k, place("state", [[r, r + 1], None, None]), place("stateN", [[r, r + 1], None, None]),
                      True) for k, r in (("h", 0), ("c", 1))]
    return torch_export(s, F1Slice, [("x", ["seq", "batch", 2]), ("state", [2, "batch", 5])],
                        [("y", ["seq", "batch", 5]), ("stateN", [2, "batch", 5])], 11)


def f1_torch_layers_op17():
    ax = ("batch", "hidden")
    states = []
    for layer, node in enumerate(("/lstm/LSTM", "/lstm/LSTM_1")):
        for kind, k in (("h", 0), ("c", 1)):
            reg = [k, [layer, layer + 1], None, None]
            states.append(state(node, kind, place("state", reg, ("dir",) + ax), place("stateN", reg, ("dir",) + ax),
                                True))
    s = Spec("f1_torch_layers_op17", 1, "torch.onnx.export, opset 17",
             "2-layer LSTM (I 3, H 4); state [2,2,batch,4] = [h/c, layer, batch, hidden]: h0 = Gather(state, 0), "
             "c0 = Gather(state, 1), the exporter's per-layer Slice rows [l:l+1] of each; stateN = "
             "Concat(Unsqueeze(Concat(Y_h layers)), Unsqueeze(Concat(Y_c layers)))", states, FEED_STATE)
    return torch_export(s, F1Layers, [("x", ["seq", "batch", 3]), ("state", [2, 2, "batch", 4])],
                        [("y", ["seq", "batch", 4]), ("stateN", [2, 2, "batch", 4])], 17)


# --- form 2: inside If branches, from outer scope (TorchScript) ------------------------------


class RateHC(nn.Module):
    """One sample rate: a 2-layer LSTM; an empty fed state (batch axis 0) means 'start from zeros'."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4, num_layers=2)

    def forward(self, x, h, c) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if h.size(1) == 0:
            y, (hn, cn) = self.lstm(x)
        else:
            y, (hn, cn) = self.lstm(x, (h, c))
        return y, hn, cn


class TwoRatesHC(nn.Module):
    """Silero VAD v4's structure: If on the sample rate, in each branch an If on 'is the state empty?', in
    each of those a 2-layer LSTM (zeros, or rows of the main-graph inputs h and c)."""

    def __init__(self):
        super().__init__()
        self.r16 = RateHC()
        self.r8 = RateHC()

    def forward(self, x, sr, h, c):
        if bool(sr[0] == 16000):
            y, hn, cn = self.r16(x, h, c)
        else:
            y, hn, cn = self.r8(x, h, c)
        return y, hn, cn


class RateState(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4)

    def forward(self, x, state) -> Tuple[torch.Tensor, torch.Tensor]:
        if state.size(1) == 0:
            y, (h, c) = self.lstm(x)
        else:
            y, (h, c) = self.lstm(x, (state[0].unsqueeze(0), state[1].unsqueeze(0)))
        return y, torch.stack([h[0], c[0]])


class TwoRatesState(nn.Module):
    """Silero VAD v5's structure: the packed state [2,B,H] (h, c) read in an If per sample rate and, inside,
    an If on 'is the state empty?'; stateN = stack(h, c) built in the rate branch."""

    def __init__(self):
        super().__init__()
        self.r16 = RateState()
        self.r8 = RateState()

    def forward(self, x, sr, state):
        if bool(sr[0] == 16000):
            y, st = self.r16(x, state)
        else:
            y, st = self.r8(x, state)
        return y, st


def f2_ts_rates_hc():
    states = []
    for rate, outer in (("r16", "then_branch"), ("r8", "else_branch")):
        given = f"main//If:{outer}//{rate}/If:else_branch"
        zeros = f"main//If:{outer}//{rate}/If:then_branch"
        for layer, (zn, gn) in enumerate(((f"/{rate}/LSTM", f"/{rate}/LSTM_2"), (f"/{rate}/LSTM_1", f"/{rate}/LSTM_3"))):
            for kind, inp, out in (("h", "h", "hn"), ("c", "c", "cn")):
                reg = [[layer, layer + 1], None, None]
                states.append(state(gn, kind, place(inp, reg), place(out, reg), True, graph=given))
                states.append(state(zn, kind, None, place(out, reg), False, graph=zeros,
                                    reason="default path: runs only when the fed state is empty (batch axis 0); its "
                                    "initial state is computed zeros, its final lands in the same rows of the same "
                                    "output as the exposed node's of the other inner branch",
                                    relation=f"the default of the pair {inp}[{layer}:{layer + 1}] -> "
                                    f"{out}[{layer}:{layer + 1}] (authors' protocol: empty means zeros)"))
    protocol = {"first_call": [{"h": "random", "c": "random"}, {"h": "empty", "c": "empty"}, {"h": "zeros", "c": "zeros"}],
                "feedback": [{"output": "hn", "input": "h"}, {"output": "cn", "input": "c"}]}
    s = Spec("f2_ts_rates_hc", 2, "torch.jit.script + torch.onnx.export, opset 14",
             "Silero v4 structure: If (sr == 16000) -> per rate If (h is empty) -> 2-layer LSTM (I 3, H 4) "
             "started from zeros or from rows [l:l+1] of the main-graph inputs h, c [2,batch,4] read from outer "
             "scope two If levels deep; finals leave through both If levels as hn, cn", states, protocol,
             ints={"sr": [16000]}, extra_ints=[{"sr": [8000]}])
    return torch_export(s, TwoRatesHC, [("x", ["seq", "batch", 3]), ("sr", [1]), ("h", [2, "batch", 4]),
                                        ("c", [2, "batch", 4])],
                        [("y", ["seq", "batch", 4]), ("hn", [2, "batch", 4]), ("cn", [2, "batch", 4])], 14, script=True)


def f2_ts_rates_state():
    states = []
    ax = ("batch", "hidden")
    for rate, outer in (("r16", "then_branch"), ("r8", "else_branch")):
        given = f"main//If:{outer}//{rate}/If:else_branch"
        zeros = f"main//If:{outer}//{rate}/If:then_branch"
        for kind, row in (("h", 0), ("c", 1)):
            reg = [row, None, None]
            states.append(state(f"/{rate}/LSTM_1", kind, place("state", reg, ax), place("stateN", reg, ax), True,
                                graph=given))
            states.append(state(f"/{rate}/LSTM", kind, None, place("stateN", reg, ax), False, graph=zeros,
                                reason="default path: runs only when the fed state is empty (batch axis 0); initial "
                                "state computed zeros; its final lands in the same row of stateN",
                                relation=f"the default of the pair state[{row}] -> stateN[{row}]"))
    protocol = {"first_call": [{"state": "random"}, {"state": "empty"}, {"state": "zeros"}],
                "feedback": [{"output": "stateN", "input": "state"}]}
    s = Spec("f2_ts_rates_state", "1+2", "torch.jit.script + torch.onnx.export, opset 14",
             "Silero v5 structure: If (sr == 16000) -> per rate If (state is empty) -> LSTM (I 3, H 4) started "
             "from zeros or from Unsqueeze(Gather(state, 0 / 1)) of the main-graph input state [2,batch,4] (outer "
             "scope, two If levels deep); stateN = Concat(Unsqueeze(Gather(h, 0)), Unsqueeze(Gather(c, 0))) in the "
             "rate branch", states, protocol, ints={"sr": [16000]}, extra_ints=[{"sr": [8000]}])
    return torch_export(s, TwoRatesState, [("x", ["seq", "batch", 3]), ("sr", [1]), ("state", [2, "batch", 4])],
                        [("y", ["seq", "batch", 4]), ("stateN", [2, "batch", 4])], 14, script=True)


# --- form 3: multi-axis packing ---------------------------------------------------------------


class F3Gather4d(nn.Module):
    """state [B, L, H, 2] (layer on axis 1, h/c on axis 3) indexed like DTLN's keras layout."""

    def __init__(self):
        super().__init__()
        self.l1 = nn.LSTM(3, 4)
        self.l2 = nn.LSTM(4, 4)

    def forward(self, x, state):
        y1, (h1, c1) = self.l1(x, (state[:, 0, :, 0].unsqueeze(0), state[:, 0, :, 1].unsqueeze(0)))
        y2, (h2, c2) = self.l2(y1, (state[:, 1, :, 0].unsqueeze(0), state[:, 1, :, 1].unsqueeze(0)))
        hs = torch.stack([h1[0], h2[0]], 1)
        cs = torch.stack([c1[0], c2[0]], 1)
        return y2, torch.stack([hs, cs], -1)


class F3ReshapeTranspose(nn.Module):
    """state flat [B, 2*L*H]: viewed [B, 2, L, H] and permuted to [2, L, B, H]; written back the same way."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4, num_layers=2)

    def forward(self, x, state):
        s = state.reshape(-1, 2, 2, 4).permute(1, 2, 0, 3)
        y, (h, c) = self.lstm(x, (s[0], s[1]))
        return y, torch.stack([h, c]).permute(2, 0, 1, 3).reshape(-1, 16)


def f3_torch_4d_gather():
    ax = ("batch", "hidden")
    states = [state(node, kind, place("state", [None, layer, None, k], ax), place("stateN", [None, layer, None, k], ax),
                    True)
              for layer, node in enumerate(("/l1/LSTM", "/l2/LSTM")) for kind, k in (("h", 0), ("c", 1))]
    s = Spec("f3_torch_4d_gather", 3, "torch.onnx.export, opset 14",
             "two LSTMs (I 3 -> H 4 -> H 4); state [batch,2,4,2] = [batch, layer, hidden, h/c] (DTLN's keras "
             "layout with a dynamic batch): initial = Unsqueeze(Gather(Gather(state, l, axis 1), k, axis 2)); "
             "stateN = stack(stack(h1, h2, 1), stack(c1, c2, 1), -1) = Concat(Unsqueeze(...), axis -1)", states,
             FEED_STATE)
    return torch_export(s, F3Gather4d, [("x", ["seq", "batch", 3]), ("state", ["batch", 2, 4, 2])],
                        [("y", ["seq", "batch", 4]), ("stateN", ["batch", 2, 4, 2])], 14)


def f3_torch_reshape_transpose():
    # flat index of (h/c k, layer l, hidden j) in one batch row: k*8 + l*4 + j
    states = []
    for layer, node in enumerate(("/lstm/LSTM", "/lstm/LSTM_1")):
        for kind, k in (("h", 0), ("c", 1)):
            lo = k * 8 + layer * 4
            states.append(state(node, kind, place("state", [None, [lo, lo + 4]], ("batch", "hidden")),
                                place("stateN", [None, [lo, lo + 4]], ("batch", "hidden")), True))
    s = Spec("f3_torch_reshape_transpose", 3, "torch.onnx.export, opset 14",
             "2-layer LSTM (I 3, H 4) whose state is one flat [batch,16] tensor: Transpose(Reshape(state, "
             "[-1,2,2,4]), perm [1,2,0,3]) = [h/c, layer, batch, hidden], then Gather (h/c) and the exporter's "
             "per-layer Slice; stateN = Reshape(Transpose(Concat(Unsqueeze(h_n), Unsqueeze(c_n)), perm [2,0,1,3]), "
             "[-1,16]). The region of (layer l, h/c k) is columns [8k+4l, 8k+4l+4)", states, FEED_STATE)
    return torch_export(s, F3ReshapeTranspose, [("x", ["seq", "batch", 3]), ("state", ["batch", 16])],
                        [("y", ["seq", "batch", 4]), ("stateN", ["batch", 16])], 14)


# --- form 4: caches updated in place -----------------------------------------------------------


class F4InPlace(nn.Module):
    """Three GRUs sharing cache [3, B, H]: h_i = cache[i] (read AFTER the previous in-place writes),
    cache[i] = h_n[0] (in place on the input): ScatterND with constant indices [[i]]."""

    def __init__(self):
        super().__init__()
        self.g = nn.ModuleList([nn.GRU(3, 4), nn.GRU(4, 4), nn.GRU(4, 4)])

    def forward(self, x, cache):
        y = x
        for i, g in enumerate(self.g):
            y, h = g(y, cache[i].unsqueeze(0))
            cache[i] = h[0]
        return y, cache


class F4SliceAssign(nn.Module):
    """cache[i:i+1] = h: ScatterND whose indices are computed (Range over Shape(cache)[0], a fixed dim)."""

    def __init__(self):
        super().__init__()
        self.g = nn.ModuleList([nn.GRU(3, 4), nn.GRU(4, 4)])

    def forward(self, x, cache):
        y = x
        for i, g in enumerate(self.g):
            y, h = g(y, cache[i:i + 1])
            cache[i:i + 1] = h
        return y, cache


def f4_states(nodes, rows, inp="cache", out="cache_out"):
    ax = ("batch", "hidden")
    return [state(n, "h", place(inp, [r, None, None], ax), place(out, [r, None, None], ax), True)
            for n, r in zip(nodes, rows)]


FEED_CACHE = {"first_call": [{"cache": "random"}, {"cache": "zeros"}],
              "feedback": [{"output": "cache_out", "input": "cache"}]}


def f4_torch_inplace(opset):
    name = "f4_torch_inplace" + ("" if opset == 14 else f"_op{opset}")
    s = Spec(name, 4, f"torch.onnx.export, opset {opset}",
             "three stacked GRUs (I 3, H 4) sharing cache [3,batch,4]; PyTorch in-place `cache[i] = h[0]`: GRU i "
             "reads Unsqueeze(Gather(C_i, i)) where C_0 = cache and C_{i+1} = ScatterND(C_i, [[i]], "
             "Reshape(Expand(Gather(Y_h, 0), Shape(Gather(C_i, i))), Concat([1], Shape(C_i)[1:]))); cache_out = C_3. "
             "GRU i>0 reads row i of an already updated cache (row i itself still the input's)",
             f4_states(["/g.0/GRU", "/g.1/GRU", "/g.2/GRU"], [0, 1, 2]), FEED_CACHE)
    return torch_export(s, F4InPlace, [("x", ["seq", "batch", 3]), ("cache", [3, "batch", 4])],
                        [("y", ["seq", "batch", 4]), ("cache_out", [3, "batch", 4])], opset)


def f4_torch_slice_assign_op17():
    ax = ("dir", "batch", "hidden")
    states = [state(n, "h", place("cache", [[r, r + 1], None, None], ax), place("cache_out", [[r, r + 1], None, None], ax),
                    True) for n, r in (("/g.0/GRU", 0), ("/g.1/GRU", 1))]
    s = Spec("f4_torch_slice_assign_op17", 4, "torch.onnx.export, opset 17",
             "two stacked GRUs (I 3, H 4) sharing cache [2,batch,4]; `cache[i:i+1] = h`: GRU i reads Slice(C_i, "
             "[i:i+1]); C_{i+1} = ScatterND(C_i, Unsqueeze(Slice(Range(0, Cast(Shape(C_i)[0]), 1), [i:i+1]), -1), "
             "Reshape(Expand(Y_h, Shape(Slice(C_i)))...)): the indices are not a constant but computed from the fixed "
             "dim 2 of the cache (constant once shapes are known)", states, FEED_CACHE)
    return torch_export(s, F4SliceAssign, [("x", ["seq", "batch", 3]), ("cache", [2, "batch", 4])],
                        [("y", ["seq", "batch", 4]), ("cache_out", [2, "batch", 4])], 17)


# --- form 5: direct inputs, packed outputs (and the reverse) -----------------------------------


class F5DirectInPacked(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.LSTM(3, 4)
        self.l2 = nn.LSTM(4, 4)

    def forward(self, x, h1_in, c1_in, h2_in, c2_in):
        y1, (h1, c1) = self.l1(x, (h1_in, c1_in))
        y2, (h2, c2) = self.l2(y1, (h2_in, c2_in))
        return y2, torch.cat([h1, c1, h2, c2], 0)


class F5PackedInDirect(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.LSTM(3, 4)
        self.l2 = nn.LSTM(4, 4)

    def forward(self, x, state_in):
        y1, (h1, c1) = self.l1(x, (state_in[0:1], state_in[1:2]))
        y2, (h2, c2) = self.l2(y1, (state_in[2:3], state_in[3:4]))
        return y2, h1, c1, h2, c2


NOT_ONE_TO_ONE = ("not one-to-one: the initial value is read from one tensor and the final value written to "
                  "another, so feeding an output back as an input does not stream; relation: the caller must copy "
                  "the output region into the input region")


def f5_torch_direct_in_packed_out():
    states, feedback = [], []
    for i, (node, kind) in enumerate((("/l1/LSTM", "h"), ("/l1/LSTM", "c"), ("/l2/LSTM", "h"), ("/l2/LSTM", "c"))):
        inp = f"{kind}{1 if node == '/l1/LSTM' else 2}_in"
        states.append(state(node, kind, place(inp, None), place("state_out", [[i, i + 1], None, None]), False,
                            reason=NOT_ONE_TO_ONE))
        feedback.append({"output": "state_out", "output_region": [[i, i + 1], None, None], "input": inp})
    protocol = {"first_call": [{n: "random" for n in ("h1_in", "c1_in", "h2_in", "c2_in")},
                               {n: "zeros" for n in ("h1_in", "c1_in", "h2_in", "c2_in")}], "feedback": feedback}
    s = Spec("f5_torch_direct_in_packed_out", 5, "torch.onnx.export, opset 14",
             "two LSTMs (I 3 -> H 4 -> H 4) fed by four separate inputs h1_in, c1_in, h2_in, c2_in [1,batch,4] "
             "(used directly as initial_h / initial_c); finals leave packed: state_out = Concat(Y_h1, Y_c1, Y_h2, "
             "Y_c2) [4,batch,4]. Own protocol: split state_out rows 0..3 back into h1_in, c1_in, h2_in, c2_in",
             states, protocol)
    return torch_export(s, F5DirectInPacked, [("x", ["seq", "batch", 3])] +
                        [(n, [1, "batch", 4]) for n in ("h1_in", "c1_in", "h2_in", "c2_in")],
                        [("y", ["seq", "batch", 4]), ("state_out", [4, "batch", 4])], 14)


def f5_torch_packed_in_direct_out():
    states, feedback = [], []
    for i, (node, kind) in enumerate((("/l1/LSTM", "h"), ("/l1/LSTM", "c"), ("/l2/LSTM", "h"), ("/l2/LSTM", "c"))):
        out = f"{kind}{1 if node == '/l1/LSTM' else 2}_out"
        states.append(state(node, kind, place("state_in", [[i, i + 1], None, None]), place(out, None), False,
                            reason=NOT_ONE_TO_ONE))
        feedback.append({"output": out, "input": "state_in", "input_region": [[i, i + 1], None, None]})
    protocol = {"first_call": [{"state_in": "random"}, {"state_in": "zeros"}], "feedback": feedback}
    s = Spec("f5_torch_packed_in_direct_out", 5, "torch.onnx.export, opset 14",
             "the reverse of f5_torch_direct_in_packed_out: one input state_in [4,batch,4] read by Slice rows "
             "[i:i+1] (h1, c1, h2, c2), finals leave as four outputs h1_out, c1_out, h2_out, c2_out [1,batch,4] "
             "(Y_h / Y_c directly). Own protocol: write each output into its rows of state_in", states, protocol)
    return torch_export(s, F5PackedInDirect, [("x", ["seq", "batch", 3]), ("state_in", [4, "batch", 4])],
                        [("y", ["seq", "batch", 4])] + [(n, [1, "batch", 4]) for n in
                                                           ("h1_out", "c1_out", "h2_out", "c2_out")], 14)


# --- negative controls (one defect each) ---------------------------------------------------------


class NegSwapped(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4)

    def forward(self, x, state):
        y, (h, c) = self.lstm(x, (state[0].unsqueeze(0), state[1].unsqueeze(0)))
        return y, torch.cat([c, h], 0)


class NegWrongRows(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 4)

    def forward(self, x, state):
        y, h = self.gru(x, state[0:1])
        return y, torch.cat([state[1:2], h], 0)


class NegNotUpdated(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4)

    def forward(self, x, state):
        y, _ = self.lstm(x, (state[0:1], state[1:2]))
        return y, state


class NegOverlap(nn.Module):
    """Two GRUs both read cache[0] (the second should have read another row) and both write cache_out[0]."""

    def __init__(self):
        super().__init__()
        self.ga = nn.GRU(3, 4)
        self.gb = nn.GRU(3, 4)

    def forward(self, x, cache):
        new = cache.clone()
        ya, ha = self.ga(x, cache[0].unsqueeze(0))
        yb, hb = self.gb(x, cache[0].unsqueeze(0))
        new[0] = ha[0]
        new[0] = hb[0]
        return torch.cat([ya, yb], 2), new


class NegCacheIndex(nn.Module):
    """Two GRUs; GRU 0 reads cache[0] and writes new[0]; GRU 1 reads cache[1] but writes new[2]."""

    def __init__(self):
        super().__init__()
        self.g = nn.ModuleList([nn.GRU(3, 4), nn.GRU(4, 4)])

    def forward(self, x, cache):
        new = cache.clone()
        y, h0 = self.g[0](x, cache[0].unsqueeze(0))
        new[0] = h0[0]
        y, h1 = self.g[1](y, cache[1].unsqueeze(0))
        new[2] = h1[0]
        return y, new


def neg_hc_swapped():
    ax = ("batch", "hidden")
    states = [state("/lstm/LSTM", "h", place("state", [0, None, None], ax), place("stateN", [[1, 2], None, None]), False,
                    reason="final written to row 1 of stateN, initial read from row 0 of state (h and c swapped on the way out)"),
              state("/lstm/LSTM", "c", place("state", [1, None, None], ax), place("stateN", [[0, 1], None, None]), False,
                    reason="final written to row 0 of stateN, initial read from row 1 of state (h and c swapped on the way out)")]
    s = Spec("neg_hc_swapped", "negative (form 1)", "torch.onnx.export, opset 14",
             "f1_torch_gather with h and c swapped on the way out: stateN = Concat(Y_c, Y_h)", states, FEED_STATE,
             negative=True, defect="h and c swapped in the output")
    return torch_export(s, NegSwapped, [("x", ["seq", "batch", 3]), ("state", [2, "batch", 4])],
                        [("y", ["seq", "batch", 4]), ("stateN", [2, "batch", 4])], 14)


def neg_wrong_rows():
    states = [state("/gru/GRU", "h", place("state", [[0, 1], None, None]), place("stateN", [[1, 2], None, None]), False,
                    reason="initial read from rows [0:1] of state, final written to rows [1:2] of stateN; stateN rows "
                    "[0:1] are state rows [1:2] passed through (a shift, like a delay line)")]
    s = Spec("neg_wrong_rows", "negative (form 1)", "torch.onnx.export, opset 14",
             "GRU (I 3, H 4) reading rows [0:1] of state [2,batch,4]; stateN = Concat(Slice(state, [1:2]), Y_h): "
             "the final lands in other rows than the initial was read from", states, FEED_STATE, negative=True,
             defect="final written to other rows than read")
    return torch_export(s, NegWrongRows, [("x", ["seq", "batch", 3]), ("state", [2, "batch", 4])],
                        [("y", ["seq", "batch", 4]), ("stateN", [2, "batch", 4])], 14)


def neg_not_updated():
    states = [state("/lstm/LSTM", k, place("state", [[r, r + 1], None, None]), None, False,
                    reason="the output stateN is Identity(state): the final state is never written (Y_h / Y_c unused), "
                    "so feeding stateN back restarts every call from the first call's state",
                    relation="stateN == state (unchanged)") for k, r in (("h", 0), ("c", 1))]
    s = Spec("neg_not_updated", "negative (form 1)", "torch.onnx.export, opset 14",
             "LSTM (I 3, H 4) reading rows of state [2,batch,4]; the output stateN is the input unchanged "
             "(Identity), the finals are dropped", states, FEED_STATE, negative=True,
             defect="state output is the input unchanged")
    return torch_export(s, NegNotUpdated, [("x", ["seq", "batch", 3]), ("state", [2, "batch", 4])],
                        [("y", ["seq", "batch", 4]), ("stateN", [2, "batch", 4])], 14)


def neg_overlap():
    ax = ("batch", "hidden")
    states = [state("/ga/GRU", "h", place("cache", [0, None, None], ax), None, False,
                    reason="initial read from cache[0], which GRU gb reads too (overlap); its final is written to "
                    "cache_out[0] and then overwritten by gb's"),
              state("/gb/GRU", "h", place("cache", [0, None, None], ax), place("cache_out", [0, None, None], ax), False,
                    reason="final lands where its initial was read (cache[0] -> cache_out[0]), but those elements are "
                    "also ga's initial state (overlap): cache[0] is not gb's alone, so it is not a pair (a correct tool "
                    "gives both states their own inputs)")]
    s = Spec("neg_overlap", "negative (form 4)", "torch.onnx.export, opset 14",
             "two parallel GRUs (I 3, H 4) that BOTH read cache[0] of cache [2,batch,4] (Unsqueeze(Gather)); "
             "new = clone: new[0] = ha, then new[0] = hb (two ScatterND at [[0]]); y = Concat(ya, yb, axis 2); "
             "row 1 of cache is passed through unread", states, FEED_CACHE, negative=True,
             defect="two states read from the same (overlapping) rows")
    return torch_export(s, NegOverlap, [("x", ["seq", "batch", 3]), ("cache", [2, "batch", 4])],
                        [("y", ["seq", "batch", 8]), ("cache_out", [2, "batch", 4])], 14)


def neg_cache_wrong_index():
    ax = ("batch", "hidden")
    states = [state("/g.0/GRU", "h", place("cache", [0, None, None], ax), place("cache_out", [0, None, None], ax), True),
              state("/g.1/GRU", "h", place("cache", [1, None, None], ax), place("cache_out", [2, None, None], ax), False,
                    reason="read from cache[1], written to cache_out[2] (ScatterND index [[2]]); cache_out[1] is cache[1] "
                    "unchanged")]
    s = Spec("neg_cache_wrong_index", "negative (form 4)", "torch.onnx.export, opset 14",
             "two stacked GRUs (I 3, H 4) on cache [3,batch,4] (clone, not in place): GRU 0 reads cache[0] and "
             "writes new[0] (exposed), GRU 1 reads cache[1] but writes new[2]", states, FEED_CACHE, negative=True,
             defect="one cache slot updated at another index than read (GRU 0 stays exposed)")
    return torch_export(s, NegCacheIndex, [("x", ["seq", "batch", 3]), ("cache", [3, "batch", 4])],
                        [("y", ["seq", "batch", 4]), ("cache_out", [3, "batch", 4])], 14)


# ---------------------------------------------------------------------------------------------
# Hand-built models (onnx.helper), following a real exporter's structure
# ---------------------------------------------------------------------------------------------


def make_hb(nodes, inputs, outputs, inits, name, doc, opset, ir):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    model = helper.make_model(graph, producer_name="rnnstate/tools/gen_exposed_models.py",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir
    model.doc_string = doc
    return model


def i64(name, values):
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


def ref_gru(x, w, r, b, h0, lbr):
    """ONNX GRU, forward, one direction, default activations; linear_before_reset `lbr`. Returns (Y, Y_h)."""
    x, w, r, b, h = (np.asarray(a, np.float64) for a in (x, w[0], r[0], b[0], h0[0]))
    hid = r.shape[-1]
    wz, wr, wh = np.split(w, 3)
    rz, rr, rh = np.split(r, 3)
    wb, rb = np.split(b, 2)
    wbz, wbr, wbh = np.split(wb, 3)
    rbz, rbr, rbh = np.split(rb, 3)
    ys = []
    for t in range(x.shape[0]):
        z = common._sigmoid(x[t] @ wz.T + h @ rz.T + wbz + rbz)
        rg = common._sigmoid(x[t] @ wr.T + h @ rr.T + wbr + rbr)
        if lbr:
            ht = np.tanh(x[t] @ wh.T + rg * (h @ rh.T + rbh) + wbh)
        else:
            ht = np.tanh(x[t] @ wh.T + (rg * h) @ rh.T + rbh + wbh)
        h = (1 - z) * ht + z * h
        ys.append(h)
    assert h.shape[-1] == hid
    return np.stack(ys)[:, None], h[None]


def f3_hb_keras_stack_op11():
    """keras2onnx's structure (DTLN model_1): 4-D state, Slice -> Squeeze -> Unsqueeze in, stack out."""
    rng = np.random.RandomState(common.name_seed("f3_hb_keras_stack_op11"))
    i, h = 3, 4
    w1, w2 = common.Weights("LSTM", i, h, rng), common.Weights("LSTM", h, h, rng)
    inits = w1.initializers("lstm_4") + w2.initializers("lstm_5")
    nodes = [helper.make_node("Transpose", ["x"], ["lstm_4_X"], perm=[1, 0, 2], name="transpose_x")]
    for l, prefix in enumerate(("lstm_4", "lstm_5")):
        for k, slot in ((0, "initial_h"), (1, "initial_c")):
            tag = f"{prefix}_{slot}"
            inits += [i64(f"{tag}_starts", [0, l, 0, k]), i64(f"{tag}_ends", [INT64_MAX, l + 1, INT64_MAX, k + 1]),
                      i64(f"{tag}_axes", [0, 1, 2, 3]), i64(f"{tag}_steps", [1, 1, 1, 1])]
            nodes += [helper.make_node("Slice", ["state_in", f"{tag}_starts", f"{tag}_ends", f"{tag}_axes", f"{tag}_steps"],
                                       [f"{tag}_slice"], name=f"{tag}_Slice"),
                      helper.make_node("Squeeze", [f"{tag}_slice"], [f"{tag}_sq"], axes=[1, 3], name=f"{tag}_Squeeze"),
                      helper.make_node("Unsqueeze", [f"{tag}_sq"], [tag], axes=[0], name=f"{tag}_Unsqueeze")]
        x_in = "lstm_4_X" if l == 0 else "lstm_4_Y_sq"
        nodes += [helper.make_node("LSTM", [x_in, f"{prefix}_W", f"{prefix}_R", f"{prefix}_B", "", f"{prefix}_initial_h",
                                            f"{prefix}_initial_c"], [f"{prefix}_Y", f"{prefix}_Y_h", f"{prefix}_Y_c"],
                                   name=prefix, hidden_size=h, direction="forward",
                                   activations=["Sigmoid", "Tanh", "Tanh"]),
                  helper.make_node("Squeeze", [f"{prefix}_Y"], [f"{prefix}_Y_sq"], axes=[1], name=f"{prefix}_Y_Squeeze")]
        for kind in ("h", "c"):
            nodes += [helper.make_node("Squeeze", [f"{prefix}_Y_{kind}"], [f"{prefix}/Identity_{kind}"], axes=[0],
                                       name=f"{prefix}_Squeeze_{kind}"),
                      helper.make_node("Unsqueeze", [f"{prefix}/Identity_{kind}"], [f"stack_{kind}_unsqueeze{l}"], axes=[1],
                                       name=f"stack_{kind}_unsqueeze{l}")]
    nodes += [helper.make_node("Transpose", ["lstm_5_Y_sq"], ["y"], perm=[1, 0, 2], name="transpose_y")]
    for kind in ("h", "c"):
        nodes += [helper.make_node("Concat", [f"stack_{kind}_unsqueeze0", f"stack_{kind}_unsqueeze1"], [f"stack_{kind}"],
                                   axis=1, name=f"stack_{kind}_concat"),
                  helper.make_node("Unsqueeze", [f"stack_{kind}"], [f"stack_2_{kind}"], axes=[-1],
                                   name=f"stack_2_unsqueeze_{kind}")]
    nodes += [helper.make_node("Concat", ["stack_2_h", "stack_2_c"], ["state_out"], axis=-1, name="stack_2_concat")]
    ax = ("batch", "hidden")
    states = [state(node, kind, place("state_in", [None, l, None, k], ax), place("state_out", [None, l, None, k], ax), True)
              for l, node in enumerate(("lstm_4", "lstm_5")) for kind, k in (("h", 0), ("c", 1))]
    s = Spec("f3_hb_keras_stack_op11", 3, "onnx.helper following keras2onnx 1.7 (DTLN model_1.onnx), opset 11, IR 6",
             "two LSTMs (I 3 -> H 4 -> H 4), activations Sigmoid/Tanh/Tanh; x [batch,seq,3] transposed to time-major; "
             "state_in [batch,2,4,2] = [batch, layer, hidden, h/c]: initial = Unsqueeze{0}(Squeeze{1,3}(Slice(state_in, "
             "starts [0,l,0,k], ends [MAX,l+1,MAX,k+1], axes [0,1,2,3], steps 1))); state_out = Concat{-1}("
             "Unsqueeze{-1}(Concat{1}(Unsqueeze{1}(Squeeze{0}(Y_h l)))), same for c)", states,
             {"first_call": [{"state_in": "random"}, {"state_in": "zeros"}],
              "feedback": [{"output": "state_out", "input": "state_in"}]},
             seq_axes={"x": 1}, output_seq_axes={"y": 1})
    s.model = make_hb(nodes, [common.value_info("x", ["batch", "seq", i]), common.value_info("state_in", ["batch", 2, h, 2])],
                      [common.value_info("y", ["batch", "seq", h]), common.value_info("state_out", ["batch", 2, h, 2])],
                      inits, "f3_hb_keras_stack_op11", s.note, 11, 6)

    def reference(f):
        st = f["state_in"]
        xt = f["x"].transpose(1, 0, 2)
        y1, h1, c1 = common.ref_recurrent("LSTM", xt, w1.w, w1.r, w1.b, st[None, :, 0, :, 0], st[None, :, 0, :, 1])
        y2, h2, c2 = common.ref_recurrent("LSTM", y1[:, 0], w2.w, w2.r, w2.b, st[None, :, 1, :, 0], st[None, :, 1, :, 1])
        out = np.stack([np.stack([h1[0], h2[0]], 1), np.stack([c1[0], c2[0]], 1)], -1)
        return {"y": y2[:, 0].transpose(1, 0, 2), "state_out": out}

    s.reference = reference
    return s


def f4_hb_gtcrn_nested_op11():
    """GTCRN's tra_cache (stream/onnx_models/gtcrn_simple.onnx): a [2, blocks, 1, B, H] cache, a nested
    Gather per block, ScatterND back into the block, the block ScatterND'ed back into the cache."""
    rng = np.random.RandomState(common.name_seed("f4_hb_gtcrn_nested_op11"))
    i, h = 3, 4
    grus = [common.Weights("GRU", i if n == 0 else h, h, rng) for n in range(4)]
    inits = []
    for n, wt in enumerate(grus):
        inits += wt.initializers(f"gru{n}")
    inits += [i64(f"idx{k}", [[k]]) for k in range(2)] + [i64(f"g{k}", k) for k in range(2)]
    inits += [i64("shape_h", [1, 1, -1, h]), i64("shape_blk", [1, 2, 1, -1, h])]
    nodes, x_in, cache = [], "x", "cache"
    names = []
    for part in range(2):                       # encoder block, decoder block (GTCRN's tra_cache[0], [1])
        blk = f"blk{part}"
        nodes.append(helper.make_node("Gather", [cache, f"g{part}"], [blk], axis=0, name=f"Gather_blk{part}"))
        for j in range(2):                      # two GRUs per block, GTCRN's tra_cache[p][j] = ...
            n = part * 2 + j
            names.append(f"GRU_{n}")
            nodes += [helper.make_node("Gather", [blk, f"g{j}"], [f"hidden.{n}"], axis=0, name=f"Gather_h{n}"),
                      helper.make_node("GRU", [x_in, f"gru{n}_W", f"gru{n}_R", f"gru{n}_B", "", f"hidden.{n}"],
                                       [f"gru{n}_Y", f"gru{n}_Y_h"], name=f"GRU_{n}", hidden_size=h, linear_before_reset=1),
                      helper.make_node("Squeeze", [f"gru{n}_Y"], [f"gru{n}_y"], axes=[1], name=f"Squeeze_{n}"),
                      helper.make_node("Reshape", [f"gru{n}_Y_h", "shape_h"], [f"upd{n}"], name=f"Reshape_{n}"),
                      helper.make_node("ScatterND", [blk, f"idx{j}", f"upd{n}"], [f"{blk}_{j}"], name=f"ScatterND_blk{n}")]
            blk, x_in = f"{blk}_{j}", f"gru{n}_y"
        nodes += [helper.make_node("Reshape", [blk, "shape_blk"], [f"blkupd{part}"], name=f"Reshape_blk{part}"),
                  helper.make_node("ScatterND", [cache, f"idx{part}", f"blkupd{part}"],
                                   ["cache_out" if part == 1 else f"cache_{part}"], name=f"ScatterND_cache{part}")]
        cache = f"cache_{part}"
    nodes.append(helper.make_node("Identity", [x_in], ["y"], name="Identity_y"))
    ax = ("dir", "batch", "hidden")
    states = [state(f"GRU_{p * 2 + j}", "h", place("cache", [p, j, None, None, None], ax),
                    place("cache_out", [p, j, None, None, None], ax), True) for p in range(2) for j in range(2)]
    s = Spec("f4_hb_gtcrn_nested_op11", 4, "onnx.helper following GTCRN's stream export (torch 1.11, opset 11, "
             "onnx-simplified), opset 11, IR 6",
             "four stacked GRUs (I 3 -> H 4, linear_before_reset 1) sharing cache [2,2,1,batch,4] = [block, GRU, dir, "
             "batch, hidden]: blk = Gather(C, p); GRU reads Gather(blk_j, j); blk_{j+1} = ScatterND(blk_j, [[j]], "
             "Reshape(Y_h, [1,1,-1,4])); C' = ScatterND(C, [[p]], Reshape(blk_2, [1,2,1,-1,4])); block 1 is read from "
             "the cache already updated at block 0; cache_out = the last ScatterND", states, FEED_CACHE)
    s.model = make_hb(nodes, [common.value_info("x", ["seq", "batch", i]), common.value_info("cache", [2, 2, 1, "batch", h])],
                      [common.value_info("y", ["seq", "batch", h]), common.value_info("cache_out", [2, 2, 1, "batch", h])],
                      inits, "f4_hb_gtcrn_nested_op11", s.note, 11, 6)

    def reference(f):
        c = f["cache"]
        out = np.array(c, np.float64)
        xin = f["x"]
        for p in range(2):
            for j in range(2):
                wt = grus[p * 2 + j]
                y, hn = ref_gru(xin, wt.w, wt.r, wt.b, c[p, j], 1)
                out[p, j] = hn
                xin = y[:, 0]
        return {"y": xin, "cache_out": out}

    s.reference = reference
    return s


def f4_hb_hidden_split():
    """GTCRN's inter_cache: one cache row per layer whose hidden axis is split between two GRUs."""
    rng = np.random.RandomState(common.name_seed("f4_hb_hidden_split"))
    h, i = 3, 4                                  # each GRU: hidden 3; x [seq, batch, 4] split into 2 + 2
    grus = [common.Weights("GRU", 2 if n < 2 else h, h, rng) for n in range(4)]
    inits = []
    for n, wt in enumerate(grus):
        inits += wt.initializers(f"gru{n}")
    inits += [i64("idx0", [[0]]), i64("idx1", [[1]]), i64("g0", 0), i64("g1", 1), i64("ax_last", [-1]),
              i64("lo0", [0]), i64("hi0", [h]), i64("lo1", [h]), i64("hi1", [2 * h]), i64("xs0", [0]), i64("xs1", [2]),
              i64("xs2", [4]), i64("xh1", [h]), i64("xh2", [2 * h]), i64("shape_row", [1, 1, -1, 2 * h]), i64("ax1", [1])]
    nodes, cache, x_in = [], "cache", "x"
    states = []
    ax = ("dir", "batch", "hidden")
    for layer in range(2):
        row = f"row{layer}"
        nodes.append(helper.make_node("Gather", [cache, f"g{layer}"], [row], axis=0, name=f"Gather_row{layer}"))
        ys, hs = [], []
        for half in range(2):
            n = layer * 2 + half
            lo, hi = (f"lo{half}", f"hi{half}")
            xlo, xhi = (("xs0", "xs1"), ("xs1", "xs2"))[half] if layer == 0 else (("xs0", "xh1"), ("xh1", "xh2"))[half]
            nodes += [helper.make_node("Slice", [row, lo, hi, "ax_last"], [f"h0_{n}"], name=f"Slice_h{n}"),
                      helper.make_node("Slice", [x_in, xlo, xhi, "ax_last"], [f"x_{n}"], name=f"Slice_x{n}"),
                      helper.make_node("GRU", [f"x_{n}", f"gru{n}_W", f"gru{n}_R", f"gru{n}_B", "", f"h0_{n}"],
                                       [f"Y_{n}", f"Y_h_{n}"], name=f"GRU_{n}", hidden_size=h),
                      helper.make_node("Squeeze", [f"Y_{n}", "ax1"], [f"y_{n}"], name=f"Squeeze_{n}")]
            ys.append(f"y_{n}")
            hs.append(f"Y_h_{n}")
            reg = [layer, None, None, [half * h, (half + 1) * h]]
            states.append(state(f"GRU_{n}", "h", place("cache", reg, ax), place("cache_out", reg, ax), True))
        nodes += [helper.make_node("Concat", ys, [f"ycat{layer}"], axis=-1, name=f"Concat_y{layer}"),
                  helper.make_node("Concat", hs, [f"hcat{layer}"], axis=-1, name=f"Concat_h{layer}"),
                  helper.make_node("Reshape", [f"hcat{layer}", "shape_row"], [f"upd{layer}"], name=f"Reshape_{layer}"),
                  helper.make_node("ScatterND", [cache, f"idx{layer}", f"upd{layer}"],
                                   ["cache_out" if layer == 1 else f"cache_{layer}"], name=f"ScatterND_{layer}")]
        cache, x_in = f"cache_{layer}", f"ycat{layer}"
    nodes.append(helper.make_node("Identity", [x_in], ["y"], name="Identity_y"))
    s = Spec("f4_hb_hidden_split", 4, "onnx.helper following GTCRN's inter_cache (grouped GRU), opset 14",
             "2 layers x 2 GRUs (hidden 3 each; x [seq,batch,4] split 2+2 on the last axis, then 3+3): cache "
             "[2,1,batch,6] = [layer, dir, batch, 2 x hidden]; GRU (l, half) reads Slice(Gather(C_l, l), [3 half : "
             "3 half + 3], axis -1); C_{l+1} = ScatterND(C_l, [[l]], Reshape(Concat(Y_h a, Y_h b, axis -1), "
             "[1,1,-1,6])); layer 1 reads the cache already updated at row 0", states, FEED_CACHE)
    s.model = make_hb(nodes, [common.value_info("x", ["seq", "batch", i]), common.value_info("cache", [2, 1, "batch", 2 * h])],
                      [common.value_info("y", ["seq", "batch", 2 * h]), common.value_info("cache_out", [2, 1, "batch", 2 * h])],
                      inits, "f4_hb_hidden_split", s.note, 14, 7)

    def reference(f):
        c = f["cache"]
        out = np.array(c, np.float64)
        xin = f["x"]
        for layer in range(2):
            ys = []
            for half in range(2):
                wt = grus[layer * 2 + half]
                w = xin.shape[-1] // 2
                y, hn = ref_gru(xin[..., half * w:(half + 1) * w], wt.w, wt.r, wt.b,
                                c[layer][..., half * h:(half + 1) * h], 0)
                out[layer][..., half * h:(half + 1) * h] = hn
                ys.append(y[:, 0])
            xin = np.concatenate(ys, -1)
        return {"y": xin, "cache_out": out}

    s.reference = reference
    return s


def f4_hb_flat_cache_op11():
    """UL-UNAS's inter_cache: a flat cache [1, N] holding, block by block, the states of grouped GRUs whose
    batch is not the model's (frequency groups): each GRU's h[0, b, k] = cache[0, block + 2H*b + half*H + k],
    strided on the batch; a box of the view [1, 2*G, 2H] of the cache."""
    name = "f4_hb_flat_cache_op11"
    rng = np.random.RandomState(common.name_seed(name))
    g, h = 4, 3                                  # GRU batch (frequency groups), hidden per GRU
    block = g * 2 * h                            # one block: 2 GRUs x [1, g, h]
    grus = [common.Weights("GRU", 1 if n < 2 else h, h, rng) for n in range(4)]
    inits = []
    for n, wt in enumerate(grus):
        inits += wt.initializers(f"gru{n}")
    inits += [i64("ax1", [1]), i64("ax_last", [-1]), i64("one", [1]), i64("block_shape", [1, g, 2 * h]),
              i64("flat", [1, -1]), i64("c0", [0]), i64("c1", [block]), i64("c2", [2 * block]),
              i64("lo0", [0]), i64("hi0", [h]), i64("lo1", [h]), i64("hi1", [2 * h]),
              i64("x0", [0]), i64("x1", [1]), i64("x2", [2])]
    nodes, states, x_in, flats = [], [], "x", []
    ax, view = ("batch", "hidden"), [1, 2 * g, 2 * h]
    for b in range(2):
        nodes += [helper.make_node("Slice", ["cache", f"c{b}", f"c{b + 1}", "ax1", "one"], [f"blk{b}"],
                                   name=f"Slice_block{b}"),
                  helper.make_node("Reshape", [f"blk{b}", "block_shape"], [f"V{b}"], name=f"Reshape_block{b}")]
        ys, hs = [], []
        for half in range(2):
            n = 2 * b + half
            xlo, xhi = (("x0", "x1"), ("x1", "x2"))[half] if b == 0 else (("lo0", "hi0"), ("lo1", "hi1"))[half]
            nodes += [helper.make_node("Slice", [f"V{b}", f"lo{half}", f"hi{half}", "ax_last", "one"], [f"h0_{n}"],
                                       name=f"Slice_h{n}"),
                      helper.make_node("Slice", [x_in, xlo, xhi, "ax_last", "one"], [f"x_{n}"], name=f"Slice_x{n}"),
                      helper.make_node("GRU", [f"x_{n}", f"gru{n}_W", f"gru{n}_R", f"gru{n}_B", "", f"h0_{n}"],
                                       [f"Y_{n}", f"Y_h_{n}"], name=f"GRU_{n}", hidden_size=h, linear_before_reset=1),
                      helper.make_node("Squeeze", [f"Y_{n}"], [f"y_{n}"], axes=[1], name=f"Squeeze_{n}")]
            ys.append(f"y_{n}")
            hs.append(f"Y_h_{n}")
            reg = [0, [b * g, (b + 1) * g], [half * h, (half + 1) * h]]
            states.append(state(f"GRU_{n}", "h", place("cache", reg, ax, view), place("cache_out", reg, ax, view), True))
        nodes += [helper.make_node("Concat", ys, [f"ycat{b}"], axis=-1, name=f"Concat_y{b}"),
                  helper.make_node("Concat", hs, [f"hcat{b}"], axis=-1, name=f"Concat_h{b}"),
                  helper.make_node("Reshape", [f"hcat{b}", "flat"], [f"flat{b}"], name=f"Reshape_flat{b}")]
        flats.append(f"flat{b}")
        x_in = f"ycat{b}"
    nodes += [helper.make_node("Concat", flats, ["cache_out"], axis=1, name="Concat_cache"),
              helper.make_node("Identity", [x_in], ["y"], name="Identity_y")]
    s = Spec(name, 4, "onnx.helper following UL-UNAS's inter_cache (flat, grouped GRUs), opset 11",
             "2 blocks x 2 GRUs (hidden 3, linear_before_reset; GRU batch 4 = frequency groups, not the model's); "
             "cache [1,48] flat: block l is V = Reshape(Slice(cache, [24l:24l+24], axis 1), [1,4,6]), GRU (l, half) "
             "reads Slice(V, [3 half : 3 half + 3], axis -1); cache_out = Concat(Reshape(Concat(Y_h a, Y_h b, axis "
             "-1), [1,-1]) per block, axis 1). h[0,b,k] = cache[0, 24l + 6b + 3half + k]: strided on the batch, a "
             "box of the view [1,8,6]", states, FEED_CACHE, dims={"seq": 8})
    s.model = make_hb(nodes, [common.value_info("x", ["seq", g, 2]), common.value_info("cache", [1, 2 * block])],
                      [common.value_info("y", ["seq", g, 2 * h]), common.value_info("cache_out", [1, 2 * block])],
                      inits, name, s.note, 11, 6)

    def reference(f):
        c = np.asarray(f["cache"]).reshape(view)
        out = np.array(c, np.float64)
        xin = f["x"]
        for b in range(2):
            ys = []
            for half in range(2):
                wt = grus[2 * b + half]
                w = xin.shape[-1] // 2
                rows, cols = slice(b * g, (b + 1) * g), slice(half * h, (half + 1) * h)
                y, hn = ref_gru(xin[..., half * w:(half + 1) * w], wt.w, wt.r, wt.b, c[:, rows, cols], 1)
                out[:, rows, cols] = hn
                ys.append(y[:, 0])
            xin = np.concatenate(ys, -1)
        return {"y": xin, "cache_out": out.reshape(1, 2 * block)}

    s.reference = reference
    return s


def cast_model(name, out_type, negative):
    """LSTM on state [2,batch,4] read through Cast(Cast(Gather(state, i), DOUBLE), FLOAT) (lossless), written
    through Cast(Cast(Concat, out_type), FLOAT): DOUBLE (lossless) or BFLOAT16 (lossy)."""
    rng = np.random.RandomState(common.name_seed(name))
    i, h = 3, 4
    wt = common.Weights("LSTM", i, h, rng)
    inits = wt.initializers("lstm") + [i64("row0", 0), i64("row1", 1), i64("axes0", [0])]
    nodes = []
    for kind, row in (("h", "row0"), ("c", "row1")):
        nodes += [helper.make_node("Gather", ["state", row], [f"{kind}_g"], axis=0, name=f"Gather_{kind}"),
                  helper.make_node("Cast", [f"{kind}_g"], [f"{kind}_d"], to=TensorProto.DOUBLE, name=f"Cast_{kind}_d"),
                  helper.make_node("Cast", [f"{kind}_d"], [f"{kind}_f"], to=TensorProto.FLOAT, name=f"Cast_{kind}_f"),
                  helper.make_node("Unsqueeze", [f"{kind}_f", "axes0"], [f"{kind}0"], name=f"Unsqueeze_{kind}")]
    nodes += [helper.make_node("LSTM", ["x", "lstm_W", "lstm_R", "lstm_B", "", "h0", "c0"], ["Y", "Y_h", "Y_c"],
                               name="lstm", hidden_size=h),
              helper.make_node("Squeeze", ["Y", "axes1"], ["y"], name="Squeeze_y"),
              helper.make_node("Concat", ["Y_h", "Y_c"], ["hc"], axis=0, name="Concat_hc"),
              helper.make_node("Cast", ["hc"], ["hc_cast"], to=out_type, name="Cast_out"),
              helper.make_node("Cast", ["hc_cast"], ["stateN"], to=TensorProto.FLOAT, name="Cast_back")]
    inits.append(i64("axes1", [1]))
    ax = ("batch", "hidden")
    if negative:
        states = [state("lstm", k, place("state", [r, None, None], ax), None, False,
                        reason="the final goes out through Cast to BFLOAT16 and back: stateN row %d is the final rounded "
                        "to 8 significant bits, not the final (a lossy Cast)" % r,
                        relation=f"stateN[{r}] = bfloat16-rounded final; region state[{r}] -> stateN[{r}]")
                  for k, r in (("h", 0), ("c", 1))]
    else:
        states = f1_states("lstm", "state", "stateN")
    return wt, nodes, inits, states, (i, h)


def f1_hb_lossless_cast():
    name = "f1_hb_lossless_cast"
    wt, nodes, inits, states, (i, h) = cast_model(name, TensorProto.DOUBLE, False)
    s = Spec(name, 1, "onnx.helper, opset 14",
             "LSTM (I 3, H 4), state [2,batch,4]: initial = Unsqueeze(Cast<float>(Cast<double>(Gather(state, i)))), "
             "stateN = Cast<float>(Cast<double>(Concat(Y_h, Y_c))): float -> double -> float is lossless, so the "
             "state is exposed through the Casts", states, FEED_STATE)
    return hb_cast_finish(s, wt, nodes, inits, i, h, None)


def neg_lossy_cast():
    name = "neg_lossy_cast"
    wt, nodes, inits, states, (i, h) = cast_model(name, TensorProto.BFLOAT16, True)
    s = Spec(name, "negative (form 1)", "onnx.helper, opset 14",
             "f1_hb_lossless_cast whose output goes through Cast<bfloat16> and back: stateN holds the final state "
             "rounded to bfloat16", states, FEED_STATE, negative=True, defect="lossy Cast on the way out")
    s.min_diff = common.TOLERANCE  # rounding to bfloat16 perturbs the state by ~1e-3 relative: small effect
    return hb_cast_finish(s, wt, nodes, inits, i, h, to_bfloat16)


def to_bfloat16(a):
    """float32 -> bfloat16 -> float32, round to nearest even (ONNX Runtime's Cast)."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def hb_cast_finish(s, wt, nodes, inits, i, h, round_type):
    s.model = make_hb(nodes, [common.value_info("x", ["seq", "batch", i]), common.value_info("state", [2, "batch", h])],
                      [common.value_info("y", ["seq", "batch", h]), common.value_info("stateN", [2, "batch", h])],
                      inits, s.name, s.note, 14, 7)

    def reference(f):
        st = f["state"]
        y, yh, yc = common.ref_recurrent("LSTM", f["x"], wt.w, wt.r, wt.b, st[0:1], st[1:2])
        out = np.concatenate([yh, yc]).astype(np.float32)
        if round_type is not None:
            out = round_type(out)
        return {"y": y[:, 0], "stateN": out}

    s.reference = reference
    return s


# --- negative controls found by the audit of issue 9 (and one positive of each lesser gap) ---------


def hb_gru_cache(name, rows, cache_rows, scatter, doc, opset=14, ir=7):
    """GRUs (I 3, H 4) g0.. reading Unsqueeze(Gather(cache, rows[i])) of cache [cache_rows, batch, 4];
    `scatter(nodes, finals)` writes cache_out; y = Squeeze(sum of the Ys). Returns (model, weights, nodes)."""
    rng = np.random.RandomState(common.name_seed(name))
    i, h = 3, 4
    grus = [common.Weights("GRU", i, h, rng) for _ in rows]
    inits = [i64("axes0", [0]), i64("axes1", [1])]
    nodes, ys, finals = [], [], []
    for n, (wt, row) in enumerate(zip(grus, rows)):
        inits += wt.initializers(f"g{n}") + [i64(f"row{n}", row)]
        nodes += [helper.make_node("Gather", ["cache", f"row{n}"], [f"g{n}_h0s"], axis=0, name=f"Gather_{n}"),
                  helper.make_node("Unsqueeze", [f"g{n}_h0s", "axes0"], [f"g{n}_h0"], name=f"Unsqueeze_{n}"),
                  helper.make_node("GRU", ["x", f"g{n}_W", f"g{n}_R", f"g{n}_B", "", f"g{n}_h0"], [f"g{n}_Y", f"g{n}_Y_h"],
                                   name=f"g{n}", hidden_size=h)]
        ys.append(f"g{n}_Y")
        finals.append(f"g{n}_Y_h")
    inits += scatter(nodes, finals)
    y = ys[0]
    if len(ys) > 1:
        nodes.append(helper.make_node("Sum", ys, ["ysum"], name="Sum_y"))
        y = "ysum"
    nodes.append(helper.make_node("Squeeze", [y, "axes1"], ["y"], name="Squeeze_y"))
    model = make_hb(nodes, [common.value_info("x", ["seq", "batch", i]), common.value_info("cache", [cache_rows, "batch", h])],
                    [common.value_info("y", ["seq", "batch", h]), common.value_info("cache_out", [cache_rows, "batch", h])],
                    inits, name, doc, opset, ir)
    return model, grus


def neg_scatter_add():
    name = "neg_scatter_add"

    def scatter(nodes, finals):
        nodes.append(helper.make_node("ScatterND", ["cache", "idx0", finals[0]], ["cache_out"], name="ScatterND_add",
                                      reduction="add"))
        return [i64("idx0", [[0]])]

    ax = ("batch", "hidden")
    states = [state("g0", "h", place("cache", [0, None, None], ax), None, False,
                    reason="cache_out = ScatterND(cache, [[0]], Y_h, reduction 'add'): row 0 is cache[0] + the final, "
                    "not the final (only reduction 'none' writes)", relation="cache_out[0] = cache[0] + final")]
    s = Spec(name, "negative (form 4)", "onnx.helper, opset 16",
             "GRU (I 3, H 4) reading Unsqueeze(Gather(cache, 0)) of cache [1,batch,4]; cache_out = ScatterND(cache, "
             "[[0]], Y_h) with reduction 'add': the final is added to the old row instead of written", states,
             FEED_CACHE, negative=True, defect="ScatterND adds the final to the cache (reduction 'add')")
    s.model, (wt,) = hb_gru_cache(name, [0], 1, scatter, s.note, opset=16, ir=8)

    def reference(f):
        y, hn = ref_gru(f["x"], wt.w, wt.r, wt.b, f["cache"][0:1], 0)
        return {"y": y[:, 0], "cache_out": f["cache"] + hn}

    s.reference = reference
    return s


def neg_scatter_duplicate():
    name = "neg_scatter_duplicate"

    def scatter(nodes, finals):
        nodes += [helper.make_node("Concat", finals, ["updates"], axis=0, name="Concat_updates"),
                  helper.make_node("ScatterND", ["cache", "rows", "updates"], ["cache_out"], name="ScatterND_dup")]
        return [i64("rows", [[0], [0]])]

    ax = ("batch", "hidden")
    states = [state(f"g{n}", "h", place("cache", [n, None, None], ax), None, False,
                    reason="cache_out = ScatterND(cache, [[0], [0]], Concat(Y_h g0, Y_h g1)): both finals are written "
                    "to row 0; with duplicate indices ONNX leaves the result undefined (ONNX Runtime keeps the later "
                    "one), so no final is known to land anywhere", relation="cache_out[0] = one of the finals")
              for n in range(2)]
    s = Spec(name, "negative (form 4)", "onnx.helper, opset 14",
             "two GRUs (I 3, H 4) reading rows 0 and 1 of cache [2,batch,4]; cache_out = ScatterND(cache, [[0], [0]], "
             "Concat(Y_h 0, Y_h 1)): duplicate indices, both finals written to row 0; y = Squeeze(Y 0 + Y 1)", states,
             FEED_CACHE, negative=True, defect="ScatterND with duplicate indices")
    s.model, grus = hb_gru_cache(name, [0, 1], 2, scatter, s.note)

    def reference(f):
        outs = [ref_gru(f["x"], wt.w, wt.r, wt.b, f["cache"][n:n + 1], 0) for n, wt in enumerate(grus)]
        out = np.array(f["cache"], np.float64)
        out[0] = outs[1][1][0]  # ONNX Runtime applies the updates in order: the last write stays
        return {"y": (outs[0][0] + outs[1][0])[:, 0], "cache_out": out}

    s.reference = reference
    return s


def hb_lstm_state(name, write, doc, out_type=TensorProto.FLOAT, read=None, extra_inits=()):
    """LSTM (I 3, H 4) on state [2,batch,4]: initial = Unsqueeze(Gather(state, 0 / 1)) (or `read(nodes)`
    making h0, c0); `write(nodes)` makes stateN from Y_h, Y_c. Returns (model, weights)."""
    rng = np.random.RandomState(common.name_seed(name))
    i, h = 3, 4
    wt = common.Weights("LSTM", i, h, rng)
    inits = wt.initializers("lstm") + [i64("row0", 0), i64("row1", 1), i64("axes0", [0]), i64("axes1", [1])]
    inits += list(extra_inits)
    nodes = []
    if read is None:
        for kind, row in (("h", "row0"), ("c", "row1")):
            nodes += [helper.make_node("Gather", ["state", row], [f"{kind}_g"], axis=0, name=f"Gather_{kind}"),
                      helper.make_node("Unsqueeze", [f"{kind}_g", "axes0"], [f"{kind}0"], name=f"Unsqueeze_{kind}")]
    else:
        read(nodes)
    nodes += [helper.make_node("LSTM", ["x", "lstm_W", "lstm_R", "lstm_B", "", "h0", "c0"], ["Y", "Y_h", "Y_c"],
                               name="lstm", hidden_size=h),
              helper.make_node("Squeeze", ["Y", "axes1"], ["y"], name="Squeeze_y")]
    write(nodes)
    model = make_hb(nodes, [common.value_info("x", ["seq", "batch", i]), common.value_info("state", [2, "batch", h])],
                    [common.value_info("y", ["seq", "batch", h]), common.value_info("stateN", [2, "batch", h], out_type)],
                    inits, name, doc, 14, 7)
    return model, wt


def lstm_reference(wt, finish):
    def reference(f):
        st = f["state"]
        y, yh, yc = common.ref_recurrent("LSTM", f["x"], wt.w, wt.r, wt.b, st[0:1], st[1:2])
        return {"y": y[:, 0], "stateN": finish(st, yh, yc)}
    return reference


def neg_slice_negative_end():
    """The audit's p2: GRU reads state[1:2]; stateN = Concat(Slice(Concat(state[0:1], Y_h), 0, -1), state[1:2])."""
    name = "neg_slice_negative_end"
    rng = np.random.RandomState(common.name_seed(name))
    i, h = 3, 4
    wt = common.Weights("GRU", i, h, rng)
    inits = wt.initializers("gru") + [i64("s0", [0]), i64("s1", [1]), i64("e1", [1]), i64("e2", [2]), i64("em1", [-1]),
                                     i64("a0", [0]), i64("axes1", [1])]
    nodes = [helper.make_node("Slice", ["state", "s1", "e2", "a0"], ["h0"], name="Slice_h0"),
             helper.make_node("GRU", ["x", "gru_W", "gru_R", "gru_B", "", "h0"], ["Y", "Y_h"], name="gru", hidden_size=h),
             helper.make_node("Slice", ["state", "s0", "e1", "a0"], ["p"], name="Slice_row0"),
             helper.make_node("Concat", ["p", "Y_h"], ["t"], axis=0, name="Concat_t"),
             helper.make_node("Slice", ["t", "s0", "em1", "a0"], ["u"], name="Slice_negative_end"),
             helper.make_node("Concat", ["u", "h0"], ["stateN"], axis=0, name="Concat_stateN"),
             helper.make_node("Squeeze", ["Y", "axes1"], ["y"], name="Squeeze_y")]
    states = [state("gru", "h", place("state", [[1, 2], None, None]), None, False,
                    reason="stateN = Concat(Slice(Concat(state[0:1], Y_h), 0, -1), state[1:2]): the end -1 drops Y_h, "
                    "so stateN is the input unchanged and the final is written nowhere",
                    relation="stateN == state (unchanged)")]
    s = Spec(name, "negative (form 1)", "onnx.helper, opset 14",
             "GRU (I 3, H 4) reading rows [1:2] of state [2,batch,4]; T = Concat(state[0:1], Y_h); stateN = "
             "Concat(T[0:-1], state[1:2]): the negative end drops the final", states, FEED_STATE, negative=True,
             defect="Slice with a negative end drops the final")
    s.model = make_hb(nodes, [common.value_info("x", ["seq", "batch", i]), common.value_info("state", [2, "batch", h])],
                      [common.value_info("y", ["seq", "batch", h]), common.value_info("stateN", [2, "batch", h])],
                      inits, name, s.note, 14, 7)

    def reference(f):
        y, _ = ref_gru(f["x"], wt.w, wt.r, wt.b, f["state"][1:2], 0)
        return {"y": y[:, 0], "stateN": f["state"]}

    s.reference = reference
    return s


def neg_state_double_out():
    name = "neg_state_double_out"

    def write(nodes):
        nodes += [helper.make_node("Concat", ["Y_h", "Y_c"], ["hc"], axis=0, name="Concat_hc"),
                  helper.make_node("Cast", ["hc"], ["stateN"], to=TensorProto.DOUBLE, name="Cast_double")]

    ax = ("batch", "hidden")
    states = [state("lstm", k, place("state", [r, None, None], ax), None, False,
                    reason="stateN holds the final exactly (Cast to DOUBLE is lossless) but is DOUBLE while the input "
                    "state is FLOAT: feeding the output back as the input needs a conversion",
                    relation=f"stateN[{r}] = final as DOUBLE; region state[{r}] -> stateN[{r}]") for k, r in (("h", 0), ("c", 1))]
    s = Spec(name, "negative (form 1)", "onnx.helper, opset 14",
             "LSTM (I 3, H 4) reading rows of state [2,batch,4] (FLOAT) through Unsqueeze(Gather); stateN = "
             "Cast<DOUBLE>(Concat(Y_h, Y_c)) [2,batch,4] DOUBLE: the same elements, another element type", states,
             FEED_STATE, negative=True, defect="state output of another element type")
    s.feedback_type_error = True
    s.model, wt = hb_lstm_state(name, write, s.note, out_type=TensorProto.DOUBLE)
    s.reference = lstm_reference(wt, lambda st, yh, yc: np.concatenate([yh, yc]).astype(np.float64))
    return s


def dropout_training_mode():
    name = "dropout_training_mode"

    def write(nodes):
        nodes += [helper.make_node("Dropout", ["Y_h", "ratio", "training"], ["Y_h_dropped"], name="Dropout_h"),
                  helper.make_node("Concat", ["Y_h_dropped", "Y_c"], ["stateN"], axis=0, name="Concat_hc")]

    ax = ("batch", "hidden")
    states = [state("lstm", "h", place("state", [0, None, None], ax), None, False,
                    reason="Y_h reaches stateN through Dropout(ratio 0.5, training_mode true): by the ONNX spec it drops "
                    "elements at random (ONNX Runtime's inference sessions leave Dropout out, so the model streams "
                    "there; another runtime need not)", relation="stateN[0] = Dropout(final)"),
              state("lstm", "c", place("state", [1, None, None], ax), place("stateN", [1, None, None], ax), True)]
    s = Spec(name, 1, "onnx.helper, opset 14",
             "LSTM (I 3, H 4) on state [2,batch,4] (Unsqueeze(Gather)); stateN = Concat(Dropout(Y_h, 0.5, "
             "training_mode=true), Y_c): h is not claimed (a Dropout in training mode is no view), c is", states,
             FEED_STATE, defect="Dropout in training mode on the way out")
    s.model, wt = hb_lstm_state(name, write, s.note, extra_inits=[
        numpy_helper.from_array(np.array(0.5, np.float32), "ratio"), numpy_helper.from_array(np.array(True), "training")])
    s.reference = lstm_reference(wt, lambda st, yh, yc: np.concatenate([yh, yc]))  # ONNX Runtime: no dropout
    return s


def f1_hb_gather_negative():
    name = "f1_hb_gather_negative"

    def write(nodes):
        nodes += [helper.make_node("Concat", ["Y_h", "Y_c"], ["cat"], axis=0, name="Concat_cat"),
                  helper.make_node("Gather", ["cat", "minus2"], ["hh"], axis=0, name="Gather_minus2"),
                  helper.make_node("Unsqueeze", ["hh", "axes0"], ["hu"], name="Unsqueeze_hu"),
                  helper.make_node("Concat", ["hu", "Y_c"], ["stateN"], axis=0, name="Concat_stateN")]

    s = Spec(name, 1, "onnx.helper, opset 14",
             "LSTM (I 3, H 4) on state [2,batch,4] (Unsqueeze(Gather(state, 0 / 1))); stateN = Concat(Unsqueeze("
             "Gather(Concat(Y_h, Y_c), -2)), Y_c): h picked back with a negative index", f1_states("lstm", "state", "stateN"),
             FEED_STATE)
    s.model, wt = hb_lstm_state(name, write, s.note, extra_inits=[i64("minus2", -2)])
    s.reference = lstm_reference(wt, lambda st, yh, yc: np.concatenate([yh, yc]))
    return s


class DefaultSwapped(nn.Module):
    """RateState with h and c swapped in the branch that starts from zeros (the empty-state path)."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4)

    def forward(self, x, state) -> Tuple[torch.Tensor, torch.Tensor]:
        if state.size(1) == 0:
            y, (h, c) = self.lstm(x)
            return y, torch.stack([c[0], h[0]])
        else:
            y, (h, c) = self.lstm(x, (state[0].unsqueeze(0), state[1].unsqueeze(0)))
            return y, torch.stack([h[0], c[0]])


def neg_default_swapped():
    ax = ("batch", "hidden")
    fed, zeros = "main//If:else_branch", "main//If:then_branch"
    states = []
    for kind, row in (("h", 0), ("c", 1)):
        reg = [row, None, None]
        states.append(state("/LSTM_1", kind, place("state", reg, ax), place("stateN", reg, ax), True, graph=fed))
        states.append(state("/LSTM", kind, None, place("stateN", [1 - row, None, None], ax), False, graph=zeros,
                            reason="runs only when the fed state is empty and starts from zeros, but returns "
                            "stack(c, h): its final lands where the fed branch's other state reads, so after an empty "
                            "first call the fed branch starts from h and c swapped",
                            relation=f"stateN[{1 - row}] = its final (the fed branch reads state[{1 - row}] as the "
                            f"other kind)"))
    protocol = {"first_call": [{"state": "empty"}, {"state": "zeros"}], "feedback": [{"output": "stateN", "input": "state"}]}
    s = Spec("neg_default_swapped", "negative (form 2)", "torch.jit.script + torch.onnx.export, opset 14",
             "If (state is empty): LSTM (I 3, H 4) from zeros returning stack(c, h) (swapped), else the same LSTM from "
             "Unsqueeze(Gather(state, 0 / 1)) returning stack(h, c): the fed branch is exposed, the zero branch stands "
             "in for no state; the protocol breaks only when the first call is fed the empty state", states, protocol,
             negative=True, defect="h and c swapped on the empty-state path")
    s.breaks_on = {"empty"}
    s.empty_like_zeros = False
    return torch_export(s, DefaultSwapped, [("x", ["seq", "batch", 3]), ("state", [2, "batch", 4])],
                        [("y", ["seq", "batch", 4]), ("stateN", [2, "batch", 4])], 14, script=True)


class MainIfInit(nn.Module):
    """One LSTM in the main graph; an If chooses its initial state: zeros when the fed state is empty, else
    rows 0 and 1 of it (the authors' "empty means start from zeros" with one copy of the layer)."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4)

    def forward(self, x, state):
        if state.size(1) == 0:
            h0 = torch.zeros(1, x.size(1), 4)
            c0 = torch.zeros_like(h0)  # not the same zeros: a branch may not return one value twice
        else:
            h0 = state[0:1]
            c0 = state[1:2]
        y, (h, c) = self.lstm(x, (h0, c0))
        return y, torch.cat([h, c])


def f2_ts_main_if_init():
    states = [state("/LSTM", k, place("state", [[r, r + 1], None, None]), place("stateN", [[r, r + 1], None, None]), True)
              for k, r in (("h", 0), ("c", 1))]
    protocol = {"first_call": [{"state": "random"}, {"state": "empty"}, {"state": "zeros"}],
                "feedback": [{"output": "stateN", "input": "state"}]}
    s = Spec("f2_ts_main_if_init", 2, "torch.jit.script + torch.onnx.export, opset 14",
             "LSTM (I 3, H 4) in the main graph whose (h0, c0) come from If (state is empty): zeros, else state[0:1], "
             "state[1:2] of state [2,batch,4]; stateN = Concat(Y_h, Y_c)", states, protocol)
    return torch_export(s, MainIfInit, [("x", ["seq", "batch", 3]), ("state", [2, "batch", 4])],
                        [("y", ["seq", "batch", 4]), ("stateN", [2, "batch", 4])], 14, script=True)


# --- the published models' own patterns (silero v5 / v3.1 / OpenVINO, GTCRN), at small sizes -------------


def c_node(name, value, dtype=np.int64):
    """A Constant node named and output `name` (PyTorch and spox write Slice/Gather parameters this way)."""
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(np.asarray(value, dtype), name + "_value"))


def typed(name, shape=None):
    """A subgraph output's ValueInfo: FLOAT, the shape unknown unless given."""
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def branch(name, nodes, outputs):
    return helper.make_graph(nodes, name, [], [typed(o) for o in outputs])


def silero_rank_chain(p, h_in, c_in, w, h):
    """Silero v5's LSTM chain inside one branch (prefix `p`): PyTorch's unbatched-input rank test
    c = Not(Equal(Size(Shape(x)), 3)); If(Cast(c)) then Unsqueeze(x, [1]), Unsqueeze(h_in, [0]), Unsqueeze(c_in, [0])
    else Identity of each; initial = Unsqueeze(., [0]); LSTM; the finals Squeeze(Y_*, [0]) go back through
    If(Cast(c)) then (If(Equal(Shape(v)[0], 1)) Squeeze(v, [0]) else Identity(v)) else Identity(v).
    h_in None: LSTMCell's default state instead, as Silero v5's zero branch has it: the If carries x only, and
    one ConstantOfShape(Concat(Shape(X)[1], [H])) zeros is Unsqueeze'd into initial_h and initial_c.
    Returns (nodes, y, h_final, c_final), the finals [batch, hidden]."""
    zeros = h_in is None
    n = [c_node(f"{p}/rank", 3), c_node(f"{p}/ax0", [0]), c_node(f"{p}/ax1", [1]),
         helper.make_node("Shape", ["x"], [f"{p}/xshape"], name=f"{p}/Shape"),
         helper.make_node("Size", [f"{p}/xshape"], [f"{p}/xrank"], name=f"{p}/Size"),
         helper.make_node("Equal", [f"{p}/xrank", f"{p}/rank"], [f"{p}/is3"], name=f"{p}/Equal"),
         helper.make_node("Not", [f"{p}/is3"], [f"{p}/unbatched"], name=f"{p}/Not"),
         helper.make_node("Cast", [f"{p}/unbatched"], [f"{p}/cond_in"], to=TensorProto.BOOL, name=f"{p}/Cast"),
         helper.make_node("Cast", [f"{p}/unbatched"], [f"{p}/cond_out"], to=TensorProto.BOOL, name=f"{p}/Cast_1")]
    then_in = [helper.make_node("Unsqueeze", ["x", f"{p}/ax1"], [f"{p}/xu"], name=f"{p}/If_2/Unsqueeze")]
    else_in = [helper.make_node("Identity", ["x"], [f"{p}/xi"], name=f"{p}/If_2/Identity")]
    if not zeros:
        then_in += [helper.make_node("Unsqueeze", [h_in, f"{p}/ax0"], [f"{p}/hu"], name=f"{p}/If_2/Unsqueeze_1"),
                    helper.make_node("Unsqueeze", [c_in, f"{p}/ax0"], [f"{p}/cu"], name=f"{p}/If_2/Unsqueeze_2")]
        else_in += [helper.make_node("Identity", [h_in], [f"{p}/hi"], name=f"{p}/If_2/Identity_1"),
                    helper.make_node("Identity", [c_in], [f"{p}/ci"], name=f"{p}/If_2/Identity_2")]
    outs = [f"{p}/X"] if zeros else [f"{p}/X", f"{p}/hb", f"{p}/cb"]
    n.append(helper.make_node("If", [f"{p}/cond_in"], outs, name=f"{p}/If_2",
                              then_branch=branch(f"{p}/If_2_then", then_in, [f"{p}/xu"] + ([] if zeros else [f"{p}/hu", f"{p}/cu"])),
                              else_branch=branch(f"{p}/If_2_else", else_in,
                                                 [f"{p}/xi"] + ([] if zeros else [f"{p}/hi", f"{p}/ci"]))))
    if zeros:
        n += [helper.make_node("Shape", [f"{p}/X"], [f"{p}/Xshape"], name=f"{p}/Shape_1"),
              helper.make_node("Gather", [f"{p}/Xshape", f"{p}/ax1"], [f"{p}/zb"], axis=0, name=f"{p}/Gather_z"),
              c_node(f"{p}/zh", [h]),
              helper.make_node("Concat", [f"{p}/zb", f"{p}/zh"], [f"{p}/zdims"], axis=0, name=f"{p}/Concat_z"),
              helper.make_node("ConstantOfShape", [f"{p}/zdims"], [f"{p}/zeros"], name=f"{p}/ConstantOfShape",
                               value=numpy_helper.from_array(np.zeros(1, np.float32), "zero"))]
    hb, cb = (f"{p}/zeros", f"{p}/zeros") if zeros else (f"{p}/hb", f"{p}/cb")
    n += [helper.make_node("Unsqueeze", [hb, f"{p}/ax0"], [f"{p}/h0"], name=f"{p}/Unsqueeze_3"),
          helper.make_node("Unsqueeze", [cb, f"{p}/ax0"], [f"{p}/c0"], name=f"{p}/Unsqueeze_4"),
          helper.make_node("LSTM", [f"{p}/X", f"{w}_W", f"{w}_R", f"{w}_B", "", f"{p}/h0", f"{p}/c0"],
                           [f"{p}/Y", f"{p}/Y_h", f"{p}/Y_c"], name=f"{p}/LSTM", hidden_size=h),
          helper.make_node("Squeeze", [f"{p}/Y", f"{p}/ax1"], [f"{p}/y"], name=f"{p}/Squeeze_y"),
          helper.make_node("Squeeze", [f"{p}/Y_h", f"{p}/ax0"], [f"{p}/hs"], name=f"{p}/Squeeze_h"),
          helper.make_node("Squeeze", [f"{p}/Y_c", f"{p}/ax0"], [f"{p}/cs"], name=f"{p}/Squeeze_c")]
    then_out, else_out = [], []
    for k in ("h", "c"):
        v = f"{p}/{k}s"
        q = f"{p}/If_5/{k}"
        squeeze_if = helper.make_node(
            "If", [f"{q}/one"], [f"{q}/sq"], name=f"{q}/If",
            then_branch=branch(f"{q}/then", [helper.make_node("Squeeze", [v, f"{p}/ax0"], [f"{q}/sq_t"],
                                                              name=f"{q}/Squeeze")], [f"{q}/sq_t"]),
            else_branch=branch(f"{q}/else", [helper.make_node("Identity", [v], [f"{q}/sq_e"], name=f"{q}/Identity")],
                               [f"{q}/sq_e"]))
        then_out += [helper.make_node("Shape", [v], [f"{q}/shape"], name=f"{q}/Shape"),
                     c_node(f"{q}/zero", 0), c_node(f"{q}/one_v", 1),
                     helper.make_node("Gather", [f"{q}/shape", f"{q}/zero"], [f"{q}/d0"], axis=0, name=f"{q}/Gather"),
                     helper.make_node("Equal", [f"{q}/d0", f"{q}/one_v"], [f"{q}/one"], name=f"{q}/Equal"), squeeze_if]
        else_out.append(helper.make_node("Identity", [v], [f"{q}/id"], name=f"{q}/Identity_else"))
    n.append(helper.make_node("If", [f"{p}/cond_out"], [f"{p}/hf", f"{p}/cf"], name=f"{p}/If_5",
                              then_branch=branch(f"{p}/If_5_then", then_out, [f"{p}/If_5/h/sq", f"{p}/If_5/c/sq"]),
                              else_branch=branch(f"{p}/If_5_else", else_out, [f"{p}/If_5/h/id", f"{p}/If_5/c/id"])))
    return n, f"{p}/y", f"{p}/hf", f"{p}/cf"


def stack_hc(p, hf, cf, out):
    """stateN = Concat(Unsqueeze(h, [0]), Unsqueeze(c, [0]), axis 0) (Silero v5, after its len(state) If)."""
    return [c_node(f"{p}/st_ax0", [0]),
            helper.make_node("Unsqueeze", [hf, f"{p}/st_ax0"], [f"{p}/hn"], name=f"{p}/Unsqueeze_hn"),
            helper.make_node("Unsqueeze", [cf, f"{p}/st_ax0"], [f"{p}/cn"], name=f"{p}/Unsqueeze_cn"),
            helper.make_node("Concat", [f"{p}/hn", f"{p}/cn"], [out], axis=0, name=f"{p}/Concat_stateN")]


def silero_rows(p):
    return [c_node(f"{p}/row0", 0), c_node(f"{p}/row1", 1),
            helper.make_node("Gather", ["state", f"{p}/row0"], [f"{p}/h_in"], axis=0, name=f"{p}/Gather"),
            helper.make_node("Gather", ["state", f"{p}/row1"], [f"{p}/c_in"], axis=0, name=f"{p}/Gather_1")]


def silero_v5_model(name, with_default):
    """Silero v5's decoder at small size: If(sr == 16000) per rate, the LSTM chain of silero_rank_chain, and
    (with_default) an If on len(state) = Cast(Squeeze(Gather(Shape(state), [0])), BOOL) choosing the fed
    chain or the same LSTM from ConstantOfShape zeros."""
    rng = np.random.RandomState(common.name_seed(name))
    i, h = 3, 4
    weights = {"r16": common.Weights("LSTM", i, h, rng), "r8": common.Weights("LSTM", i, h, rng)}
    inits = weights["r16"].initializers("w16") + weights["r8"].initializers("w8") + [i64("rate", [16000])]
    branches = {}
    for rate, w in (("r16", "w16"), ("r8", "w8")):
        p = f"{rate}"
        nodes = []
        if with_default:
            fed, y1, h1, c1 = silero_rank_chain(f"{p}/fed", f"{p}/h_in", f"{p}/c_in", w, h)
            zero, y0, h0, c0 = silero_rank_chain(f"{p}/zero", None, None, w, h)
            fed = silero_rows(p) + fed + [helper.make_node("Identity", [v], [f"{v}_out"], name=f"{v}_Identity")
                                          for v in (y1, h1, c1)]
            zero = zero + [helper.make_node("Identity", [v], [f"{v}_out"], name=f"{v}_Identity")
                                                for v in (y0, h0, c0)]
            nodes += [helper.make_node("Shape", ["state"], [f"{p}/sshape"], name=f"{p}/Shape_state"),
                      c_node(f"{p}/lenax", [0]),
                      helper.make_node("Gather", [f"{p}/sshape", f"{p}/lenax"], [f"{p}/len1"], axis=0,
                                       name=f"{p}/Gather_len"),
                      helper.make_node("Squeeze", [f"{p}/len1"], [f"{p}/len"], name=f"{p}/Squeeze_len"),
                      helper.make_node("Cast", [f"{p}/len"], [f"{p}/has_state"], to=TensorProto.BOOL,
                                       name=f"{p}/Cast_len"),
                      helper.make_node("If", [f"{p}/has_state"], [f"{p}/y", f"{p}/hf", f"{p}/cf"], name=f"{p}/If_10",
                                       then_branch=branch(f"{p}/If_10_then", fed, [f"{v}_out" for v in (y1, h1, c1)]),
                                       else_branch=branch(f"{p}/If_10_else", zero, [f"{v}_out" for v in (y0, h0, c0)]))]
            y, hf, cf = f"{p}/y", f"{p}/hf", f"{p}/cf"
        else:
            chain, y, hf, cf = silero_rank_chain(p, f"{p}/h_in", f"{p}/c_in", w, h)
            nodes += silero_rows(p) + chain
        nodes += stack_hc(p, hf, cf, f"{p}/stateN")
        nodes.append(helper.make_node("Identity", [y], [f"{p}/y_out"], name=f"{p}/Identity_y"))
        branches[rate] = branch(f"{p}_branch", nodes, [f"{p}/y_out", f"{p}/stateN"])
    nodes = [helper.make_node("Equal", ["sr", "rate"], ["is16"], name="Equal"),
             helper.make_node("If", ["is16"], ["If_0_y", "If_0_stateN"], name="If_0", then_branch=branches["r16"],
                              else_branch=branches["r8"]),
             helper.make_node("Identity", ["If_0_y"], ["y"], name="Identity"),
             helper.make_node("Identity", ["If_0_stateN"], ["stateN"], name="Identity_1")]
    model = make_hb(nodes, [common.value_info("x", ["seq", "batch", i]), common.value_info("sr", [1], TensorProto.INT64),
                            common.value_info("state", [2, "batch", h])],
                    [common.value_info("y", ["seq", "batch", h]), common.value_info("stateN", [2, "batch", h])],
                    inits, name, "", 16, 8)

    def reference(f):
        wt = weights["r16" if int(f["sr"][0]) == 16000 else "r8"]
        st = f["state"]
        y, yh, yc = common.ref_recurrent("LSTM", f["x"], wt.w, wt.r, wt.b, st[0:1], st[1:2])
        return {"y": y[:, 0], "stateN": np.concatenate([yh, yc])}

    return model, reference


SILERO_PROTOCOL = {"first_call": [{"state": "random"}, {"state": "zeros"}],
                   "feedback": [{"output": "stateN", "input": "state"}]}


def f1_hb_silero_rank_ifs():
    name = "f1_hb_silero_rank_ifs"
    ax = ("batch", "hidden")
    states = []
    for rate, outer in (("r16", "then_branch"), ("r8", "else_branch")):
        for kind, row in (("h", 0), ("c", 1)):
            reg = [row, None, None]
            states.append(state(f"{rate}/LSTM", kind, place("state", reg, ax), place("stateN", reg, ax), True,
                                graph=f"main/If_0:{outer}"))
    s = Spec(name, 1, "onnx.helper following Silero VAD v5 (spox-inlined TorchScript export), opset 16, IR 8",
             "Silero v5's chain in an If on the sample rate (sr == 16000; one LSTM (I 3, H 4) per rate): h = "
             "Gather(state, 0), c = Gather(state, 1) of state [2,batch,4] read from outer scope; PyTorch's "
             "unbatched-input rank test If(Cast(Not(Equal(Size(Shape(x)), 3)))) then Unsqueeze (x on axis 1, h and c "
             "on axis 0) else Identity; initial = Unsqueeze(., [0]); the finals Squeeze(Y_*, [0]) go back through an "
             "If on the same test (then: If(Equal(Shape(v)[0], 1)) Squeeze / Identity; else Identity); stateN = "
             "Concat(Unsqueeze(h, [0]), Unsqueeze(c, [0]))", states, SILERO_PROTOCOL,
             ints={"sr": [16000]}, extra_ints=[{"sr": [8000]}])
    s.model, s.reference = silero_v5_model(name, False)
    s.model.doc_string = s.note
    return s


def f2_hb_silero_len_default():
    name = "f2_hb_silero_len_default"
    ax = ("batch", "hidden")
    states = []
    for rate, outer in (("r16", "then_branch"), ("r8", "else_branch")):
        for kind, row in (("h", 0), ("c", 1)):
            reg = [row, None, None]
            inner = f"main/If_0:{outer}/{rate}/If_10"
            states.append(state(f"{rate}/fed/LSTM", kind, place("state", reg, ax), place("stateN", reg, ax), True,
                                graph=f"{inner}:then_branch"))
            states.append(state(f"{rate}/zero/LSTM", kind, None, place("stateN", reg, ax), False,
                                graph=f"{inner}:else_branch",
                                reason="default path: runs only when the fed state is empty along axis 0 (the "
                                "authors' len(state) test; that axis is declared 2, so the first call is fed zeros "
                                "instead, which is equivalent); starts from ConstantOfShape zeros shared by h and c; "
                                "its final lands in the same row of stateN",
                                relation=f"the default of the pair state[{row}] -> stateN[{row}]"))
    s = Spec(name, "1+2", "onnx.helper following Silero VAD v5 (spox-inlined TorchScript export), opset 16, IR 8",
             "f1_hb_silero_rank_ifs with Silero v5's default path: in each rate branch an If on len(state) = "
             "Cast(Squeeze(Gather(Shape(state), [0])), BOOL) (axis 0, declared 2): then the fed chain, else the same "
             "LSTM (shared weights) from LSTMCell's default: one ConstantOfShape(Concat(Shape(X)[1], [4])) zeros, "
             "Unsqueeze'd into h and c (the rank-test Ifs carry x only); stateN = Concat(Unsqueeze(h, [0]), Unsqueeze(c, [0])) after that If", states, SILERO_PROTOCOL,
             ints={"sr": [16000]}, extra_ints=[{"sr": [8000]}])
    s.model, s.reference = silero_v5_model(name, True)
    s.model.doc_string = s.note
    return s


def f1_hb_silero_v31_rows():
    """Silero VAD v3.1: h0, c0 [2,1,H] (batch fixed 1), rows by Slice with Constant-node parameters, two
    stacked LSTMs whose X comes through an If (inference loses its shape: the batch is unknown)."""
    name = "f1_hb_silero_v31_rows"
    rng = np.random.RandomState(common.name_seed(name))
    i, h = 3, 4
    w1, w2 = common.Weights("LSTM", i, h, rng), common.Weights("LSTM", h, h, rng)
    inits = w1.initializers("lstm1") + w2.initializers("lstm2")
    nodes = [helper.make_node("Shape", ["input"], ["in_shape"], name="Shape_30"), c_node("Constant_31", 0),
             helper.make_node("Gather", ["in_shape", "Constant_31"], ["in_d0"], axis=0, name="Gather_31"),
             c_node("Constant_32", 1),
             helper.make_node("Equal", ["in_d0", "Constant_32"], ["squeezable"], name="Equal_32"),
             c_node("Constant_ax0", [0]),
             helper.make_node("If", ["squeezable"], ["x_sq"], name="If_33",
                              then_branch=branch("If_33_then", [helper.make_node("Squeeze", ["input", "Constant_ax0"],
                                                                                 ["x_sq_t"], name="Squeeze_34")],
                                                 ["x_sq_t"]),
                              else_branch=branch("If_33_else", [helper.make_node("Identity", ["input"], ["x_sq_e"],
                                                                                 name="Identity_35")], ["x_sq_e"])),
             c_node("Constant_ax1", [1]),
             helper.make_node("Unsqueeze", ["x_sq", "Constant_ax1"], ["725"], name="Unsqueeze_36")]
    x_in = "725"
    for l, (lstm, wname) in enumerate((("LSTM_589", "lstm1"), ("LSTM_600", "lstm2"))):
        for kind, src in (("h", "h0"), ("c", "c0")):
            t = f"{lstm}_{kind}"
            nodes += [c_node(f"{t}_axes", [0]), c_node(f"{t}_starts", [l]), c_node(f"{t}_ends", [l + 1]),
                      helper.make_node("Slice", [src, f"{t}_starts", f"{t}_ends", f"{t}_axes"], [f"{t}_init"],
                                       name=f"Slice_{t}")]
        nodes += [helper.make_node("LSTM", [x_in, f"{wname}_W", f"{wname}_R", f"{wname}_B", "", f"{lstm}_h_init",
                                            f"{lstm}_c_init"], [f"{lstm}_Y", f"{lstm}_Y_h", f"{lstm}_Y_c"],
                                   name=lstm, hidden_size=h),
                  c_node(f"{lstm}_sq_axes", [1]),
                  helper.make_node("Squeeze", [f"{lstm}_Y", f"{lstm}_sq_axes"], [f"{lstm}_y"], name=f"Squeeze_{lstm}")]
        x_in = f"{lstm}_y"
    nodes += [helper.make_node("Concat", ["LSTM_589_Y_h", "LSTM_600_Y_h"], ["hn"], axis=0, name="Concat_603"),
              helper.make_node("Concat", ["LSTM_589_Y_c", "LSTM_600_Y_c"], ["cn"], axis=0, name="Concat_604"),
              helper.make_node("Identity", [x_in], ["output"], name="Identity_output")]
    states = [state(lstm, kind, place(inp, [[l, l + 1], None, None]), place(out, [[l, l + 1], None, None]), True)
              for l, lstm in enumerate(("LSTM_589", "LSTM_600")) for kind, inp, out in (("h", "h0", "hn"), ("c", "c0", "cn"))]
    protocol = {"first_call": [{"h0": "random", "c0": "random"}, {"h0": "zeros", "c0": "zeros"}],
                "feedback": [{"output": "hn", "input": "h0"}, {"output": "cn", "input": "c0"}]}
    s = Spec(name, 1, "onnx.helper following Silero VAD v3.1 (PyTorch 1.9 export), opset 13, IR 6",
             "two stacked LSTMs (I 3 -> H 4 -> H 4), batch fixed 1: input [1,seq,3] goes through If(Shape(input)[0] == 1) "
             "Squeeze / Identity (branches of different ranks: inference loses the shape, the LSTMs' batch is unknown "
             "or unk__N) and Unsqueeze(., [1]); layer l reads Slice(h0, Constant [l], Constant [l+1], axes Constant [0]) "
             "of h0, c0 [2,1,4]; hn = Concat(Y_h 1, Y_h 2), cn likewise", states, protocol,
             seq_axes={"input": 1}, output_seq_axes={"output": 0}, dims={"seq": 8})
    s.model = make_hb(nodes, [common.value_info("input", [1, "seq", i]), common.value_info("h0", [2, 1, h]),
                              common.value_info("c0", [2, 1, h])],
                      [common.value_info("output", ["seq", 1, h]), common.value_info("hn", [2, 1, h]),
                       common.value_info("cn", [2, 1, h])], inits, name, s.note, 13, 6)

    def reference(f):
        x = f["input"][0][:, None]
        y1, h1, c1 = common.ref_recurrent("LSTM", x, w1.w, w1.r, w1.b, f["h0"][0:1], f["c0"][0:1])
        y2, h2, c2 = common.ref_recurrent("LSTM", y1[:, 0], w2.w, w2.r, w2.b, f["h0"][1:2], f["c0"][1:2])
        return {"output": y2[:, 0], "hn": np.concatenate([h1, h2]), "cn": np.concatenate([c1, c2])}

    s.reference = reference
    return s


def f1_hb_openvino_unk_dims():
    """The OpenVINO silero (spox, the 16 kHz branch inlined, no If): Unsqueeze(Gather(state, i), [0]) with
    Constant-node indices, and value_info in the file whose batch dims are onnx's invented unk__N names."""
    name = "f1_hb_openvino_unk_dims"
    rng = np.random.RandomState(common.name_seed(name))
    i, h = 3, 4
    wt = common.Weights("LSTM", i, h, rng)
    inits = wt.initializers("lstm")
    p = "F2::If_0_then_branch__Inline_0__/decoder/rnn"
    nodes = [c_node("F0::stft/Constant", 0), c_node("F0::Constant", 1), c_node(f"{p}/Constant_5", [0]),
             c_node(f"{p}/Constant_1", [1]),
             helper.make_node("Relu", ["input"], [f"{p}/Relu"], name=f"{p}/Relu"),
             helper.make_node("Shape", [f"{p}/Relu"], [f"{p}/Shape"], name=f"{p}/Shape"),
             c_node(f"{p}/Constant_2", [0]), c_node(f"{p}/Constant_3", [-1, i]),
             helper.make_node("Gather", [f"{p}/Shape", f"{p}/Constant_2"], [f"{p}/Gather"], axis=0, name=f"{p}/Gather"),
             helper.make_node("Concat", [f"{p}/Gather", f"{p}/Constant_3"], [f"{p}/Concat_shape"], axis=0,
                              name=f"{p}/Concat_shape"),
             helper.make_node("Reshape", [f"{p}/Relu", f"{p}/Concat_shape"], [f"{p}/X"], name=f"{p}/Reshape"),
             helper.make_node("Gather", ["state", "F0::stft/Constant"], [f"{p}/Gather_2"], axis=0, name=f"{p}/Gather_2"),
             helper.make_node("Gather", ["state", "F0::Constant"], [f"{p}/Gather_3"], axis=0, name=f"{p}/Gather_3"),
             helper.make_node("Unsqueeze", [f"{p}/Gather_2", f"{p}/Constant_5"], [f"{p}/h0"], name=f"{p}/Unsqueeze_4"),
             helper.make_node("Unsqueeze", [f"{p}/Gather_3", f"{p}/Constant_5"], [f"{p}/c0"], name=f"{p}/Unsqueeze_5"),
             helper.make_node("LSTM", [f"{p}/X", "lstm_W", "lstm_R", "lstm_B", "", f"{p}/h0", f"{p}/c0"],
                              [f"{p}/Y", f"{p}/Y_h", f"{p}/Y_c"], name=f"{p}/LSTM", hidden_size=h),
             helper.make_node("Squeeze", [f"{p}/Y", f"{p}/Constant_1"], ["output"], name=f"{p}/Squeeze_y")]
    for k in ("h", "c"):
        nodes += [helper.make_node("Squeeze", [f"{p}/Y_{k}", f"{p}/Constant_5"], [f"{p}/{k}s"], name=f"{p}/Squeeze_{k}"),
                  helper.make_node("Unsqueeze", [f"{p}/{k}s", f"{p}/Constant_5"], [f"{p}/{k}u"], name=f"{p}/Unsqueeze_{k}")]
    nodes.append(helper.make_node("Concat", [f"{p}/hu", f"{p}/cu"], ["stateN"], axis=0, name=f"{p}/Concat"))
    ax = ("batch", "hidden")
    states = [state(f"{p}/LSTM", k, place("state", [r, None, None], ax), place("stateN", [r, None, None], ax), True)
              for k, r in (("h", 0), ("c", 1))]
    s = Spec(name, 1, "onnx.helper following the OpenVINO silero (spox, opset 16, IR 8)",
             "LSTM (I 3, H 4), batch fixed 1: state [2,1,4]; X = Reshape(Relu(input), Concat(Shape(.)[0], [-1, 3])) (a "
             "computed shape: inference cannot tell its batch); initial = Unsqueeze(Gather(state, Constant 0 / 1), "
             "Constant [0]); stateN = Concat(Unsqueeze(Squeeze(Y_h, [0]), [0]), ...). The file's own value_info (as spox "
             "writes it) names the batch of X, Y, Y_h, Y_c onnx's invented unk__3 although the state says 1",
             states, SILERO_PROTOCOL, seq_axes={"input": 0}, output_seq_axes={"output": 0}, dims={"seq": 8})
    s.model = make_hb(nodes, [common.value_info("input", ["seq", 1, i]), common.value_info("state", [2, 1, h])],
                      [common.value_info("output", ["seq", 1, h]), common.value_info("stateN", [2, 1, h])],
                      inits, name, s.note, 16, 8)
    s.model.graph.value_info.extend([
        typed(f"{p}/Relu", ["seq", 1, i]),
        typed(f"{p}/X", ["seq", "unk__3", i]), typed(f"{p}/Y", ["seq", 1, "unk__3", h]),
        typed(f"{p}/Y_h", [1, "unk__3", h]), typed(f"{p}/Y_c", [1, "unk__3", h]),
        typed(f"{p}/hs", ["unk__3", h]), typed(f"{p}/cs", ["unk__3", h])])

    def reference(f):
        st = f["state"]
        y, yh, yc = common.ref_recurrent("LSTM", np.maximum(f["input"], 0), wt.w, wt.r, wt.b, st[0:1], st[1:2])
        return {"output": y[:, 0], "stateN": np.concatenate([yh, yc])}

    s.reference = reference
    return s


def torch_chunk_bounds(p, v):
    """torch.chunk(v, 2, -1) as PyTorch 1.11 exports it (GTCRN): half = (Shape(v)[-1] + 1) / 2; the two
    parts are Slice(v, 0, half * 1, axes [-1]) and Slice(v, half * 1, half * 2, axes [-1])."""
    return [helper.make_node("Shape", [v], [f"{p}/shape"], name=f"{p}/Shape"), c_node(f"{p}/last", [-1]),
            helper.make_node("Gather", [f"{p}/shape", f"{p}/last"], [f"{p}/d"], axis=0, name=f"{p}/Gather"),
            c_node(f"{p}/one", [1]), c_node(f"{p}/two", [2]), c_node(f"{p}/zero", [0]),
            helper.make_node("Add", [f"{p}/d", f"{p}/one"], [f"{p}/d1"], name=f"{p}/Add"),
            helper.make_node("Div", [f"{p}/d1", f"{p}/two"], [f"{p}/half"], name=f"{p}/Div"),
            helper.make_node("Mul", [f"{p}/half", f"{p}/one"], [f"{p}/e0"], name=f"{p}/Mul"),
            helper.make_node("Mul", [f"{p}/half", f"{p}/two"], [f"{p}/e1"], name=f"{p}/Mul_1"),
            helper.make_node("Slice", [v, f"{p}/zero", f"{p}/e0", f"{p}/last"], [f"{p}/a"], name=f"{p}/Slice"),
            helper.make_node("Slice", [v, f"{p}/e0", f"{p}/e1", f"{p}/last"], [f"{p}/b"], name=f"{p}/Slice_1")]


def f4_hb_gtcrn_inter_chunk():
    """GTCRN's DPGRNN (stream/gtcrn_stream.py, PyTorch 1.11, opset 11, not simplified): an intra-frame
    bidirectional GRU over frequency from ConstantOfShape zeros, then per block two inter-frame GRUs whose
    h0 are torch.chunk halves of Gather(cache, l), written back with Concat(-1) -> Expand -> Reshape ->
    ScatterND(cache, [[l]], .)."""
    name = "f4_hb_gtcrn_inter_chunk"
    rng = np.random.RandomState(common.name_seed(name))
    f, c, hi, h = 3, 4, 2, 2                     # frequency bins (inter batch), channels, intra / inter hidden
    intra = [common.Weights("GRU", c, hi, rng) for _ in range(2)]
    inter = [common.Weights("GRU", c // 2, h, rng) for _ in range(4)]
    inits = [numpy_helper.from_array(np.concatenate([w.w for w in intra]), "intra_W"),
             numpy_helper.from_array(np.concatenate([w.r for w in intra]), "intra_R"),
             numpy_helper.from_array(np.concatenate([w.b for w in intra]), "intra_B"),
             i64("idx0", [[0]]), i64("idx1", [[1]])]
    for n, wt in enumerate(inter):
        inits += wt.initializers(f"inter{n}")
    # intra: X = [F, frames, C] (frequency is the sequence, the frames the batch), h0 zeros [2, frames, hi]
    nodes = [helper.make_node("Transpose", ["x"], ["intra_X"], perm=[1, 0, 2], name="Transpose_690"),
             helper.make_node("Shape", ["intra_X"], ["intra_shape"], name="Shape_691"), c_node("Constant_692", [1]),
             helper.make_node("Gather", ["intra_shape", "Constant_692"], ["intra_b"], axis=0, name="Gather_693"),
             c_node("Constant_694", [2]), c_node("Constant_695", [hi]),
             helper.make_node("Concat", ["Constant_694", "intra_b", "Constant_695"], ["intra_h0_shape"], axis=0,
                              name="Concat_696"),
             helper.make_node("ConstantOfShape", ["intra_h0_shape"], ["intra_h0"], name="ConstantOfShape_697",
                              value=numpy_helper.from_array(np.zeros(1, np.float32), "zero")),
             helper.make_node("GRU", ["intra_X", "intra_W", "intra_R", "intra_B", "", "intra_h0"], ["intra_Y", "intra_Y_h"],
                              name="GRU_700", hidden_size=hi, direction="bidirectional", linear_before_reset=1),
             helper.make_node("Transpose", ["intra_Y"], ["intra_yt"], perm=[2, 0, 1, 3], name="Transpose_701"),
             c_node("Constant_702", [0, 0, 2 * hi]),
             helper.make_node("Reshape", ["intra_yt", "Constant_702"], ["intra_y"], name="Reshape_703"),
             helper.make_node("Add", ["x", "intra_y"], ["v0"], name="Add_704")]
    cache, v = "inter_cache", "v0"
    states = [state("GRU_700", "h", None, None, False,
                    reason="runs within one call: a bidirectional GRU over the frequency axis (its batch is the "
                    "frames) that starts from ConstantOfShape zeros every call; it carries no state between calls, "
                    "so it is neither paired nor promoted")]
    ax = ("dir", "batch", "hidden")
    for l in range(2):
        p = f"block{l}"
        nodes += [c_node(f"{p}/Constant_idx", l),
                  helper.make_node("Gather", [cache, f"{p}/Constant_idx"], [f"{p}/G"], axis=0, name=f"{p}/Gather")]
        nodes += torch_chunk_bounds(f"{p}/h0", f"{p}/G") + torch_chunk_bounds(f"{p}/x", v)
        ys = []
        for half, part in enumerate(("a", "b")):
            n = 2 * l + half
            gru = f"GRU_{780 + 177 * l + 4 * half}"
            nodes += [helper.make_node("GRU", [f"{p}/x/{part}", f"inter{n}_W", f"inter{n}_R", f"inter{n}_B", "",
                                               f"{p}/h0/{part}"], [f"{gru}_Y", f"{gru}_Y_h"], name=gru, hidden_size=h,
                                       linear_before_reset=1),
                      helper.make_node("Squeeze", [f"{gru}_Y"], [f"{gru}_y"], axes=[1], name=f"{gru}_Squeeze")]
            ys.append(f"{gru}_y")
            reg = [l, None, None, [half * h, (half + 1) * h]]
            states.append(state(gru, "h", place("inter_cache", reg, ax), place("inter_cache_out", reg, ax), True))
        g0, g1 = (f"GRU_{780 + 177 * l}", f"GRU_{784 + 177 * l}")
        out = "inter_cache_out" if l == 1 else f"{p}/S"
        nodes += [helper.make_node("Concat", ys, [f"{p}/y"], axis=-1, name=f"{p}/Concat_y"),
                  helper.make_node("Add", [v, f"{p}/y"], [f"{p}/v"], name=f"{p}/Add"),
                  helper.make_node("Concat", [f"{g0}_Y_h", f"{g1}_Y_h"], [f"{p}/hcat"], axis=-1, name=f"{p}/Concat_h"),
                  c_node(f"{p}/Constant_810", l),
                  helper.make_node("Gather", [cache, f"{p}/Constant_810"], [f"{p}/G2"], axis=0, name=f"{p}/Gather_2"),
                  helper.make_node("Shape", [f"{p}/G2"], [f"{p}/G2shape"], name=f"{p}/Shape_2"),
                  helper.make_node("Expand", [f"{p}/hcat", f"{p}/G2shape"], [f"{p}/E"], name=f"{p}/Expand"),
                  helper.make_node("Shape", [cache], [f"{p}/Cshape"], name=f"{p}/Shape_3"),
                  c_node(f"{p}/s1", [1]), c_node(f"{p}/smax", [INT64_MAX]), c_node(f"{p}/sax", [0]),
                  helper.make_node("Slice", [f"{p}/Cshape", f"{p}/s1", f"{p}/smax", f"{p}/sax"], [f"{p}/Ctail"],
                                   name=f"{p}/Slice_shape"),
                  c_node(f"{p}/one_dim", [1]),
                  helper.make_node("Concat", [f"{p}/one_dim", f"{p}/Ctail"], [f"{p}/Rshape"], axis=0,
                                   name=f"{p}/Concat_shape"),
                  helper.make_node("Reshape", [f"{p}/E", f"{p}/Rshape"], [f"{p}/R"], name=f"{p}/Reshape"),
                  helper.make_node("ScatterND", [cache, f"idx{l}", f"{p}/R"], [out], name=f"{p}/ScatterND")]
        cache, v = out, f"{p}/v"
    nodes.append(helper.make_node("Identity", [v], ["y"], name="Identity_y"))
    protocol = {"first_call": [{"inter_cache": "random"}, {"inter_cache": "zeros"}],
                "feedback": [{"output": "inter_cache_out", "input": "inter_cache"}]}
    s = Spec(name, 4, "onnx.helper following GTCRN's stream export (PyTorch 1.11, opset 11, not simplified), opset 11, IR 6",
             f"x [seq,{f},{c}] = [frames, frequency, channels] (batch 1 folded). Intra-frame: GRU_700, bidirectional "
             f"(H {hi}, linear_before_reset 1) over Transpose(x) [{f},seq,{c}] (frequency is its sequence, the frames "
             "its batch) from ConstantOfShape(Concat([2], Shape[1], [2])) zeros, added back to x. Inter-frame, 2 "
             f"blocks x 2 GRUs (I 2, H {h}, batch {f}) on inter_cache [2,1,{f},{2 * h}]: h0 = the torch.chunk halves "
             "Slice(G, 0 / half, half*1 / half*2, axes [-1]) of G = Gather(C_l, l), half = Div(Add(Gather(Shape(G), "
             "[-1]), 1), 2); C_{l+1} = ScatterND(C_l, [[l]], Reshape(Expand(Concat(Y_h a, Y_h b, -1), "
             "Shape(Gather(C_l, l))), Concat([1], Slice(Shape(C_l), [1:])))); block 1 reads the cache updated at 0",
             states, protocol, seq_axes={"x": 0}, output_seq_axes={"y": 0}, dims={"seq": 8})
    s.model = make_hb(nodes, [common.value_info("x", ["seq", f, c]), common.value_info("inter_cache", [2, 1, f, 2 * h])],
                      [common.value_info("y", ["seq", f, c]), common.value_info("inter_cache_out", [2, 1, f, 2 * h])],
                      inits, name, s.note, 11, 6)

    def reference(fd):
        x = np.asarray(fd["x"], np.float64)
        xi = x.transpose(1, 0, 2)                                     # [F, frames, C]
        yf, _ = ref_gru(xi, intra[0].w, intra[0].r, intra[0].b, np.zeros((1, x.shape[0], hi)), 1)
        yr, _ = ref_gru(xi[::-1], intra[1].w, intra[1].r, intra[1].b, np.zeros((1, x.shape[0], hi)), 1)
        y_intra = np.concatenate([yf, yr[::-1]], 1)                   # [F, 2, frames, hi]
        v = x + y_intra.transpose(2, 0, 1, 3).reshape(x.shape[0], f, 2 * hi)
        cache = np.array(fd["inter_cache"], np.float64)
        for l in range(2):
            ys = []
            for half in range(2):
                wt = inter[2 * l + half]
                y, hn = ref_gru(v[..., half * 2:(half + 1) * 2], wt.w, wt.r, wt.b,
                                cache[l][..., half * h:(half + 1) * h], 1)
                cache[l][..., half * h:(half + 1) * h] = hn
                ys.append(y[:, 0])
            v = v + np.concatenate(ys, -1)
        return {"y": v, "inter_cache_out": cache}

    s.reference = reference
    return s


# ---------------------------------------------------------------------------------------------
# Verification in onnxruntime-node
# ---------------------------------------------------------------------------------------------


def io_shapes(model):
    inits = {t.name for t in model.graph.initializer}
    ins = {vi.name: (common.declared_shape(vi), common.NP_OF_ELEM[vi.type.tensor_type.elem_type])
           for vi in model.graph.input if vi.name not in inits}
    outs = {vi.name: common.declared_shape(vi) for vi in model.graph.output}
    return ins, outs


def make_inputs(spec, dims, seed, variant, ints):
    """Feeds at `dims`: x random; each state input per `variant` (random / zeros / empty); `ints` by name."""
    ins, _ = io_shapes(spec.model)
    feeds = {}
    for name, (shape, dtype) in ins.items():
        rng = np.random.RandomState((seed * 1000003 + zlib.crc32(name.encode())) % 2**31)  # x equal across variants
        if name in ints:
            feeds[name] = np.array(ints[name], dtype).reshape(common.concrete_shape(shape, dims))
            continue
        kind = variant.get(name, "random")
        d = dict(dims, batch=0) if kind == "empty" else dims
        value = rng.uniform(-1, 1, common.concrete_shape(shape, d)).astype(dtype)
        feeds[name] = np.zeros_like(value) if kind == "zeros" else value
    return feeds


def rnn_nodes(graph, path="main"):
    for n in graph.node:
        if n.op_type in ("RNN", "GRU", "LSTM"):
            yield path, n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from rnn_nodes(a.g, f"{path}/{n.name}:{a.name}")


def check_expectations(spec):
    """Every recurrent node's states are described, and every described node exists where it says."""
    found = {}
    for path, n in rnn_nodes(spec.model.graph):
        kinds = ["h", "c"] if n.op_type == "LSTM" else ["h"]
        for k in kinds:
            found[(path, n.name, k)] = n
    described = {(s["graph"], s["node"], s["kind"]) for s in spec.states}
    assert described == set(found), f"{spec.name}: described {sorted(described - set(found))} missing " \
                                    f"{sorted(set(found) - described)}"
    for s in spec.states:
        assert s["node"], f"{spec.name}: unnamed node"
        if s["exposed"]:
            r, w = s["reads"], s["writes"]
            assert r and w and r["region"] is not None and (r["region"], r["axes"], r.get("view")) == \
                (w["region"], w["axes"], w.get("view"))
    return found


def debug_model(spec):
    """A copy of the model that also outputs initial_h/initial_c and Y_h/Y_c of every main-graph RNN node."""
    model = copy.deepcopy(spec.model)
    g = model.graph
    taps = {}
    existing = {o.name for o in g.output}
    for n in g.node:
        if n.op_type not in ("RNN", "GRU", "LSTM"):
            continue
        slots = [("h", 5, 1)] + ([("c", 6, 2)] if n.op_type == "LSTM" else [])
        while len(n.output) < 3 and n.op_type == "LSTM":
            n.output.append("")
        for kind, i_slot, o_slot in slots:
            if len(n.output) <= o_slot or not n.output[o_slot]:
                while len(n.output) <= o_slot:
                    n.output.append("")
                n.output[o_slot] = f"{n.name}__dbg_{kind}_final"
            init_name, final_name = n.input[i_slot], n.output[o_slot]
            for value in (init_name, final_name):
                if value not in existing:
                    g.output.append(helper.make_tensor_value_info(value, TensorProto.FLOAT, None))
                    existing.add(value)
            taps[(n.name, kind)] = (init_name, final_name)
    path = os.path.join("/tmp", f"rnnstate_exposed_debug_{os.getpid()}_{spec.name}.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path, taps


def apply_feedback(spec, prev_out, prev_feeds):
    """The next call's state inputs from the previous call's outputs, by the entry's feedback items."""
    nxt = {}
    for item in spec.protocol["feedback"]:
        value = prev_out[item["output"]]
        if item.get("output_region"):
            value = value[region_index(item["output_region"])]
        if item.get("input_region"):
            name = item["input"]
            nxt.setdefault(name, np.full(prev_feeds[name].shape, np.nan, np.float32))
            nxt[name][region_index(item["input_region"])] = value
        else:
            nxt[item["input"]] = value
    for name, v in nxt.items():
        assert not np.isnan(v).any(), f"{spec.name}: feedback leaves part of {name} unset"
    return nxt


def slice_seq(spec, feeds, start, length):
    out = dict(feeds)
    for name, axis in spec.seq_axes.items():
        out[name] = np.take(feeds[name], range(start, start + length), axis=axis)
    return out


def max_diff(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, f"{a.shape} != {b.shape}"
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def verify(specs, ort_node):
    """Full runs against the reference, region checks, and the own-protocol chunked runs (see module doc)."""
    jobs, labels = [], []
    results = {s.name: {"ref": 0.0, "regions": 0, "protocol": []} for s in specs}
    debug_paths = []
    # 1 + 2: full runs (reference and region taps), at the manifest dims and at the export dims
    for s in specs:
        path = os.path.join(common.MODELS, s.rel)
        variants = s.protocol["first_call"]
        for vi, variant in enumerate(variants):
            for dims in (s.dims, EXPORT_DIMS):
                for ints in [s.ints] + s.extra_ints:
                    feeds = make_inputs(s, dims, 100, variant, ints)  # same x for every variant
                    jobs.append((path, feeds))
                    labels.append(("full", s, feeds, dims))
        if any(st["graph"] == "main" for st in s.states):
            dpath, taps = debug_model(s)
            debug_paths.append(dpath)
            feeds = make_inputs(s, s.dims, 200, variants[0], s.ints)
            jobs.append((dpath, feeds))
            labels.append(("taps", s, feeds, taps))
    outs = common.ort_run_many(ort_node, jobs)
    for (what, s, feeds, extra), r in zip(labels, outs):
        if "error" in r:
            raise AssertionError(f"{s.name}: onnxruntime-node: {r['error']}")
        got = r["outputs"]
        if what == "full":
            dims = extra
            if not any(v.size == 0 for v in feeds.values()):  # declared names and shapes (not for empty feeds)
                common.compare_outputs(s.model, dims, got, None, s.name)
            ref = s.reference(feeds)
            for name in ref:
                results[s.name]["ref"] = max(results[s.name]["ref"], max_diff(got[name], ref[name]))
        else:
            taps = extra
            for st in s.states:
                if st["graph"] != "main":
                    continue
                init_name, final_name = taps[(st["node"], st["kind"])]
                init_v = got.get(init_name, feeds.get(init_name))
                final_v = got[final_name]
                if st["reads"]:
                    src = feeds[st["reads"]["tensor"]]
                    view = st["reads"].get("view")
                    want = region_to_state(src, full(st["reads"]["region"], len(view) if view else src.ndim),
                                           st["reads"]["axes"], view)
                    assert max_diff(init_v, want) == 0.0, f"{s.name} {st['node']} {st['kind']}: initial is not the region"
                    results[s.name]["regions"] += 1
                if st["writes"]:
                    dst = got[st["writes"]["tensor"]]
                    view = st["writes"].get("view")
                    want = region_to_state(dst, full(st["writes"]["region"], len(view) if view else dst.ndim),
                                           st["writes"]["axes"], view)
                    diff = max_diff(final_v, want)
                    if s.name == "neg_lossy_cast":
                        assert diff > 0, f"{s.name}: bfloat16 rounding left the final unchanged"
                    else:
                        assert diff == 0.0, f"{s.name} {st['node']} {st['kind']}: final is not the region ({diff})"
                    results[s.name]["regions"] += 1
    for s in specs:
        assert results[s.name]["ref"] <= common.TOLERANCE, f"{s.name}: ORT vs reference {results[s.name]['ref']}"
    # the authors' "empty means default": a full run fed the empty state equals one fed zeros (same x)
    full_runs = {}
    for (what, s, feeds, extra), r in zip(labels, outs):
        if what == "full" and extra == s.dims:
            kinds = {name: ("empty" if v.size == 0 else "zeros" if not v.any() else "random")
                     for name, v in feeds.items() if v.dtype == np.float32 and name not in s.seq_axes}
            key = (s.name, json.dumps({k: v.tolist() for k, v in feeds.items() if v.dtype == np.int64}))
            full_runs.setdefault(key, {})[tuple(sorted(set(kinds.values())))] = r["outputs"]
    by_name = {s.name: s for s in specs}
    for (name, ints), by_kind in full_runs.items():
        if ("empty",) in by_kind:
            d = max(max_diff(by_kind[("empty",)][o], by_kind[("zeros",)][o]) for o in by_kind[("zeros",)])
            if by_name[name].empty_like_zeros:
                assert d <= common.TOLERANCE, f"{name}: empty state != zero state ({d})"
            else:
                assert d > NEGATIVE_MIN_DIFF, f"{name}: the empty-state path equals the zero-state path ({d})"
            results[name]["empty_vs_zeros"] = max(results[name].get("empty_vs_zeros", 0.0), d)
    for p in debug_paths:
        os.remove(p)
    # 3a: an output of another element type cannot be fed back as the input: ONNX Runtime refuses it
    jobs, typed = [], [s for s in specs if s.feedback_type_error]
    for s in typed:
        jobs.append((os.path.join(common.MODELS, s.rel), make_inputs(s, s.dims, 300, s.protocol["first_call"][0], s.ints)))
    for s, (path, feeds), o in zip(typed, jobs, common.ort_run_many(ort_node, jobs)):
        assert "outputs" in o, f"{s.name}: {o.get('error')}"
        fed = slice_seq(s, feeds, 0, s.chunks[0])
        fed.update({item["input"]: o["outputs"][item["output"]] for item in s.protocol["feedback"]})
        again = common.ort_run_many(ort_node, [(path, fed)])[0]
        assert "error" in again and "type" in again["error"], \
            f"{s.name}: ONNX Runtime accepted the output fed back as the input ({again.get('error')})"
        results[s.name]["protocol"].append(("fed back: refused", float("inf")))
    # 3: the authors' own protocol, chunked, in rounds (every model's call k in one node process)
    runs = []
    for s in specs:
        if s.feedback_type_error:
            continue
        for ints in [s.ints] + s.extra_ints:
            for vi, variant in enumerate(s.protocol["first_call"]):
                feeds = make_inputs(s, s.dims, 300 + vi, variant, ints)
                runs.append({"spec": s, "feeds": feeds, "variant": variant, "ints": ints, "outs": [], "reset": False})
                if vi == 0 and not s.negative:
                    # self-test: every call restarts from the first call's state; must NOT equal the full run
                    runs.append({"spec": s, "feeds": feeds, "variant": variant, "ints": ints, "outs": [], "reset": True})
    full_out = common.ort_run_many(ort_node, [(os.path.join(common.MODELS, r["spec"].rel), r["feeds"]) for r in runs])
    for r, o in zip(runs, full_out):
        assert "outputs" in o, f"{r['spec'].name}: {o.get('error')}"
        r["full"] = o["outputs"]
    for k in range(max(len(r["spec"].chunks) for r in runs)):
        jobs = []
        for r in runs:
            s = r["spec"]
            start = sum(s.chunks[:k])
            feeds = slice_seq(s, r["feeds"], start, s.chunks[k])
            if k > 0 and not r["reset"]:
                feeds.update(apply_feedback(s, r["outs"][-1], r["feeds"]))
            jobs.append((os.path.join(common.MODELS, s.rel), feeds))
        for r, o in zip(runs, common.ort_run_many(ort_node, jobs)):
            assert "outputs" in o, f"{r['spec'].name} chunk {k}: {o.get('error')}"
            r["outs"].append(o["outputs"])
    for r in runs:
        s = r["spec"]
        worst = 0.0
        for name, value in r["full"].items():
            if name in s.output_seq_axes:
                got = np.concatenate([o[name] for o in r["outs"]], axis=s.output_seq_axes[name])
            else:
                got = r["outs"][-1][name]
            worst = max(worst, max_diff(got, value))
        label = "/".join(sorted(set(r["variant"].values()))) + (f" {json.dumps(r['ints'])}" if r["ints"] else "")
        if r["reset"]:
            assert worst > NEGATIVE_MIN_DIFF, f"{s.name}: self-test: restarting each call passes ({worst})"
            results[s.name]["reset"] = min(results[s.name].get("reset", 1e9), worst)
            continue
        results[s.name]["protocol"].append((label, worst))
        if s.negative and (s.breaks_on is None or label in s.breaks_on):
            assert worst > s.min_diff, f"{s.name}: the naive chunked run ({label}) equals the full run ({worst})"
        elif s.negative:
            assert worst <= common.TOLERANCE, f"{s.name}: the naive chunked run ({label}) differs by {worst}"
        else:
            assert worst <= common.TOLERANCE, f"{s.name}: own protocol ({label}) differs by {worst}"
    return results


# ---------------------------------------------------------------------------------------------


BUILDERS = [f1_torch_gather, f1_torch_slice_op11, f1_torch_layers_op17, f1_hb_lossless_cast,
            f2_ts_rates_hc, f2_ts_rates_state,
            f3_hb_keras_stack_op11, f3_torch_4d_gather, f3_torch_reshape_transpose,
            lambda: f4_torch_inplace(14), lambda: f4_torch_inplace(11), f4_torch_slice_assign_op17,
            f4_hb_gtcrn_nested_op11, f4_hb_hidden_split, f4_hb_flat_cache_op11,
            f5_torch_direct_in_packed_out, f5_torch_packed_in_direct_out,
            neg_hc_swapped, neg_wrong_rows, neg_not_updated, neg_overlap, neg_cache_wrong_index, neg_lossy_cast,
            neg_scatter_add, neg_scatter_duplicate, neg_slice_negative_end, neg_state_double_out, neg_default_swapped,
            dropout_training_mode, f1_hb_gather_negative, f2_ts_main_if_init,
            f1_hb_silero_rank_ifs, f2_hb_silero_len_default, f1_hb_silero_v31_rows, f4_hb_gtcrn_inter_chunk,
            f1_hb_openvino_unk_dims]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ort-node", default=common.DEFAULT_ORT_NODE, help="path of the onnxruntime-node package")
    args = parser.parse_args()
    specs = [b() for b in BUILDERS]
    entries = []
    for s in specs:
        common.write_model(s.model, s.rel)
        es = s.entries()
        model = common.check_model_file(os.path.join(common.MODELS, s.rel), es[0])
        for e in es[1:]:
            common.check_entry(model, e)
        check_expectations(s)
        entries += es
    results = verify(specs, args.ort_node)
    for s in specs:
        r = results[s.name]
        size = os.path.getsize(os.path.join(common.MODELS, s.rel))
        proto = ", ".join(f"{label}: {d:.1e}" for label, d in r["protocol"])
        extra = f"  reset self-test {r['reset']:.1e}" if "reset" in r else ""
        extra += f"  empty==zeros {r['empty_vs_zeros']:.1e}" if "empty_vs_zeros" in r else ""
        print(f"ok {s.rel:38s} {size:6d} B  ref {r['ref']:.1e}  regions {r['regions']:2d}  "
              f"{'naive feedback' if s.negative else 'own protocol'} {proto}{extra}")
    common.dump_manifest(PENDING, entries)
    print(f"{os.path.relpath(PENDING, common.REPO)}: {len(entries)} entries, {len(specs)} models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
