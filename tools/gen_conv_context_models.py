#!/usr/bin/python3
"""Exports the convolution-context test models of rnnstate (issue 39) and checks them against PyTorch.

    /usr/bin/python3 tools/gen_conv_context_models.py [--ort-node DIR]

Writes models/conv_context/*.onnx, their manifest entries (models/conv_context/manifest.part.json, merged
into models/manifest.json) and models/conv_context/expectations.json (as tools/gen_stream_models.py does for
models/stream). Causal windows over time, each before or after a GRU or LSTM as in published streaming
models: after the default `rnnstate rewrite`, which carries each window's last (k-1)*d input frames as a
state of kind "context", chunked runs with the state fed back must equal one run. The negative controls
must keep differing. Every chunk is longer than the model's receptive field (its frames of context; but the
first chunks of edge_pad_conv1d and const_pad_conv1d, which leave the context short), and the chunks of a model
are all different (the strided model's multiples of its stride).

Chunk-exact after the default rewrite:
  causal_pad_conv1d_dil   F.pad + Conv1d kernel 3, dilations 1, 2, 4 (each its own Pad), tanh, then an LSTM
                          (a second entry: `--no-conv-context` leaves the convolutions, chunks differ)
  causal_pad_depthwise    F.pad + depthwise Conv1d (kernel 3, dilation 2, groups = channels) + pointwise
                          Conv1d, then a GRU
  causal_pad_conv2d       nn.ZeroPad2d (time before by 1, frequency both sides) + Conv2d kernel (2, 3),
                          stride (1, 2) (over frequency only) on x [batch, 1, seq, 8], then a GRU
  crn_like                two such encoder convolutions (kernels (2, 3) and (3, 3)), a GRU, a decoder of two
                          ConvTranspose2d with kernel 1 along time and stride 2 along frequency, skip
                          connections, a sigmoid mask on x: y [batch, 1, seq, 8]
  causal_pad_pools        F.pad + AvgPool1d(3, stride 1) over time, a GRU, F.pad + MaxPool1d(2, stride 1)
  causal_slice_conv1d     Conv1d kernel 3, dilation 2, padding 4 (pads 4 on both sides) then y[..., :-4]
                          (the usual CausalConv1d; PyTorch 1.13 cannot write asymmetric Conv pads), a GRU
  strided_causal_conv1d   F.pad + Conv1d kernel 4, stride 2 over time, then a GRU at half the frame rate:
                          chunks of a multiple of 2 frames (the metadata's stream.chunk_multiple)
  convtranspose_causal    ConvTranspose1d at stride 1 (a Conv with its kernel reversed): F.pad 4 + depthwise,
                          dilation 2, padding 4; then kernel 3 unpadded with its last 2 frames dropped; a GRU
  tcn_no_rnn              no recurrent node: two causal Conv1d (dilations 1, 2) with ReLU, a pointwise Conv1d;
                          the time axis is found from the windows (the named dimension they slide along)
  reflect_pad_conv1d      F.pad mode "reflect", 2 frames before, + Conv1d kernel 3, then an LSTM: the context
                          starts empty and the Pad reflects the first call's frames 1 and 2 as the original
                          does (the first call holds at least 3 frames: stream.first_chunk_min)
  edge_pad_conv1d         F.pad mode "replicate" (a Pad in edge mode), 4 frames before, + Conv1d kernel 3,
                          dilation 2, then an LSTM; its first chunk is shorter than the context
  const_pad_conv1d        F.pad with the value 0.5, 2 and 4 frames before two Conv1d (dilations 1, 2), then an
                          LSTM; its first chunk is one frame
  upsample_gru_k4         a GRU, a causal ConvTranspose1d over time (kernel 4, stride 2, its last 2 frames
                          dropped), a second GRU at the doubled rate: 1 input frame of context, no delay
  upsample_gru_k2         the same with kernel 2 (no overlap): streams as it is
  upsample_crn            a CRN over time: a strided causal Conv1d encoder, a GRU at half the rate, skip
                          connections, a causal ConvTranspose1d decoder back to the input rate
  valid_conv1d_gru        Conv1d kernel 3 without padding ("valid": seq - 2 frames), then a GRU: a context whose
                          first feed holds no frames (the first call emits 2 frames fewer, as one run does)
  valid_pool_gru          MaxPool1d(3, stride 1) without padding, then a GRU: the same for a pool
  sfe_conv_gru            GTCRN's subband feature extraction (nn.Unfold over frequency: a Gather along time by
                          a Range over the chunk's length) on x [batch, 1, seq, 8], F.pad + Conv2d kernel (2, 3),
                          then a GRU over time (tools/gtcrn_like_models.py)
  gtcrn_like              a GTCRN-like encoder-decoder (tools/gtcrn_like_models.py) on x [batch, 2, seq, 16],
                          streamed as exported: torch.chunk's Slices, TRA, the dual-path GRNN
                          (its intra-frame GRU carries nothing), a ConvTranspose2d decoder
Negative controls (chunks differ, and must keep differing):
  same_conv1d             Conv1d kernel 3, padding 1 (one frame of lookahead), then a GRU
  same_conv1d_dil         Conv1d kernel 5, dilation 2, padding 4 (4 frames of lookahead), then a GRU
  same_conv_chain         "same" Conv1d kernel 3, a GRU, "same" Conv1d kernel 5: 3 frames of lookahead
  pad_same_conv1d         F.pad(x, (1, 2)) + Conv1d kernel 4, padding 0 (2 frames of lookahead in a Pad node)
  same_conv_residual      x + tanh("same" Conv1d kernel 3 of x), then a GRU
  (the first three stream with `rewrite --lookahead`, late by their lookahead: tests/e2e/lookahead_test.mjs;
  the residual one not even then: its skip path has no lookahead)
  convtranspose_time      a GRU, ConvTranspose1d over time (kernel 4, stride 2, padding 1: each input frame
                          overlaps its neighbours' output frames, one frame of context and one of lookahead),
                          a second GRU at the doubled frame rate
  upsample_sym_k4         ConvTranspose1d over time, kernel 4, stride 2, padding 1 (symmetric: it lags), then a
                          GRU; upsample_sym_k3_2d: ConvTranspose2d kernel (3, 1), stride (2, 1), padding (1, 0),
                          output_padding (1, 0); upsample_sym_k8s4: kernel 8, stride 4, padding 2 (all three
                          stream with `rewrite --lookahead`, late by a whole number of input frames)
  kws_pool_no_rnn         tcn_no_rnn with the mean over time at the end: y [batch, 3] of one call is not the
                          mean of the whole run
convtranspose_time compares only h_n chunked vs whole (`streaming_skip_outputs`): its y runs at another
frame rate than x.

Each export is checked as tools/gen_torch_models.py checks its own: onnx's checker, and onnxruntime-node
against PyTorch at two sets of dims. Needs Debian's python3-torch 1.13: run with /usr/bin/python3.
"""

