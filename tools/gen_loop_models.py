#!/usr/bin/python3
"""Builds the loop-recurrence test models of rnnstate (issue 10): recurrences written as Loop / Scan over cells
written out by hand (TorchScript exports, tf2onnx-style Loops, a Scan, an autoregressive Loop) and negative
controls; checks them in onnxruntime-node and writes their manifest entries.

    /usr/bin/python3 tools/gen_loop_models.py [--ort-node DIR]

Writes models/loops/*.onnx and models/loops/manifest.part.json, then merges every fragment into
models/manifest.json. See models/loops/README.md.

Checks, every run: onnx.checker.check_model(full_check=True), IR <= 8, every graph input/output typed and shaped
(symbolic dims only batch/seq), size < 100 KB, manifest entry consistent, no RNN/GRU/LSTM node at any depth; ORT
outputs equal PyTorch's (TorchScript exports, at two sets of dims) or a NumPy reference (hand-built) within 1e-5.
Then the future rewrite is emulated in ONNX (the loop's state variables fed from graph inputs, their final values
exposed as graph outputs) and chunked runs with the state fed back are compared with one full run: equal (<= 1e-5)
for every streamable model, different for the negative controls (tools/loop_audit_models.py has the audit's).
Needs Debian's python3-torch, python3-onnx and numpy: run with /usr/bin/python3.
"""

import argparse
import os
import sys
from typing import List

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
from torch import nn

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_handbuilt_models as common  # noqa: E402
import gen_torch_models as gtorch  # noqa: E402
import loop_audit_models as audit  # noqa: E402
import stream_emulation as emu  # noqa: E402

SUBDIR = "loops"
FRAGMENT = common.FRAGMENT
ISSUE = 10
RECURRENT_OPS = {"RNN", "GRU", "LSTM"}
vi = common.value_info
const = common.const


def loop_entry(rel, dims, seq_axes, output_seq_axes, chunks, streaming, zero_default, states, note, reason=None,
               **extra):
    entry = common.manifest_entry(rel, dims, seq_axes, output_seq_axes, chunks, streaming, zero_default, note,
                                  issue=ISSUE, **extra)
    if chunks and not streaming:
        entry["chunks"] = chunks  # a negative control's chunks: they must NOT equal one run
    entry["states"] = states
    entry["streamable"] = streaming if "streamable" not in extra else extra["streamable"]
    if reason:
        entry["not_streamable_reason"] = reason
    entry["note"] = entry.pop("note")
    return entry


def carried_state(node, index, body_input, initial, final, **extra):
    """A state carried by a Loop (index among its carried variables: Loop input 2 + index, output index) or a
    Scan (state variable index: input index, output index)."""
    return dict({"node": node, "graph": "main", "kind": "state", "carried_index": index, "body_input": body_input,
                 "initial": initial, "final": final}, **extra)


def all_ops(graph):
    ops = set()
    for n in graph.node:
        ops.add(n.op_type)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                ops |= all_ops(a.g)
    return ops


# =============================================================================================
# (i) TorchScript loops over hand-written cells
# =============================================================================================


def _param(shape):
    return nn.Parameter(torch.empty(*shape).uniform_(-0.6, 0.6))


class LstmCellLoop(nn.Module):
    """LSTM gate equations written out (PyTorch gate order i, f, g, o) in a scripted loop over time."""

    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.w_ih, self.w_hh, self.b = _param((4 * hidden, input_size)), _param((4 * hidden, hidden)), _param((4 * hidden,))

    def forward(self, x):
        h = torch.zeros(x.size(1), self.hidden)
        c = torch.zeros(x.size(1), self.hidden)
        ys: List[torch.Tensor] = []
        for t in range(x.size(0)):
            gates = torch.matmul(x[t], self.w_ih.t()) + torch.matmul(h, self.w_hh.t()) + self.b
            i, f, g, o = gates.chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            ys.append(h)
        return torch.stack(ys), h, c


class GruCellLoop(nn.Module):
    """GRU equations written out (PyTorch form: r, z, n; n = tanh(W_in x + b_in + r * (W_hn h + b_hn)))."""

    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.w_ih, self.w_hh = _param((3 * hidden, input_size)), _param((3 * hidden, hidden))
        self.b_ih, self.b_hh = _param((3 * hidden,)), _param((3 * hidden,))

    def forward(self, x):
        h = torch.zeros(x.size(1), self.hidden)
        ys: List[torch.Tensor] = []
        for t in range(x.size(0)):
            gi = torch.matmul(x[t], self.w_ih.t()) + self.b_ih
            gh = torch.matmul(h, self.w_hh.t()) + self.b_hh
            i_r, i_z, i_n = gi.chunk(3, 1)
            h_r, h_z, h_n = gh.chunk(3, 1)
            r = torch.sigmoid(i_r + h_r)
            z = torch.sigmoid(i_z + h_z)
            n = torch.tanh(i_n + r * h_n)
            h = (1 - z) * n + z * h
            ys.append(h)
        return torch.stack(ys), h


class MguCellLoop(nn.Module):
    """A minimal gated unit: f = sigmoid(W_f x + U_f h + b_f); n = tanh(W_n x + U_n (f * h) + b_n);
    h = (1 - f) * h + f * n."""

    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.w_f, self.u_f, self.b_f = _param((input_size, hidden)), _param((hidden, hidden)), _param((hidden,))
        self.w_n, self.u_n, self.b_n = _param((input_size, hidden)), _param((hidden, hidden)), _param((hidden,))

    def forward(self, x):
        h = torch.zeros(x.size(1), self.hidden)
        ys: List[torch.Tensor] = []
        for t in range(x.size(0)):
            xt = x[t]
            f = torch.sigmoid(torch.matmul(xt, self.w_f) + torch.matmul(h, self.u_f) + self.b_f)
            n = torch.tanh(torch.matmul(xt, self.w_n) + torch.matmul(f * h, self.u_n) + self.b_n)
            h = (1 - f) * h + f * n
            ys.append(h)
        return torch.stack(ys), h


