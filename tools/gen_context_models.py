#!/usr/bin/python3
"""Exports the model the `rewrite --input-context` tests stream (issue 40), and checks it against PyTorch.

    /usr/bin/python3 tools/gen_context_models.py [--ort-node DIR]

Writes models/context/conv_lstm_vad.onnx and models/context/manifest.part.json, then merges all fragments
into models/manifest.json. The model has Silero VAD v5's calling convention at a small size: it takes a chunk
of audio `audio [batch, seq]`, frames it with a strided convolution without padding (kernel 16, stride 8:
each frame needs 8 samples of the frame before), runs an LSTM whose h and c are rows 0 and 1 of the
authors' own state input `state [2, batch, 8]` (written back to `stateN` as Silero does) and returns the
last frame's speech probability `prob [batch, 1]`. Its authors' protocol prepends the last 8 samples of
the previous call's audio (zeros first) to each chunk; `rnnstate rewrite --input-context audio:1:8`
carries them as a state pair instead (tests/e2e/input_context_test.mjs checks both in ONNX Runtime).

Checked like the other generators' models (tools/gen_handbuilt_models.py): onnx's full check, then
onnxruntime-node against PyTorch's own outputs at the traced dims and at the manifest's (1e-5).
Deterministic: a re-run writes the same bytes. Needs Debian's python3-torch 1.13: run with /usr/bin/python3.
"""

import argparse
import io
import os
import sys

import numpy as np
import onnx
import torch
from torch import nn

sys.dont_write_bytecode = True  # no tools/__pycache__ in the work tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_handbuilt_models as common  # noqa: E402  (shared helpers: checks, ORT runner, manifest)

OPSET = 14
REL = "context/conv_lstm_vad.onnx"
INPUTS = [("audio", ["batch", "seq"]), ("state", [2, "batch", 8])]
OUTPUTS = [("prob", ["batch", 1]), ("stateN", [2, "batch", 8])]
EXPORT_DIMS = {"batch": 1, "seq": 48}
DIMS = {"batch": 2, "seq": 64}
CONTEXT = 8  # kernel - stride: the samples of the previous chunk a frame needs


class ConvLstmVad(nn.Module):
    """Frames (Conv1d, no padding) -> LSTM with the caller's state -> the last frame's probability."""

    def __init__(self):
        super().__init__()
        self.frames = nn.Conv1d(1, 4, kernel_size=16, stride=8)
        self.lstm = nn.LSTM(4, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, audio, state):
        x = torch.relu(self.frames(audio.unsqueeze(1)))  # [batch, 4, frames]
        x = x.permute(2, 0, 1)  # [frames, batch, 4]
        y, (h, c) = self.lstm(x, (state[0].unsqueeze(0), state[1].unsqueeze(0)))
        prob = torch.sigmoid(self.head(y[-1]))  # [batch, 1]
        return prob, torch.stack([h.squeeze(0), c.squeeze(0)])


def export():
    torch.manual_seed(common.name_seed(REL))
    module = ConvLstmVad().eval()
    example = inputs_at(EXPORT_DIMS, seed=7)
    dynamic = {name: {a: d for a, d in enumerate(shape) if isinstance(d, str)} for name, shape in INPUTS + OUTPUTS}
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, tuple(example.values()), buf, opset_version=OPSET,
                          input_names=[n for n, _ in INPUTS], output_names=[n for n, _ in OUTPUTS],
                          dynamic_axes=dynamic)
    model = onnx.load_from_string(buf.getvalue())
    declared = dict(INPUTS + OUTPUTS)
    for vi in list(model.graph.input) + list(model.graph.output):
        common.set_shape(vi, declared[vi.name])
    model.doc_string = entry()["note"]
    return model, module


def inputs_at(dims, seed):
    rng = np.random.RandomState(seed)
    return {name: torch.from_numpy(rng.uniform(-1, 1, common.concrete_shape(shape, dims)).astype(np.float32))
            for name, shape in INPUTS}


def entry():
    return common.manifest_entry(
        REL, DIMS, seq_axes={"audio": 1}, streaming=False, zero_default=False, made_by="torch.onnx.export, opset 14",
        exposed=[{"graph": "main", "node": "/lstm/LSTM", "kind": kind,
                  "pair": {"input": "state", "input_region": [row, None, None], "output": "stateN",
                           "output_region": [row, None, None], "axes": ["batch", "hidden"]}}
                 for kind, row in (("h", 0), ("c", 1))],
        input_context={"input": "audio", "axis": 1, "frames": CONTEXT},
        note="Silero VAD v5's calling convention, small: audio [batch, seq] framed by Conv1d(1, 4, 16, stride 8) "
             "without padding, an LSTM (I 4, H 8) with h and c in rows of the authors' state [2,batch,8] "
             "(Unsqueeze(Gather) in, Stack out), prob [batch, 1] of the last frame. Chunks do not stream by "
             "the state alone (a frame spans two chunks): the authors prepend the previous chunk's last 8 "
             "samples; rewrite --input-context audio:1:8 carries them")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ort-node", default=common.DEFAULT_ORT_NODE, help="path of the onnxruntime-node package")
    args = parser.parse_args()
    model, module = export()
    common.write_model(model, REL)
    runs = []
    for dims, seed in ((EXPORT_DIMS, 11), (DIMS, 12)):
        inputs = inputs_at(dims, seed)
        with torch.no_grad():
            result = module(*inputs.values())
        expected = {name: r.numpy() for (name, _), r in zip(OUTPUTS, result)}
        runs.append(({name: t.numpy() for name, t in inputs.items()}, dims, expected))
    common.verify_all([(REL, entry(), runs)], args.ort_node)
    common.write_fragment("context", [entry()])
    common.merge_manifest()
    return 0


if __name__ == "__main__":
    sys.exit(main())