import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_handbuilt_models as common  # noqa: E402
import gen_stream_models as stream  # noqa: E402
import gtcrn_like_models as gtcrn  # noqa: E402

SUBDIR = "conv_context"


class CausalStack(nn.Module):
    """x [batch, seq, F]: per layer F.pad (left_pad frames before, `mode`) + Conv1d + tanh, then an LSTM
    (batch_first) over time."""

    def __init__(self, convs, left_pads, mode="constant", value=0.0):
        super().__init__()
        self.convs = nn.ModuleList(convs)
        self.left_pads = left_pads
        self.mode = mode
        self.value = value
        self.lstm = nn.LSTM(self.convs[-1].out_channels, 5, batch_first=True)

    def forward(self, x):
        z = x.transpose(1, 2)
        for conv, pad in zip(self.convs, self.left_pads):
            # A value only where one is given: the zero-padded models export as they always did.
            padded = F.pad(z, (pad, 0), mode=self.mode, value=self.value) if self.value else \
                F.pad(z, (pad, 0), mode=self.mode)
            z = torch.tanh(conv(padded if pad else z))
        y, (h, _) = self.lstm(z.transpose(1, 2))
        return y, h


class ConvThenGru(nn.Module):
    """x [batch, seq, F]: one windowed operator over time (`front`, on [batch, C, seq]), tanh, then a GRU."""

    def __init__(self, front, channels, hidden=5):
        super().__init__()
        self.front = front
        self.gru = nn.GRU(channels, hidden, batch_first=True)

    def forward(self, x):
        y, h = self.gru(torch.tanh(self.front(x.transpose(1, 2))).transpose(1, 2))
        return y, h


class SliceCausal(nn.Module):
    """Conv1d with symmetric padding `pad`, its last `pad` frames dropped: a causal convolution."""

    def __init__(self, conv, pad):
        super().__init__()
        self.conv = conv
        self.pad = pad

    def forward(self, z):
        return self.conv(z)[..., :-self.pad]


