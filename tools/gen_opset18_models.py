#!/usr/bin/python3
"""Writes the opset-18 forms of PyTorch exports whose Pads then list the axes they pad, and checks them in
ONNX Runtime against the export they come from.

    /usr/bin/python3 tools/gen_opset18_models.py [--ort-node DIR]

Opset 18 gave Pad an input 3, `axes`: its amounts then cover those axes only (`pads = [1, 1], axes = [-1]`
instead of `pads = [0, 0, 0, 1, 0, 0, 0, 1]`). Debian's torch 1.13 exports up to opset 17 and onnx 1.12
knows no opset 18, so these models are the PyTorch 1.13 exports of models/conv_context with the opset
raised to 18 (IR 8) and each Pad of a constant written in that form, every other node as exported (none of
them changed at opset 18); ONNX Runtime must give the export's outputs to the last bit. onnx 1.12's checker
judges Pad by its opset-13 schema (3 inputs at most), so it is not run on them.

  sfe_conv_gru_axes   models/conv_context/sfe_conv_gru.onnx (nn.Unfold over frequency, exported as a Gather
                      along time by Range(0, seq); F.pad 1 frame + Conv2d; a GRU): its Unfold's Pad of
                      frequency lists axis -1, its F.pad lists axis 2 (see NOTE: not streamable here)

Writes models/opset18/*.onnx and models/opset18/manifest.part.json, then merges models/manifest.json.
"""

import argparse
import copy
import json
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_handbuilt_models as common  # noqa: E402

SUBDIR = "opset18"
OPSET = 18
IR_VERSION = 8


def constant_ints(model, name):
    """The int64 values of the Constant node or initializer `name`, or None."""
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output[0] == name:
            return [int(v) for v in numpy_helper.to_array(node.attribute[0].t).flatten()]
    for init in model.graph.initializer:
        if init.name == name:
            return [int(v) for v in numpy_helper.to_array(init).flatten()]
    return None


def folded_pads(model, name):
    """The amounts of a Pad whose input 1 is a constant or PyTorch 1.13's F.pad chain (Concat of the amounts
    and ConstantOfShape zeros, Reshape to pairs, Slice reversing them, Transpose, Reshape, Cast), recomputed
    here from the chain's constants."""
    values = constant_ints(model, name)
    if values is not None:
        return values
    producers = {out: node for node in model.graph.node for out in node.output}
    node = producers[name]
    assert node.op_type == "Cast", node.op_type
    reshape1 = producers[node.input[0]]
    transpose = producers[reshape1.input[0]]
    slice_ = producers[transpose.input[0]]
    reshape0 = producers[slice_.input[0]]
    concat = producers[reshape0.input[0]]
    amounts = constant_ints(model, concat.input[0])
    zeros = [0] * constant_ints(model, producers[concat.input[1]].input[0])[0]
    pairs = np.array(amounts + zeros).reshape(-1, 2)[::-1]  # the pairs reversed: axis 0 first
    return [int(v) for v in pairs.T.reshape(-1)]


def with_listed_axes(model, negative_last):
    """`model` at opset 18 with each Pad's amounts over the axes it pads alone (the last axis as -1 when
    `negative_last`)."""
    out = copy.deepcopy(model)
    out.ir_version = IR_VERSION
    for opset in out.opset_import:
        if opset.domain in ("", "ai.onnx"):
            opset.version = OPSET
    nodes = []
    for k, node in enumerate(out.graph.node):
        if node.op_type != "Pad":
            nodes.append(node)
            continue
        pads = folded_pads(out, node.input[1])
        rank = len(pads) // 2
        axes = [a for a in range(rank) if pads[a] != 0 or pads[a + rank] != 0]
        listed = [a - rank if negative_last and a == rank - 1 else a for a in axes]
        amounts = [pads[a] for a in axes] + [pads[a + rank] for a in axes]
        stem = f"/opset18/Pad_{k}"
        nodes.append(helper.make_node("Constant", [], [stem + "_pads"],
                                      value=numpy_helper.from_array(np.array(amounts, np.int64))))
        nodes.append(helper.make_node("Constant", [], [stem + "_axes"],
                                      value=numpy_helper.from_array(np.array(listed, np.int64))))
        value = node.input[2] if len(node.input) > 2 else ""
        pad = helper.make_node("Pad", [node.input[0], stem + "_pads", value, stem + "_axes"], list(node.output),
                               name=node.name)
        pad.attribute.extend(node.attribute)
        nodes.append(pad)
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    # The chains that computed the old amounts now feed nothing: drop them (as an exporter never wrote them).
    used = {name for node in out.graph.node for name in node.input} | {o.name for o in out.graph.output}
    while True:
        dead = [n for n in out.graph.node if not any(o in used for o in n.output)]
        if not dead:
            break
        for n in dead:
            out.graph.node.remove(n)
        used = {name for node in out.graph.node for name in node.input} | {o.name for o in out.graph.output}
    return out


# What rnnstate makes of it: onnx 1.12 knows Pad by its opset-13 schema and infers no shape for a Pad that
# lists its axes, so the frames' shapes after nn.Unfold's Pad are unknown and its Reshape is not followed;
# the rewrite records the state streamable: false, and chunked runs differ (the Conv's Pad pads each chunk).
# It crashed onnx 1.12's data propagation (and `rnnstate report`) before graph/shape_inference left data
# propagation out at opsets newer than onnx knows.
NOTE = ("models/conv_context/sfe_conv_gru.onnx at opset 18, its two Pads listing the axes they pad (input 3): "
        "onnx 1.12 infers no shape after them, so nn.Unfold's Reshape is not followed and the model is not "
        "streamable here (chunked runs differ); it crashed onnx 1.12's data propagation before")

CASES = [
    # (name, source under models/ whose manifest entry it takes over, the last axis written as -1)
    ("sfe_conv_gru_axes", "conv_context/sfe_conv_gru.onnx", True),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ort-node", default=common.DEFAULT_ORT_NODE, help="path of the onnxruntime-node package")
    args = parser.parse_args()
    with open(os.path.join(common.MODELS, "manifest.json")) as f:
        manifest = {e["file"]: e for e in json.load(f)["models"]}
    entries, jobs = [], []
    for name, source, negative_last in CASES:
        original = onnx.load(os.path.join(common.MODELS, source))
        model = with_listed_axes(original, negative_last)
        relpath = f"{SUBDIR}/{name}.onnx"
        path = common.write_model(model, relpath)
        entry = dict(manifest[source], file=relpath, streaming=False, expect_chunking_differs=True, note=NOTE)
        entries.append(entry)
        for seed in (11, 12):
            feeds = common.make_feeds(original, entry, seed)
            jobs += [(os.path.join(common.MODELS, source), feeds), (path, feeds)]
    results = common.ort_run_many(args.ort_node, jobs)
    for k in range(0, len(results), 2):
        want, got = results[k], results[k + 1]
        assert "error" not in want and "error" not in got, (want.get("error"), got.get("error"))
        for output, value in want["outputs"].items():
            diff = float(np.max(np.abs(value - got["outputs"][output]))) if value.size else 0.0
            assert diff == 0.0, f"{jobs[k + 1][0]}: {output} differs by {diff}"
    for (name, _, _), entry in zip(CASES, entries):
        size = os.path.getsize(os.path.join(common.MODELS, entry["file"]))
        print(f"ok {entry['file']:42s} {size:6d} B  ORT: the export's outputs exactly")
    common.write_fragment(SUBDIR, entries)
    common.merge_manifest()
    return 0


if __name__ == "__main__":
    sys.exit(main())