def main_loop(model):
    loops = [n for n in model.graph.node if n.op_type == "Loop"]
    assert len(loops) == 1, f"{len(loops)} Loops in the main graph"
    return loops[0]


def producer_chain_to_output(model, value):
    """The graph output reached from `value` through Identity nodes (None if none)."""
    outputs = {o.name for o in model.graph.output}
    consumers = {}
    for n in model.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    seen = value
    while True:
        if seen in outputs:
            return seen
        nxt = [n for n in consumers.get(seen, []) if n.op_type == "Identity"]
        if not nxt:
            return None
        seen = nxt[0].output[0]


def torch_cases():
    cases = []

    def case(name, make, hidden, outputs, note, input_size=3, opset=None, as_exported=False):
        rel = f"{SUBDIR}/{name}.onnx"
        entry = loop_entry(rel, {"batch": 2, "seq": 9}, {"x": 0}, {"y": 0}, [4, 2, 3], True, True, [], note,
                           time_input="x:0")
        outs = [("y", ["seq", "batch", hidden])] + [(o, ["batch", hidden]) for o in outputs]
        cases.append(gtorch.Case(rel, lambda: make(input_size, hidden), [("x", ["seq", "batch", input_size])], outs,
                                 {"batch": 3, "seq": 5}, entry, script=True, opset=opset, as_exported=as_exported))

    case("ts_lstm_cell_loop", LstmCellLoop, 4, ["h_n", "c_n"],
         "torch.jit.script loop over time over LSTM gate equations written out (no LSTM op): ONNX Loop with trip "
         "count Shape(x)[0], x[t] = Gather(x, iteration), h and c loop-carried from main-graph zeros "
         "(ConstantOfShape of the batch), per-step h collected in a loop-carried Sequence (SequenceInsert) and "
         "concatenated after the loop (ConcatFromSequence new_axis=1 -> y)")
    case("ts_gru_cell_loop", GruCellLoop, 5, ["h_n"],
         "torch.jit.script loop over time over GRU equations written out (PyTorch r/z/n form): ONNX Loop, h "
         "loop-carried, per-step h in a loop-carried Sequence")
    # As a user exports them: torch's own declarations kept, which are stale inside the body (h declared
    # [seq, batch] for a [batch, 4] state) and name the outputs' hidden axis Looph_n_dim_1; at opset 11
    # the body returns h twice (carried value and scan output, one name).
    case("ts_lstm_cell_loop_as_exported", LstmCellLoop, 4, ["h_n", "c_n"],
         "ts_lstm_cell_loop exported as users do (dynamic axes on inputs and outputs, torch's declarations "
         "kept): the body declares its carried h and c [seq, batch], stale; the state is [batch, 4]",
         as_exported=True)
    case("ts_gru_cell_loop_op11", GruCellLoop, 5, ["h_n"],
         "ts_gru_cell_loop at opset 11, torch's declarations kept: the body returns h both as the carried "
         "value and as the scan output (one value, two body outputs)", opset=11, as_exported=True)
    case("ts_mgu_cell_loop", MguCellLoop, 4, ["h_n"],
         "torch.jit.script loop over a custom minimal gated unit (f = sigmoid(xW_f + hU_f + b_f), n = tanh(xW_n + "
         "(f*h)U_n + b_n), h = (1-f)h + f n): ONNX Loop, h loop-carried", input_size=2)
    return cases


def build_torch(case):
    torch.manual_seed(common.name_seed(case.relpath))
    model, module = gtorch.export(case)
    if case.as_exported:  # the names torch gave the outputs' fixed axes get the sizes the case declares
        declared = dict(case.outputs)
        for vi in model.graph.output:
            for axis, d in enumerate(vi.type.tensor_type.shape.dim):
                if d.dim_param and d.dim_param not in case.entry["dims"]:
                    case.entry["dims"][d.dim_param] = declared[vi.name][axis]
                    case.export_dims[d.dim_param] = declared[vi.name][axis]
    assert not all_ops(model.graph) & RECURRENT_OPS, f"{case.relpath}: recurrent op left"
    loop = main_loop(model)
    body = next(a.g for a in loop.attribute if a.name == "body")
    states, pairs = [], []
    for k, (initial, body_in, final) in enumerate(zip(loop.input[2:], body.input[2:], loop.output)):
        graph_out = producer_chain_to_output(model, final)
        if body_in.type.HasField("sequence_type"):
            continue  # the per-step output accumulator: not a state
        assert graph_out in ("h_n", "c_n"), f"{case.relpath}: carried {body_in.name} reaches {graph_out}"
        kind = graph_out[0]
        states.append(carried_state(loop.name, k, body_in.name, initial, final, cell_state=kind))
        pairs.append((2 + k, k, f"{kind}_state_in", f"{kind}_state_out", ["batch", case.outputs[1][1][1]],
                      TensorProto.FLOAT))
    assert len(states) == len(case.outputs) - 1, f"{case.relpath}: states {states}"
    case.entry["states"] = states
    case.entry["note"] = case.entry.pop("note")
    runs = []
    for dims, seed in ((case.export_dims, 11), (case.entry["dims"], 12)):
        inputs = gtorch.make_inputs(case, dims, seed)
        runs.append(({n: t.numpy() for n, t in inputs.items()}, dims, gtorch.torch_reference(case, module, inputs)))
    emulation = dict(node=loop.name, pairs=pairs, carry={p[2]: p[3] for p in pairs},
                     compare_last={p[3].replace("_state_out", "_n"): p[3] for p in pairs})
    return dict(rel=case.relpath, model=model, entry=case.entry, runs=runs, emulation=emulation,
                seed=common.name_seed(case.relpath))


