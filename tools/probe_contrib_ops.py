#!/usr/bin/python3
"""Probes which com.microsoft operators that carry state across calls the CPU provider of onnxruntime-node
runs: for each, a one-node model whose inputs are all graph inputs is opened in an InferenceSession (ORT picks
kernels when the session is created: an op without a CPU kernel fails with "Could not find an implementation")
and, where the inputs are simple to make, run once. Prints a table; writes nothing. Research aid for
models/quantized/README.md (issue 10), not a test.

    /usr/bin/python3 tools/probe_contrib_ops.py [--ort-node DIR]
"""

import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_handbuilt_models as common  # noqa: E402
import stream_emulation as emu  # noqa: E402

F = TensorProto.FLOAT
I32 = TensorProto.INT32
I64 = TensorProto.INT64

# op: (attributes, [(input name, elem type, shape) or None for an empty slot], [(output, type, shape)])
S, B, I, H = 3, 2, 4, 4
PROBES = {
    "AttnLSTM": ({"hidden_size": H},
                 [("X", F, [S, B, I]), ("W", F, [1, 4 * H, I + 3]), ("R", F, [1, 4 * H, H]), ("B", F, [1, 8 * H]),
                  None, ("initial_h", F, [1, B, H]), ("initial_c", F, [1, B, H]), None,
                  ("QW", F, [1, H, 3]), ("MW", F, [1, 3, 3]), ("V", F, [1, 3]), ("M", F, [B, 5, 3]),
                  ("memory_seq_lens", I32, [B])],
                 [("Y", F, None), ("Y_h", F, None), ("Y_c", F, None)]),
    "CausalConvWithState": ({}, [("input", F, [B, 4, S]), ("weight", F, [4, 1, 3]), ("bias", F, [4]),
                                 ("past_state", F, [B, 4, 2])], [("output", F, None), ("present_state", F, None)]),
    "LinearAttention": ({"q_num_heads": 1, "kv_num_heads": 1, "update_rule": "linear"},
                        [("query", F, [B, S, 4]), ("key", F, [B, S, 4]), ("value", F, [B, S, 4]),
                         ("past_state", F, [B, 1, 4, 4])], [("output", F, None), ("present_state", F, None)]),
    "GatedDeltaNet": ({"update_rule": "linear"},
                      [("query", F, [B * S, 1, 4]), ("key", F, [B * S, 1, 4]), ("value", F, [B * S, 1, 4]), None,
                       None, None, ("initial_state", F, [B, 1, 4, 4])],
                      [("output", F, None), ("final_state", F, None)]),
    "Attention": ({"num_heads": 1, "unidirectional": 1},
                  [("input", F, [B, S, 4]), ("weights", F, [4, 12]), ("bias", F, [12]), None,
                   ("past", F, [2, B, 1, 2, 4])], [("output", F, None), ("present", F, None)]),
    "MultiHeadAttention": ({"num_heads": 1},
                           [("query", F, [B, S, 4]), ("key", F, [B, S, 4]), ("value", F, [B, S, 4]), None, None,
                            None, ("past_key", F, [B, 1, 2, 4]), ("past_value", F, [B, 1, 2, 4])],
                           [("output", F, None), ("present_key", F, None), ("present_value", F, None)]),
    "DecoderMaskedMultiHeadAttention": ({"num_heads": 1},
                                        [("query", F, [B, 1, 4]), ("key", F, [B, 1, 4]), ("value", F, [B, 1, 4]),
                                         None, None, ("past_key", F, [B, 1, 2, 4]), ("past_value", F, [B, 1, 2, 4])],
                                        [("output", F, None), ("present_key", F, None), ("present_value", F, None)]),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ort-node", default=common.DEFAULT_ORT_NODE)
    args = parser.parse_args()
    rng = np.random.RandomState(0)
    with emu.new_tmpdir() as tmp:
        for op, (attrs, inputs, outputs) in PROBES.items():
            names = [i[0] if i else "" for i in inputs]
            node = helper.make_node(op, names, [o[0] for o in outputs], domain="com.microsoft", **attrs)
            graph = helper.make_graph([node], op, [helper.make_tensor_value_info(n, t, s) for n, t, s in
                                                   (i for i in inputs if i)],
                                      [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14),
                                                            helper.make_opsetid("com.microsoft", 1)])
            model.ir_version = 7
            path = emu.write_temp(model, tmp, op + ".onnx")
            feeds = {}
            for n, t, s in (i for i in inputs if i):
                feeds[n] = (rng.uniform(-1, 1, s).astype(np.float32) if t == F
                            else np.full(s, 5 if n == "memory_seq_lens" else 0, np.int32))
            try:
                out = emu.run_chains(args.ort_node, [{"model": path, "calls": [(feeds, None)]}])[0][0]
                print(f"{op:34s} CPU: runs; outputs " + ", ".join(f"{k}{list(v.shape)}" for k, v in out.items()))
            except RuntimeError as e:
                msg = str(e).split("onnxruntime-node: ", 1)[-1].splitlines()[0][:160]
                print(f"{op:34s} CPU: {msg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
