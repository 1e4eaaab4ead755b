"""One small model per operator family kc gained beyond the reference models, at sizes where
the kernel, not the call overhead, takes the time: `scripts/zoo.py make --set ops` converts
them with the real pnnx into $KC_ZOO_DIR/ops, and `KC_ZOO_DIR=<zoo>/ops scripts/bench.sh
--models zoo --out ops.md` times kc against PyTorch (jit) on each, in the same run.

Every input is a seeded normal tensor (../shared/bench/gen.py); index, mask and weight operands
are derived from it inside the model, as a real model derives them.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ChannelShuffle(nn.Module):
    def __init__(self):
        super().__init__()
        self.shuffle = nn.ChannelShuffle(4)

    def forward(self, x):
        return self.shuffle(x)


class EmbeddingLookup(nn.Module):
    """Token ids from an argmax, then an embedding table: a language model's input layer."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(1000, 512)

    def forward(self, x):
        return self.embed(torch.argmax(x, dim=-1))


class MaskSelect(nn.Module):
    """Comparisons, logical ops, torch.where and masked_fill."""

    def forward(self, x):
        keep = torch.logical_and(x > -1.0, torch.lt(x, 1.5))
        y = torch.where(keep, x, x * 0.1)
        return y.masked_fill(torch.eq(torch.sign(x), 0.0) | (x > 2.5), -4.0)


class EinsumAttention(nn.Module):
    """Attention scores and context as einsum contractions."""

    def forward(self, q, k):
        s = torch.einsum("bhqd,bhkd->bhqk", q, k).softmax(dim=-1)
        return torch.einsum("bhqk,bhkd->bhqd", s, k)


class Norms(nn.Module):
    """F.layer_norm, nn.GroupNorm and nn.InstanceNorm2d on one feature map."""

    def __init__(self):
        super().__init__()
        self.group = nn.GroupNorm(32, 128)
        self.instance = nn.InstanceNorm2d(128, affine=True)

    def forward(self, x):
        y = F.layer_norm(x, (56,))
        return self.instance(self.group(y))


class RollRepeat(nn.Module):
    """torch.roll (Swin's shifted windows) and Tensor.repeat."""

    def forward(self, x):
        return torch.roll(x, shifts=(3, -5), dims=(2, 3)).repeat(1, 2, 1, 1)


class TopkGather(nn.Module):
    """A detection head's selection: max with a dim, topk, gather and index_select."""

    def forward(self, x):
        best, _ = torch.max(x, dim=1, keepdim=True)
        values, indices = torch.topk(x - 0.5 * best, 16, dim=-1)
        picked = torch.gather(x, -1, indices)
        return values + picked, torch.index_select(x, 2, indices[0, 0, :8])


class SortValues(nn.Module):
    def forward(self, x):
        return torch.sort(x, dim=-1, descending=True)[0]


class Recurrent(nn.Module):
    """nn.LSTM, nn.GRU and nn.RNN over one sequence, batch first."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(128, 256, batch_first=True)
        self.gru = nn.GRU(256, 256, batch_first=True)
        self.rnn = nn.RNN(256, 128, batch_first=True)

    def forward(self, x):
        y, _ = self.lstm(x)
        y, _ = self.gru(y)
        return self.rnn(y)[0]


class Pads(nn.Module):
    """Reflection and replication padding, unequal per side, 2-D and 1-D."""

    def __init__(self):
        super().__init__()
        self.reflect = nn.ReflectionPad2d((1, 2, 3, 0))
        self.replicate = nn.ReplicationPad1d((5, 2))

    def forward(self, x):
        y = self.reflect(x)
        return self.replicate(y.flatten(2))


class GridSample(nn.Module):
    """Bilinear sampling at a grid derived from the second input."""

    def forward(self, x, g):
        return F.grid_sample(x, torch.tanh(g), mode="bilinear", padding_mode="border", align_corners=False)


class UnfoldFold(nn.Module):
    def __init__(self):
        super().__init__()
        self.unfold = nn.Unfold(3, padding=1, stride=2)
        self.fold = nn.Fold((56, 56), 3, padding=1, stride=2)

    def forward(self, x):
        return self.fold(self.unfold(x))


class Resample(nn.Module):
    """Bicubic 2-D, linear 1-D and trilinear 3-D interpolation."""

    def forward(self, x):
        a = F.interpolate(x, scale_factor=2.0, mode="bicubic", align_corners=False)
        b = F.interpolate(x.flatten(2), scale_factor=1.5, mode="linear", align_corners=True)
        c = F.interpolate(x.unsqueeze(2), size=(2, 40, 40), mode="trilinear", align_corners=False)
        return a, b, c


class Volumetric(nn.Module):
    """nn.Conv3d, nn.MaxPool3d and nn.AvgPool3d."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(16, 32, 3, padding=1)
        self.max = nn.MaxPool3d(2)
        self.avg = nn.AvgPool3d(3, stride=1, padding=1)

    def forward(self, x):
        return self.avg(self.max(torch.relu(self.conv(x))))


