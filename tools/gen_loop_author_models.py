#!/usr/bin/python3
"""Builds Keras LSTM/GRU layers written by tf2onnx as `Loop`s whose authors feed the initial state from their own
graph input and return the final state through their own graph output (issue 32, pattern 2), and writes their
manifest entries.

    /usr/bin/python3 tools/gen_loop_author_models.py [--ort-node DIR]

Writes models/loop_authors/*.onnx and models/loop_authors/manifest.part.json, then merges every fragment into
models/manifest.json. See models/loop_authors/README.md for what each model exercises.

The layers are tools/gen_keras_loop_models.py's (tf2onnx's Loop, carried counter and weights, cell, condition,
scan output, last-step readout); only what Keras's `initial_state=` and a returned state change is changed, as
tf2onnx writes them:
- the initial h (and c) of layer k: `Squeeze(Slice(state, starts [0, k], ends [INT32_MAX, k + 1], axes [0, 1]),
  [1])` (TF's `state[:, k]`) into the Loop's carried value; no zeros are computed;
- the final carried values, packed back on axis 1: `Concat(Unsqueeze(h_final, [1]) ("tf.expand_dims"), ...)`
  as the graph output (TF's `tf.stack(..., axis=1)`).
Negative controls write something else to the output: the initial value passed through, or the final value
through an elementwise op; those states are not the authors' and a rewrite must promote them.

Checks, every run: onnx.checker.check_model(full_check=True), IR <= 8, declared I/O, size < 100 KB, manifest entry
consistent; ORT outputs (y and the state output) equal a NumPy Keras reference within 1e-5. The streaming checks
are the e2e harness's (tests/e2e/verify.mjs) on the manifest entries. Needs Debian's python3-onnx and numpy.
"""

import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_handbuilt_models as common  # noqa: E402
import gen_keras_loop_models as keras  # noqa: E402

SUBDIR = "loop_authors"
ISSUE = 32
INT32_MAX = 2**31 - 1
const = common.const


def prune(graph):
    """Drops the nodes and initializers nothing reads any more (the zeros Keras computes without initial_state)."""
    while True:
        used = {o.name for o in graph.output}
        for node in graph.node:
            used.update(node.input)
            for attr in node.attribute:
                if attr.type == attr.GRAPH:
                    used.update(outer_names(attr.g))
        dead = [n for n in graph.node if not any(o in used for o in n.output)]
        if not dead:
            break
        for n in dead:
            graph.node.remove(n)
    for init in [i for i in graph.initializer if i.name not in used]:
        graph.initializer.remove(init)


def outer_names(body):
    names = set()
    for node in body.node:
        names.update(node.input)
    return names


def with_authors_state(model, layers, state, output, final_of, first=0):
    """Rewires `model` (keras.build's) so that the states of layer k (Loop `first + k` of the graph, its values
    named layer{first + k}_*) start from `state[:, slot]` and the finals leave packed on axis 1 in `output`.
    `final_of(k, s)`: the value packed for layer k's state s (its final, or for a negative control something
    else)."""
    mm = helper.make_node
    graph = model.graph
    loops = [n for n in graph.node if n.op_type == "Loop"]
    head, tail, slot = [], [], 0
    packed = []
    for k, (kind, w) in enumerate(layers, first):
        for s, name in enumerate(("h", "c")[:2 if kind == "LSTM" else 1]):
            p = f"layer{k}_{name}"
            head += [const(p + "_starts", np.array([0, slot], np.int64)),
                     const(p + "_ends", np.array([INT32_MAX, slot + 1], np.int64)),
                     const(p + "_axes", np.array([0, 1], np.int64)),
                     mm("Slice", [state, p + "_starts", p + "_ends", p + "_axes"], [p + "_slice"],
                        name=f"strided_slice_{slot}"),
                     const(p + "_squeeze_axes", np.array([1], np.int64)),
                     mm("Squeeze", [p + "_slice", p + "_squeeze_axes"], [p + "_initial"],
                        name=f"strided_slice_{slot}__squeeze")]
            loops[k].input[3 + s] = p + "_initial"
            tail += [const(p + "_expand_axes", np.array([1], np.int64)),
                     mm("Unsqueeze", [final_of(k, name), p + "_expand_axes"], [p + "_packed"],
                        name="tf.expand_dims" + (f"_{slot}" if slot else ""))]
            packed.append(p + "_packed")
            slot += 1
    tail.append(mm("Concat", packed, [output], axis=1, name="tf.stack"))
    nodes = head + list(graph.node) + tail
    del graph.node[:]
    graph.node.extend(nodes)
    batch = graph.input[0].type.tensor_type.shape.dim[0]
    batch = batch.dim_param or batch.dim_value
    hidden = layers[0][1]["recurrent"].shape[0]
    graph.input.append(common.value_info(state, [batch, slot, hidden]))
    graph.output.append(common.value_info(output, [batch, slot, hidden]))
    prune(graph)
    return model


