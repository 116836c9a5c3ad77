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


def with_authors_state(model, layers, state, output, final_of):
    """Rewires `model` (keras.build's) so that layer k's states start from `state[:, slot]` and the finals
    leave packed on axis 1 in `output`. `final_of(k, s)`: the value packed for layer k's state s (its final,
    or for a negative control something else)."""
    mm = helper.make_node
    graph = model.graph
    loops = [n for n in graph.node if n.op_type == "Loop"]
    head, tail, slot = [], [], 0
    packed = []
    for k, (kind, w) in enumerate(layers):
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


def final_chooser(graph_name, negative, mm_nodes):
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
                               final_chooser(name, negative, extra_nodes))
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ort-node", default=common.DEFAULT_ORT_NODE, help="path of the onnxruntime-node package")
    args = parser.parse_args()
    rng = np.random.RandomState(common.name_seed("gen_loop_author_models"))
    specs = [spec(rng, case) for case in CASES]
    built = []
    for s in specs:
        common.write_model(s["model"], s["rel"])
        first = s["entries"][0]
        runs = []
        for dims in (first["dims"], dict(first["dims"], batch=3) if "batch" in first["dims"] else first["dims"]):
            feeds = common.make_feeds(s["model"], dict(first, dims=dims), common.name_seed(s["rel"]))
            runs.append((feeds, dims, s["reference"](feeds)))
        built.append((s["rel"], first, runs))
    common.verify_all(built, args.ort_node)
    common.write_fragment(SUBDIR, [e for s in specs for e in s["entries"]])
    common.merge_manifest()
    return 0


if __name__ == "__main__":
    sys.exit(main())