class LeftPad(nn.Module):
    """F.pad of `pad` frames before the time axis (the last one) and `after` after it, then `inner`."""

    def __init__(self, pad, inner, after=0):
        super().__init__()
        self.pad = pad
        self.after = after
        self.inner = inner

    def forward(self, z):
        return self.inner(F.pad(z, (self.pad, self.after)))


def depthwise_front(channels=6, out=4):
    """F.pad 4 + depthwise Conv1d (kernel 3, dilation 2, groups = channels) + pointwise Conv1d (kernel 1)."""
    return nn.Sequential(LeftPad(4, nn.Conv1d(channels, channels, 3, dilation=2, groups=channels)),
                         nn.Conv1d(channels, out, 1))


class Pools(nn.Module):
    """x [batch, seq, 4]: F.pad 2 + AvgPool1d(3, stride 1) over time, a GRU, F.pad 1 + MaxPool1d(2, stride 1)."""

    def __init__(self):
        super().__init__()
        self.avg = nn.AvgPool1d(3, stride=1)
        self.gru = nn.GRU(4, 6, batch_first=True)
        self.max = nn.MaxPool1d(2, stride=1)

    def forward(self, x):
        z = self.avg(F.pad(x.transpose(1, 2), (2, 0)))
        y, h = self.gru(z.transpose(1, 2))
        return self.max(F.pad(y.transpose(1, 2), (1, 0))).transpose(1, 2), h


def encoder(c_in, c_out, kt):
    """nn.ZeroPad2d (kt - 1 frames before, one bin each side of frequency) + Conv2d (kt, 3), stride (1, 2)."""
    return nn.Sequential(nn.ZeroPad2d((1, 1, kt - 1, 0)), nn.Conv2d(c_in, c_out, (kt, 3), stride=(1, 2)))


def decoder(c_in, c_out):
    """ConvTranspose2d with kernel 1 along time and 3 along frequency, stride 2 along frequency: F -> 2F."""
    return nn.ConvTranspose2d(c_in, c_out, (1, 3), stride=(1, 2), padding=(0, 1), output_padding=(0, 1))


class Conv2dGru(nn.Module):
    """x [batch, 1, seq, 8]: one encoder convolution (8 -> 4 bins, 4 channels), ELU, a GRU over time."""

    def __init__(self):
        super().__init__()
        self.enc = encoder(1, 4, 2)
        self.gru = nn.GRU(16, 6, batch_first=True)

    def forward(self, x):
        z = F.elu(self.enc(x))                             # [B, 4, T, 4]
        y, h = self.gru(z.permute(0, 2, 1, 3).flatten(2))  # [B, T, 16]
        return y, h


class CrnLike(nn.Module):
    """A CRN: x [batch, 1, seq, 8] -> encoders (8 -> 4 -> 2 bins) -> GRU over time -> decoders with skip
    connections (2 -> 4 -> 8 bins) -> a sigmoid mask times x."""

    def __init__(self):
        super().__init__()
        self.enc1, self.enc2 = encoder(1, 4, 2), encoder(4, 4, 3)
        self.gru = nn.GRU(8, 8, batch_first=True)
        self.dec2, self.dec1 = decoder(8, 4), decoder(8, 1)

    def forward(self, x):
        e1 = F.elu(self.enc1(x))                            # [B, 4, T, 4]
        e2 = F.elu(self.enc2(e1))                           # [B, 4, T, 2]
        r, h = self.gru(e2.permute(0, 2, 1, 3).flatten(2))  # [B, T, 8]
        r = r.reshape(x.shape[0], x.shape[2], 4, 2).permute(0, 2, 1, 3)  # [B, 4, T, 2]
        d2 = F.elu(self.dec2(torch.cat([r, e2], 1)))        # [B, 4, T, 4]
        mask = torch.sigmoid(self.dec1(torch.cat([d2, e1], 1)))
        return mask * x, h


