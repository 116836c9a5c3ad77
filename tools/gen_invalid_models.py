#!/usr/bin/python3
"""Builds the invalid models of tests/data/invalid/ (README "Validation"): each breaks one rule of the
ONNX spec that `rewrite`, `report` and `check` all refuse with exit 3 and the same message. Also the
valid-but-unsupported controls that must stay warnings (exit 0).

    /usr/bin/python3 tools/gen_invalid_models.py [OUT_DIR]   (default tests/data/invalid)

One small LSTM (or GRU) per file, built with onnx.helper; onnx's checker is not run on them (most are
invalid on purpose). Needs Debian's python3-onnx (1.12).
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPSET = 14
IR_VERSION = 7
INPUT, HIDDEN, BATCH, SEQ = 2, 4, 1, 3


def weights(prefix, gates):
    """W [1, gates*H, input] and R [1, gates*H, H] initializers with small deterministic values."""
    w = np.linspace(-0.5, 0.5, gates * HIDDEN * INPUT, dtype=np.float32).reshape(1, gates * HIDDEN, INPUT)
    r = np.linspace(0.3, -0.3, gates * HIDDEN * HIDDEN, dtype=np.float32).reshape(1, gates * HIDDEN, HIDDEN)
    return [numpy_helper.from_array(w, prefix + "W"), numpy_helper.from_array(r, prefix + "R")]


def lstm_model(inputs=("X", "W", "R"), attributes=None, x_type=TensorProto.FLOAT, opset=OPSET, domain="",
               outputs=("Y", "Y_h", "Y_c"), extra_inputs=()):
    """Y, Y_h, Y_c = LSTM(inputs) on X [SEQ, BATCH, INPUT]: the base that each case breaks in one place."""
    attributes = {"hidden_size": HIDDEN} if attributes is None else attributes
    node = helper.make_node("LSTM", list(inputs), list(outputs), name="lstm", domain=domain, **attributes)
    x = helper.make_tensor_value_info("X", x_type, [SEQ, BATCH, INPUT])
    outputs = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [SEQ, 1, BATCH, HIDDEN])]
    graph = helper.make_graph([node], "g", [x, *extra_inputs], outputs, initializer=weights("", 4))
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(graph, ir_version=IR_VERSION, opset_imports=imports)


def gru_node(name, x, prefix):
    """`name`_y = GRU(x) with weights `prefix`W, `prefix`R (read from the main graph inside a subgraph)."""
    return helper.make_node("GRU", [x, prefix + "W", prefix + "R"], [name + "_y"], name="gru", hidden_size=HIDDEN)


def if_without_else():
    """An If whose then_branch runs a GRU; the else_branch is missing (ONNX requires both)."""
    then_branch = helper.make_graph(
        [gru_node("a", "X", "g_")], "then", [], [helper.make_tensor_value_info("a_y", TensorProto.FLOAT, None)])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [SEQ, BATCH, INPUT])
    node = helper.make_node("If", ["cond"], ["out"], name="branch", then_branch=then_branch)
    graph = helper.make_graph([node], "g", [cond, x], [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
                              initializer=weights("g_", 3))
    return helper.make_model(graph, ir_version=IR_VERSION, opset_imports=[helper.make_opsetid("", OPSET)])


def edit(model, change):
    change(model.graph)
    return model


def dangling_input():
    """The LSTM reads 'X_norm', which nothing defines."""
    return lstm_model(inputs=("X_norm", "W", "R"))


def cycle():
    """Two Identity nodes read each other's output: a cycle (ONNX graphs are acyclic and sorted)."""
    def add(graph):
        graph.node.insert(0, helper.make_node("Identity", ["b"], ["a"], name="first"))
        graph.node.insert(1, helper.make_node("Identity", ["a"], ["b"], name="second"))
        graph.output.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, None))
    return edit(lstm_model(), add)