# =============================================================================================
# (ii) tf2onnx-style Loop: Keras LSTM layer that tf2onnx could not fuse
# =============================================================================================


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def keras_lstm_ref(x_bm, kernel, rk, bias):
    """Keras LSTM (gate order i, f, c, o; kernel [I, 4H]) on a batch-major x [B, S, I]: (y [B,S,H], h, c)."""
    x = x_bm.astype(np.float64)
    batch, seq, _ = x.shape
    hidden = rk.shape[0]
    h, c = np.zeros((batch, hidden)), np.zeros((batch, hidden))
    ys = []
    for t in range(seq):
        zi, zf, zc, zo = np.split(x[:, t] @ kernel + h @ rk + bias, 4, axis=-1)
        c = _sig(zf) * c + _sig(zi) * np.tanh(zc)
        h = _sig(zo) * np.tanh(c)
        ys.append(h)
    return np.stack(ys, 1), h, c


def tf_lstm_models(rng):
    """Three tf2onnx-style Loops with the same weights: fixed seq 6 (constant trip count), symbolic seq (trip count
    Cast-free int64 Shape(x)[1], int32 bound for the inlined cond), and Keras's own time-major form."""
    i, h = 3, 4
    kernel = rng.uniform(-0.6, 0.6, (i, 4 * h)).astype(np.float32)
    rk = rng.uniform(-0.6, 0.6, (h, 4 * h)).astype(np.float32)
    bias = rng.uniform(-0.6, 0.6, (4 * h,)).astype(np.float32)
    fixed_seq = 6

    def build(name, mode, doc):
        """mode: fixed (x [batch, 6, 3], Gather axis 1), dyn (x [batch, seq, 3], Gather axis 1), tm (Transpose to
        time-major in the main graph, Gather axis 0: what Keras's rnn() + tf2onnx give)."""
        seq = fixed_seq if mode == "fixed" else "seq"
        data, axis = ("x", 1) if mode != "tm" else ("x_tm", 0)
        body_nodes = [
            helper.make_node("Gather", [data, "time"], ["x_t"], axis=axis, name="TensorListGetItem"),
            helper.make_node("MatMul", ["x_t", "kernel"], ["xk"]), helper.make_node("MatMul", ["h", "rkernel"], ["hr"]),
            helper.make_node("Add", ["xk", "hr"], ["z0"]), helper.make_node("Add", ["z0", "bias"], ["z"]),
            helper.make_node("Split", ["z"], ["z_i", "z_f", "z_c", "z_o"], axis=1),
            helper.make_node("Sigmoid", ["z_i"], ["g_i"]), helper.make_node("Sigmoid", ["z_f"], ["g_f"]),
            helper.make_node("Tanh", ["z_c"], ["g_c"]), helper.make_node("Sigmoid", ["z_o"], ["g_o"]),
            helper.make_node("Mul", ["g_f", "c"], ["fc"]), helper.make_node("Mul", ["g_i", "g_c"], ["ig"]),
            helper.make_node("Add", ["fc", "ig"], ["c_next"]), helper.make_node("Tanh", ["c_next"], ["c_act"]),
            helper.make_node("Mul", ["g_o", "c_act"], ["h_next"]),
            const("one_i32", np.array(1, np.int32)), helper.make_node("Add", ["time", "one_i32"], ["time_next"]),
            helper.make_node("Less", ["time_next", "time_steps"], ["cond_out"], name="inlined_cond"),
            helper.make_node("Identity", ["kernel"], ["kernel_out"]),
            helper.make_node("Identity", ["rkernel"], ["rkernel_out"]),
            helper.make_node("Identity", ["bias"], ["bias_out"]),
            helper.make_node("Identity", ["h_next"], ["y_t"], name="TensorListSetItem"),
        ]
        body = helper.make_graph(
            body_nodes, "while_body",
            [vi("iter", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL), vi("time", [], TensorProto.INT32),
             vi("kernel", [i, 4 * h]), vi("rkernel", [h, 4 * h]), vi("bias", [4 * h]), vi("h", ["batch", h]),
             vi("c", ["batch", h])],
            [vi("cond_out", [], TensorProto.BOOL), vi("time_next", [], TensorProto.INT32),
             vi("kernel_out", [i, 4 * h]), vi("rkernel_out", [h, 4 * h]), vi("bias_out", [4 * h]),
             vi("h_next", ["batch", h]), vi("c_next", ["batch", h]), vi("y_t", ["batch", h])])
        nodes = []
        if mode == "fixed":
            nodes += [const("max_iterations", np.array(fixed_seq, np.int64)),
                      const("time_steps", np.array(fixed_seq, np.int32))]
        else:
            if mode == "tm":
                nodes += [helper.make_node("Transpose", ["x"], ["x_tm"], perm=[1, 0, 2])]
            nodes += [helper.make_node("Shape", [data], ["data_shape"]),
                      const("seq_axis", np.array(axis, np.int64)),
                      helper.make_node("Gather", ["data_shape", "seq_axis"], ["max_iterations"], axis=0),
                      helper.make_node("Cast", ["max_iterations"], ["time_steps"], to=TensorProto.INT32)]
        nodes += [helper.make_node("Shape", ["x"], ["x_shape"]), const("batch_axis", np.array([0], np.int64)),
                  helper.make_node("Gather", ["x_shape", "batch_axis"], ["batch1"], axis=0),
                  const("units", np.array([h], np.int64)),
                  helper.make_node("Concat", ["batch1", "units"], ["zeros_dims"], axis=0),
                  helper.make_node("ConstantOfShape", ["zeros_dims"], ["zeros"],
                                   value=numpy_helper.from_array(np.zeros(1, np.float32))),
                  const("time0", np.array(0, np.int32)),
                  helper.make_node("Less", ["time0", "time_steps"], ["cond0"], name="initial_cond"),
                  helper.make_node("Loop", ["max_iterations", "cond0", "time0", "W_kernel", "W_recurrent", "W_bias",
                                            "zeros", "zeros"],
                                   ["time_final", "kernel_final", "rkernel_final", "bias_final", "h_n", "c_n", "ys"],
                                   name="lstm_while_loop", body=body),
                  helper.make_node("Transpose", ["ys"], ["y"], perm=[1, 0, 2], name="TensorListStack_transpose")]
        inits = [numpy_helper.from_array(kernel, "W_kernel"), numpy_helper.from_array(rk, "W_recurrent"),
                 numpy_helper.from_array(bias, "W_bias")]
        model = common.make_model(nodes, [vi("x", ["batch", seq, i])],
                                  [vi("y", ["batch", seq, h]), vi("h_n", ["batch", h]), vi("c_n", ["batch", h])],
                                  inits, name, doc)
        model.producer_name = "rnnstate/tools/gen_loop_models.py"
        return model

    def reference(f):
        y, hn, cn = keras_lstm_ref(f["x"], kernel, rk, bias)
        return {"y": y, "h_n": hn, "c_n": cn}

    def states():
        return [carried_state("lstm_while_loop", 4, "h", "zeros", "h_n", cell_state="h"),
                carried_state("lstm_while_loop", 5, "c", "zeros", "c_n", cell_state="c")]

    pairs = [(6, 4, "h_state_in", "h_state_out", ["batch", h], TensorProto.FLOAT),
             (7, 5, "c_state_in", "c_state_out", ["batch", h], TensorProto.FLOAT)]
    emulation = dict(node="lstm_while_loop", pairs=pairs, carry={"h_state_in": "h_state_out",
                                                                 "c_state_in": "c_state_out"},
                     compare_last={"h_n": "h_state_out", "c_n": "c_state_out"})
    layout = ("carried (in order): Keras's int32 `time` counter (Gather index, +1 per step), the weights kernel / "
              "recurrent_kernel / bias (TF while_v2 captures, passed through unchanged), h, c; the inlined cond "
              "Less(time + 1, time_steps); per-step h a scan output, Transpose'd back to batch-major")
    specs = []
    rel = f"{SUBDIR}/tf_lstm_loop_fixed.onnx"
    specs.append(dict(
        rel=rel, model=build("tf_lstm_loop_fixed", "fixed", "tf2onnx-style Loop, fixed seq 6"), reference=reference,
        entry=loop_entry(rel, {"batch": 2}, {}, {}, None, False, True, states(),
                         "tf2onnx-style Loop for a Keras LSTM(4) on x [batch, 6, 3] it could not fuse: trip count a "
                         "constant 6 (the static sequence length), x_t = Gather(x, time, axis 1) from outer scope; "
                         + layout + ". Fixed seq: not streamable as is; with --time-axis x:1 the tool must turn "
                         "the constant trip count (and the int32 bound of the cond) into Shape(x)[1], which gives "
                         "exactly tf_lstm_loop_dyn", reason="fixed sequence length (constant trip count)",
                         time_axis="x:1", time_input="x:1"),
        emulation=None, twin="tf_lstm_loop_dyn",
        # Not checked against the model by verify_all (its x:1 is a fixed dim until --time-axis makes it symbolic).
        extra_entries=[loop_entry(rel, {"batch": 2}, {"x": 1}, {"y": 1}, [2, 1, 3], True, True, states(),
                                  "tf_lstm_loop_fixed rewritten with --time-axis x:1: x's axis 1 becomes symbolic, "
                                  "the constant trip count 6 and the int32 bound of the condition become "
                                  "Shape(x)[1], so chunks of 2, 1 and 3 frames stream (the full run is the "
                                  "original's 6 frames)", time_axis="x:1", time_input="x:1",
                                  rewrite_args=["--time-axis", "x:1"])]))
    rel = f"{SUBDIR}/tf_lstm_loop_dyn.onnx"
    specs.append(dict(
        rel=rel, model=build("tf_lstm_loop_dyn", "dyn", "tf2onnx-style Loop, symbolic seq"), reference=reference,
        entry=loop_entry(rel, {"batch": 2, "seq": 9}, {"x": 1}, {"y": 1}, [3, 4, 2], True, True, states(),
                         "tf_lstm_loop_fixed with seq symbolic (the form --time-axis x:1 produces): trip count "
                         "Gather(Shape(x), 1) (int64), cond bound Cast(that, int32), x_t = Gather(x, time, axis 1); "
                         + layout, time_input="x:1"),
        emulation=emulation))
    rel = f"{SUBDIR}/tf_lstm_loop_tm.onnx"
    specs.append(dict(
        rel=rel, model=build("tf_lstm_loop_tm", "tm", "tf2onnx-style Loop, Keras time-major transpose"),
        reference=reference,
        entry=loop_entry(rel, {"batch": 3, "seq": 8}, {"x": 1}, {"y": 1}, [5, 3], True, True, states(),
                         "the same Loop in the form Keras's rnn() gives tf2onnx: x_tm = Transpose(x, [1,0,2]) in "
                         "the main graph (swap_batch_timestep), trip count Gather(Shape(x_tm), 0), x_t = "
                         "Gather(x_tm, time, axis 0): the loop walks axis 1 of x through the Transpose; " + layout,
                         time_input="x:1"),
        emulation=emulation))
    return specs


