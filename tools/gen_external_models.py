#!/usr/bin/python3
"""Generates the external-data test models (run with Debian's /usr/bin/python3, python3-onnx 1.12).

models/external/gru_external.onnx + gru_weights.bin: a GRU whose W and R live in an external file.
tests/data/external_escape/escape.onnx: the same model whose data location leaves its directory
("../../../models/external/gru_weights.bin"); rnnstate must refuse it. (Not under models/, which holds
only valid models that every test walks.)
"""
import json
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
ESCAPE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "external_escape")


def build():
    rng = np.random.RandomState(7)
    hidden, inputs = 16, 8
    w = numpy_helper.from_array((rng.rand(1, 3 * hidden, inputs).astype(np.float32) - 0.5), "W")
    r = numpy_helper.from_array((rng.rand(1, 3 * hidden, hidden).astype(np.float32) - 0.5), "R")
    node = helper.make_node("GRU", ["x", "W", "R"], ["y", "h_n"], hidden_size=hidden)
    graph = helper.make_graph(
        [node], "gru_external",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", "batch", inputs])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["seq", 1, "batch", hidden]),
         helper.make_tensor_value_info("h_n", TensorProto.FLOAT, [1, "batch", hidden])],
        [w, r])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], producer_name="gen_external_models")
    model.ir_version = 8
    return model


def save(model, directory, name, location):
    os.makedirs(directory, exist_ok=True)
    # onnx appends to an existing data file: start from none, or every run grows it by a copy.
    if os.path.exists(os.path.join(directory, location)):
        os.remove(os.path.join(directory, location))
    onnx.save_model(model, os.path.join(directory, name), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=location, size_threshold=0)


def main():
    model = build()
    save(model, os.path.join(ROOT, "external"), "gru_external.onnx", "gru_weights.bin")
    onnx.checker.check_model(os.path.join(ROOT, "external", "gru_external.onnx"))
    escape = build()
    save(escape, ESCAPE_DIR, "escape.onnx", "escape_weights.bin")
    # Point the saved model at a file outside its directory.
    path = os.path.join(ESCAPE_DIR, "escape.onnx")
    loaded = onnx.load(path, load_external_data=False)
    for tensor in loaded.graph.initializer:
        for entry in tensor.external_data:
            if entry.key == "location":
                entry.value = "../../../models/external/gru_weights.bin"
    onnx.save(loaded, path)
    os.remove(os.path.join(ESCAPE_DIR, "escape_weights.bin"))
    # The end-to-end harness rewrites into another directory: the weights must follow.
    entry = {"file": "external/gru_external.onnx", "dims": {"batch": 2, "seq": 7}, "seq_axes": {"x": 0},
             "output_seq_axes": {"y": 0}, "chunks": [3, 4], "streaming": True, "zero_default": True,
             "rewrite_args": [], "ort": True,
             "note": "GRU whose W and R are external data (gru_weights.bin); rewritten into another directory"}
    with open(os.path.join(ROOT, "external", "manifest.part.json"), "w") as f:
        json.dump({"models": [entry]}, f, indent=1)
        f.write("\n")
    subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "gen_handbuilt_models.py"), "--merge"], check=True)


if __name__ == "__main__":
    main()