def reference(feeds, layers, dense, state, output, negative):
    """Keras on batch-major x [B, T, I] from the fed states: y [B, 1] and the packed states (or the control's)."""
    seq = feeds["x"].astype(np.float64)
    fed = feeds[state].astype(np.float64)
    slot, packed = 0, []
    for kind, w in layers:
        h = fed[:, slot]
        c = fed[:, slot + 1] if kind == "LSTM" else None
        h0, c0 = h, c
        out = []
        for t in range(seq.shape[1]):
            if kind == "LSTM":
                h, c = keras.lstm_step(seq[:, t], h, c, w)
            else:
                h = keras.gru_step(seq[:, t], h, w)
            out.append(h)
        finals = [h, c] if kind == "LSTM" else [h]
        initials = [h0, c0] if kind == "LSTM" else [h0]
        for final, initial in zip(finals, initials):
            packed.append({"initial": initial, "tanh": np.tanh(final)}.get(negative, final) if slot == 0 else final)
            slot += 1
        seq = np.stack(out, 1)
    y = keras.sigmoid(seq[:, -1] @ dense["kernel"] + dense["bias"])
    return {"y": y, output: np.stack(packed, 1)}


CASES = [
    # name, layers (kind, hidden), inputs, seq, batch 1, chunks, negative (what layer 0's first slot writes), note
    ("tf_lstm_loop_state_b1", [("LSTM", 5)], 3, 6, True, [2, 1, 3], None,
     "one Keras LSTM(5) with initial_state, batch 1, fixed length 6 (the published LSTM's shape): h and c from "
     "input_state[:, 0] and [:, 1], finals stacked back on axis 1 into state_out"),
    ("tf_gru_loop_state_dyn", [("GRU", 4), ("GRU", 4)], 3, "seq", False, [3, 1, 4], None,
     "two stacked Keras GRU(4) with initial_state, dynamic batch and length: layer k's h from input_state[:, k], "
     "finals stacked back on axis 1 into state_out"),
    ("neg_tf_gru_loop_state_initial_out", [("GRU", 4), ("GRU", 4)], 3, "seq", False, [3, 1, 4], "initial",
     "negative control: as tf_gru_loop_state_dyn, but state_out[:, 0] is layer 0's initial h passed through, not "
     "its final: layer 0's state is not the authors' (a rewrite promotes it), layer 1's is"),
    ("neg_tf_gru_loop_state_tanh_out", [("GRU", 4), ("GRU", 4)], 3, "seq", False, [3, 1, 4], "tanh",
     "negative control: as tf_gru_loop_state_dyn, but state_out[:, 0] is Tanh of layer 0's final h, not a copy: "
     "layer 0's state is not the authors' (a rewrite promotes it), layer 1's is"),
]


