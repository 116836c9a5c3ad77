#!/usr/bin/python3
"""Exports the "does the model stream?" test models of rnnstate (issue 38) and checks them against PyTorch.

    /usr/bin/python3 tools/gen_stream_models.py [--ort-node DIR]

Writes models/stream/*.onnx, their manifest entries (models/stream/manifest.part.json, merged into
models/manifest.json) and models/stream/expectations.json: for each model, whether chunked runs with the
state fed back equal one run (rnnstate's verdict must say so, and `verify` must agree), and where not, the
operator that makes them differ. The models put around the recurrences what published models put there:
a layer started from another layer's final state, convolutions over time (valid, causal — whose context the
rewrite carries — "same", dilated, strided; kernel 1), a convolution over frequency only, a reduction over time, a last-frame head, a
dual-path block (an RNN over frequency inside each frame beside one over time), and exports with a fixed
time length (PyTorch without dynamic axes, its Reshape constants carrying the length).

Each export is checked as tools/gen_torch_models.py checks its own: onnx's checker, and onnxruntime-node
against PyTorch at two sets of dims. Needs Debian's python3-torch 1.13: run with /usr/bin/python3.
"""

import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_handbuilt_models as common  # noqa: E402
import gen_torch_models as torch_models  # noqa: E402


class Chained(nn.Module):
    """`out, (h, c) = lstm1(x)` then `y, _ = lstm2(out, (h, c))`: layer 2 starts from layer 1's final state."""

    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTM(4, 5)
        self.lstm2 = nn.LSTM(5, 5)

    def forward(self, x):
        out, (h, c) = self.lstm1(x)
        y, (h2, _) = self.lstm2(out, (h, c))
        return y, h2


class ConvFront(nn.Module):
    """Convolutions over time in front of an LSTM (x [batch, seq, F], time on the conv's axis 2)."""

    def __init__(self, convs, left_pad=0):
        super().__init__()
        self.convs = nn.ModuleList(convs)
        self.left_pad = left_pad
        self.lstm = nn.LSTM(self.convs[-1].out_channels, 5, batch_first=True)

    def forward(self, x):
        z = x.transpose(1, 2)
        for conv in self.convs:
            if self.left_pad:
                z = F.pad(z, (self.left_pad, 0))
            z = torch.tanh(conv(z))
        y, (h, _) = self.lstm(z.transpose(1, 2))
        return y, h


class ConvFrontState(nn.Module):
    """The causal convolution of conv_causal_front (F.pad 4 frames before, Conv1d kernel 3, dilation 2) before
    an LSTM whose (h0, c0) are the caller's inputs: exported at ai.onnx opset 7, which has no Expand (and
    where PyTorch writes an LSTM's zero default as the experimental ConstantFill, hence the given state)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(6, 6, 3, dilation=2)
        self.lstm = nn.LSTM(6, 5, batch_first=True)

    def forward(self, x, h0, c0):
        z = torch.tanh(self.conv(F.pad(x.transpose(1, 2), (4, 0))))
        y, (h, c) = self.lstm(z.transpose(1, 2), (h0, c0))
        return y, h, c


class ConvAfter(nn.Module):
    """A GRU then a "same" convolution over time (padding 1 each side: one frame of lookahead)."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 6, batch_first=True)
        self.conv = nn.Conv1d(6, 3, 3, padding=1)

    def forward(self, x):
        y, h = self.gru(x)
        return self.conv(y.transpose(1, 2)).transpose(1, 2), h


class FreqConv(nn.Module):
    """A Conv2d over frequency only (kernel 1 in time) on x [batch, 1, seq, F], then a GRU over time."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, (1, 3), padding=(0, 1))
        self.gru = nn.GRU(16, 5, batch_first=True)

    def forward(self, x):
        z = torch.relu(self.conv(x))                      # [B, 2, T, 8]
        z = z.permute(0, 2, 1, 3).flatten(2)              # [B, T, 16]
        y, h = self.gru(z)
        return y, h


class MeanOverTime(nn.Module):
    """A GRU whose frames are averaged over time into a second output (an utterance embedding)."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 6)

    def forward(self, x):
        y, h = self.gru(x)
        return y, y.mean(dim=0)