def defined_twice():
    """A node writes 'Y', which the LSTM also writes."""
    def add(graph):
        graph.node.append(helper.make_node("Identity", ["X"], ["Y"], name="again"))
    return edit(lstm_model(), add)


def loop_body_output_undefined():
    """A Loop carrying h through a GRU step; its body declares an output 'h_next' nothing defines."""
    x1 = helper.make_tensor_value_info("x_t", TensorProto.FLOAT, [1, BATCH, INPUT])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
         helper.make_node("GRU", ["x_t", "g_W", "g_R", "", "", "h_prev"], ["y", "h_step"], name="gru",
                          hidden_size=HIDDEN)],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_prev", TensorProto.FLOAT, [1, BATCH, HIDDEN])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_next", TensorProto.FLOAT, [1, BATCH, HIDDEN])])
    h0 = numpy_helper.from_array(np.zeros((1, BATCH, HIDDEN), np.float32), "h0")
    trip = numpy_helper.from_array(np.array(2, np.int64), "trip")
    node = helper.make_node("Loop", ["trip", "", "h0"], ["h_final"], name="steps", body=body)
    graph = helper.make_graph([node], "g", [x1], [helper.make_tensor_value_info("h_final", TensorProto.FLOAT, None)],
                              initializer=weights("g_", 3) + [h0, trip])
    return helper.make_model(graph, ir_version=IR_VERSION, opset_imports=[helper.make_opsetid("", OPSET)])


def with_lstm_attribute(model, attribute):
    """`model` with one more attribute on its LSTM."""
    model.graph.node[0].attribute.append(attribute)
    return model


def untyped_hidden_size():
    """hidden_size without a type (its value a float): the IR requires every attribute's type."""
    attribute = onnx.AttributeProto()
    attribute.name = "hidden_size"
    attribute.f = 4.0
    return with_lstm_attribute(lstm_model(attributes={}), attribute)


def empty_op_type():
    """A node without an op_type beside the LSTM."""
    def add(graph):
        graph.node.append(helper.make_node("", ["X"], ["Z"], name="noop"))
    return edit(lstm_model(), add)


def if_branch_wrong_type():
    """An If whose then_branch is an INT: ONNX requires a graph."""
    else_branch = helper.make_graph(
        [gru_node("b", "X", "g_")], "else", [], [helper.make_tensor_value_info("b_y", TensorProto.FLOAT, None)])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [SEQ, BATCH, INPUT])
    node = helper.make_node("If", ["cond"], ["out"], name="branch", then_branch=1, else_branch=else_branch)
    graph = helper.make_graph([node], "g", [cond, x], [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
                              initializer=weights("g_", 3))
    return helper.make_model(graph, ir_version=IR_VERSION, opset_imports=[helper.make_opsetid("", OPSET)])


def function_hidden_size_zero():
    """The model calls its function local.MyLstm, whose body holds an LSTM with hidden_size 0."""
    body = helper.make_node("LSTM", ["X", "W", "R"], ["Y", "Y_h", "Y_c"], hidden_size=0)
    weights_in_body = [helper.make_node("Constant", [], [t.name], value=t) for t in weights("", 4)]
    function = helper.make_function("local", "MyLstm", ["X"], ["Y", "Y_h", "Y_c"], weights_in_body + [body],
                                    [helper.make_opsetid("", OPSET)])
    call = helper.make_node("MyLstm", ["X"], ["Y", "Y_h", "Y_c"], name="call", domain="local")
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [SEQ, BATCH, INPUT])
    graph = helper.make_graph([call], "g", [x], [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, ir_version=8, functions=[function],
                             opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("local", 1)])


def hidden_size_unknown():
    """An LSTM without hidden_size whose W and R are graph inputs without a shape."""
    model = lstm_model(attributes={})
    del model.graph.initializer[:]
    for name in ("W", "R"):
        model.graph.input.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    return model


