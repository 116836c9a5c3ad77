#!/usr/bin/python3
"""Builds Keras-like LSTM/GRU layers as tf2onnx writes the ones it cannot fuse (issue 22): one `Loop` per layer
over a hand-written cell, with the operators and the wiring tf2onnx emits, and writes their manifest entries.

    /usr/bin/python3 tools/gen_keras_loop_models.py [--ort-node DIR]

Writes models/keras/*.onnx and models/keras/manifest.part.json, then merges every fragment into
models/manifest.json. See models/keras/README.md for what each model exercises.

What tf2onnx writes (tensorflow-onnx 1.17 on Keras `LSTM`/`GRU`, seen in published exports):
- the trip count `M`: an int64 constant (the static sequence length) shared by every layer, or with a dynamic
  length `Cast(ReduceMax(Shape(x_tm)[0]))`; the initial condition `And(Less(0.0, T), Less(0.0, T))` computed
  from float constants, shared too; the carried int32 counter starts from one shared constant 0;
- Keras's time-major transpose: `Transpose(x, [1, 0, 2])`, or with batch 1 a `Reshape(x, [T, 1, F])`; between
  layers (batch 1) an identity `Reshape(ys, [T, 1, H])`, with a dynamic batch the back-and-forth Transposes;
- zeros for h (and c): one `[1, H]` initializer for both (batch 1), else
  `ConstantOfShape(Concat(Slice(Shape(layer input), [0], [1]), [H]))` (Keras: `tf.shape(inputs)[0:1]`);
- the body: `x_t = Gather(x_tm, counter)`, the cell, `counter + 1`, the condition
  `And(Less(Cast(iter, FLOAT), T), Less(Cast(counter + 1, FLOAT), T))` with T a float constant of the body
  (or the main graph's float length read from outer scope), the weights carried through unchanged (TF while_v2
  captures), the per-step h an `Identity` scan output;
- after the last layer (return_sequences=False): `Squeeze(Slice(ys, [-1], [INT32_MAX], [0]), [0])`, then Dense.

Checks, every run: onnx.checker.check_model(full_check=True), IR <= 8, declared I/O, size < 100 KB, manifest entry
consistent; ORT outputs equal a NumPy Keras reference within 1e-5 (tools/gen_handbuilt_models.py's harness).
The streaming checks (rewrite with --time-axis, chunked runs with state fed back equal one run) are the e2e
harness's (tests/e2e/verify.mjs) on the manifest entries. Needs Debian's python3-onnx and numpy.
"""

import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_handbuilt_models as common  # noqa: E402

SUBDIR = "keras"
ISSUE = 22
INT32_MAX = 2**31 - 1
vi = common.value_info
const = common.const


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_step(x, h, c, w):
    """Keras LSTM cell (gates i, f, c, o; kernel [I, 4H], recurrent [H, 4H], bias [4H])."""
    zi, zf, zc, zo = np.split(x @ w["kernel"] + h @ w["recurrent"] + w["bias"], 4, axis=-1)
    c = sigmoid(zf) * c + sigmoid(zi) * np.tanh(zc)
    return sigmoid(zo) * np.tanh(c), c


def gru_step(x, h, w):
    """Keras GRU cell, reset_after=True (gates z, r, h; bias [2, 3H]: input and recurrent)."""
    xz, xr, xh = np.split(x @ w["kernel"] + w["bias"][0], 3, axis=-1)
    rz, rr, rh = np.split(h @ w["recurrent"] + w["bias"][1], 3, axis=-1)
    z, r = sigmoid(xz + rz), sigmoid(xr + rr)
    return z * h + (1 - z) * np.tanh(xh + r * rh)


def keras_reference(x, layers, dense):
    """The stacked layers on batch-major x [B, T, I], then Dense + sigmoid on the last step: y [B, 1]."""
    seq = x.astype(np.float64)
    for kind, w in layers:
        hidden = w["recurrent"].shape[0]
        h = np.zeros((seq.shape[0], hidden))
        c = np.zeros_like(h)
        out = []
        for t in range(seq.shape[1]):
            if kind == "LSTM":
                h, c = lstm_step(seq[:, t], h, c, w)
            else:
                h = gru_step(seq[:, t], h, w)
            out.append(h)
        seq = np.stack(out, 1)
    return sigmoid(seq[:, -1] @ dense["kernel"] + dense["bias"])