class LastFrameHead(nn.Module):
    """A sensor classifier: LSTM (batch_first), its last frame through a Linear layer."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 8, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y[:, -1, :])


class DualPath(nn.Module):
    """A dual-path block (DPRNN, GTCRN, DPCRN): x [batch, seq, F, C]; a bidirectional GRU over frequency
    inside each frame (its batch is batch x seq), then a GRU over time for each frequency (batch x F)."""

    def __init__(self, freq=5, channels=3):
        super().__init__()
        self.intra = nn.GRU(channels, 2, batch_first=True, bidirectional=True)
        self.inter = nn.GRU(4, 4, batch_first=True)
        self.freq = freq

    def forward(self, x):
        b, t, f, c = x.shape
        intra, _ = self.intra(x.reshape(b * t, f, c))           # [B*T, F, 4]
        z = intra.reshape(b, t, f, 4).transpose(1, 2)           # [B, F, T, 4]
        inter, _ = self.inter(z.reshape(b * f, t, 4))           # [B*F, T, 4]
        return inter.reshape(b, f, t, 4).transpose(1, 2)        # [B, T, F, 4]


class FixedReshape(nn.Module):
    """A fixed-length export: x [1, 20, 6] viewed as [1, 20, 3, 2] and back (the traced Reshape constants
    carry the length 20), a batch-first LSTM, and a Linear layer per frame."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 5, batch_first=True)
        self.out = nn.Linear(5, 2)

    def forward(self, x):
        z = torch.relu(x.reshape(1, 20, 3, 2)).reshape(1, 20, 6)
        y, _ = self.lstm(z)
        return self.out(y)


class Case(torch_models.Case):
    """A case of this script, with what rnnstate must say of it."""

    def __init__(self, name, make, inputs, outputs, export_dims, dims, seq_axes, out_axes, chunks, exact, note,
                 because=None, time_axis=None, zero_default=True, subdir="stream", extra_entries=None, opset=None,
                 **extra):
        rel = f"{subdir}/{name}.onnx"
        streaming = exact and time_axis is None
        if not exact:
            extra["expect_chunking_differs"] = True  # a negative control: chunks must differ
        entry = common.manifest_entry(rel, dims, seq_axes, out_axes, chunks if streaming else None, streaming,
                                      zero_default, note, **extra)
        if not exact:
            entry["chunks"] = chunks
        super().__init__(rel, make, inputs, outputs, export_dims, entry, extra_entries=extra_entries, opset=opset)
        self.expectation = {"chunk_exact": exact, "because": because, "time_axis": time_axis,
                            "seq_axes": seq_axes, "dims": dims}


