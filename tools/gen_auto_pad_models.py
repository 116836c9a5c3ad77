#!/usr/bin/python3
"""Derives rnnstate's `auto_pad` test models from models/conv_context/pad_same_conv1d.onnx.

    /usr/bin/python3 tools/gen_auto_pad_models.py [--ort-node DIR]

PyTorch cannot write a Conv's `auto_pad`; tf2onnx does: a Keras Conv1D(padding="same") over an axis whose
length is not known at export (a streaming model's time) becomes a Conv with auto_pad SAME_UPPER. So the
models here are pad_same_conv1d (F.pad(x, (1, 2)) + Conv1d kernel 4, a GRU; PyTorch's export, weights and
all) with its Pad node taken out and the padding asked of the Conv instead:

  auto_pad_same_upper   auto_pad SAME_UPPER: kernel 4 pads 1 frame before and 2 after (2 frames of lookahead),
                        the original model exactly
  auto_pad_same_lower   auto_pad SAME_LOWER: 2 before, 1 after (1 frame of lookahead)

Both stream with `rewrite --lookahead` (tests/e2e/lookahead_test.mjs), and like any "same" window not
without it (`streaming: false` here). Each model is checked in onnxruntime-node against the same model with
the Conv's explicit `pads` in place of auto_pad (and SAME_UPPER also against pad_same_conv1d itself), at two
sequence lengths. Writes models/conv_context_tf/*.onnx and manifest.part.json, then merges the manifest.
"""

import argparse
import copy
import os
import sys
import tempfile

import onnx
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_handbuilt_models as common  # noqa: E402

SOURCE = "conv_context/pad_same_conv1d.onnx"
SUBDIR = "conv_context_tf"
# name -> (auto_pad, the explicit pads [before, after] it means for kernel 4, stride 1, and a note)
VARIANTS = {
    "auto_pad_same_upper": ("SAME_UPPER", [1, 2],
                            "pad_same_conv1d with its Pad node folded into the Conv as auto_pad SAME_UPPER (as "
                            "tf2onnx writes Keras' padding=\"same\" over a time of unknown length): 1 frame "
                            "before, 2 after; streams with rewrite --lookahead, 2 frames late"),
    "auto_pad_same_lower": ("SAME_LOWER", [2, 1],
                            "pad_same_conv1d's Conv with auto_pad SAME_LOWER in place of its Pad node: 2 frames "
                            "before, 1 after; streams with rewrite --lookahead, 1 frame late"),
}


def without_pad_node(model, padding):
    """The model with its one Pad node removed, the Conv reading the Pad's input, `padding(conv)` setting the
    Conv's padding attributes, and the nodes that only computed the Pad's amounts removed."""
    model = copy.deepcopy(model)
    graph = model.graph
    (pad,) = [n for n in graph.node if n.op_type == "Pad"]
    (conv,) = [n for n in graph.node if n.op_type == "Conv" and pad.output[0] in n.input]
    conv.input[0] = pad.input[0]
    kept = [a for a in conv.attribute if a.name not in ("pads", "auto_pad")]
    del conv.attribute[:]
    conv.attribute.extend(kept + padding)
    graph.node.remove(pad)
    prune_dead_nodes(graph)
    return model


def prune_dead_nodes(graph):
    """Removes nodes none of whose outputs is read (by a node or as a graph output), until none is left."""
    while True:
        read = {o.name for o in graph.output} | {i for n in graph.node for i in n.input}
        dead = [n for n in graph.node if not any(o in read for o in n.output)]
        if not dead:
            return
        for n in dead:
            graph.node.remove(n)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ort-node", default=common.DEFAULT_ORT_NODE, help="path of the onnxruntime-node package")
    args = parser.parse_args()
    source_path = os.path.join(common.MODELS, SOURCE)
    source = onnx.load(source_path)
    with open(os.path.join(common.MODELS, "manifest.json")) as f:
        (source_entry,) = [e for e in common.json.load(f)["models"] if e["file"] == SOURCE]

    # references: (reference model path, seq) -> feeds, run in one onnxruntime-node process.
    entries, built, references, agreeing = [], [], {}, []
    with tempfile.TemporaryDirectory() as work:
        for name, (auto_pad, pads, note) in VARIANTS.items():
            relpath = f"{SUBDIR}/{name}.onnx"
            model = without_pad_node(source, [helper.make_attribute("auto_pad", auto_pad)])
            model.graph.name = name
            common.write_model(model, relpath)
            # The reference: the same Conv with the pads auto_pad means written out.
            explicit = os.path.join(work, f"{name}.explicit.onnx")
            onnx.save(without_pad_node(source, [helper.make_attribute("pads", pads)]), explicit)
            entry = dict(source_entry, file=relpath, note=note)
            entries.append(entry)
            cases = []
            for seq in (source_entry["dims"]["seq"], 7):
                dims = dict(entry["dims"], seq=seq)
                feeds = common.make_feeds(model, dict(entry, dims=dims), common.name_seed(name))
                references[explicit, seq] = feeds
                if auto_pad == "SAME_UPPER":
                    references[source_path, seq] = feeds
                    agreeing.append(((explicit, seq), (source_path, seq)))
                cases.append((feeds, dims, (explicit, seq)))
            built.append((relpath, entry, cases))
        jobs = [(path, feeds) for (path, _), feeds in references.items()]
        results = dict(zip(references, common.ort_run_many(args.ort_node, jobs)))
    for (path, _), result in results.items():
        if "error" in result:
            raise AssertionError(f"{path}: onnxruntime-node: {result['error']}")
    # SAME_UPPER's explicit pads are pad_same_conv1d's F.pad: the two references agree.
    for explicit, source in agreeing:
        for output, want in results[source]["outputs"].items():
            got = results[explicit]["outputs"][output]
            assert abs(got - want).max() <= common.TOLERANCE, f"{output}: explicit pads"
    common.write_fragment(SUBDIR, entries)
    common.merge_manifest()
    common.verify_all([(relpath, entry, [(feeds, dims, results[key]["outputs"]) for feeds, dims, key in cases])
                       for relpath, entry, cases in built], args.ort_node)
    return 0


if __name__ == "__main__":
    sys.exit(main())