def view_model(nodes, before=(), inputs=(), outputs=(), inits=()):
    """The LSTM with view operators around its state (issue 13: they crashed the exposure walks): `before`
    nodes compute its initial_h 'h0' from `inputs`, `nodes` read its Y_h 'Y_h' and write `outputs`."""
    lstm_inputs = ["X", "W", "R", "", "", "h0"] if before else ["X", "W", "R"]
    node = helper.make_node("LSTM", lstm_inputs, ["Y", "Y_h", "Y_c"], name="lstm", hidden_size=HIDDEN)
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [SEQ, BATCH, INPUT])
    outs = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [SEQ, 1, BATCH, HIDDEN])]
    outs += [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs]
    ins = [x] + [helper.make_tensor_value_info(name, TensorProto.FLOAT, dims) for name, dims in inputs]
    graph = helper.make_graph(list(before) + [node] + list(nodes), "g", ins, outs,
                              initializer=weights("", 4) + [numpy_helper.from_array(np.asarray(v, np.int64), k)
                                                            for k, v in inits])
    return helper.make_model(graph, ir_version=IR_VERSION, opset_imports=[helper.make_opsetid("", OPSET)])


def view_node(op, inputs, output, **attributes):
    return helper.make_node(op, inputs, [output], name=op.lower(), **attributes)


def with_functions(model, *functions):
    """`model` with the model-local functions (name, body nodes) of domain 'local' (IR 8 has them)."""
    model.ir_version = 8
    model.opset_import.append(helper.make_opsetid("local", 1))
    for name, nodes in functions:
        model.functions.append(helper.make_function("local", name, ["x"], ["y"], nodes,
                                                    [helper.make_opsetid("", OPSET), helper.make_opsetid("local", 1)]))
    return model


def call(function, inputs=("x",), outputs=("y",), name=""):
    return helper.make_node(function, list(inputs), list(outputs), name=name, domain="local")


def function_recursive():
    """The graph calls local.F; F calls G, which calls F: onnx 1.12's shape inference (and ONNX Runtime)
    recursed without end on it (exit 139 from every command, a batch killed)."""
    def add(graph):
        graph.node.append(call("F", ["X"], ["Z"], name="call"))
    return with_functions(edit(lstm_model(), add), ("F", [call("G")]), ("G", [call("F")]))


def function_recursive_unused():
    """A function that calls itself, which nothing calls: invalid all the same (onnx's checker: model-local
    functions must not be recursive)."""
    return with_functions(lstm_model(), ("F", [call("F")]))


def initial_h(tensor):
    """The LSTM with `tensor` (an initializer named h0) as initial_h."""
    model = lstm_model(inputs=("X", "W", "R", "", "", "h0"))
    model.graph.initializer.append(tensor)
    return model


def bare_tensor(name, dims, raw=None, floats=()):
    """A FLOAT TensorProto with these dims and data, unchecked (helper.make_tensor refuses a mismatch)."""
    tensor = onnx.TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims, float_data=floats)
    if raw is not None:
        tensor.raw_data = raw
    return tensor


def branch(name, inputs=(), outputs=1):
    """An If branch running a GRU on the main graph's X with `inputs` and `outputs` outputs."""
    node = helper.make_node("GRU", ["X", "g_W", "g_R"], [f"{name}_y", f"{name}_h"][:outputs], name=name,
                            hidden_size=HIDDEN)
    return helper.make_graph([node], name, [helper.make_tensor_value_info(i, TensorProto.FLOAT, [1]) for i in inputs],
                             [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in node.output])


def if_model(then_branch, else_branch, outputs=("out",)):
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [SEQ, BATCH, INPUT])
    node = helper.make_node("If", ["cond"], list(outputs), name="branch", then_branch=then_branch,
                            else_branch=else_branch)
    graph = helper.make_graph([node], "g", [cond, x], [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                                                        for o in outputs], initializer=weights("g_", 3))
    return helper.make_model(graph, ir_version=IR_VERSION, opset_imports=[helper.make_opsetid("", OPSET)])