def build_intra(name, intra, inter, bins, dense, doc):
    """A speech enhancer's dual path at batch 1, as tf2onnx writes two Keras GRUs: x [1, seq, bins] reshaped to
    frames x bins ([-1, bins, 1]: the frames are the intra layer's batch), an intra-frame GRU over the bins
    (trip count the constant `bins`, Keras zeros from the layer input's batch), its steps reshaped back to
    [1, seq, bins * H], then an inter-frame GRU over the frames whose h the authors feed from
    `input_state[:, 0]` and return stacked in `state_out`; y [1, seq, 1] per frame."""
    mm = helper.make_node
    h1, h2 = intra["recurrent"].shape[0], inter["recurrent"].shape[0]
    inits = [numpy_helper.from_array(np.array([-1, bins, 1], np.int64), "intra_shape"),
             numpy_helper.from_array(np.array(bins, np.int64), "bins_iterations"),
             numpy_helper.from_array(np.array(float(bins), np.float32), "bins_f"),
             numpy_helper.from_array(np.array(0.0, np.float32), "zero_f"),
             numpy_helper.from_array(np.array(0, np.int32), "loop_counter"),
             numpy_helper.from_array(np.array([1, -1, bins * h1], np.int64), "inter_shape")]
    for k, w in enumerate((intra, inter)):
        inits += [numpy_helper.from_array(w[p], f"layer{k}_{p}") for p in ("kernel", "recurrent", "bias")]
    inits += [numpy_helper.from_array(dense["kernel"], "dense_kernel"),
              numpy_helper.from_array(dense["bias"], "dense_bias")]
    nodes = [mm("Reshape", ["x", "intra_shape"], ["intra_in"], name="reshape"),
             mm("Transpose", ["intra_in"], ["x_tm_0"], perm=[1, 0, 2], name="layer0_transpose"),
             mm("Shape", ["intra_in"], ["x_shape_0"]), const("b_start_0", np.array([0], np.int64)),
             const("b_end_0", np.array([1], np.int64)),
             mm("Slice", ["x_shape_0", "b_start_0", "b_end_0"], ["batch_0"]),
             const("units_0", np.array([h1], np.int64)),
             mm("Concat", ["batch_0", "units_0"], ["zeros_dims_0"], axis=0),
             mm("ConstantOfShape", ["zeros_dims_0"], ["zeros_0"], value=numpy_helper.from_array(np.zeros(1, np.float32))),
             mm("Less", ["zero_f", "bins_f"], ["below0_bins"]), mm("And", ["below0_bins", "below0_bins"], ["cond0_bins"]),
             mm("Loop", ["bins_iterations", "cond0_bins", "loop_counter", "zeros_0",
                         "layer0_kernel", "layer0_recurrent", "layer0_bias"],
                ["layer0_counter_final", "layer0_h_final", "layer0_kernel_final", "layer0_recurrent_final",
                 "layer0_bias_final", "layer0_ys"], name="layer0_while_loop",
                body=keras.loop_body("GRU", 0, 1, h1, "unk__20", float(bins))),
             mm("Transpose", ["layer0_ys"], ["layer0_ys_bm"], perm=[1, 0, 2]),
             mm("Reshape", ["layer0_ys_bm", "inter_shape"], ["inter_in"], name="reshape_1"),
             mm("Transpose", ["inter_in"], ["x_tm_1"], perm=[1, 0, 2], name="layer1_transpose"),
             mm("Shape", ["x_tm_1"], ["x_tm_shape"]), const("time_axis", np.array(0, np.int64)),
             mm("Gather", ["x_tm_shape", "time_axis"], ["time_steps"], axis=0),
             const("unsqueeze_axes", np.array([0], np.int64)),
             mm("Unsqueeze", ["time_steps", "unsqueeze_axes"], ["time_steps_1"]),
             mm("ReduceMax", ["time_steps_1"], ["time_steps_max"], axes=[0], keepdims=0, name="Max"),
             mm("Cast", ["time_steps_max"], ["while_maximum_iterations"], to=TensorProto.INT64),
             mm("Cast", ["time_steps"], ["time_steps_f"], to=TensorProto.FLOAT),
             mm("Less", ["zero_f", "time_steps_f"], ["below0"]), mm("And", ["below0", "below0"], ["cond0"]),
             mm("Loop", ["while_maximum_iterations", "cond0", "loop_counter", "zeros_1",
                         "layer1_kernel", "layer1_recurrent", "layer1_bias"],
                ["layer1_counter_final", "layer1_h_final", "layer1_kernel_final", "layer1_recurrent_final",
                 "layer1_bias_final", "layer1_ys"], name="layer1_while_loop",
                body=keras.loop_body("GRU", 1, bins * h1, h2, 1, "time_steps_f")),
             mm("Transpose", ["layer1_ys"], ["layer1_ys_bm"], perm=[1, 0, 2]),
             mm("MatMul", ["layer1_ys_bm", "dense_kernel"], ["dense_mm"]), mm("Add", ["dense_mm", "dense_bias"], ["logit"]),
             mm("Sigmoid", ["logit"], ["y"])]
    model = common.make_model(nodes, [common.value_info("x", [1, "seq", bins])], [common.value_info("y", [1, "seq", 1])],
                              inits, name, doc)
    return model  # the inter layer's h, "zeros_1" here, is the authors' state (with_authors_state rewires it)


