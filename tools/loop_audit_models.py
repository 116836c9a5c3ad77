#!/usr/bin/python3
"""The models/loops cases from the audit of issue 10 (not a generator itself: tools/gen_loop_models.py builds,
checks and writes them with the others).

Positive cases that an older rnnstate got wrong (a carried value recomputed every step but read by the cell is a
state: a delay line; an int64 token; a state whose final value is no graph output; a state without a batch axis and
a non-zero initial value) and negative controls it called streamable although chunked runs differ (the cell reads
the sequence length, the collector is read by the body, a pass-through initialised from a mean over time, a mean
over time after the loop). TorchScript exports where torch.jit.script writes the pattern itself, hand-built
tf2onnx-style graphs otherwise.
"""

import os
import sys
from typing import List

import numpy as np
import torch
from onnx import TensorProto, helper, numpy_helper
from torch import nn

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_handbuilt_models as common  # noqa: E402
import gen_torch_models as gtorch  # noqa: E402

SUBDIR = "loops"
vi = common.value_info
const = common.const


def _param(*shape, scale=0.6):
    return nn.Parameter(torch.empty(*shape).uniform_(-scale, scale))


# ---------------------------------------------------------------------------------------------
# TorchScript modules
# ---------------------------------------------------------------------------------------------


class DelayLine(nn.Module):
    """h = tanh(x[t] W + h U + prev V); prev = x[t]: prev is recomputed every step, but read by the next one."""

    def __init__(self):
        super().__init__()
        self.w, self.u, self.v = _param(3, 4), _param(4, 4), _param(3, 4)

    def forward(self, x):
        h = torch.zeros(x.size(1), 4)
        prev = torch.zeros(x.size(1), 3)
        ys: List[torch.Tensor] = []
        for t in range(x.size(0)):
            h = torch.tanh(torch.matmul(x[t], self.w) + torch.matmul(h, self.u) + torch.matmul(prev, self.v))
            prev = x[t]
            ys.append(h)
        return torch.stack(ys)


class TokenDecoder(nn.Module):
    """Greedy decoder: h and the int64 token carried (the token starts at 1), `steps` iterations."""

    def __init__(self):
        super().__init__()
        self.emb, self.u, self.out = _param(5, 4), _param(4, 4), _param(4, 5, scale=1.5)

    def forward(self, ctx, steps):
        h = torch.zeros(ctx.size(0), 4)
        tok = torch.ones(ctx.size(0), dtype=torch.long)
        toks: List[torch.Tensor] = []
        for _ in range(int(steps)):
            h = torch.tanh(self.emb[tok] + torch.matmul(h, self.u) + ctx)
            tok = torch.argmax(torch.matmul(h, self.out), 1)
            toks.append(tok)
        return torch.stack(toks), h


class _Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.w, self.u = _param(3, 4), _param(4, 4)


class LengthInCell(_Cell):
    """h = h + tanh(x[t] W + h U) / len(x): the cell reads the sequence length (negative control)."""

    def forward(self, x):
        h = torch.zeros(x.size(1), 4)
        ys: List[torch.Tensor] = []
        for t in range(x.size(0)):
            h = h + torch.tanh(torch.matmul(x[t], self.w) + torch.matmul(h, self.u)) / x.size(0)
            ys.append(h)
        return torch.stack(ys), h


class CollectorRead(_Cell):
    """h = tanh(x[t] W + h U + 0.1 len(ys)): the cell reads the list it appends to (negative control)."""

    def forward(self, x):
        h = torch.zeros(x.size(1), 4)
        ys: List[torch.Tensor] = []
        for t in range(x.size(0)):
            h = torch.tanh(torch.matmul(x[t], self.w) + torch.matmul(h, self.u) + 0.1 * len(ys))
            ys.append(h)
        return torch.stack(ys), h


