"""PyTorch modules of GTCRN's building blocks, small, for tools/gen_conv_context_models.py (issue 39).

GTCRN (Rong et al., 2024) is a speech enhancer over a spectrum x [batch, 2, seq, bins]: subband feature
extraction (SFE: each bin with its neighbours, nn.Unfold over frequency, which PyTorch 1.13 exports as a
Gather along time by a Range over the chunk's length and one along frequency), grouped temporal
convolutions (F.pad over time + a depthwise dilated Conv2d, a ConvTranspose2d at stride 1 in the decoder)
with temporal recurrent attention (TRA: the energy per frame through a GRU over time), and a dual-path
GRNN (a bidirectional GRU across frequency within each frame, time folded into its batch, and a GRU along
time per bin). Each module here keeps that structure at a few channels and bins.
"""

import torch
import torch.nn.functional as F
from torch import nn


class Sfe(nn.Module):
    """Subband feature extraction: each bin with its neighbours (nn.Unfold over frequency, kernel 3)."""

    def __init__(self, k=3):
        super().__init__()
        self.k = k
        self.unfold = nn.Unfold((1, k), padding=(0, (k - 1) // 2))

    def forward(self, x):  # [B, C, T, F] -> [B, kC, T, F]
        return self.unfold(x).reshape(x.shape[0], x.shape[1] * self.k, x.shape[2], x.shape[3])


class SfeConvGru(nn.Module):
    """x [batch, 1, seq, 8] -> SFE -> F.pad 1 frame before + Conv2d kernel (2, 3) (time, frequency), ELU -> a
    GRU over time on the frames flattened: y [batch, seq, 5]."""

    def __init__(self):
        super().__init__()
        self.sfe = Sfe()
        self.conv = nn.Conv2d(3, 4, (2, 3), padding=(0, 1))
        self.gru = nn.GRU(4 * 8, 5, batch_first=True)

    def forward(self, x):
        z = F.elu(self.conv(F.pad(self.sfe(x), (0, 0, 1, 0))))          # [B, 4, T, 8]
        return self.gru(z.permute(0, 2, 1, 3).reshape(x.shape[0], x.shape[2], 32))


class Tra(nn.Module):
    """Temporal recurrent attention: the energy per frame (mean of x^2 over frequency), a GRU over time."""

    def __init__(self, c):
        super().__init__()
        self.gru = nn.GRU(c, 2 * c, batch_first=True)
        self.fc = nn.Linear(2 * c, c)

    def forward(self, x):
        e = x.pow(2).mean(-1).transpose(1, 2)                           # [B, T, C]
        a = torch.sigmoid(self.fc(self.gru(e)[0]))                      # [B, T, C]
        return x * a.transpose(1, 2).unsqueeze(-1)


class GtConv(nn.Module):
    """GTCRN's grouped temporal convolution: half the channels through SFE, pointwise, F.pad (time) +
    depthwise (3, 3) dilation (d, 1) (Conv2d, or ConvTranspose2d in the decoder), pointwise, TRA; shuffle."""

    def __init__(self, c, d, deconv):
        super().__init__()
        h = c // 2
        self.d = d
        self.sfe = Sfe()
        self.p1 = nn.Conv2d(3 * h, c, 1)
        self.a1 = nn.PReLU()
        conv = nn.ConvTranspose2d if deconv else nn.Conv2d
        self.dw = conv(c, c, (3, 3), padding=(2 * d if deconv else 0, 1), dilation=(d, 1), groups=c)
        self.a2 = nn.PReLU()
        self.p2 = nn.Conv2d(c, h, 1)
        self.tra = Tra(h)

    def forward(self, x):
        x1, x2 = torch.chunk(x, 2, dim=1)
        h = self.a1(self.p1(self.sfe(x1)))
        h = self.a2(self.dw(F.pad(h, (0, 0, 2 * self.d, 0))))
        h = self.tra(self.p2(h))
        y = torch.stack([h, x2], dim=1)                                 # shuffle: interleave the two halves
        return y.transpose(1, 2).reshape(x.shape)


class DpGrnn(nn.Module):
    """Dual path: a bidirectional GRU across frequency within each frame, then a GRU along time per bin."""

    def __init__(self, c, f):
        super().__init__()
        self.intra = nn.GRU(c, c // 2, batch_first=True, bidirectional=True)
        self.n1 = nn.LayerNorm((f, c))
        self.inter = nn.GRU(c, c, batch_first=True)
        self.n2 = nn.LayerNorm((f, c))

    def forward(self, x):                                               # [B, C, T, F]
        b, c, t, f = x.shape
        z = x.permute(0, 2, 3, 1)                                       # [B, T, F, C]
        i = self.intra(z.reshape(b * t, f, c))[0].reshape(b, t, f, c)
        z = z + self.n1(i)
        r = self.inter(z.transpose(1, 2).reshape(b * f, t, c))[0].reshape(b, f, t, c).transpose(1, 2)
        z = z + self.n2(r)
        return z.permute(0, 3, 1, 2)


class GtcrnLike(nn.Module):
    """x [batch, 2, seq, 16] (real, imaginary) -> a complex mask times x: y [batch, 2, seq, 16]."""

    def __init__(self):
        super().__init__()
        self.sfe = Sfe()
        self.e1 = nn.Conv2d(9, 8, (1, 5), stride=(1, 2), padding=(0, 2))
        self.ea = nn.PReLU()
        # One grouped temporal convolution each way (GTCRN has three, dilations 1, 2, 5): the model stays
        # under the size of a test model.
        self.enc = nn.ModuleList([GtConv(8, 2, False)])
        self.dp = DpGrnn(8, 8)
        self.dec = nn.ModuleList([GtConv(8, 2, True)])
        self.d1 = nn.ConvTranspose2d(8, 2, (1, 5), stride=(1, 2), padding=(0, 2), output_padding=(0, 1))

    def forward(self, x):
        mag = (x.pow(2).sum(1, keepdim=True) + 1e-8).sqrt()
        z = self.ea(self.e1(self.sfe(torch.cat([mag, x], 1))))         # [B, 8, T, 8]
        skips = []
        for layer in self.enc:
            z = layer(z)
            skips.append(z)
        z = self.dp(z)
        for layer in self.dec:
            z = layer(z + skips.pop())
        m = torch.tanh(self.d1(z))                                      # [B, 2, T, 16]
        re = x[:, :1] * m[:, :1] - x[:, 1:] * m[:, 1:]
        im = x[:, :1] * m[:, 1:] + x[:, 1:] * m[:, :1]
        return torch.cat([re, im], 1)