def make_weights(rng, kind, inputs, hidden):
    gates = 4 if kind == "LSTM" else 3
    w = {"kernel": rng.uniform(-0.5, 0.5, (inputs, gates * hidden)).astype(np.float32),
         "recurrent": rng.uniform(-0.5, 0.5, (hidden, gates * hidden)).astype(np.float32)}
    w["bias"] = rng.uniform(-0.3, 0.3, (gates * hidden,) if kind == "LSTM" else (2, gates * hidden)).astype(np.float32)
    return w


def cell_nodes(kind, hidden):
    """The body's cell: x_t [B, I], h (c) -> h_next (c_next), as tf2onnx writes Keras's cell."""
    mm = helper.make_node
    if kind == "LSTM":
        return [mm("MatMul", ["h", "recurrent"], ["hr"]),
                mm("Gemm", ["x_t", "kernel", "hr"], ["xw"]),
                mm("Add", ["xw", "bias"], ["z"]),
                mm("Split", ["z"], ["z_i", "z_f", "z_c", "z_o"], axis=1),
                mm("Sigmoid", ["z_i"], ["g_i"]), mm("Sigmoid", ["z_f"], ["g_f"]),
                mm("Tanh", ["z_c"], ["g_c"]), mm("Sigmoid", ["z_o"], ["g_o"]),
                mm("Mul", ["g_f", "c"], ["fc"]), mm("Mul", ["g_i", "g_c"], ["ig"]),
                mm("Add", ["fc", "ig"], ["c_next"]), mm("Tanh", ["c_next"], ["c_act"]),
                mm("Mul", ["g_o", "c_act"], ["h_next"])]
    return [const("bias_axis", np.array(0, np.int64)),
            const("bias_in_index", np.array(0, np.int64)), const("bias_rec_index", np.array(1, np.int64)),
            mm("Gather", ["bias", "bias_in_index"], ["bias_in"], axis=0),
            mm("Gather", ["bias", "bias_rec_index"], ["bias_rec"], axis=0),
            mm("MatMul", ["x_t", "kernel"], ["xk"]), mm("Add", ["xk", "bias_in"], ["xw"]),
            mm("MatMul", ["h", "recurrent"], ["hk"]), mm("Add", ["hk", "bias_rec"], ["hw"]),
            mm("Split", ["xw"], ["x_z", "x_r", "x_h"], axis=1),
            mm("Split", ["hw"], ["r_z", "r_r", "r_h"], axis=1),
            mm("Add", ["x_z", "r_z"], ["a_z"]), mm("Sigmoid", ["a_z"], ["g_z"]),
            mm("Add", ["x_r", "r_r"], ["a_r"]), mm("Sigmoid", ["a_r"], ["g_r"]),
            mm("Mul", ["g_r", "r_h"], ["rh"]), mm("Add", ["x_h", "rh"], ["a_h"]), mm("Tanh", ["a_h"], ["g_h"]),
            mm("Mul", ["g_z", "h"], ["zh"]), const("one_f", np.array(1.0, np.float32)),
            mm("Sub", ["one_f", "g_z"], ["one_minus_z"]), mm("Mul", ["one_minus_z", "g_h"], ["zg"]),
            mm("Add", ["zh", "zg"], ["h_next"])]


def loop_body(kind, layer, inputs, hidden, batch, bound):
    """The while body of one layer. `bound`: a float length (the static one: body constants), or the name of
    the main graph's float length (dynamic: read from outer scope)."""
    mm = helper.make_node
    nodes = [const("one_i32", np.array(1, np.int32)), mm("Add", ["counter", "one_i32"], ["counter_next"]),
             mm("Gather", [f"x_tm_{layer}", "counter"], ["x_t"], axis=0, name="TensorArrayV2Read")]
    nodes += cell_nodes(kind, hidden)
    inits = []
    if isinstance(bound, float):
        inits = [numpy_helper.from_array(np.array(bound, np.float32), "iterations_bound"),
                 numpy_helper.from_array(np.array(bound, np.float32), "time_bound")]
        bounds = ("iterations_bound", "time_bound")
    else:
        bounds = (bound, bound)
    nodes += [mm("Cast", ["iter"], ["iter_f"], to=TensorProto.FLOAT),
              mm("Less", ["iter_f", bounds[0]], ["below_iterations"]),
              mm("Cast", ["counter_next"], ["counter_next_f"], to=TensorProto.FLOAT),
              mm("Less", ["counter_next_f", bounds[1]], ["below_time"]),
              mm("And", ["below_iterations", "below_time"], ["cond_out"], name="LogicalAnd"),
              mm("Identity", ["h_next"], ["y_t"], name="TensorArrayV2Write")]
    states = ["h", "c"] if kind == "LSTM" else ["h"]
    nodes += [mm("Identity", [w], [w + "_out"]) for w in ("kernel", "recurrent", "bias")]
    gates = 4 if kind == "LSTM" else 3
    bias_shape = [gates * hidden] if kind == "LSTM" else [2, gates * hidden]
    weights_in = [vi("kernel", [inputs, gates * hidden]), vi("recurrent", [hidden, gates * hidden]),
                  vi("bias", bias_shape)]
    weights_out = [vi("kernel_out", [inputs, gates * hidden]), vi("recurrent_out", [hidden, gates * hidden]),
                   vi("bias_out", bias_shape)]
    body_inputs = ([vi("iter", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL),
                    vi("counter", [], TensorProto.INT32)] + [vi(s, [batch, hidden]) for s in states] + weights_in)
    body_outputs = ([vi("cond_out", [], TensorProto.BOOL), vi("counter_next", [], TensorProto.INT32)]
                    + [vi(s + "_next", [batch, hidden]) for s in states] + weights_out + [vi("y_t", [batch, hidden])])
    return helper.make_graph(nodes, f"layer{layer}_while_body", body_inputs, body_outputs, initializer=inits)