class MeanOverTime(_Cell):
    """The per-step h averaged over time after the loop (negative control)."""

    def forward(self, x):
        h = torch.zeros(x.size(1), 4)
        ys: List[torch.Tensor] = []
        for t in range(x.size(0)):
            h = torch.tanh(torch.matmul(x[t], self.w) + torch.matmul(h, self.u))
            ys.append(h)
        return torch.stack(ys).mean(0), h


def _loop_of(model):
    loops = [n for n in model.graph.node if n.op_type == "Loop"]
    assert len(loops) == 1, f"{len(loops)} Loops in the main graph"
    return loops[0]


def torch_specs(loop_entry, carried_state):
    """Specs (as gen_loop_models.build_torch returns) of the TorchScript cases."""
    seq_in = [("x", ["seq", "batch", 3])]
    cases = [
        # name, module, inputs, outputs, states (carried index, kind, shape, elem type, first fill), extra
        ("ts_delay_line_loop", DelayLine, seq_in, [("y", ["seq", "batch", 4])],
         [(0, [4], TensorProto.FLOAT, 0), (1, [3], TensorProto.FLOAT, 0)], True,
         "torch.jit.script loop over time: h = tanh(x[t] W + h U + prev V), prev = x[t] (a delay line: recomputed "
         "every step but read by the next one, so a state); per-step h collected in a Sequence; only y is "
         "returned, so neither final state is a graph output (the rewrite adds both). An older rnnstate called "
         "prev no state and the loop streamable: chunked y differed", {}),
        ("ts_token_decoder", TokenDecoder, [("ctx", ["batch", 4]), ("steps", [])],
         [("toks", ["seq", "batch"]), ("h_n", ["batch", 4])],
         [(0, [4], TensorProto.FLOAT, 0), (1, [], TensorProto.INT64, 1)], True,
         "torch.jit.script greedy decoder: trip count the int64 graph input `steps`, h [batch, 4] and the int64 "
         "token [batch] carried (the token starts at 1: its default is the original value, init \"empty\"), "
         "tok = argmax(h Wo), per-step tokens collected. Streamable: M1 then M2 steps with h and tok fed back = "
         "M1 + M2 steps (chunk_mode trip_count). An older rnnstate exited 4 on the int64 state",
         dict(chunk_mode="trip_count", trip_count_input="steps", inputs_int={"steps": [9]})),
        ("ts_neg_length_in_cell", LengthInCell, seq_in, [("y", ["seq", "batch", 4]), ("h_n", ["batch", 4])],
         [(0, [4], TensorProto.FLOAT, 0)], False,
         "NEGATIVE CONTROL. torch.jit.script loop whose cell divides by x.size(0): the body reads the trip count "
         "(the length of x) from outer scope, so each chunk sees its own length",
         dict(reason="the body reads the length of x (the trip count) in the cell")),
        ("ts_neg_collector_read", CollectorRead, seq_in, [("y", ["seq", "batch", 4]), ("h_n", ["batch", 4])],
         [(0, [4], TensorProto.FLOAT, 0)], False,
         "NEGATIVE CONTROL. torch.jit.script loop whose cell adds 0.1 * len(ys) of the list it appends to: "
         "SequenceLength of the carried Sequence in the body, so the collector carries a count from step to step "
         "(unclassified, check warns; each chunk restarts it)",
         dict(reason="the body reads the carried sequence (SequenceLength)")),
        ("ts_neg_mean_over_time", MeanOverTime, seq_in, [("y", ["batch", 4]), ("h_n", ["batch", 4])],
         [(0, [4], TensorProto.FLOAT, 0)], False,
         "NEGATIVE CONTROL. torch.jit.script loop whose per-step h are averaged over time after the loop "
         "(ConcatFromSequence -> ReduceMean over axis 0): each chunk averages its own steps",
         dict(reason="a mean over time after the loop")),
    ]
    specs = []
    for name, make, inputs, outputs, states, streaming, note, extra in cases:
        rel = f"{SUBDIR}/{name}.onnx"
        trip = extra.get("chunk_mode") == "trip_count"
        dims = {"batch": 2, "seq": 9}
        out_axes = {o: 0 for o, shape in outputs if shape and shape[0] == "seq"}
        reason = extra.pop("reason", None)
        chunks = [4, 2, 3] if streaming else [3, 6]
        zero = all(fill == 0 for *_, fill in states)
        entry = loop_entry(rel, dims, {} if trip else {"x": 0}, out_axes, chunks, streaming, zero, [], note,
                           reason=reason, **dict(extra, **({} if trip else {"time_input": "x:0"}),
                                                 **({} if streaming else {"expect_chunking_differs": True})))
        case = gtorch.Case(rel, make, inputs, outputs, {"batch": 3, "seq": 9 if trip else 5}, entry, script=True)
        torch.manual_seed(common.name_seed(rel))
        model, module = gtorch.export(case)
        loop = _loop_of(model)
        body = next(a.g for a in loop.attribute if a.name == "body")
        found, pairs, first = [], [], {}
        for k, shape, elem_type, fill in states:
            body_in = body.input[2 + k].name
            found.append(carried_state(loop.name, k, body_in, loop.input[2 + k], loop.output[k]))
            pairs.append((2 + k, k, f"s{k}_in", f"s{k}_out", ["batch"] + shape, elem_type))
            first[f"s{k}_in"] = fill
        entry["states"] = found
        entry["note"] = entry.pop("note")
        runs = []
        for run_dims, seed in ((case.export_dims, 11), (entry["dims"], 12)):
            feeds = gtorch.make_inputs(case, run_dims, seed)
            expected = gtorch.torch_reference(case, module, feeds)
            runs.append(({n: t.numpy() for n, t in feeds.items()}, run_dims, expected))
        emulation = dict(node=loop.name, pairs=pairs, carry={p[2]: p[3] for p in pairs}, compare_last={},
                         first_fill=first)
        # Outputs without a time axis are compared from the last call (h_n: the exposed final state).
        emulation["compare_last"] = {o: "s0_out" if o == "h_n" else o for o, shape in outputs if o not in out_axes}
        if not streaming:
            emulation.update(expect_differs=True, chunks=chunks)
        specs.append(dict(rel=rel, model=model, entry=entry, runs=runs, emulation=emulation,
                          seed=common.name_seed(rel)))
    return specs


