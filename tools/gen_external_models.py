#!/usr/bin/python3
"""Generates the external-data test models (run with Debian's /usr/bin/python3, python3-onnx 1.12).

models/external/gru_external.onnx + gru_weights.bin: a GRU whose W and R live in an external file.
tests/data/external_escape/escape.onnx: the same model whose data location leaves its directory
("../../../models/external/gru_weights.bin"); rnnstate must refuse it. (Not under models/, which holds
only valid models that every test walks.)
tests/data/external_bad/: a small GRU with external data (ok.onnx + weights.bin, valid) and copies with one
hostile external data reference each, which rnnstate must refuse (exit 3); see BAD_CASES.
"""
import json
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
ESCAPE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "external_escape")
BAD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "external_bad")


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


def build_small():
    """A GRU (hidden 2, input 3) whose W (72 bytes) and R (48 bytes) follow each other in weights.bin."""
    rng = np.random.RandomState(11)
    hidden, inputs = 2, 3
    w = numpy_helper.from_array(rng.rand(1, 3 * hidden, inputs).astype(np.float32) - 0.5, "W")
    r = numpy_helper.from_array(rng.rand(1, 3 * hidden, hidden).astype(np.float32) - 0.5, "R")
    node = helper.make_node("GRU", ["x", "W", "R"], ["y", "h_n"], hidden_size=hidden)
    graph = helper.make_graph(
        [node], "gru_small_external",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", "batch", inputs])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["seq", 1, "batch", hidden]),
         helper.make_tensor_value_info("h_n", TensorProto.FLOAT, [1, "batch", hidden])],
        [w, r])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], producer_name="gen_external_models")
    model.ir_version = 8
    return model


def set_external(tensor, entries):
    """Makes `tensor` external data described by `entries` [(key, value)], dropping its payload."""
    tensor.ClearField("raw_data")
    tensor.ClearField("float_data")
    tensor.data_location = TensorProto.EXTERNAL
    del tensor.external_data[:]
    for key, value in entries:
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value


def entries_of(model, name):
    tensor = next(t for t in model.graph.initializer if t.name == name)
    return tensor, [(e.key, e.value) for e in tensor.external_data]


def with_r_entries(entries):
    """ok.onnx with R described by `entries` instead."""
    def edit(model):
        set_external(entries_of(model, "R")[0], entries)
    return edit


def with_function_escape(model):
    """A function whose body holds a Constant with external data outside the model's directory."""
    model.opset_import.append(helper.make_opsetid("local", 1))
    value = helper.make_tensor("secret", TensorProto.FLOAT, [4], [0.0, 0.0, 0.0, 0.0])
    set_external(value, [("location", "../../../models/external/gru_weights.bin"), ("offset", "0"), ("length", "16")])
    constant = helper.make_node("Constant", [], ["c"], value=value)
    function = helper.make_function("local", "Leak", [], ["c"], [constant], [helper.make_opsetid("", 14)])
    model.functions.append(function)


def with_sparse_escape(model):
    """A sparse initializer whose values are external data outside the model's directory."""
    values = helper.make_tensor("S_values", TensorProto.FLOAT, [2], [1.0, 2.0])
    set_external(values, [("location", "../external_escape/escape.onnx")])
    indices = helper.make_tensor("S_indices", TensorProto.INT64, [2], [0, 3])
    model.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [4]))


# name -> edit of ok.onnx. R lies at offset 72, 48 bytes (FLOAT [1,6,2]); weights.bin is 120 bytes.
BAD_CASES = {
    "offset_past_eof": with_r_entries([("location", "weights.bin"), ("offset", "4096"), ("length", "48")]),
    "negative_offset": with_r_entries([("location", "weights.bin"), ("offset", "-8"), ("length", "48")]),
    "non_numeric_offset": with_r_entries([("location", "weights.bin"), ("offset", "0x48"), ("length", "48")]),
    "huge_length": with_r_entries([("location", "weights.bin"), ("offset", "72"), ("length", str(2 ** 62))]),
    "length_mismatch": with_r_entries([("location", "weights.bin"), ("offset", "72"), ("length", "40")]),
    "duplicate_location": with_r_entries([("location", "weights.bin"), ("offset", "72"), ("length", "48"),
                                          ("location", "other.bin")]),
    # The CLI test puts a FIFO, a socket, a device or a directory at special.bin beside a copy.
    "special_location": with_r_entries([("location", "special.bin"), ("offset", "0"), ("length", "48")]),
    "function_escape": with_function_escape,
    "sparse_escape": with_sparse_escape,
}


def build_bad():
    save(build_small(), BAD_DIR, "ok.onnx", "weights.bin")
    ok_path = os.path.join(BAD_DIR, "ok.onnx")
    onnx.checker.check_model(ok_path)
    assert os.path.getsize(os.path.join(BAD_DIR, "weights.bin")) == 120
    for name, edit in BAD_CASES.items():
        model = onnx.load(ok_path, load_external_data=False)
        edit(model)
        onnx.save(model, os.path.join(BAD_DIR, name + ".onnx"))


def main():
    build_bad()
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