def build(name, layers, inputs, seq, batch_one, dense, doc, cast_bound=False):
    """layers: [(kind, weights)]; seq: a fixed length (int) or "seq"; batch_one: batch 1 (Reshape transposes,
    zero initializers) or a dynamic batch (Transposes, zeros sized from Shape(x)[0:1]); cast_bound (fixed
    length): the float bound is `Cast(trip count)` in the main graph, read by every body from outer scope,
    instead of float constants (one trip-count initializer for every loop and every bound)."""
    mm = helper.make_node
    batch = 1 if batch_one else "batch"
    fixed = isinstance(seq, int)
    nodes, inits = [], []
    if fixed and cast_bound:
        inits.append(numpy_helper.from_array(np.array(seq, np.int64), "while_maximum_iterations"))
        nodes.append(mm("Cast", ["while_maximum_iterations"], ["time_steps_f"], to=TensorProto.FLOAT))
        trip, bound_main = "while_maximum_iterations", "time_steps_f"
    elif fixed:
        inits += [numpy_helper.from_array(np.array(seq, np.int64), "while_maximum_iterations"),
                  numpy_helper.from_array(np.array(float(seq), np.float32), "time_steps_f")]
        trip, bound_main = "while_maximum_iterations", "time_steps_f"
    else:
        nodes += [mm("Transpose", ["x"], ["x_tm_len"], perm=[1, 0, 2]), mm("Shape", ["x_tm_len"], ["x_tm_shape"]),
                  const("time_axis", np.array(0, np.int64)),
                  mm("Gather", ["x_tm_shape", "time_axis"], ["time_steps"], axis=0),
                  const("unsqueeze_axes", np.array([0], np.int64)),
                  mm("Unsqueeze", ["time_steps", "unsqueeze_axes"], ["time_steps_1"]),
                  mm("ReduceMax", ["time_steps_1"], ["time_steps_max"], axes=[0], keepdims=0, name="Max"),
                  mm("Cast", ["time_steps_max"], ["while_maximum_iterations"], to=TensorProto.INT64),
                  mm("Cast", ["time_steps"], ["time_steps_f"], to=TensorProto.FLOAT)]
        trip, bound_main = "while_maximum_iterations", "time_steps_f"
    inits += [numpy_helper.from_array(np.array(0.0, np.float32), "zero_f"),
              numpy_helper.from_array(np.array(0, np.int32), "loop_counter")]
    nodes += [mm("Less", ["zero_f", bound_main], ["below0"]), mm("And", ["below0", "below0"], ["cond0"])]
    feature, source = inputs, "x"
    ys_shape = None
    for k, (kind, w) in enumerate(layers):
        hidden = w["recurrent"].shape[0]
        tm = f"x_tm_{k}"
        if batch_one:
            inits.append(numpy_helper.from_array(np.array([seq if fixed else -1, 1, feature], np.int64),
                                                 f"new_shape_{k}"))
            nodes.append(mm("Reshape", [source, f"new_shape_{k}"], [tm], name=f"layer{k}_transpose"))
            inits.append(numpy_helper.from_array(np.zeros((1, hidden), np.float32), f"zeros_{k}"))
            zeros = f"zeros_{k}"
        else:
            nodes.append(mm("Transpose", [source], [tm], perm=[1, 0, 2], name=f"layer{k}_transpose"))
            # Keras sizes each layer's zeros from its own input: tf.shape(inputs)[0:1].
            nodes += [mm("Shape", [source], [f"x_shape_{k}"]), const(f"b_start_{k}", np.array([0], np.int64)),
                      const(f"b_end_{k}", np.array([1], np.int64)),
                      mm("Slice", [f"x_shape_{k}", f"b_start_{k}", f"b_end_{k}"], [f"batch_{k}"]),
                      const(f"units_{k}", np.array([hidden], np.int64)),
                      mm("Concat", [f"batch_{k}", f"units_{k}"], [f"zeros_dims_{k}"], axis=0),
                      mm("ConstantOfShape", [f"zeros_dims_{k}"], [f"zeros_{k}"],
                         value=numpy_helper.from_array(np.zeros(1, np.float32)))]
            zeros = f"zeros_{k}"
        for part in ("kernel", "recurrent", "bias"):
            inits.append(numpy_helper.from_array(w[part], f"layer{k}_{part}"))
        states = 2 if kind == "LSTM" else 1
        # tf2onnx names the body's unknown dims itself (TF's None): "unk__N", no name the caller knows.
        body = loop_body(kind, k, feature, hidden, batch if batch_one else f"unk__{10 + k}",
                         float(seq) if fixed and not cast_bound else bound_main)
        outs = [f"layer{k}_counter_final"] + [f"layer{k}_{s}_final" for s in ("h", "c")[:states]] + \
               [f"layer{k}_{p}_final" for p in ("kernel", "recurrent", "bias")] + [f"layer{k}_ys"]
        nodes.append(mm("Loop", [trip, "cond0", "loop_counter"] + [zeros] * states +
                        [f"layer{k}_{p}" for p in ("kernel", "recurrent", "bias")], outs,
                        name=f"layer{k}_while_loop", body=body))
        ys = f"layer{k}_ys"
        if not batch_one:  # Keras transposes back to batch-major after the loop; the next layer undoes it
            nodes.append(mm("Transpose", [ys], [f"layer{k}_ys_bm"], perm=[1, 0, 2]))
            ys = f"layer{k}_ys_bm"
        source, feature = ys, hidden
    last = f"layer{len(layers) - 1}_ys"
    nodes += [const("last_start", np.array([-1], np.int64)), const("last_end", np.array([INT32_MAX], np.int64)),
              const("last_axes", np.array([0], np.int64)),
              mm("Slice", [last, "last_start", "last_end", "last_axes"], ["last_step"], name="strided_slice"),
              const("squeeze_axes", np.array([0], np.int64)),
              mm("Squeeze", ["last_step", "squeeze_axes"], ["last_h"]),
              mm("MatMul", ["last_h", "dense_kernel"], ["dense_mm"]), mm("Add", ["dense_mm", "dense_bias"], ["logit"]),
              mm("Sigmoid", ["logit"], ["y"])]
    inits += [numpy_helper.from_array(dense["kernel"], "dense_kernel"),
              numpy_helper.from_array(dense["bias"], "dense_bias")]
    model = common.make_model(nodes, [vi("x", [batch, seq, inputs])], [vi("y", [batch, 1])], inits, name, doc)
    model.producer_name = "rnnstate/tools/gen_keras_loop_models.py"
    return model