def final_chooser(negative, mm_nodes):
    """final_of for with_authors_state: layer 0's first slot as the negative control writes it."""
    def final_of(k, s):
        if k != 0 or s != "h" or negative is None:
            return f"layer{k}_{s}_final"
        if negative == "initial":
            return f"layer{k}_{s}_initial"
        mm_nodes.append(helper.make_node("Tanh", [f"layer{k}_{s}_final"], [f"layer{k}_{s}_tanh"]))
        return f"layer{k}_{s}_tanh"
    return final_of


def exposed_entries(layers, negative):
    """The e2e harness's "exposed" list: which loop states are the authors' (pair) and which are not."""
    out, slot = [], 0
    for k, (kind, _) in enumerate(layers):
        for name in ("h", "c")[:2 if kind == "LSTM" else 1]:
            want = {"graph": "main", "node": f"layer{k}_while_loop", "kind": "state", "variable": name}
            region = [None, slot, None]
            if slot == 0 and negative:
                want.update(pair=None, reason=f"state_out[:, 0] is the {negative} value, not layer 0's final h")
            else:
                want["pair"] = {"input": "input_state", "input_region": region, "output": "state_out",
                                "output_region": region, "axes": ["batch", "dim1"]}
            out.append(want)
            slot += 1
    return out


def spec(rng, case):
    name, shape, inputs, seq, batch_one, chunks, negative, note = case
    layers, feature = [], inputs
    for kind, hidden in shape:
        layers.append((kind, keras.make_weights(rng, kind, feature, hidden)))
        feature = hidden
    dense = {"kernel": rng.uniform(-0.5, 0.5, (feature, 1)).astype(np.float32),
             "bias": rng.uniform(-0.3, 0.3, (1,)).astype(np.float32)}
    model = keras.build(name, layers, inputs, seq, batch_one, dense, note)
    extra_nodes = []
    model = with_authors_state(model, layers, "input_state", "state_out",
                               final_chooser(negative, extra_nodes))
    if extra_nodes:  # the control's op sits before the packing it feeds
        nodes = list(model.graph.node)
        at = next(i for i, n in enumerate(nodes) if n.op_type == "Unsqueeze" and n.input[0].endswith("_tanh"))
        nodes[at:at] = extra_nodes
        del model.graph.node[:]
        model.graph.node.extend(nodes)
    model.producer_name = "rnnstate/tools/gen_loop_author_models.py"
    rel = f"{SUBDIR}/{name}.onnx"
    dims = {} if batch_one else {"batch": 2}
    doc = "tf2onnx-style Loops with the authors' state (issue 32, pattern 2), " + note
    extra = dict(issue=ISSUE, exposed=exposed_entries(layers, negative))
    if isinstance(seq, int):
        entries = [common.manifest_entry(rel, dims, {}, {}, None, False, False, doc + ". Fixed length: not "
                                         "streamable as is", streamable=False, time_input="x:1", **extra)]
        streamed = common.manifest_entry(rel, dims, {"x": 1}, {}, chunks, True, False, doc + f"; rewritten with "
                                         f"--time-axis x:1, streamed in chunks {chunks} (y compared on the last)",
                                         streamable=True, time_axis="x:1", time_input="x:1", **extra)
        streamed["rewrite_args"] = ["--time-axis", "x:1"]
        entries.append(streamed)
    else:
        dims = dict(dims, seq=sum(chunks))
        entries = [common.manifest_entry(rel, dims, {"x": 1}, {}, chunks, True, False, doc, streamable=True,
                                         time_input="x:1", **extra)]

    def ref(feeds):
        return reference(feeds, layers, dense, "input_state", "state_out", negative)

    return dict(rel=rel, model=model, entries=entries, reference=ref)