class FunctionalWeights(nn.Module):
    """F.conv2d, F.linear and F.batch_norm with weights computed from an input (hypernetworks,
    dynamic filters)."""

    def forward(self, x, k, w):
        y = F.conv2d(x, k * 0.1, padding=1)
        y = F.batch_norm(y, y.mean((0, 2, 3)), y.var((0, 2, 3)) + 1.0, training=False)
        return F.linear(y.flatten(2), w * 0.05)


class AttentionVariant(nn.Module):
    """nn.MultiheadAttention with other key/value widths, bias_kv and a float mask."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(256, 8, kdim=128, vdim=128, add_bias_kv=True, batch_first=True)

    def forward(self, q, kv):
        mask = torch.triu(torch.full((128, 128), -1e4), diagonal=1)
        return self.mha(q, kv, kv, attn_mask=mask, need_weights=False)[0]


class IndexScan(nn.Module):
    """Advanced indexing with a computed index, cumulative sums, integer casts and a
    functional group norm whose weight and bias come from the data."""

    def forward(self, x):
        idx = torch.argmax(x, dim=-1)[0, 0, :28]
        y = torch.cumsum(x[:, :, :, idx], dim=-1)
        q = (y * 4).long().float() / 4
        w = q.mean((0, 2, 3))
        return F.group_norm(q, 8, w, 1.0 - w)


class MathShapes(nn.Module):
    """Elementwise math beyond the activations, a normalization, pixel shuffles, triangular
    masks and created tensors."""

    def forward(self, x):
        y = F.normalize(x, dim=1)
        y = torch.erf(y) + torch.lgamma(y.abs() + 1.0) * torch.atan(x)
        y = F.pixel_unshuffle(F.pixel_shuffle(y, 2), 2)
        t = torch.tril(torch.ones(56, 56)) * torch.arange(56).float()
        return y * t + torch.full_like(y, 0.5)


# name -> (module class, input shapes, the family it stands for)
OPS = {
    "op_channel_shuffle": (ChannelShuffle, [(1, 128, 56, 56)], "nn.ChannelShuffle"),
    "op_embedding": (EmbeddingLookup, [(1, 256, 1000)], "torch.argmax, nn.Embedding"),
    "op_mask_select": (MaskSelect, [(1, 64, 112, 112)], "comparisons, logical_*, torch.where, masked_fill"),
    "op_einsum": (EinsumAttention, [(1, 8, 128, 64), (1, 8, 128, 64)], "torch.einsum"),
    "op_norms": (Norms, [(1, 128, 56, 56)], "F.layer_norm, nn.GroupNorm, nn.InstanceNorm2d"),
    "op_roll_repeat": (RollRepeat, [(1, 64, 56, 56)], "torch.roll, Tensor.repeat"),
    "op_topk_gather": (TopkGather, [(1, 64, 1000)], "torch.max (dim), topk, gather, index_select"),
    "op_sort": (SortValues, [(1, 64, 1024)], "torch.sort"),
    "op_recurrent": (Recurrent, [(1, 64, 128)], "nn.LSTM, nn.GRU, nn.RNN"),
    "op_pads": (Pads, [(1, 64, 56, 56)], "nn.ReflectionPad2d, nn.ReplicationPad1d"),
    "op_grid_sample": (GridSample, [(1, 32, 64, 64), (1, 64, 64, 2)], "F.grid_sample"),
    "op_unfold_fold": (UnfoldFold, [(1, 32, 56, 56)], "nn.Unfold, nn.Fold"),
    "op_resample": (Resample, [(1, 32, 40, 40)], "bicubic, linear and trilinear F.interpolate"),
    "op_volumetric": (Volumetric, [(1, 16, 16, 32, 32)], "nn.Conv3d, nn.MaxPool3d, nn.AvgPool3d"),
    "op_functional_weights": (FunctionalWeights, [(1, 32, 28, 28), (64, 32, 3, 3), (64, 784)],
                              "F.conv2d, F.linear, F.batch_norm with weight operands"),
    "op_index_scan": (IndexScan, [(1, 64, 56, 56)],
                      "Tensor.index, torch.cumsum, casts, F.group_norm with operands"),
    "op_math_shapes": (MathShapes, [(1, 64, 56, 56)],
                       "erf, lgamma, atan, F.normalize, pixel (un)shuffle, tril, ones, arange, full_like"),
    "op_attention_variant": (AttentionVariant, [(1, 128, 256), (1, 128, 128)],
                             "nn.MultiheadAttention with kdim/vdim, add_bias_kv, float mask"),
}