class GruConvTransposeGru(nn.Module):
    """x [batch, seq, 4]: a GRU, ConvTranspose1d over time (kernel 4, stride 2, padding 1: 2 * seq frames),
    a second GRU at the doubled frame rate."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 6, batch_first=True)
        self.up = nn.ConvTranspose1d(6, 3, 4, stride=2, padding=1)
        self.gru2 = nn.GRU(3, 5, batch_first=True)

    def forward(self, x):
        r, _ = self.gru(x)
        y, h = self.gru2(torch.tanh(self.up(r.transpose(1, 2))).transpose(1, 2))
        return y, h


class SymmetricUpsampleGru(nn.Module):
    """x [batch, seq, 4]: PyTorch's usual upsampler over time (ConvTranspose1d with symmetric `padding`: 2 * seq
    frames, each output frame n depending on input frames up to floor((n + padding) / 2)), tanh, then a GRU at
    the doubled rate. With `spectrum`, ConvTranspose2d with time on axis 2 (kernel (k, 1), stride (2, 1)) over
    x [batch, seq, 4] read as [batch, 1, seq, 4], its channels and frequencies flattened for the GRU."""

    def __init__(self, kernel, padding, output_padding=0, stride=2, spectrum=False):
        super().__init__()
        self.spectrum = spectrum
        if spectrum:
            self.up = nn.ConvTranspose2d(1, 2, (kernel, 1), stride=(stride, 1), padding=(padding, 0),
                                         output_padding=(output_padding, 0))
            self.gru = nn.GRU(8, 5, batch_first=True)
        else:
            self.up = nn.ConvTranspose1d(4, 6, kernel, stride=stride, padding=padding, output_padding=output_padding)
            self.gru = nn.GRU(6, 5, batch_first=True)

    def forward(self, x):
        if self.spectrum:
            u = torch.tanh(self.up(x.unsqueeze(1)))            # [batch, 2, stride * seq, 4]
            u = u.permute(0, 2, 1, 3).flatten(2)               # [batch, stride * seq, 8]
        else:
            u = torch.tanh(self.up(x.transpose(1, 2))).transpose(1, 2)
        return self.gru(u)


class CausalUpsample(nn.Module):
    """ConvTranspose1d(k, stride s) over time without padding, its last k - s frames dropped when k > s
    (PyTorch's causal upsampling: each input frame gives its own s output frames, the frames one run gives)."""

    def __init__(self, c_in, c_out, kernel, stride):
        super().__init__()
        self.up = nn.ConvTranspose1d(c_in, c_out, kernel, stride=stride)
        self.tail = kernel - stride

    def forward(self, z):
        y = self.up(z)
        return y[..., :-self.tail] if self.tail > 0 else y


class GruUpsampleGru(nn.Module):
    """x [batch, seq, 4]: a GRU, a causal ConvTranspose1d upsampling over time (stride 2: 2 * seq frames),
    tanh, a second GRU at the doubled frame rate."""

    def __init__(self, kernel):
        super().__init__()
        self.gru = nn.GRU(4, 6, batch_first=True)
        self.up = CausalUpsample(6, 3, kernel, 2)
        self.gru2 = nn.GRU(3, 5, batch_first=True)

    def forward(self, x):
        r, _ = self.gru(x)
        return self.gru2(torch.tanh(self.up(r.transpose(1, 2))).transpose(1, 2))


class UpsampleCrn(nn.Module):
    """A CRN over time: x [batch, seq, 4] -> F.pad 2 + Conv1d(k 3, stride 2) over time (seq / 2 frames) -> a
    GRU -> skip concat with the encoder's frames -> causal ConvTranspose1d(k 4, stride 2) back to seq frames ->
    skip concat with x -> pointwise Conv1d -> a sigmoid mask times x: y [batch, seq, 4]."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Conv1d(4, 6, 3, stride=2)
        self.gru = nn.GRU(6, 6, batch_first=True)
        self.dec = CausalUpsample(12, 4, 4, 2)
        self.out = nn.Conv1d(8, 4, 1)

    def forward(self, x):
        z = x.transpose(1, 2)                                  # [B, 4, T]
        e = F.elu(self.enc(F.pad(z, (2, 0))))                  # [B, 6, T / 2]
        r, h = self.gru(e.transpose(1, 2))                     # [B, T / 2, 6]
        d = F.elu(self.dec(torch.cat([r.transpose(1, 2), e], 1)))  # [B, 4, T]
        mask = torch.sigmoid(self.out(torch.cat([d, z], 1)))
        return (mask * z).transpose(1, 2), h


class Tcn(nn.Module):
    """x [batch, seq, 4]: no recurrent node, two causal Conv1d (F.pad 2 + kernel 3, F.pad 4 + kernel 3
    dilation 2) with ReLU and a pointwise Conv1d; y [batch, seq, 3], or with `pool` its mean over time
    [batch, 3] (a keyword spotter's pooling)."""

    def __init__(self, pool=False):
        super().__init__()
        self.pool = pool
        self.c1, self.c2, self.out = nn.Conv1d(4, 6, 3), nn.Conv1d(6, 6, 3, dilation=2), nn.Conv1d(6, 3, 1)

    def forward(self, x):
        h = torch.relu(self.c1(F.pad(x.transpose(1, 2), (2, 0))))
        y = self.out(torch.relu(self.c2(F.pad(h, (4, 0)))))
        return y.mean(-1) if self.pool else y.transpose(1, 2)


class SameChain(nn.Module):
    """x [batch, seq, 4]: a "same" Conv1d kernel 3 (padding 1), tanh, a GRU, a "same" Conv1d kernel 5
    (padding 2) on its output: y [batch, seq, 3] looks 1 + 2 = 3 frames ahead."""

    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv1d(4, 6, 3, padding=1), nn.Conv1d(5, 3, 5, padding=2)
        self.gru = nn.GRU(6, 5, batch_first=True)

    def forward(self, x):
        z, h = self.gru(torch.tanh(self.c1(x.transpose(1, 2))).transpose(1, 2))
        return self.c2(z.transpose(1, 2)).transpose(1, 2), h


class SameResidual(nn.Module):
    """x [batch, seq, 4]: x + tanh("same" Conv1d kernel 3 of x), then a GRU: the skip path has no lookahead."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 4, 3, padding=1)
        self.gru = nn.GRU(4, 5, batch_first=True)

    def forward(self, x):
        z = x + torch.tanh(self.conv(x.transpose(1, 2))).transpose(1, 2)
        return self.gru(z)


def cases():
    bs = ["batch", "seq"]
    spec = ["batch", 1, "seq", 8]

    def case(name, make, features, hidden, export_seq, chunks, exact, note, because=None, spectrum=False,
             outputs=None, **kw):
        x = ("x", spec if spectrum else bs + [features])
        y = ("y", spec if spectrum else bs + [hidden])
        axes = {"x": 2 if spectrum else 1}
        out_axes = {"y": 2 if spectrum else 1}
        outputs = outputs or [y, ("h_n", [1, "batch", hidden])]
        dims = dict({"batch": 2, "seq": sum(chunks)}, **kw.pop("dims", {}))
        export_dims = dict(dims, seq=export_seq, **kw.pop("export_dims", {}))
        out_axes = kw.pop("out_axes", out_axes)
        return stream.Case(name, make, [x], outputs, export_dims, dims, axes, out_axes, chunks, exact, note,
                           because, subdir=SUBDIR, **kw)

    dilated = case(
        "causal_pad_conv1d_dil",
        lambda: CausalStack([nn.Conv1d(4, 6, 3), nn.Conv1d(6, 6, 3, dilation=2), nn.Conv1d(6, 6, 3, dilation=4)],
                            [2, 4, 8]),
        4, 5, 20, [17, 23, 19], True,
        "F.pad + Conv1d kernel 3, dilations 1, 2, 4 (each its own Pad, 2/4/8 frames before), tanh, then an LSTM: "
        "three context states carry 14 frames in all")
    no_context = {k: v for k, v in dilated.entry.items() if k not in ("chunks", "note")}
    no_context.update(rewrite_args=["--no-conv-context"], streaming=False, expect_chunking_differs=True,
                      note="causal_pad_conv1d_dil rewritten with --no-conv-context: the convolutions stay as they "
                           "are, each chunk pads its own start with zeros, chunks differ",
                      chunks=[16, 25, 18])
    dilated.extra_entries.append(no_context)
    dilated.expectation["without_conv_context"] = {"chunk_exact": False, "because": "Pad"}
    return [
        dilated,
        case("causal_pad_depthwise", lambda: ConvThenGru(depthwise_front(), 4), 6, 5, 12, [7, 11, 9], True,
             "F.pad 4 + depthwise Conv1d (kernel 3, dilation 2, groups 6) + pointwise Conv1d (kernel 1), tanh, "
             "then a GRU"),
        case("causal_pad_conv2d", Conv2dGru, None, 6, 6, [5, 9, 7], True,
             "nn.ZeroPad2d (1 frame before, 1 bin each side) + Conv2d kernel (2, 3), stride (1, 2) over frequency "
             "only, on x [batch, 1, seq, 8], ELU, then a GRU over time", spectrum=True,
             outputs=[("y", bs + [6]), ("h_n", [1, "batch", 6])], out_axes={"y": 1}),
        case("crn_like", CrnLike, None, 8, 7, [7, 5, 11], True,
             "CRN: encoders ZeroPad2d + Conv2d (2, 3) and (3, 3), stride 2 over frequency (8 -> 4 -> 2 bins), a "
             "GRU over time, decoders ConvTranspose2d kernel (1, 3) stride (1, 2) with skip connections, a "
             "sigmoid mask on x", spectrum=True),
        case("causal_pad_pools", Pools, 4, 6, 9, [5, 11, 7], True,
             "F.pad 2 + AvgPool1d(3, stride 1) over time, a GRU, F.pad 1 + MaxPool1d(2, stride 1) (zero padding)"),
        case("causal_slice_conv1d",
             lambda: ConvThenGru(SliceCausal(nn.Conv1d(4, 6, 3, dilation=2, padding=4), 4), 6), 4, 5, 12,
             [7, 11, 9], True,
             "Conv1d kernel 3, dilation 2, padding 4 (Conv pads [4, 4]) then a Slice dropping the last 4 frames "
             "(the usual CausalConv1d), then a GRU: the rewrite carries 4 frames of context, removes both "
             "paddings and keeps every frame of the Slice"),
        case("same_conv1d", lambda: ConvThenGru(nn.Conv1d(4, 6, 3, padding=1), 6), 4, 5, 10, [5, 7, 6], False,
             "Conv1d kernel 3, padding 1 (\"same\": one frame of lookahead), then a GRU", "Conv"),
        case("pad_same_conv1d", lambda: ConvThenGru(LeftPad(1, nn.Conv1d(4, 6, 4), after=2), 6), 4, 5, 10,
             [6, 8, 5], False,
             "F.pad(x, (1, 2)) + Conv1d kernel 4 without padding (the lookahead in a Pad node: 2 frames), then a "
             "GRU; streams with rewrite --lookahead, 2 frames late", "Pad"),
        case("same_conv1d_dil", lambda: ConvThenGru(nn.Conv1d(4, 6, 5, dilation=2, padding=4), 6), 4, 5, 14,
             [9, 7, 8], False,
             "Conv1d kernel 5, dilation 2, padding 4 (\"same\": 4 frames of lookahead), then a GRU; streams with "
             "rewrite --lookahead, 4 frames late", "Conv"),
        case("same_conv_chain", SameChain, 4, 3, 12, [6, 9, 7], False,
             "\"same\" Conv1d kernel 3 (padding 1), tanh, a GRU, \"same\" Conv1d kernel 5 (padding 2) on its "
             "output: 3 frames of lookahead along the path; streams with rewrite --lookahead, 3 frames late",
             "Conv", outputs=[("y", bs + [3]), ("h_n", [1, "batch", 5])]),
        case("same_conv_residual", SameResidual, 4, 5, 10, [5, 7, 6], False,
             "x + tanh(\"same\" Conv1d kernel 3 of x), then a GRU: the skip path is on time, the convolution's "
             "1 frame late, so rewrite --lookahead refuses it (the Add named)", "Conv"),
        case("strided_causal_conv1d", lambda: ConvThenGru(LeftPad(3, nn.Conv1d(4, 6, 4, stride=2)), 6), 4, 5, 12,
             [8, 10, 6], True,
             "F.pad 3 + Conv1d kernel 4, stride 2 over time, then a GRU at half the frame rate: the rewrite "
             "carries 3 frames of context; chunks must be multiples of 2 frames (stream.chunk_multiple)",
             outputs=[("y", ["batch", "seq_out", 5]), ("h_n", [1, "batch", 5])], out_axes={"y": 1},
             dims={"seq_out": 12}, export_dims={"seq_out": 6}),
        case("convtranspose_time", GruConvTransposeGru, 4, 5, 8, [7, 9, 3], False,
             "a GRU, ConvTranspose1d over time, kernel 4, stride 2, padding 1 (2 * seq frames; each input frame "
             "overlaps its neighbours' output frames), a second GRU at the doubled rate (y [batch, 2 * seq, 5] "
             "is compared only on the last chunk, h_n holds the difference)", "ConvTranspose",
             outputs=[("y", ["batch", "seq_up", 5]), ("h_n", [1, "batch", 5])], out_axes={},
             dims={"seq_up": 38}, export_dims={"seq_up": 16}, streaming_skip_outputs=["y"]),
        case("convtranspose_causal",
             lambda: ConvThenGru(nn.Sequential(
                 LeftPad(4, nn.ConvTranspose1d(4, 4, 3, padding=4, dilation=2, groups=4)),
                 SliceCausal(nn.ConvTranspose1d(4, 6, 3), 2)), 6), 4, 5, 12, [6, 10, 7], True,
             "ConvTranspose1d at stride 1 over time as GTCRN's decoder writes it: F.pad 4 + depthwise kernel 3, "
             "dilation 2, padding 4 (cropping the span: a causal window), then kernel 3 without padding, its "
             "last 2 frames dropped; then a GRU"),
        case("tcn_no_rnn", Tcn, 4, 3, 10, [5, 9, 7], True,
             "no recurrent node: F.pad 2 + Conv1d kernel 3, ReLU, F.pad 4 + Conv1d kernel 3 dilation 2, ReLU, a "
             "pointwise Conv1d; the time axis is the named dimension the causal windows slide along (seq)",
             outputs=[("y", bs + [3])]),
        case("kws_pool_no_rnn", lambda: Tcn(pool=True), 4, 3, 10, [5, 9, 7], False,
             "tcn_no_rnn with the mean over time at the end (a keyword spotter's pooling): the windows get their "
             "context states, but the mean of each call is not the mean of the whole run", "ReduceMean",
             outputs=[("y", ["batch", 3])], out_axes={}),
        case("reflect_pad_conv1d", lambda: CausalStack([nn.Conv1d(4, 6, 3)], [2], mode="reflect"), 4, 5, 10,
             [5, 7, 6], True,
             "F.pad mode reflect, 2 frames before, + Conv1d kernel 3, then an LSTM: the context starts empty and "
             "the Pad reflects the first call's frames 1 and 2 as the original does (a first call of 3 frames "
             "at least)"),
        case("edge_pad_conv1d", lambda: CausalStack([nn.Conv1d(4, 6, 3, dilation=2)], [4], mode="replicate"), 4, 5,
             10, [3, 9, 6], True,
             "F.pad mode replicate (Pad edge), 4 frames before, + Conv1d kernel 3, dilation 2, then an LSTM: the "
             "context starts empty, the Pad repeats the first frame for what the context lacks (the first chunk "
             "of 3 frames leaves it one short)"),
        case("const_pad_conv1d",
             lambda: CausalStack([nn.Conv1d(4, 6, 3), nn.Conv1d(6, 6, 3, dilation=2)], [2, 4], value=0.5), 4, 5, 10,
             [1, 8, 9], True,
             "F.pad with the value 0.5, 2 and 4 frames before two Conv1d (dilations 1, 2), then an LSTM: each "
             "context starts empty and its Pad pads 0.5 for what it lacks (a first chunk of one frame)"),
        case("upsample_gru_k4", lambda: GruUpsampleGru(4), 4, 5, 8, [6, 10, 4], True,
             "a GRU, ConvTranspose1d over time (kernel 4, stride 2, no padding) with its last 2 frames dropped "
             "(a causal upsampling: 2 * seq frames), tanh, a second GRU at the doubled rate: the rewrite carries "
             "1 input frame of context (the overlap-add tail), no delay",
             outputs=[("y", ["batch", "seq_up", 5]), ("h_n", [1, "batch", 5])], out_axes={"y": 1},
             dims={"seq_up": 40}, export_dims={"seq_up": 16}),
        case("upsample_gru_k2", lambda: GruUpsampleGru(2), 4, 5, 8, [7, 9, 3], True,
             "a GRU, ConvTranspose1d over time (kernel 2, stride 2: the windows do not overlap), tanh, a second "
             "GRU at the doubled rate: streams as it is, no context",
             outputs=[("y", ["batch", "seq_up", 5]), ("h_n", [1, "batch", 5])], out_axes={"y": 1},
             dims={"seq_up": 38}, export_dims={"seq_up": 16}),
        case("upsample_crn", UpsampleCrn, 4, 4, 8, [6, 10, 4], True,
             "a CRN over time: F.pad 2 + Conv1d(kernel 3, stride 2) over time, a GRU at half the rate, skip "
             "connections, a causal ConvTranspose1d(kernel 4, stride 2) back to the input rate (its last 2 frames "
             "dropped), a sigmoid mask on x: chunks of a multiple of 2 frames",
             outputs=[("y", bs + [4]), ("h_n", [1, "batch", 6])]),
        case("upsample_sym_k4", lambda: SymmetricUpsampleGru(4, 1), 4, 5, 8, [6, 10, 4], False,
             "ConvTranspose1d over time, kernel 4, stride 2, padding 1 (PyTorch's usual upsampler: 2 * seq frames, "
             "output frame n final once input frame floor((n + 1) / 2) is seen), tanh, a GRU at the doubled rate: "
             "the default rewrite leaves it (it lags); rewrite --lookahead carries 2 input frames of context, the "
             "output 2 frames late (1 input frame), a flush of 1 frame (tests/e2e/lookahead_test.mjs)",
             "ConvTranspose", outputs=[("y", ["batch", "seq_up", 5]), ("h_n", [1, "batch", 5])], out_axes={},
             dims={"seq_up": 40}, export_dims={"seq_up": 16}, streaming_skip_outputs=["y"]),
        case("upsample_sym_k3_2d", lambda: SymmetricUpsampleGru(3, 1, 1, spectrum=True), 4, 5, 8, [7, 9, 5],
             False,
             "ConvTranspose2d with time on axis 2: kernel (3, 1), stride (2, 1), padding (1, 0), output_padding "
             "(1, 0) (2 * seq frames), tanh, a GRU at the doubled rate: with --lookahead 1 input frame of context "
             "(none on the first call), 2 frames late",
             "ConvTranspose", outputs=[("y", ["batch", "seq_up", 5]), ("h_n", [1, "batch", 5])], out_axes={},
             dims={"seq_up": 42}, export_dims={"seq_up": 16}, streaming_skip_outputs=["y"]),
        case("upsample_sym_k8s4", lambda: SymmetricUpsampleGru(8, 2, stride=4), 4, 5, 8, [6, 9, 5], False,
             "ConvTranspose1d over time, kernel 8, stride 4, padding 2 (4 * seq frames): with --lookahead 2 input "
             "frames of context, 4 frames late (2 are final sooner but no call can emit half an input frame's)",
             "ConvTranspose", outputs=[("y", ["batch", "seq_up", 5]), ("h_n", [1, "batch", 5])], out_axes={},
             dims={"seq_up": 80}, export_dims={"seq_up": 32}, streaming_skip_outputs=["y"]),
        case("valid_conv1d_gru", lambda: ConvThenGru(nn.Conv1d(4, 6, 3), 6), 4, 5, 10, [7, 5, 9], True,
             "Conv1d kernel 3 without padding (a \"valid\" window: seq - 2 frames), tanh, then a GRU: the rewrite "
             "carries 2 frames of context whose first feed holds none, so the first call emits 2 frames fewer, as "
             "one run does",
             outputs=[("y", ["batch", "seq_out", 5]), ("h_n", [1, "batch", 5])], out_axes={"y": 1},
             dims={"seq_out": 19}, export_dims={"seq_out": 8}),
        case("valid_pool_gru", lambda: ConvThenGru(nn.MaxPool1d(3, stride=1), 4), 4, 5, 9, [6, 1, 8], True,
             "MaxPool1d(3, stride 1) over time without padding (a \"valid\" pool: seq - 2 frames), tanh, then a "
             "GRU: 2 frames of context, none on the first call",
             outputs=[("y", ["batch", "seq_out", 5]), ("h_n", [1, "batch", 5])], out_axes={"y": 1},
             dims={"seq_out": 13}, export_dims={"seq_out": 7}),
        case("sfe_conv_gru", gtcrn.SfeConvGru, None, 5, 6, [5, 9, 7], True,
             "GTCRN's subband feature extraction (nn.Unfold((1, 3)) over frequency, exported as a Gather along "
             "time by Range(0, seq) and one along frequency) on x [batch, 1, seq, 8], F.pad 1 frame + Conv2d "
             "kernel (2, 3), ELU, a GRU over time: every frame picked by its own position is the frames again",
             spectrum=True, outputs=[("y", bs + [5]), ("h_n", [1, "batch", 5])], out_axes={"y": 1}),
        gtcrn_like_case(),
    ]


def gtcrn_like_case():
    """The GTCRN-like encoder-decoder: streams as exported (its time axis is the dimension seq)."""
    return stream.Case("gtcrn_like", gtcrn.GtcrnLike, [("x", ["batch", 2, "seq", 16])], [("y", ["batch", 2, "seq", 16])],
                       {"batch": 2, "seq": 6}, {"batch": 2, "seq": 19}, {"x": 2}, {"y": 2}, [5, 8, 6], True,
                       "a GTCRN-like encoder-decoder (SFE, grouped temporal convolutions with TRA, a dual-path GRNN "
                       "whose intra-frame GRU runs across frequency with time in its batch, ConvTranspose2d decoder) "
                       "on x [batch, 2, seq, 16]: torch.chunk's Slices (bounds computed with a Div) are sized by the "
                       "analysis, the depthwise windows get context states, the intra-frame GRU none", subdir=SUBDIR)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ort-node", default=common.DEFAULT_ORT_NODE, help="path of the onnxruntime-node package")
    args = parser.parse_args()
    stream.generate(cases, SUBDIR, args.ort_node)
    return 0


if __name__ == "__main__":
    sys.exit(main())