INTRA = ("tf_gru_loops_intra_frame", 4, 3, 4,
         "a dual-path enhancer at batch 1: an intra-frame Keras GRU(3) over 4 bins per frame (Reshape(x, [-1, 4, 1]): "
         "the frames are its batch, Keras zeros from that batch, trip count the constant 4), then an inter-frame "
         "GRU(4) over the frames whose h the authors feed from input_state[:, 0] and stack into state_out; "
         "y [1, seq, 1] per frame. The intra-frame state restarts in every frame: it runs within one call")


def intra_reference(feeds, intra, inter, bins, dense):
    x = feeds["x"].astype(np.float64)
    frames = x.reshape(-1, bins, 1)
    h = np.zeros((frames.shape[0], intra["recurrent"].shape[0]))
    steps = []
    for f in range(bins):
        h = keras.gru_step(frames[:, f], h, intra)
        steps.append(h)
    seq = np.stack(steps, 1).reshape(1, -1, bins * intra["recurrent"].shape[0])
    h = feeds["input_state"].astype(np.float64)[:, 0]
    out = []
    for t in range(seq.shape[1]):
        h = keras.gru_step(seq[:, t], h, inter)
        out.append(h)
    y = keras.sigmoid(np.stack(out, 1) @ dense["kernel"] + dense["bias"])
    return {"y": y, "state_out": h[:, None, :]}


def intra_spec(rng):
    name, bins, h1, h2, note = INTRA
    intra = keras.make_weights(rng, "GRU", 1, h1)
    inter = keras.make_weights(rng, "GRU", bins * h1, h2)
    dense = {"kernel": rng.uniform(-0.5, 0.5, (h2, 1)).astype(np.float32),
             "bias": rng.uniform(-0.3, 0.3, (1,)).astype(np.float32)}
    doc = "tf2onnx-style Loops with the authors' state (issue 32, pattern 2), " + note
    model = build_intra(name, intra, inter, bins, dense, doc)
    model = with_authors_state(model, [("GRU", inter)], "input_state", "state_out",
                               lambda k, s: f"layer{k}_{s}_final", first=1)
    model.producer_name = "rnnstate/tools/gen_loop_author_models.py"
    rel = f"{SUBDIR}/{name}.onnx"
    exposed = [{"graph": "main", "node": "layer0_while_loop", "kind": "state", "variable": "h", "pair": None,
                "reason": "intra-frame: starts from zeros in every frame; runs within one call"},
               {"graph": "main", "node": "layer1_while_loop", "kind": "state", "variable": "h",
                "pair": {"input": "input_state", "input_region": [None, 0, None], "output": "state_out",
                         "output_region": [None, 0, None], "axes": ["dim0", "dim1"]}}]
    # No time axis is followed through the intra-frame loop's steps: the authors' protocol is call by call.
    entry = common.manifest_entry(rel, {"seq": 6}, {}, {}, None, False, False, doc, streamable=False,
                                  issue=ISSUE, exposed=exposed)
    return dict(rel=rel, model=model, entries=[entry],
                reference=lambda feeds: intra_reference(feeds, intra, inter, bins, dense))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ort-node", default=common.DEFAULT_ORT_NODE, help="path of the onnxruntime-node package")
    args = parser.parse_args()
    rng = np.random.RandomState(common.name_seed("gen_loop_author_models"))
    specs = [spec(rng, case) for case in CASES] + [intra_spec(rng)]
    built = []
    for s in specs:
        common.write_model(s["model"], s["rel"])
        first = s["entries"][0]
        runs = []
        other = dict(first["dims"], batch=3) if "batch" in first["dims"] else dict(first["dims"], seq=3)
        for dims in (first["dims"], other):
            feeds = common.make_feeds(s["model"], dict(first, dims=dims), common.name_seed(s["rel"]))
            runs.append((feeds, dims, s["reference"](feeds)))
        built.append((s["rel"], first, runs))
    common.verify_all(built, args.ort_node)
    common.write_fragment(SUBDIR, [e for s in specs for e in s["entries"]])
    common.merge_manifest()
    return 0


if __name__ == "__main__":
    sys.exit(main())