def state_entries(layers):
    states = []
    for k, (kind, _) in enumerate(layers):
        for index, s in enumerate(("h", "c")[:2 if kind == "LSTM" else 1]):
            states.append({"node": f"layer{k}_while_loop", "graph": "main", "kind": "state", "carried_index": index + 1,
                           "body_input": s, "initial": f"zeros_{k}", "final": f"layer{k}_{s}_final"})
    return states


CASES = [
    # name, layers (kind, hidden), inputs, seq, batch 1, chunks of the streamed entry, what it exercises
    ("lstm1_b1", [("LSTM", 5)], 3, 6, True, [2, 1, 3],
     "one Keras LSTM(5), batch 1: x [1, 6, 3] made time-major by Reshape(x, [6, 1, 3])"),
    ("lstm3_b1", [("LSTM", 6), ("LSTM", 4), ("LSTM", 3)], 3, 7, True, [1, 4, 2],
     "three stacked Keras LSTMs, batch 1 (the published tf2onnx_keras_lstm_as_loop in small): identity "
     "Reshape(ys, [7, 1, H]) between layers, one trip-count constant and one initial condition for all loops"),
    ("gru2_dyn", [("GRU", 5), ("GRU", 4)], 3, 6, False, [3, 1, 2],
     "two stacked Keras GRUs (reset_after), dynamic batch: Transpose to time-major, back and forth between "
     "layers, zeros ConstantOfShape(Concat(Slice(Shape(layer input), [0], [1]), [H])): layer 2's batch is the "
     "first loop's output's"),
    ("gru1_dyn_seq", [("GRU", 4)], 2, "seq", False, [4, 1, 3],
     "one Keras GRU, dynamic batch and length: trip count Cast(ReduceMax(Unsqueeze(Gather(Shape(x_tm), 0)))), "
     "the float bound Cast(length, FLOAT) read by the body from outer scope"),
    ("lstm2_dyn", [("LSTM", 4), ("LSTM", 3)], 2, 5, False, [2, 1, 2],
     "two stacked Keras LSTMs, dynamic batch, fixed length 5: one zeros from Shape(layer input)[0:1] for h and c"),
    ("gru3_cast_bound", [("GRU", 5), ("GRU", 4), ("GRU", 3)], 3, 10, False, [4, 1, 5],
     "three stacked Keras GRUs (reset_after; issue 32, pattern 3), dynamic batch, fixed length 10: ONE trip-count "
     "initializer for the three loops, also the float bound Cast(trip count) every body reads from outer scope "
     "and the initial condition compares against", {"cast_bound": True}),
]