# ---------------------------------------------------------------------------------------------
# Hand-built: a Scan delay line, a delay line alone, a state without batch axis, a tf2onnx-style pass-through
# ---------------------------------------------------------------------------------------------


def _batch_zeros(x, axis, width, out, prefix):
    """out = ConstantOfShape(Concat(Unsqueeze(Gather(Shape(x), axis)), [width])) = zeros [batch, width]."""
    return [helper.make_node("Shape", [x], [prefix + "_shape"]), const(prefix + "_axis", np.array(axis, np.int64)),
            helper.make_node("Gather", [prefix + "_shape", prefix + "_axis"], [prefix + "_b"], axis=0),
            const(prefix + "_zero", np.array([0], np.int64)),
            helper.make_node("Unsqueeze", [prefix + "_b", prefix + "_zero"], [prefix + "_b1"]),
            const(prefix + "_width", np.array([width], np.int64)),
            helper.make_node("Concat", [prefix + "_b1", prefix + "_width"], [prefix + "_dims"], axis=0),
            helper.make_node("ConstantOfShape", [prefix + "_dims"], [out],
                             value=numpy_helper.from_array(np.zeros(1, np.float32)))]


def _time_loop(name, carried_in, carried_out, initials, finals, body_nodes, extra_nodes, inits, outputs, doc):
    """Loop over axis 0 of x [seq, batch, 3] (trip Shape(x)[0], x_t = Gather(x, iter)) with the given carried
    variables; y_t [batch, 4] the scan output y."""
    body = helper.make_graph(
        [helper.make_node("Gather", ["x", "iter"], ["x_t"], axis=0)] + body_nodes +
        [helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [vi("iter", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL)] + carried_in,
        [vi("cond_out", [], TensorProto.BOOL)] + carried_out + [vi("y_t", ["batch", 4])])
    nodes = extra_nodes + common.seq_trip_nodes("x", "trip")
    nodes += [helper.make_node("Loop", ["trip", ""] + initials, finals + ["y"], name="time", body=body)]
    return common.make_model(nodes, [vi("x", ["seq", "batch", 3])], outputs, inits, name, doc)


def hand_specs(loop_entry, carried_state, rng):
    mats = {n: rng.uniform(-0.7, 0.7, s).astype(np.float32) for n, s in
            (("W", (3, 4)), ("U", (4, 4)), ("V", (3, 4)), ("b", (4,)))}
    inits = [numpy_helper.from_array(a, "cell_" + n) for n, a in mats.items()]
    specs = []

    def spec(name, model, reference, entry, pairs, first, compare_last, differs=False):
        rel = entry["file"]
        em = dict(node=model.graph.node[-1].name, pairs=pairs, carry={p[2]: p[3] for p in pairs},
                  compare_last=compare_last, first_fill=first)
        if differs:
            em.update(expect_differs=True, chunks=entry["chunks"])
        specs.append(dict(rel=rel, model=model, reference=reference, entry=entry, emulation=em))

    # (a) Scan: h and a delay line prev (prev' = x_t), both from zeros of the batch.
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "cell_W"], ["xw"]), helper.make_node("MatMul", ["h", "cell_U"], ["hu"]),
         helper.make_node("MatMul", ["prev", "cell_V"], ["pv"]), helper.make_node("Add", ["xw", "hu"], ["s0"]),
         helper.make_node("Add", ["s0", "pv"], ["s1"]), helper.make_node("Tanh", ["s1"], ["h_next"]),
         helper.make_node("Identity", ["x_t"], ["prev_next"]), helper.make_node("Identity", ["h_next"], ["y_t"])],
        "body", [vi("h", ["batch", 4]), vi("prev", ["batch", 3]), vi("x_t", ["batch", 3])],
        [vi("h_next", ["batch", 4]), vi("prev_next", ["batch", 3]), vi("y_t", ["batch", 4])])
    nodes = _batch_zeros("x", 1, 4, "h0", "h0z") + _batch_zeros("x", 1, 3, "p0", "p0z")
    nodes += [helper.make_node("Scan", ["h0", "p0", "x"], ["h_n", "p_n", "y"], name="delay_scan", body=body,
                               num_scan_inputs=1)]
    model = common.make_model(nodes, [vi("x", ["seq", "batch", 3])], [vi("y", ["seq", "batch", 4]),
                                                                       vi("h_n", ["batch", 4])],
                              inits, "scan_delay_line", "Scan with a delay line")

    def scan_ref(f):
        x = f["x"].astype(np.float64)
        h, prev, ys = np.zeros((x.shape[1], 4)), np.zeros((x.shape[1], 3)), []
        for xt in x:
            h = np.tanh(xt @ mats["W"] + h @ mats["U"] + prev @ mats["V"])
            prev = xt
            ys.append(h)
        return {"y": np.stack(ys), "h_n": h}

    rel = f"{SUBDIR}/scan_delay_line.onnx"
    spec("scan_delay_line", model, scan_ref, loop_entry(
        rel, {"batch": 2, "seq": 8}, {"x": 0}, {"y": 0}, [3, 5], True, True,
        [carried_state("delay_scan", 0, "h", "h0", "h_n"), carried_state("delay_scan", 1, "prev", "p0", "p_n")],
        "Scan over x [seq, batch, 3] carrying h and prev: h = tanh(x_t W + h U + prev V), prev' = x_t (a delay line, "
        "a state although its next value does not depend on itself); p_n is no graph output. An older rnnstate "
        "left prev out and called the Scan streamable: chunked y differed", time_input="x:0"),
        [(0, 0, "h_in", "h_out", ["batch", 4], TensorProto.FLOAT), (1, 1, "p_in", "p_out", ["batch", 3],
                                                                    TensorProto.FLOAT)],
        {}, {"h_n": "h_out"})

    # (b) a delay line alone: y = (x_t - prev) W, prev' = x_t, prev starting at a non-zero row broadcast.
    start = np.array([[0.5, -0.5, 0.25]], np.float32)
    extra = [const("start_row", start)] + _batch_zeros("x", 1, 3, "p0z", "p0d")
    extra += [helper.make_node("Add", ["p0z", "start_row"], ["p0"])]
    model = _time_loop("loop_delay_only", [vi("prev", ["batch", 3])], [vi("prev_next", ["batch", 3])], ["p0"],
                       ["p_n"], [helper.make_node("Sub", ["x_t", "prev"], ["d"]),
                                 helper.make_node("MatMul", ["d", "cell_W"], ["y_t"]),
                                 helper.make_node("Identity", ["x_t"], ["prev_next"])],
                       extra, inits, [vi("y", ["seq", "batch", 4])], "a delay line alone")

    def delay_ref(f):
        x = f["x"].astype(np.float64)
        prev = np.broadcast_to(start.astype(np.float64), (x.shape[1], 3))
        ys = []
        for xt in x:
            ys.append((xt - prev) @ mats["W"])
            prev = xt
        return {"y": np.stack(ys)}

    rel = f"{SUBDIR}/loop_delay_only.onnx"
    spec("loop_delay_only", model, delay_ref, loop_entry(
        rel, {"batch": 2, "seq": 7}, {"x": 0}, {"y": 0}, [3, 4], True, False,
        [carried_state("time", 0, "prev", "p0", "p_n")],
        "Loop over time carrying only a delay line: y_t = (x[t] - prev) W, prev' = x[t]; prev starts at a non-zero "
        "row [0.5, -0.5, 0.25] broadcast to the batch (its default is the original value, init \"empty\") and its "
        "final value is no graph output. An older rnnstate said \"0 recurrent nodes, nothing to do\" and check "
        "passed; chunked y differed by 1.2", time_input="x:0"),
        [(2, 0, "p_in", "p_out", ["batch", 3], TensorProto.FLOAT)], {"p_in": start}, {})

    # (c) a state without batch axis: acc [4] from a non-zero initializer, acc' = acc + mean(h') over everything.
    acc0 = np.array([0.1, -0.2, 0.3, -0.4], np.float32)
    model = _time_loop("loop_unbatched_state", [vi("h", ["batch", 4]), vi("acc", [4])],
                       [vi("h_next", ["batch", 4]), vi("acc_next", [4])], ["h0", "acc0"], ["h_n", "acc_n"],
                       [helper.make_node("MatMul", ["x_t", "cell_W"], ["xw"]),
                        helper.make_node("MatMul", ["h", "cell_U"], ["hu"]),
                        helper.make_node("Add", ["xw", "hu"], ["s0"]), helper.make_node("Add", ["s0", "acc"], ["s1"]),
                        helper.make_node("Tanh", ["s1"], ["h_next"]),
                        helper.make_node("ReduceMean", ["h_next"], ["m"], axes=[0], keepdims=0),
                        helper.make_node("Add", ["acc", "m"], ["acc_next"]),
                        helper.make_node("Identity", ["h_next"], ["y_t"])],
                       _batch_zeros("x", 1, 4, "h0", "h0z"), inits + [numpy_helper.from_array(acc0, "acc0")],
                       [vi("y", ["seq", "batch", 4]), vi("h_n", ["batch", 4])], "a state without batch axis")

    def acc_ref(f):
        x = f["x"].astype(np.float64)
        h, acc, ys = np.zeros((x.shape[1], 4)), acc0.astype(np.float64), []
        for xt in x:
            h = np.tanh(xt @ mats["W"] + h @ mats["U"] + acc)
            acc = acc + h.mean(0)
            ys.append(h)
        return {"y": np.stack(ys), "h_n": h}

    rel = f"{SUBDIR}/loop_unbatched_state.onnx"
    spec("loop_unbatched_state", model, acc_ref, loop_entry(
        rel, {"batch": 2, "seq": 8}, {"x": 0}, {"y": 0}, [5, 3], True, False,
        [carried_state("time", 0, "h", "h0", "h_n"), carried_state("time", 1, "acc", "acc0", "acc_n")],
        "Loop over time carrying h [batch, 4] and acc [4], a state without batch axis that starts at a non-zero "
        "initializer: h = tanh(x_t W + h U + acc), acc' = acc + mean over the batch of h'. Its metadata shape is [4] "
        "with batch_axis -1 and init \"empty\": the first feed is empty along axis 0 ([0]), which selects the "
        "initializer. An older rnnstate wrote \"shape\":[\"\"], which init could not give a value",
        time_input="x:0"),
        [(2, 0, "h_in", "h_out", ["batch", 4], TensorProto.FLOAT), (3, 1, "a_in", "a_out", [4], TensorProto.FLOAT)],
        {"a_in": acc0}, {"h_n": "h_out"})

    # (d) NEGATIVE: a tf while_v2-style pass-through initialised from the mean of x over time.
    extra = _batch_zeros("x", 1, 4, "h0", "h0z") + [
        helper.make_node("ReduceMean", ["x"], ["x_mean"], axes=[0], keepdims=0, name="mean_over_time")]
    model = _time_loop("neg_passthrough_from_x", [vi("h", ["batch", 4]), vi("m", ["batch", 3])],
                       [vi("h_next", ["batch", 4]), vi("m_out", ["batch", 3])], ["h0", "x_mean"], ["h_n", "m_n"],
                       [helper.make_node("Sub", ["x_t", "m"], ["xc"]),
                        helper.make_node("MatMul", ["xc", "cell_W"], ["xw"]),
                        helper.make_node("MatMul", ["h", "cell_U"], ["hu"]),
                        helper.make_node("Add", ["xw", "hu"], ["s0"]),
                        helper.make_node("Tanh", ["s0"], ["h_next"]), helper.make_node("Identity", ["m"], ["m_out"]),
                        helper.make_node("Identity", ["h_next"], ["y_t"])],
                       extra, inits, [vi("y", ["seq", "batch", 4]), vi("h_n", ["batch", 4])],
                       "a pass-through from the mean over time")

    def mean_ref(f):
        x = f["x"].astype(np.float64)
        m, h, ys = x.mean(0), np.zeros((x.shape[1], 4)), []
        for xt in x:
            h = np.tanh((xt - m) @ mats["W"] + h @ mats["U"])
            ys.append(h)
        return {"y": np.stack(ys), "h_n": h}

    rel = f"{SUBDIR}/neg_passthrough_from_x.onnx"
    spec("neg_passthrough_from_x", model, mean_ref, loop_entry(
        rel, {"batch": 2, "seq": 8}, {"x": 0}, {"y": 0}, [3, 5], False, True,
        [carried_state("time", 0, "h", "h0", "h_n")],
        "NEGATIVE CONTROL. Loop over time carrying h and m, m passed through unchanged (as TF's while_v2 carries "
        "captured tensors) but initialised from ReduceMean(x, axis 0), the mean over time: the cell centres x[t] "
        "by it, and each chunk has its own mean",
        reason="the initial value of the pass-through m depends on the whole time axis of x", time_input="x:0",
        expect_chunking_differs=True, not_states=[{"node": "time", "carried_index": 1, "body_input": "m",
                                                   "why": "passed through unchanged (loop-invariant)"}]),
        [(2, 0, "h_in", "h_out", ["batch", 4], TensorProto.FLOAT)], {}, {"h_n": "h_out"}, differs=True)
    return specs