# =============================================================================================
# (iii) Scan over a custom cell, (iv) autoregressive Loop, (v) negative controls
# =============================================================================================


def scan_leaky_cell(rng):
    """Scan over x: a leaky-integrator cell h = h + a * (tanh(x W + h U + b) - h), a = sigmoid(v); h the Scan state."""
    i, h = 3, 5
    w, u, b, v = (rng.uniform(-0.8, 0.8, s).astype(np.float32) for s in ((i, h), (h, h), (h,), (h,)))
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "cell_W"], ["xw"]), helper.make_node("MatMul", ["h_prev", "cell_U"], ["hu"]),
         helper.make_node("Add", ["xw", "hu"], ["s0"]), helper.make_node("Add", ["s0", "cell_b"], ["s1"]),
         helper.make_node("Tanh", ["s1"], ["cand"]), helper.make_node("Sub", ["cand", "h_prev"], ["delta"]),
         helper.make_node("Sigmoid", ["cell_v"], ["rate"]), helper.make_node("Mul", ["rate", "delta"], ["step"]),
         helper.make_node("Add", ["h_prev", "step"], ["h_next"]), helper.make_node("Identity", ["h_next"], ["y_t"])],
        "body", [vi("h_prev", ["batch", h]), vi("x_t", ["batch", i])], [vi("h_next", ["batch", h]), vi("y_t", ["batch", h])])
    nodes = common.batch_shape_nodes("x", 1, h, "h0_dims_3d", "h0")
    nodes += [const("h0_dims_idx", np.array([1, 2], np.int64)),
              helper.make_node("Gather", ["h0_dims_3d", "h0_dims_idx"], ["h0_dims"], axis=0),
              helper.make_node("ConstantOfShape", ["h0_dims"], ["h0"], value=numpy_helper.from_array(np.zeros(1, np.float32))),
              helper.make_node("Scan", ["h0", "x"], ["h_n", "y"], name="leaky_scan", body=body, num_scan_inputs=1)]
    inits = [numpy_helper.from_array(a, n) for a, n in ((w, "cell_W"), (u, "cell_U"), (b, "cell_b"), (v, "cell_v"))]
    model = common.make_model(nodes, [vi("x", ["seq", "batch", i])], [vi("y", ["seq", "batch", h]), vi("h_n", ["batch", h])],
                              inits, "scan_leaky_cell", scan_leaky_cell.__doc__)

    def reference(f):
        x = f["x"].astype(np.float64)
        hs = np.zeros((x.shape[1], h))
        ys = []
        for xt in x:
            hs = hs + _sig(v) * (np.tanh(xt @ w + hs @ u + b) - hs)
            ys.append(hs)
        return {"y": np.stack(ys), "h_n": hs}

    rel = f"{SUBDIR}/scan_leaky_cell.onnx"
    return [dict(rel=rel, model=model, reference=reference, entry=loop_entry(
        rel, {"batch": 3, "seq": 8}, {"x": 0}, {"y": 0}, [2, 6], True, True,
        [carried_state("leaky_scan", 0, "h_prev", "h0", "h_n")],
        "Scan (opset 9+ form, num_scan_inputs 1) over x [seq, batch, 3]: state variable h [batch, 5] from a main-graph "
        "ConstantOfShape of the batch; body a custom leaky-integrator cell h + sigmoid(v) * (tanh(x W + h U + b) - h) "
        "(no recurrent op); scan output y; final h_n a graph output", time_input="x:0"),
        emulation=dict(node="leaky_scan", pairs=[(0, 0, "h_state_in", "h_state_out", ["batch", h], TensorProto.FLOAT)],
                       carry={"h_state_in": "h_state_out"}, compare_last={"h_n": "h_state_out"}))]