def specs_of(rng):
    specs = []
    for name, shape, inputs, seq, batch_one, chunks, note, *options in CASES:
        layers, feature = [], inputs
        for kind, hidden in shape:
            layers.append((kind, make_weights(rng, kind, feature, hidden)))
            feature = hidden
        dense = {"kernel": rng.uniform(-0.5, 0.5, (feature, 1)).astype(np.float32),
                 "bias": rng.uniform(-0.3, 0.3, (1,)).astype(np.float32)}
        rel = f"{SUBDIR}/{name}.onnx"
        model = build(name, layers, inputs, seq, batch_one, dense, note, **(options[0] if options else {}))
        dims = {} if batch_one else {"batch": 2}
        states = state_entries(layers)
        doc = ("tf2onnx-style Loops (issue 22), " + note + "; the readout Squeeze(Slice(ys, [-1], [INT32_MAX], [0])) "
               "then Dense: y is the last step's")
        extra = dict(issue=32 if options else ISSUE, states=states)
        if isinstance(seq, int):
            entry = common.manifest_entry(rel, dims, {}, {}, None, False, True, doc + ". Fixed length: not "
                                          "streamable as is", streamable=False, time_input="x:1", **extra)
            streamed = common.manifest_entry(rel, dims, {"x": 1}, {}, chunks, True, True, doc + f"; rewritten with "
                                             f"--time-axis x:1, streamed in chunks {chunks} (y compared on the last)",
                                             streamable=True, time_axis="x:1", time_input="x:1", **extra)
            streamed["rewrite_args"] = ["--time-axis", "x:1"]
            entries = [entry, streamed]
        else:
            dims = dict(dims, seq=sum(chunks))
            entries = [common.manifest_entry(rel, dims, {"x": 1}, {}, chunks, True, True, doc, streamable=True,
                                             time_input="x:1", **extra)]

        def reference(feeds, layers=layers, dense=dense):
            return {"y": keras_reference(feeds["x"], layers, dense)}

        specs.append(dict(rel=rel, model=model, entries=entries, reference=reference))
    return specs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ort-node", default=common.DEFAULT_ORT_NODE, help="path of the onnxruntime-node package")
    args = parser.parse_args()
    specs = specs_of(np.random.RandomState(common.name_seed("gen_keras_loop_models")))
    built = []
    for s in specs:
        common.write_model(s["model"], s["rel"])
        runs = []
        first = s["entries"][0]
        for dims in (first["dims"], dict(first["dims"], batch=3) if "batch" in first["dims"] else first["dims"]):
            feeds = common.make_feeds(s["model"], dict(first, dims=dims), common.name_seed(s["rel"]))
            runs.append((feeds, dims, s["reference"](feeds)))
        # Only the first entry is checked against the file: a streamed entry's x:1 is a fixed dim until
        # --time-axis makes it symbolic.
        built.append((s["rel"], first, runs))
    common.verify_all(built, args.ort_node)
    common.write_fragment(SUBDIR, [e for s in specs for e in s["entries"]])
    common.merge_manifest()
    return 0


if __name__ == "__main__":
    sys.exit(main())