def loop_output_count():
    """The Loop of loop_body_output_undefined, its body well formed, declaring 3 outputs for 1 carried value."""
    model = loop_body_output_undefined()
    body = model.graph.node[0].attribute[0].g
    body.node[1].output[1] = "h_next"
    model.graph.node[0].output.extend(["extra_1", "extra_2"])
    return model


# name -> (model, what it breaks). The CLI test (tests/cli/cli_test.sh) expects each message.
INVALID = {
    "hidden_size_zero": lambda: lstm_model(attributes={"hidden_size": 0}),
    "hidden_size_negative": lambda: lstm_model(attributes={"hidden_size": -4}),
    "direction_unknown": lambda: lstm_model(attributes={"hidden_size": HIDDEN, "direction": "sideways"}),
    "layout_unknown": lambda: lstm_model(attributes={"hidden_size": HIDDEN, "layout": 2}),
    "w_empty": lambda: lstm_model(inputs=("X", "", "R")),
    "too_few_inputs": lambda: lstm_model(inputs=("X", "W")),
    "x_string": lambda: lstm_model(x_type=TensorProto.STRING),
    "x_complex64": lambda: lstm_model(x_type=TensorProto.COMPLEX64),
    "if_without_else": if_without_else,
    "dangling_input": dangling_input,
    "cycle": cycle,
    "defined_twice": defined_twice,
    "loop_body_output_undefined": loop_body_output_undefined,
    # Rules of the operators' schemas and of the table that need no types (review of issue 13).
    "layout_before_opset_14": lambda: lstm_model(attributes={"hidden_size": HIDDEN, "layout": 0}, opset=13),
    "attribute_unknown": lambda: lstm_model(attributes={"hidden_size": HIDDEN, "nonsense": 3}),
    "hidden_size_twice": lambda: with_lstm_attribute(lstm_model(), helper.make_attribute("hidden_size", HIDDEN)),
    "hidden_size_untyped": untyped_hidden_size,
    "too_many_outputs": lambda: lstm_model(outputs=("Y", "Y_h", "Y_c", "extra")),
    "activation_unknown": lambda: lstm_model(
        attributes={"hidden_size": HIDDEN, "activations": ["Sigmoid", "Bogus", "Tanh"]}),
    "function_hidden_size_zero": function_hidden_size_zero,
    "if_branch_wrong_type": if_branch_wrong_type,
    "empty_op_type": empty_op_type,
    # Rules that read the inputs' types and shapes.
    "hidden_size_mismatch": lambda: lstm_model(attributes={"hidden_size": HIDDEN + 1}),
    "sequence_lens_float": lambda: lstm_model(
        inputs=("X", "W", "R", "", "lens"), extra_inputs=[helper.make_tensor_value_info("lens", TensorProto.FLOAT, [BATCH])]),
    # Out-of-range axes of view operators next to a state (they crashed the walks before they were checked).
    "view_unsqueeze_axes": lambda: view_model([view_node("Unsqueeze", ["Y_h", "axes"], "out")], outputs=["out"],
                                              inits=[("axes", [-999])]),
    "view_squeeze_axes": lambda: view_model([], before=[view_node("Squeeze", ["hs", "axes"], "h0")],
                                            inputs=[("hs", [1, 1, BATCH, HIDDEN])], inits=[("axes", [999])]),
    "view_transpose_perm": lambda: view_model([], before=[view_node("Transpose", ["hs"], "h0", perm=[1, 0, -5])],
                                              inputs=[("hs", [BATCH, 1, HIDDEN])]),
    "view_slice_axes": lambda: view_model([], before=[view_node("Slice", ["hs", "starts", "ends", "axes"], "h0")],
                                          inputs=[("hs", [2, BATCH, HIDDEN])],
                                          inits=[("starts", [0]), ("ends", [1]), ("axes", [256])]),
    "view_gather_axis": lambda: view_model([view_node("Gather", ["Y_h", "index"], "out", axis=99)], outputs=["out"],
                                           inits=[("index", 0)]),
    "view_gather_index": lambda: view_model([], before=[view_node("Gather", ["hs", "index"], "h0", axis=0)],
                                            inputs=[("hs", [2, 1, BATCH, HIDDEN])], inits=[("index", 1000000)]),
    "view_concat_axis": lambda: view_model([view_node("Concat", ["Y_h", "Y_c"], "out", axis=99)], outputs=["out"]),
    "view_split_axis": lambda: view_model([helper.make_node("Split", ["Y_h"], ["out", "rest"], name="split", axis=-99)],
                                          outputs=["out", "rest"]),
    "view_reshape_shape": lambda: view_model([view_node("Reshape", ["Y_h", "shape"], "out")], outputs=["out"],
                                             inits=[("shape", [-1, -1, -1])]),
    # Found by an adversarial audit: accepted (or crashing) before, refused by ONNX Runtime.
    "function_recursive": function_recursive,
    "function_recursive_unused": function_recursive_unused,
    "clip_negative": lambda: lstm_model(attributes={"hidden_size": HIDDEN, "clip": -1.0}),
    "initial_h_double": lambda: initial_h(numpy_helper.from_array(np.zeros((1, BATCH, HIDDEN), np.float64), "h0")),
    "if_branch_input": lambda: if_model(branch("a"), branch("b", inputs=["unused"])),
    "if_branch_outputs": lambda: if_model(branch("a"), branch("b", outputs=2)),
    "if_output_count": lambda: if_model(branch("a"), branch("b"), outputs=("out", "more", "most")),
    "loop_output_count": loop_output_count,
    # Inline values that do not fit their dims (refused when the file is opened, as external data is).
    "h0_raw_short": lambda: initial_h(bare_tensor("h0", [1, BATCH, HIDDEN], raw=b"\1\2\3")),
    "h0_float_data_short": lambda: initial_h(bare_tensor("h0", [1, BATCH, HIDDEN], floats=[0.0])),
    "h0_dims_negative": lambda: initial_h(bare_tensor("h0", [1, -1, HIDDEN], floats=[0.0] * 4)),
    "w_dims_2p40": lambda: edit(lstm_model(), lambda g: g.initializer[0].CopyFrom(
        bare_tensor("W", [1, 4 * HIDDEN, 2 ** 40], raw=bytes(128)))),
    "view_scatternd_index": lambda: view_model([view_node("ScatterND", ["cache", "rows", "Y_h"], "out")],
                                               inputs=[("cache", [2, BATCH, HIDDEN])], outputs=["out"],
                                               inits=[("rows", [[5]])]),
}

# Valid, but not (fully) supported: warnings, exit 0.
CONTROLS = {
    # An LSTM of another domain is not rnnstate's to judge: ignored, whatever its attributes say.
    "unknown_domain_lstm": lambda: lstm_model(attributes={"hidden_size": -4, "direction": "sideways"},
                                              domain="com.example"),
    # ai.onnx opset 18 is newer than onnx 1.12 knows: rewritten, with "full validation skipped".
    "opset_18": lambda: lstm_model(opset=18),
    # No hidden_size and weights of unknown shape (graph inputs): valid, its states are not rewritten (a
    # warning); with --strict, exit 4 — from --dry-run as from a real run.
    "hidden_size_unknown": hidden_size_unknown,
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "tests", "data", "invalid")
    os.makedirs(out, exist_ok=True)
    for name, build in {**INVALID, **CONTROLS}.items():
        onnx.save(build(), os.path.join(out, name + ".onnx"))
    print(f"wrote {len(INVALID)} invalid models and {len(CONTROLS)} controls to {out}")


if __name__ == "__main__":
    main()
