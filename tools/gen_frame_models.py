#!/usr/bin/python3
"""Exports the one-frame-per-call test models of rnnstate (issue 32, item 4) with PyTorch 1.13.

    /usr/bin/python3 tools/gen_frame_models.py [--ort-node DIR]

Writes models/frame/*.onnx and models/frame/manifest.part.json, then merges all fragments into
models/manifest.json. Each model takes one block of samples per call, as Silero VAD does: a strided
Conv1d over the samples, a mean over the frames it makes, and one LSTM step. The samples are no time
axis of the recurrence (the LSTM always runs one step per call); the state is what carries from one call
to the next. `frame_lstm_state` carries it the authors' way (`state [2, batch, H]` in, `stateN` out: h and
c stacked); `frame_lstm` starts every call from zeros (rnnstate adds its state). As Silero VAD v5's
export, the models leave their dimensions unnamed (x [?, ?], state [2, ?, 4]): no name marks an axis as
time. Both are checked in onnxruntime-node against PyTorch (max abs diff <= 1e-5), at the export dims and
the manifest's: first as exported with named dims (the shared checks need names), then as written.
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
HIDDEN = 4


class FrameLstm(nn.Module):
    """One block of samples -> one probability; `state` (h and c stacked) carried when `carries_state`."""

    def __init__(self, carries_state):
        super().__init__()
        self.carries_state = carries_state
        self.conv = nn.Conv1d(1, 6, kernel_size=8, stride=8)
        self.lstm = nn.LSTM(6, HIDDEN)
        self.head = nn.Linear(HIDDEN, 1)

    def forward(self, x, *state):
        frames = torch.relu(self.conv(x.unsqueeze(1)))  # [batch, 6, seq / 8]
        step = frames.mean(dim=2).unsqueeze(0)  # one step: [1, batch, 6]
        if self.carries_state:
            y, (h, c) = self.lstm(step, (state[0][0:1], state[0][1:2]))
        else:
            y, (h, c) = self.lstm(step)
        prob = torch.sigmoid(self.head(y[0]))  # [batch, 1]
        if self.carries_state:
            return prob, torch.cat([h, c], dim=0)
        return prob


CASES = [
    # (name, carries_state, inputs, outputs, note)
    ("frame_lstm_state", True, [("x", ["batch", "seq"]), ("state", [2, "batch", HIDDEN])],
     [("prob", ["batch", 1]), ("stateN", [2, "batch", HIDDEN])],
     "issue 32 item 4: one block of samples per call (Silero VAD's shape: x [batch, seq] (seq: samples) -> strided Conv1d "
     "-> mean over its frames -> one LSTM step -> prob [batch, 1]); the authors carry h and c in state "
     "[2, batch, 4] -> stateN (torch.cat([h, c])). No time axis inside one call: verify checks the calls"),
    ("frame_lstm", False, [("x", ["batch", "seq"])], [("prob", ["batch", 1])],
     "issue 32 item 4: frame_lstm_state without the authors' state: every call starts the LSTM from zeros "
     "(rnnstate adds h and c). No time axis inside one call, and the original cannot be fed the state: "
     "verify checks the first call only"),
]
EXPORT_DIMS = {"batch": 1, "seq": 32}
DIMS = {"batch": 2, "seq": 64}


def export(name, carries_state, inputs, outputs, note):
    torch.manual_seed(common.name_seed(f"frame/{name}.onnx"))
    module = FrameLstm(carries_state).eval()
    example = make_inputs(inputs, EXPORT_DIMS, seed=7)
    dynamic = {n: {a: d for a, d in enumerate(shape) if isinstance(d, str)} for n, shape in inputs + outputs}
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, tuple(example.values()), buf, opset_version=OPSET,
                          input_names=[n for n, _ in inputs], output_names=[n for n, _ in outputs],
                          dynamic_axes={n: a for n, a in dynamic.items() if a})
    model = onnx.load_from_string(buf.getvalue())
    declared = dict(inputs + outputs)
    for vi in list(model.graph.input) + list(model.graph.output):
        common.set_shape(vi, declared[vi.name])
    model.doc_string = note
    return model, module


def unname_dims(relpath):
    """Clears every dim_param of the model's inputs and outputs, as Silero VAD v5 declares them."""
    path = os.path.join(common.MODELS, relpath)
    model = onnx.load(path)
    for vi in list(model.graph.input) + list(model.graph.output):
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param"):
                d.ClearField("dim_param")
    onnx.checker.check_model(model, full_check=True)
    common.write_model(model, relpath)


def check_as_written(built, ort_node):
    """The written (unnamed) models in onnxruntime-node against PyTorch's outputs."""
    jobs = [(os.path.join(common.MODELS, rel), feeds) for rel, _, runs in built for feeds, _, _ in runs]
    expected = [want for _, _, runs in built for _, _, want in runs]
    for (path, _), result, want in zip(jobs, common.ort_run_many(ort_node, jobs), expected):
        assert "error" not in result, f"{path}: {result.get('error')}"
        diff = max(float(np.max(np.abs(result["outputs"][n] - w))) for n, w in want.items())
        assert diff <= common.TOLERANCE, f"{path}: max|diff| {diff}"
    print(f"ok {len(jobs)} runs of the models as written (unnamed dims)")


def make_inputs(inputs, dims, seed):
    rng = np.random.RandomState(seed)
    return {n: torch.from_numpy(rng.uniform(-1, 1, common.concrete_shape(s, dims)).astype(np.float32))
            for n, s in inputs}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ort-node", default=common.DEFAULT_ORT_NODE, help="path of the onnxruntime-node package")
    args = parser.parse_args()
    built, entries = [], []
    for name, carries_state, inputs, outputs, note in CASES:
        rel = f"frame/{name}.onnx"
        model, module = export(name, carries_state, inputs, outputs, note)
        common.write_model(model, rel)
        # No time axis to chunk: the e2e harness repeats the call with the state fed back.
        entry = common.manifest_entry(rel, DIMS, {}, {}, 3, True, not carries_state, note, chunk_mode="calls",
                                      branch_taken=True)
        # The written model's dims have no names: the harness takes the inputs' shapes from here.
        entry["input_shapes"] = {n: common.concrete_shape(s, DIMS) for n, s in inputs}
        runs = []
        for dims, seed in [(EXPORT_DIMS, 11), (DIMS, 12)]:
            feeds = make_inputs(inputs, dims, seed)
            with torch.no_grad():
                result = module(*feeds.values())
            result = result if isinstance(result, tuple) else (result,)
            runs.append(({n: t.numpy() for n, t in feeds.items()}, dims,
                         {n: r.numpy() for (n, _), r in zip(outputs, result)}))
        built.append((rel, [entry], runs))
        entries.append(entry)
    common.verify_all(built, args.ort_node)
    for rel, _, _ in built:
        unname_dims(rel)
    check_as_written(built, args.ort_node)
    common.write_fragment("frame", entries)
    common.merge_manifest()
    return 0


if __name__ == "__main__":
    sys.exit(main())