def cases():
    tb = {"batch": 2, "seq": 30}
    bs = ["batch", "seq"]
    causal = Case("conv_causal_front", lambda: ConvFront([nn.Conv1d(6, 6, 3, dilation=2)], left_pad=4),
                  [("x", bs + [6])], [("y", bs + [5]), ("h_n", [1, "batch", 5])], tb, {"batch": 2, "seq": 16},
                  {"x": 1}, {"y": 1}, [7, 9], True,
                  "F.pad (4 frames before) + Conv1d kernel 3, dilation 2 (causal) before an LSTM: the rewrite "
                  "carries the conv's last 4 input frames as a context state, in place of the padding")
    no_context = {k: v for k, v in causal.entry.items() if k not in ("chunks", "note")}
    no_context.update(streaming=False, rewrite_args=["--no-conv-context"], expect_chunking_differs=True,
                      note="conv_causal_front with --no-conv-context: each chunk pads its own start with zeros "
                           "instead of the previous chunk's frames", chunks=[7, 9])
    causal.extra_entries.append(no_context)
    causal.expectation["without_conv_context"] = {"chunk_exact": False, "because": "Pad"}
    return [
        Case("chained_lstm", Chained, [("x", ["seq", "batch", 4])],
             [("y", ["seq", "batch", 5]), ("h_n", [1, "batch", 5])], {"batch": 2, "seq": 6},
             {"batch": 2, "seq": 12}, {"x": 0}, {"y": 0}, [5, 7], False,
             "lstm2 starts from lstm1's final (h, c): its first step needs the sequence's last frame", "LSTM",
             zero_default=False),
        Case("conv_valid_front", lambda: ConvFront([nn.Conv1d(6, 6, 5, stride=2), nn.Conv1d(6, 6, 5, stride=2)]),
             [("x", bs + [6])], [("y", ["batch", "seq_out", 5]), ("h_n", [1, "batch", 5])],
             {"batch": 2, "seq": 30, "seq_out": 5},
             {"batch": 2, "seq": 60, "seq_out": 12}, {"x": 1}, {}, [27, 33], False,
             "two Conv1d over time (kernel 5, stride 2, no padding) before an LSTM: chunks under 13 frames do "
             "not run, longer ones lack their first frames' context", "Conv"),
        causal,
        Case("conv_causal_state_op7", ConvFrontState,
             [("x", bs + [6]), ("h0", [1, "batch", 5]), ("c0", [1, "batch", 5])],
             [("y", bs + [5]), ("h_n", [1, "batch", 5]), ("c_n", [1, "batch", 5])], tb, {"batch": 2, "seq": 16},
             {"x": 1}, {"y": 1}, [7, 9], True,
             "conv_causal_front's causal Conv1d before an LSTM fed (h0, c0), exported at ai.onnx opset 7: no Expand, "
             "so the context's zero default is tiled to the batch", zero_default=False, opset=7),
        Case("conv_same_after", ConvAfter, [("x", bs + [4])], [("y", bs + [3]), ("h_n", [1, "batch", 6])], tb,
             {"batch": 2, "seq": 16}, {"x": 1}, {"y": 1}, [7, 9], False,
             "a GRU then a Conv1d kernel 3 padding 1 (one frame of lookahead)", "Conv"),
        Case("conv_1x1_front", lambda: ConvFront([nn.Conv1d(6, 4, 1)]), [("x", bs + [6])],
             [("y", bs + [5]), ("h_n", [1, "batch", 5])], tb, {"batch": 2, "seq": 16}, {"x": 1}, {"y": 1},
             [3, 13], True, "a Conv1d with kernel 1 (per frame) before an LSTM: chunked = whole"),
        Case("conv2d_freq_only", FreqConv, [("x", ["batch", 1, "seq", 8])],
             [("y", bs + [5]), ("h_n", [1, "batch", 5])], {"batch": 2, "seq": 5}, {"batch": 2, "seq": 11},
             {"x": 2}, {"y": 1}, [4, 7], True,
             "a Conv2d with kernel (1, 3) over frequency only, then a GRU over time: chunked = whole"),
        Case("mean_over_time", MeanOverTime, [("x", ["seq", "batch", 4])],
             [("y", ["seq", "batch", 6]), ("m", ["batch", 6])], {"batch": 2, "seq": 5}, {"batch": 2, "seq": 10},
             {"x": 0}, {"y": 0}, [4, 6], False, "a GRU whose frames are also averaged over time", "ReduceMean"),
        Case("last_frame_head", LastFrameHead, [("x", bs + [6])], [("logits", ["batch", 3])], tb,
             {"batch": 2, "seq": 9}, {"x": 1}, {}, [2, 7], True,
             "LSTM then Linear on its last frame (y[:, -1]): the last call's logits are the whole run's"),
        Case("dual_path", DualPath, [("x", ["batch", "seq", 5, 3])], [("y", ["batch", "seq", 5, 4])],
             {"batch": 2, "seq": 4}, {"batch": 2, "seq": 9}, {"x": 1}, {"y": 1}, [4, 5], True,
             "dual path: a bidirectional GRU over frequency within each frame (batch x seq rows), then a GRU over "
             "time per frequency: only the latter carries state"),
        Case("fixed_reshape_bf", FixedReshape, [("x", [1, 20, 6])], [("y", [1, 20, 2])], {}, {}, {}, {},
             [8, 12], True, "exported without dynamic axes: x [1, 20, 6], the Reshape constants hold the length "
             "20; rewrite --time-axis x:1 opens it", time_axis="x:1"),
    ]


def generate(make_cases, subdir, ort_node):
    """Exports `make_cases()`, checks each in ORT against PyTorch, writes models/<subdir>/manifest.part.json
    and models/<subdir>/expectations.json, and merges models/manifest.json."""
    built, expectations = [], {}
    for case in make_cases():
        torch.manual_seed(common.name_seed(case.relpath))
        model, module = torch_models.export(case)
        common.write_model(model, case.relpath)
        runs = []
        for dims, seed in ((case.export_dims, 11), (case.entry["dims"], 12)):
            inputs = torch_models.make_inputs(case, dims, seed)
            runs.append(({n: t.numpy() for n, t in inputs.items()}, dims,
                         torch_models.torch_reference(case, module, inputs)))
        built.append((case.relpath, case.entries, runs))
        expectations[os.path.basename(case.relpath)] = dict(case.expectation, note=case.entry["note"])
    common.verify_all(built, ort_node)
    common.write_fragment(subdir, [entry for case in make_cases() for entry in case.entries])
    with open(os.path.join(common.MODELS, subdir, "expectations.json"), "w") as f:
        json.dump({"models": expectations}, f, indent=1, sort_keys=True)
        f.write("\n")
    common.merge_manifest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ort-node", default=common.DEFAULT_ORT_NODE, help="path of the onnxruntime-node package")
    args = parser.parse_args()
    generate(cases, "stream", args.ort_node)
    return 0


if __name__ == "__main__":
    sys.exit(main())