def scan_nobatch_cell(rng):
    """Scan over x [seq, 2] without a batch: a leaky cell s = 0.5 s + tanh(x W); s [2] starts from a zero initializer."""
    w = rng.uniform(-0.8, 0.8, (2, 2)).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "cell_W"], ["xw"]), helper.make_node("Tanh", ["xw"], ["cand"]),
         helper.make_node("Mul", ["s_prev", "half"], ["kept"]), helper.make_node("Add", ["kept", "cand"], ["s_next"]),
         helper.make_node("Identity", ["s_next"], ["y_t"])],
        "body", [vi("s_prev", [2]), vi("x_t", [2])], [vi("s_next", [2]), vi("y_t", [2])])
    nodes = [helper.make_node("Scan", ["s0", "x"], ["s_n", "y"], name="nobatch_scan", body=body, num_scan_inputs=1)]
    inits = [numpy_helper.from_array(np.zeros(2, np.float32), "s0"), numpy_helper.from_array(w, "cell_W"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    model = common.make_model(nodes, [vi("x", ["seq", 2])], [vi("y", ["seq", 2]), vi("s_n", [2])], inits,
                              "scan_nobatch_cell", scan_nobatch_cell.__doc__)

    def reference(f):
        st = np.zeros(2)
        ys = []
        for xt in f["x"].astype(np.float64):
            st = 0.5 * st + np.tanh(xt @ w)
            ys.append(st)
        return {"y": np.stack(ys), "s_n": st}

    rel = f"{SUBDIR}/scan_nobatch_cell.onnx"
    return [dict(rel=rel, model=model, reference=reference, entry=loop_entry(
        rel, {"seq": 7}, {"x": 0}, {"y": 0}, [3, 4], True, True,
        [carried_state("nobatch_scan", 0, "s_prev", "s0", "s_n")],
        "Scan over x [seq, 2] with no batch axis anywhere: state s [2] from a zero initializer (metadata batch_axis -1; "
        "--pack tensor refuses it, --pack sequence carries it); body s = 0.5 s + tanh(x W); final s_n a graph output",
        time_input="x:0"),
        emulation=dict(node="nobatch_scan", pairs=[(0, 0, "s_state_in", "s_state_out", [2], TensorProto.FLOAT)],
                       carry={"s_state_in": "s_state_out"}, compare_last={"s_n": "s_state_out"}))]


def ar_gru_cell(rng):
    """Autoregressive Loop (trip count = graph input `steps`): x_t = tanh(h P) + context; GRU equations by hand."""
    i, h = 3, 4
    mats = {n: rng.uniform(-0.7, 0.7, s).astype(np.float32) for n, s in
            (("P", (h, i)), ("Wz", (i, h)), ("Uz", (h, h)), ("bz", (h,)), ("Wr", (i, h)), ("Ur", (h, h)), ("br", (h,)),
             ("Wn", (i, h)), ("Un", (h, h)), ("bn", (h,)))}

    def lin(x, hh, g, out):
        return [helper.make_node("MatMul", [x, "ar_W" + g], [out + "_x"]),
                helper.make_node("MatMul", [hh, "ar_U" + g], [out + "_h"]),
                helper.make_node("Add", [out + "_x", out + "_h"], [out + "_s"]),
                helper.make_node("Add", [out + "_s", "ar_b" + g], [out])]

    body_nodes = [helper.make_node("MatMul", ["h_prev", "ar_P"], ["fb"]), helper.make_node("Tanh", ["fb"], ["fb_t"]),
                  helper.make_node("Add", ["fb_t", "context"], ["x_t"])]
    body_nodes += lin("x_t", "h_prev", "z", "az") + [helper.make_node("Sigmoid", ["az"], ["z"])]
    body_nodes += lin("x_t", "h_prev", "r", "ar") + [helper.make_node("Sigmoid", ["ar"], ["r"])]
    body_nodes += [helper.make_node("Mul", ["r", "h_prev"], ["rh"])] + lin("x_t", "rh", "n", "an")
    body_nodes += [helper.make_node("Tanh", ["an"], ["n"]), helper.make_node("Sub", ["h_prev", "n"], ["hmn"]),
                   helper.make_node("Mul", ["z", "hmn"], ["zhmn"]), helper.make_node("Add", ["n", "zhmn"], ["h_next"]),
                   helper.make_node("Identity", ["h_next"], ["y_t"]),
                   helper.make_node("Identity", ["cond_in"], ["cond_out"])]
    body = helper.make_graph(body_nodes, "body",
                             [vi("iter", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL),
                              vi("h_prev", ["batch", h])],
                             [vi("cond_out", [], TensorProto.BOOL), vi("h_next", ["batch", h]), vi("y_t", ["batch", h])])
    nodes = common.batch_shape_nodes("context", 0, h, "h0_dims_3d", "h0")
    nodes += [const("h0_dims_idx", np.array([1, 2], np.int64)),
              helper.make_node("Gather", ["h0_dims_3d", "h0_dims_idx"], ["h0_dims"], axis=0),
              helper.make_node("ConstantOfShape", ["h0_dims"], ["h0"], value=numpy_helper.from_array(np.zeros(1, np.float32))),
              helper.make_node("Loop", ["steps", "", "h0"], ["h_n", "ys"], name="decode", body=body)]
    inits = [numpy_helper.from_array(a, "ar_" + n) for n, a in mats.items()]
    model = common.make_model(nodes, [vi("context", ["batch", i]), vi("steps", [], TensorProto.INT64)],
                              [vi("ys", ["seq", "batch", h]), vi("h_n", ["batch", h])], inits, "ar_gru_cell",
                              ar_gru_cell.__doc__)

    def reference(f):
        m = {k: v.astype(np.float64) for k, v in mats.items()}
        ctx = f["context"].astype(np.float64)
        hs = np.zeros((ctx.shape[0], h))
        ys = []
        for _ in range(int(f["steps"])):
            x = np.tanh(hs @ m["P"]) + ctx
            z = _sig(x @ m["Wz"] + hs @ m["Uz"] + m["bz"])
            r = _sig(x @ m["Wr"] + hs @ m["Ur"] + m["br"])
            n = np.tanh(x @ m["Wn"] + (r * hs) @ m["Un"] + m["bn"])
            hs = n + z * (hs - n)
            ys.append(hs)
        return {"ys": np.stack(ys), "h_n": hs}

    rel = f"{SUBDIR}/ar_gru_cell.onnx"
    return [dict(rel=rel, model=model, reference=reference, entry=loop_entry(
        rel, {"batch": 2, "seq": 9}, {}, {"ys": 0}, [4, 2, 3], True, True,
        [carried_state("decode", 0, "h_prev", "h0", "h_n")],
        "autoregressive Loop: trip count the int64 scalar graph input `steps` (no time input), cond input absent; "
        "carried h [batch, 4] (from a ConstantOfShape of context's batch) feeds the next step's input x_t = "
        "tanh(h P) + context; GRU equations written out; per-step h the scan output ys. Streamable: M1 then M2 "
        "iterations with h fed back = M1 + M2 iterations (chunk_mode trip_count)",
        chunk_mode="trip_count", trip_count_input="steps", inputs_int={"steps": [9]}),
        emulation=dict(node="decode", pairs=[(2, 0, "h_state_in", "h_state_out", ["batch", h], TensorProto.FLOAT)],
                       carry={"h_state_in": "h_state_out"}, compare_last={"h_n": "h_state_out"}))]


def time_loop_model(rng, name, doc, use_counter, passthrough):
    """Loop over time (trip Shape(x)[0], x_t = Gather(x, iter)) over a tanh cell; use_counter: h += 0.1 * iter;
    passthrough: a second carried variable p (initial: graph input `offset`) passed through unchanged and added
    inside the cell."""
    i, h = 3, 4
    w, u, b = (rng.uniform(-0.7, 0.7, s).astype(np.float32) for s in ((i, h), (h, h), (h,)))
    body_nodes = [helper.make_node("Gather", ["x", "iter"], ["x_t"], axis=0),
                  helper.make_node("MatMul", ["x_t", "cell_W"], ["xw"]),
                  helper.make_node("MatMul", ["h_prev", "cell_U"], ["hu"]), helper.make_node("Add", ["xw", "hu"], ["s0"]),
                  helper.make_node("Add", ["s0", "cell_b"], ["s1"])]
    last = "s1"
    if passthrough:
        body_nodes += [helper.make_node("Add", ["s1", "p_prev"], ["s2"]), helper.make_node("Identity", ["p_prev"], ["p_next"])]
        last = "s2"
    body_nodes += [helper.make_node("Tanh", [last], ["cell"])]
    if use_counter:
        body_nodes += [helper.make_node("Cast", ["iter"], ["iter_f"], to=TensorProto.FLOAT),
                       const("tenth", np.array(0.1, np.float32)), helper.make_node("Mul", ["iter_f", "tenth"], ["drift"]),
                       helper.make_node("Add", ["cell", "drift"], ["h_next"])]
    else:
        body_nodes += [helper.make_node("Identity", ["cell"], ["h_next"])]
    body_nodes += [helper.make_node("Identity", ["h_next"], ["y_t"]), helper.make_node("Identity", ["cond_in"], ["cond_out"])]
    carried_in = [vi("h_prev", ["batch", h])] + ([vi("p_prev", [h])] if passthrough else [])
    carried_out = [vi("h_next", ["batch", h])] + ([vi("p_next", [h])] if passthrough else [])
    body = helper.make_graph(body_nodes, "body",
                             [vi("iter", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL)] + carried_in,
                             [vi("cond_out", [], TensorProto.BOOL)] + carried_out + [vi("y_t", ["batch", h])])
    nodes = common.batch_shape_nodes("x", 1, h, "h0_dims_3d", "h0")
    nodes += [const("h0_dims_idx", np.array([1, 2], np.int64)),
              helper.make_node("Gather", ["h0_dims_3d", "h0_dims_idx"], ["h0_dims"], axis=0),
              helper.make_node("ConstantOfShape", ["h0_dims"], ["h0"], value=numpy_helper.from_array(np.zeros(1, np.float32)))]
    nodes += common.seq_trip_nodes("x", "trip")
    outs = ["h_n"] + (["p_final"] if passthrough else []) + ["y"]
    nodes += [helper.make_node("Loop", ["trip", "", "h0"] + (["offset"] if passthrough else []), outs, name="time",
                               body=body)]
    inputs = [vi("x", ["seq", "batch", i])] + ([vi("offset", [h])] if passthrough else [])
    inits = [numpy_helper.from_array(a, n) for a, n in ((w, "cell_W"), (u, "cell_U"), (b, "cell_b"))]
    model = common.make_model(nodes, inputs, [vi("y", ["seq", "batch", h]), vi("h_n", ["batch", h])], inits, name, doc)

    def reference(f):
        x = f["x"].astype(np.float64)
        hs = np.zeros((x.shape[1], h))
        ys = []
        for t, xt in enumerate(x):
            s = xt @ w + hs @ u + b + (f["offset"] if passthrough else 0)
            hs = np.tanh(s) + (0.1 * t if use_counter else 0)
            ys.append(hs)
        return {"y": np.stack(ys), "h_n": hs}

    return model, reference


def neg_counter_in_state(rng):
    """Loop over time whose body adds 0.1 * iteration counter to the state: chunked runs restart the counter."""
    model, reference = time_loop_model(rng, "neg_counter_in_state", neg_counter_in_state.__doc__, True, False)
    rel = f"{SUBDIR}/neg_counter_in_state.onnx"
    return [dict(rel=rel, model=model, reference=reference, entry=loop_entry(
        rel, {"batch": 2, "seq": 7}, {"x": 0}, {"y": 0}, [3, 4], False, True,
        [carried_state("time", 0, "h_prev", "h0", "h_n")],
        "NEGATIVE CONTROL. Loop over time (trip Shape(x)[0], x_t = Gather(x, iter)), h loop-carried, but the body "
        "also reads the iteration counter for something other than indexing time: h = tanh(x_t W + h U + b) + "
        "0.1 * Cast(iter). A chunked run restarts iter at 0 in every call, so feeding h back does not reproduce "
        "the full run (shown by the generator): the state is real but the loop is not streamable",
        reason="the body uses the iteration counter beyond indexing the time input (added into the state)",
        time_input="x:0", expect_chunking_differs=True),
        emulation=dict(node="time", pairs=[(2, 0, "h_state_in", "h_state_out", ["batch", 4], TensorProto.FLOAT)],
                       carry={"h_state_in": "h_state_out"}, compare_last={"h_n": "h_state_out"}, expect_differs=True,
                       chunks=[3, 4]))]


def loop_passthrough_var(rng):
    """Loop over time carrying h (a state) and p (passed through unchanged: not a state)."""
    model, reference = time_loop_model(rng, "loop_passthrough_var", loop_passthrough_var.__doc__, False, True)
    rel = f"{SUBDIR}/loop_passthrough_var.onnx"
    return [dict(rel=rel, model=model, reference=reference, entry=loop_entry(
        rel, {"batch": 2, "seq": 8}, {"x": 0}, {"y": 0}, [5, 3], True, True,
        [carried_state("time", 0, "h_prev", "h0", "h_n")],
        "Loop over time with two carried variables: h (a state: h = tanh(x_t W + h U + b + p)) and p, whose body "
        "output is its body input unchanged (Identity; initial value the graph input `offset` [4], fed identically "
        "on every call) and whose final value (p_final) is not a graph output. Only h is a state; p is loop-invariant "
        "and must not be exposed as a state", not_states=[{"node": "time", "carried_index": 1, "body_input": "p_prev",
                                                          "why": "passed through unchanged (loop-invariant)"}],
        time_input="x:0"),
        emulation=dict(node="time", pairs=[(2, 0, "h_state_in", "h_state_out", ["batch", 4], TensorProto.FLOAT)],
                       carry={"h_state_in": "h_state_out"}, compare_last={"h_n": "h_state_out"}))]


def audit_hand_models(rng):
    """The hand-built cases of issue 10's audit (tools/loop_audit_models.py)."""
    return audit.hand_specs(loop_entry, carried_state, rng)


BUILDERS = [tf_lstm_models, scan_leaky_cell, scan_nobatch_cell, ar_gru_cell, neg_counter_in_state, loop_passthrough_var,
            audit_hand_models]


def make_feeds(model, entry, seed):
    return common.make_feeds(model, entry, seed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ort-node", default=common.DEFAULT_ORT_NODE, help="path of the onnxruntime-node package")
    args = parser.parse_args()
    specs = [build_torch(case) for case in torch_cases()] + audit.torch_specs(loop_entry, carried_state)
    for builder in BUILDERS:
        seed = common.name_seed(builder.__name__)
        for spec in builder(np.random.RandomState(seed)):
            spec["seed"] = common.name_seed(spec["rel"])
            runs = []
            for dims in (spec["entry"]["dims"], dict(spec["entry"]["dims"], batch=3) if "batch" in spec["entry"]["dims"]
                         else spec["entry"]["dims"]):
                feeds = make_feeds(spec["model"], dict(spec["entry"], dims=dims), spec["seed"] + 1)
                runs.append((feeds, dims, spec["reference"](feeds)))
            spec["runs"] = runs
            specs.append(spec)
    for s in specs:
        common.write_model(s["model"], s["rel"])
        assert not all_ops(s["model"].graph) & RECURRENT_OPS, f"{s['rel']}: recurrent op"
    # static checks + ORT vs PyTorch / NumPy (the shared harness of the other generators)
    common.verify_all([(s["rel"], s["entry"], s["runs"]) for s in specs], args.ort_node)

    with emu.new_tmpdir() as tmp:
        jobs, where = [], []
        by_rel = {s["rel"]: s for s in specs}
        for s in specs:
            em = s.get("emulation")
            if em is None:
                continue
            e = s["entry"]
            exposed = emu.expose(s["model"], em["node"], em["pairs"])
            path = emu.write_temp(exposed, tmp, os.path.basename(s["rel"]) + ".exposed.onnx")
            chunks = em.get("chunks", e.get("chunks"))
            feeds = make_feeds(s["model"], e, s["seed"] + 2)
            some = next(iter(feeds.values()))
            declared = list(common.declared_shape(s["model"].graph.input[0]))
            batch = some.shape[declared.index("batch")] if "batch" in declared else None  # none: scan_nobatch_cell
            # The first call's state: zeros, or (first_fill) the original initial value the full run starts from.
            first = {}
            for p in em["pairs"]:
                shape = [batch if d == "batch" else d for d in p[4]]
                fill = em.get("first_fill", {}).get(p[2], 0)
                first[p[2]] = np.broadcast_to(np.asarray(fill), shape).astype(common.NP_OF_ELEM[p[5]]).copy()
            if e.get("chunk_mode") == "trip_count":
                trip = e["trip_count_input"]
                parts = [dict(feeds, **{trip: np.array(n, np.int64)}) for n in chunks]
            else:
                parts = emu.split_feeds(feeds, e["seq_axes"], chunks)
            calls = [(dict(parts[0], **first), None)] + [(p, em["carry"]) for p in parts[1:]]
            # self-test: the same chunks with the state reset to zeros in every call must NOT match
            reset = [(dict(p, **first), None) for p in parts]
            jobs += [{"model": os.path.join(common.MODELS, s["rel"]), "calls": [(feeds, None)]},
                     {"model": path, "calls": calls}, {"model": path, "calls": reset}]
            where.append(s)
        # the fixed-length tf2onnx Loop equals its symbolic twin (what --time-axis x:1 must produce) at seq 6
        fixed = by_rel[f"{SUBDIR}/tf_lstm_loop_fixed.onnx"]
        twin = by_rel[f"{SUBDIR}/tf_lstm_loop_dyn.onnx"]
        twin_feeds = make_feeds(fixed["model"], fixed["entry"], 5)
        jobs += [{"model": os.path.join(common.MODELS, fixed["rel"]), "calls": [(twin_feeds, None)]},
                 {"model": os.path.join(common.MODELS, twin["rel"]), "calls": [(twin_feeds, None)]}]
        results = emu.run_chains(args.ort_node, jobs)
        for k, s in enumerate(where):
            full, chunked, reset = results[3 * k][0], results[3 * k + 1], results[3 * k + 2]
            e, em = s["entry"], s["emulation"]
            diff = emu.compare_chunked(full, chunked, e["output_seq_axes"], em["compare_last"])
            s["chunked"] = diff
            s["reset"] = emu.compare_chunked(full, reset, e["output_seq_axes"], em["compare_last"])
            assert s["reset"] > 1e-3, f"{s['rel']}: resetting the state between chunks goes unnoticed ({s['reset']})"
            if em.get("expect_differs"):
                assert diff > 1e-3, f"{s['rel']}: the negative control streams ({diff})"
            else:
                assert diff <= common.TOLERANCE, f"{s['rel']}: chunked differs from full by {diff}"
        a, b = results[-2][0], results[-1][0]
        fixed["twin_diff"] = max(float(np.max(np.abs(a[n] - b[n]))) for n in a)
        assert fixed["twin_diff"] == 0.0, f"fixed vs dyn: {fixed['twin_diff']}"

    for s in specs:
        if "chunked" in s:
            tag = "DIFFERS (negative control)" if s["emulation"].get("expect_differs") else "equal"
            print(f"   {s['rel']:38s} chunked {s['emulation'].get('chunks', s['entry'].get('chunks'))} vs full: "
                  f"max|diff| {s['chunked']:.1e} ({tag}); state reset each call: {s['reset']:.1e}")
        elif "twin_diff" in s:
            print(f"   {s['rel']:38s} vs tf_lstm_loop_dyn at seq 6: max|diff| {s['twin_diff']:.1e}")
    common.write_fragment(SUBDIR, [e for s in specs for e in [s["entry"]] + s.get("extra_entries", [])])
    common.merge_manifest()
    return 0


if __name__ == "__main__":
    sys.exit(main())
