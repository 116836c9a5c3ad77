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
            dropout_training_mode, f1_hb_gather_negative, f2_ts_main_if_init]


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
