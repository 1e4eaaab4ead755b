"""The op fixture cases: one tiny module per op type and attribute variant.

Each Case names the op types pnnx must write for it (`expect`); the module
is built after seeding with the case's own seed, so adding or reordering
cases changes no other fixture. Inputs are small: a fixture is a few KB.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class Case:
    def __init__(self, name, build, inputs, expect, shape2=None, torchvision=False, half=False):
        self.name, self.build, self.inputs = name, build, inputs
        self.expect = [expect] if isinstance(expect, str) else list(expect)
        self.shape2, self.torchvision, self.half = shape2, torchvision, half


CASES = []


def case(name, build, inputs, expect, shape2=None, torchvision=False, half=False):
    """`shape2`: a second shape per input, for ops pnnx writes only when
    shapes are dynamic (it folds them to constants otherwise); `torchvision`:
    the module calls torchvision's operators; `half`: the module as an f16
    model (see make_fixtures.py, `halve`)."""
    CASES.append(Case(name, build, inputs, expect, shape2, torchvision, half))


class Fn(nn.Module):
    """A module whose forward is `f(*inputs)`, or `f(self, *inputs)` when it
    owns tensors (parameters, so that pnnx stores them) or sub-modules."""

    def __init__(self, f, **owned):
        super().__init__()
        self.f, self.owns = f, bool(owned)
        for k, v in owned.items():
            if isinstance(v, nn.Module):
                self.add_module(k, v)
            else:
                self.register_parameter(k, nn.Parameter(v, requires_grad=False))

    def forward(self, *x):
        return self.f(self, *x) if self.owns else self.f(*x)


def f32(*shape):
    return lambda: torch.randn(*shape)


def pos(*shape):
    """Values in [0.5, 2): for log, sqrt, pow."""
    return lambda: torch.rand(*shape) * 1.5 + 0.5


def unit(*shape):
    """Values in (-0.9, 0.9): for asin, atanh, grid coordinates."""
    return lambda: torch.rand(*shape) * 1.8 - 0.9


def i64(high, *shape):
    return lambda: torch.randint(0, high, shape)


def randomize(module, seed):
    """Gives parameters and buffers that start constant (norm affines,
    running statistics, zero biases) seeded random values, so that every
    one of them matters in the fixture."""
    g = torch.Generator().manual_seed(seed + 7)
    with torch.no_grad():
        for name, t in list(module.named_parameters()) + list(module.named_buffers()):
            if not t.is_floating_point() or t.numel() == 0:
                continue
            flat = t.flatten()
            if not bool((flat == flat[0]).all()) and t.numel() > 1:
                continue
            if name.endswith("running_var"):
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            elif name.endswith("weight"):
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            else:
                t.copy_(torch.randn(t.shape, generator=g) * 0.5)


# --- activations ----------------------------------------------------------

X = f32(2, 3, 4, 5)
for name, mod, ty in [
    ("relu", lambda: nn.ReLU(), "nn.ReLU"),
    ("relu6", lambda: nn.ReLU6(), "nn.ReLU6"),
    ("sigmoid", lambda: nn.Sigmoid(), "nn.Sigmoid"),
    ("tanh", lambda: nn.Tanh(), "nn.Tanh"),
    ("silu", lambda: nn.SiLU(), "nn.SiLU"),
    ("hardswish", lambda: nn.Hardswish(), "nn.Hardswish"),
    ("hardsigmoid", lambda: nn.Hardsigmoid(), "nn.Hardsigmoid"),
    ("mish", lambda: nn.Mish(), "nn.Mish"),
    ("selu", lambda: nn.SELU(), "nn.SELU"),
    ("softsign", lambda: nn.Softsign(), "nn.Softsign"),
    ("logsigmoid", lambda: nn.LogSigmoid(), "nn.LogSigmoid"),
    ("tanhshrink", lambda: nn.Tanhshrink(), "nn.Tanhshrink"),
    ("gelu", lambda: nn.GELU(), "nn.GELU"),
    ("gelu_tanh", lambda: nn.GELU(approximate="tanh"), "nn.GELU"),
    ("leakyrelu", lambda: nn.LeakyReLU(0.2), "nn.LeakyReLU"),
    ("elu", lambda: nn.ELU(alpha=0.5), "nn.ELU"),
    ("celu", lambda: nn.CELU(alpha=1.5), "nn.CELU"),
    ("hardtanh", lambda: nn.Hardtanh(-0.5, 1.5), "nn.Hardtanh"),
    ("softplus", lambda: nn.Softplus(beta=2.0, threshold=1.0), "nn.Softplus"),
    ("prelu", lambda: nn.PReLU(), "nn.LeakyReLU"),  # one constant slope
    ("prelu_channels", lambda: nn.PReLU(3), "nn.PReLU"),
    ("softmax", lambda: nn.Softmax(dim=1), "nn.Softmax"),
    ("softmax_neg", lambda: nn.Softmax(dim=-2), "nn.Softmax"),
    ("logsoftmax", lambda: nn.LogSoftmax(dim=1), "nn.LogSoftmax"),
    ("softmin", lambda: nn.Softmin(dim=-1), "nn.Softmin"),
    ("softmax2d", lambda: nn.Softmax2d(), "nn.Softmax2d"),
    ("glu", lambda: nn.GLU(dim=1), "nn.GLU"),
    ("glu_last", lambda: nn.GLU(), "nn.GLU"),
    ("hardshrink", lambda: nn.Hardshrink(0.7), "nn.Hardshrink"),
    ("softshrink", lambda: nn.Softshrink(0.3), "nn.Softshrink"),
    ("threshold", lambda: nn.Threshold(0.1, 20.0), "nn.Threshold"),
    ("rrelu", lambda: nn.RReLU(0.1, 0.3), "nn.RReLU"),
]:
    glu_in = f32(2, 4, 3, 6) if name.startswith("glu") else X
    case("nn_" + name, lambda mod=mod: nn.Sequential(mod()), [glu_in], ty)

for name, f, ty in [
    ("relu", F.relu, "F.relu"),
    ("relu6", F.relu6, "F.relu6"),
    ("sigmoid", F.sigmoid, "F.sigmoid"),
    ("tanh", F.tanh, "F.tanh"),
    ("silu", F.silu, "F.silu"),
    ("hardswish", F.hardswish, "F.hardswish"),
    ("hardsigmoid", F.hardsigmoid, "F.hardsigmoid"),
    ("mish", F.mish, "F.mish"),
    ("selu", F.selu, "F.selu"),
    ("softsign", F.softsign, "F.softsign"),
    ("logsigmoid", F.logsigmoid, "F.logsigmoid"),
    ("tanhshrink", F.tanhshrink, "F.tanhshrink"),
    ("gelu", F.gelu, "F.gelu"),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.3), "F.leaky_relu"),
    ("elu", lambda x: F.elu(x, 0.7), "F.elu"),
    ("celu", lambda x: F.celu(x, 0.6), "F.celu"),
    ("hardtanh", lambda x: F.hardtanh(x, -0.2, 0.3), "F.hardtanh"),
    ("softplus", lambda x: F.softplus(x, beta=0.5, threshold=3.0), "F.softplus"),
    ("softmax", lambda x: F.softmax(x, dim=2), "F.softmax"),
    ("log_softmax", lambda x: F.log_softmax(x, dim=-1), "F.log_softmax"),
    ("softmin", lambda x: F.softmin(x, dim=0), "F.softmin"),
    ("glu", lambda x: F.glu(x, dim=-1), "F.glu"),
    ("hardshrink", lambda x: F.hardshrink(x, 0.4), "F.hardshrink"),
    ("softshrink", lambda x: F.softshrink(x, 0.6), "F.softshrink"),
    ("threshold", lambda x: F.threshold(x, -0.2, -5.0), "F.threshold"),
    ("rrelu", lambda x: F.rrelu(x, 0.2, 0.4), "F.rrelu"),
    ("torch_relu", torch.relu, "F.relu"),
    ("torch_sigmoid", torch.sigmoid, "F.sigmoid"),
    ("torch_tanh", torch.tanh, "F.tanh"),
    ("torch_softmax", lambda x: torch.softmax(x, 1), "F.softmax"),
]:
    case("F_" + name, lambda f=f: Fn(f), [f32(2, 3, 4, 6)], ty)

case("F_prelu", lambda: Fn(lambda x, w: F.prelu(x, w)), [X, pos(3)], "F.prelu")
case("F_normalize", lambda: Fn(lambda x: F.normalize(x, dim=1)), [X], "F.normalize")
case("F_normalize_p1", lambda: Fn(lambda x: F.normalize(x, p=1.0, dim=-1, eps=0.5)), [X],
     "F.normalize")
case("nn_lrn", lambda: nn.Sequential(nn.LocalResponseNorm(3, alpha=0.2, beta=0.6, k=1.5)),
     [f32(2, 6, 4, 5)], "nn.LocalResponseNorm")
case("F_lrn", lambda: Fn(lambda x: F.local_response_norm(x, 2)), [f32(2, 5, 7)],
     "F.local_response_norm")
case("F_pairwise_distance", lambda: Fn(lambda a, b: F.pairwise_distance(a, b)),
     [f32(4, 7), f32(4, 7)], "F.pairwise_distance")
case("F_pairwise_distance_p1",
     lambda: Fn(lambda a, b: F.pairwise_distance(a, b, p=1.0, eps=0.1, keepdim=True)),
     [f32(4, 7), f32(4, 7)], "F.pairwise_distance")

# --- dropout and identity-like ops (eval mode) -------------------------------

for name, mod, ty in [
    ("dropout", lambda: nn.Dropout(0.3), None),
    ("dropout2d", lambda: nn.Dropout2d(0.3), None),
    ("dropout3d", lambda: nn.Dropout3d(0.3), None),
    ("alphadropout", lambda: nn.AlphaDropout(0.3), None),
    ("identity", lambda: nn.Identity(), None),
]:
    # pnnx removes these in eval mode: the fixture checks the graph still runs
    case("nn_" + name, lambda mod=mod: nn.Sequential(mod(), nn.ReLU()), [X], "nn.ReLU")


def seq(make):
    """A case's build: the module `make()` returns, in a Sequential (so that
    pnnx keeps it a module). It is made when the case is built, after
    seeding, never when this file is read."""
    return lambda: nn.Sequential(make())


# --- shapes and data movement ------------------------------------------------

Y = f32(2, 3, 4, 6)
for name, f, ty in [
    ("reshape", lambda x: x.reshape(2, 12, 6), "Tensor.reshape"),
    ("view", lambda x: x.view(6, -1), "Tensor.reshape"),
    ("permute", lambda x: x.permute(0, 3, 1, 2), "Tensor.permute"),
    ("permute_neg", lambda x: torch.permute(x, (-1, -3, 0, -2)), "Tensor.permute"),
    ("transpose", lambda x: x.transpose(1, -1), "torch.transpose"),
    ("flatten", lambda x: torch.flatten(x, 1, 2), "torch.flatten"),
    ("flatten_neg", lambda x: torch.flatten(x, -2), "torch.flatten"),
    ("unsqueeze", lambda x: x.unsqueeze(-2), "torch.unsqueeze"),
    ("cat", lambda x: torch.cat([x, x * 2], dim=-1), "torch.cat"),
    ("stack", lambda x: torch.stack([x, x + 1, x * 3], dim=2), "torch.stack"),
    ("chunk", lambda x: torch.chunk(x, 3, dim=-1), "torch.chunk"),
    ("split", lambda x: torch.split(x, [1, 2, 3], dim=3), "torch.split"),
    ("split_size", lambda x: torch.split(x, 4, dim=-1), "torch.split"),
    ("tensor_split", lambda x: torch.tensor_split(x, (1, 3), dim=2), "torch.tensor_split"),
    ("tensor_split_sections", lambda x: torch.tensor_split(x, 4, dim=3), "torch.tensor_split"),
    ("unbind", lambda x: torch.unbind(x, dim=1), "torch.unbind"),
    ("select", lambda x: x.select(2, -1), "Tensor.select"),
    ("slice", lambda x: x[:, 1:, ::2, -4:-1], "Tensor.slice"),
    ("expand", lambda x: x[:, :, :1].expand(2, 3, 5, 6), "Tensor.expand"),
    ("expand_as", lambda x: x[:, :1].expand_as(x), "Tensor.expand_as"),
    ("repeat", lambda x: x.repeat(1, 2, 1, 3), "Tensor.repeat"),
    ("repeat_rank", lambda x: x.repeat(2, 1, 1, 1, 2), "Tensor.repeat"),
    ("tile", lambda x: torch.tile(x, (2, 1)), "torch.tile"),
    ("roll", lambda x: torch.roll(x, 1, -1), "torch.roll"),
    ("roll_dims", lambda x: torch.roll(x, (2, -1), (1, 2)), "torch.roll"),
    ("roll_flat", lambda x: torch.roll(x, 5), "torch.roll"),
    ("flip", lambda x: torch.flip(x, [1, -1]), "torch.flip"),
    ("narrow", lambda x: torch.narrow(x, 3, 1, 3), "torch.narrow"),
    ("clone", lambda x: torch.clone(x) + 1, "torch.clone"),
    ("positive", lambda x: torch.positive(x) * 2, "torch.positive"),
    ("unflatten", lambda x: x.unflatten(3, (2, 3)), "Tensor.unflatten"),
    ("reshape_as", lambda x: x.reshape_as(torch.zeros(6, 24)), "Tensor.reshape_as"),
    ("pixel_shuffle", lambda x: F.pixel_shuffle(x.repeat(1, 3, 1, 1), 3), "F.pixel_shuffle"),
    ("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), "F.pixel_unshuffle"),
]:
    case("shape_" + name, lambda f=f: Fn(f), [Y], ty)

case("shape_t", lambda: Fn(lambda x: torch.t(x)), [f32(3, 5)], "torch.t")
case("shape_reshape_as_input", lambda: Fn(lambda x, y: x.reshape_as(y)), [Y, f32(6, 24)],
     "Tensor.reshape_as")
case("shape_expand_as_input", lambda: Fn(lambda x, y: x.expand_as(y)), [f32(3, 1, 6), Y],
     "Tensor.expand_as")
case("shape_type_as", lambda: Fn(lambda x, i: x.type_as(i)), [Y, i64(5, 3)], "Tensor.type_as")
# Tensor.to as pnnx writes it: dtype=torch.long, torch.int, torch.bool, torch.float.
HALVES = lambda: torch.randn(2, 3, 5) * 3 * (torch.rand(2, 3, 5) > 0.2)  # noqa: E731
case("to_f32_i64", lambda: Fn(lambda x: x.to(torch.int64)), [HALVES], "Tensor.to")
case("to_f32_i32", lambda: Fn(lambda x: x.int()), [HALVES], "Tensor.to")
case("to_f32_bool", lambda: Fn(lambda x: x.to(torch.bool)), [HALVES], "Tensor.to")
case("to_i64_f32", lambda: Fn(lambda i: i.to(torch.float32) * 0.5), [i64(100, 3, 4)], "Tensor.to")
case("to_bool_f32", lambda: Fn(lambda x: (x > 0).float()), [f32(3, 4)], "Tensor.to")
case("to_i64_i32", lambda: Fn(lambda i: i.to(torch.int32)), [i64(1000, 3, 4)], "Tensor.to")
case("to_f32_f64", lambda: Fn(lambda x: x.double()), [f32(3, 4)], "Tensor.to")
case("shape_squeeze", lambda: Fn(lambda x: torch.squeeze(x, 1)), [f32(2, 1, 4, 1)],
     "torch.squeeze")
case("shape_squeeze_all", lambda: Fn(lambda x: x.squeeze()), [f32(2, 1, 4, 1)], "torch.squeeze")
case("nn_channel_shuffle", seq(lambda: nn.ChannelShuffle(2)), [f32(2, 6, 3, 4)],
     "nn.ChannelShuffle")
case("nn_pixel_shuffle", seq(lambda: nn.PixelShuffle(2)), [f32(1, 8, 3, 4)], "nn.PixelShuffle")
case("nn_pixel_unshuffle", seq(lambda: nn.PixelUnshuffle(3)), [f32(1, 2, 6, 9)],
     "nn.PixelUnshuffle")
case("nn_flatten", seq(lambda: nn.Flatten(2)), [Y], "torch.flatten")
case("nn_unflatten", seq(lambda: nn.Unflatten(1, (1, 3))), [Y], "Tensor.unflatten")

# --- padding -------------------------------------------------------------------

P2 = f32(1, 2, 4, 5)
for name, mod, inp, ty in [
    ("zeropad2d", lambda: nn.ZeroPad2d((1, 2, 0, 3)), P2, "nn.ZeroPad2d"),
    ("constantpad1d", lambda: nn.ConstantPad1d((2, 1), 0.5), f32(2, 3, 5), "nn.ConstantPad1d"),
    ("constantpad2d", lambda: nn.ConstantPad2d((0, 1, 2, 1), -1.5), P2, "nn.ConstantPad2d"),
    ("constantpad3d", lambda: nn.ConstantPad3d((1, 0, 0, 2, 1, 1), 2.0), f32(1, 2, 3, 4, 3),
     "nn.ConstantPad3d"),
    ("reflectionpad1d", lambda: nn.ReflectionPad1d((3, 1)), f32(2, 3, 5), "nn.ReflectionPad1d"),
    ("reflectionpad2d", lambda: nn.ReflectionPad2d((1, 3, 2, 0)), P2, "nn.ReflectionPad2d"),
    ("reflectionpad2d_sym", lambda: nn.ReflectionPad2d(2), P2, "nn.ReflectionPad2d"),
    ("replicationpad1d", lambda: nn.ReplicationPad1d((0, 4)), f32(2, 3, 5), "nn.ReplicationPad1d"),
    ("replicationpad2d", lambda: nn.ReplicationPad2d((3, 1, 0, 2)), P2, "nn.ReplicationPad2d"),
    ("replicationpad3d", lambda: nn.ReplicationPad3d((1, 2, 0, 1, 2, 0)), f32(1, 2, 3, 4, 3),
     "nn.ReplicationPad3d"),
]:
    case("nn_" + name, lambda mod=mod: nn.Sequential(mod()), [inp], ty)

for name, f, inp in [
    ("constant", lambda x: F.pad(x, (1, 2, 3, 0), value=0.25), P2),
    ("constant_3dims", lambda x: F.pad(x, (1, 0, 0, 1, 2, 1)), P2),
    ("reflect", lambda x: F.pad(x, (2, 0, 1, 3), mode="reflect"), P2),
    ("reflect_1d", lambda x: F.pad(x, (1, 4), mode="reflect"), f32(2, 3, 6)),
    ("replicate", lambda x: F.pad(x, (0, 3, 2, 1), mode="replicate"), P2),
    ("replicate_1d", lambda x: F.pad(x, (3, 1), mode="replicate"), f32(2, 3, 6)),
    ("replicate_3d", lambda x: F.pad(x, (1, 0, 2, 1, 0, 2), mode="replicate"),
     f32(1, 2, 3, 4, 5)),
    ("circular", lambda x: F.pad(x, (1, 2, 3, 1), mode="circular"), P2),
    ("circular_1d", lambda x: F.pad(x, (2, 3), mode="circular"), f32(2, 3, 6)),
    ("negative", lambda x: F.pad(x, (-1, 2, 0, -2)), P2),
]:
    case("F_pad_" + name, lambda f=f: Fn(f), [inp], "F.pad")

# --- convolution and linear ------------------------------------------------------

C1, C2, C3 = f32(2, 4, 9), f32(1, 4, 7, 8), f32(1, 4, 5, 6, 5)
for name, mod, inp, ty in [
    ("conv1d", lambda: nn.Conv1d(4, 6, 3), C1, "nn.Conv1d"),
    ("conv1d_attrs", lambda: nn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2,
     bias=False),
     C1, "nn.Conv1d"),
    ("conv1d_reflect", lambda: nn.Conv1d(4, 3, 3, padding=2, padding_mode="reflect"), C1,
     "nn.Conv1d"),
    ("conv1d_replicate", lambda: nn.Conv1d(4, 3, 4, padding=1, padding_mode="replicate"), C1,
     "nn.Conv1d"),
    ("conv1d_circular", lambda: nn.Conv1d(4, 3, 3, padding=2, padding_mode="circular"), C1,
     "nn.Conv1d"),
    ("conv1d_same", lambda: nn.Conv1d(4, 3, 4, padding="same"), C1, "nn.Conv1d"),
    ("conv2d", lambda: nn.Conv2d(4, 5, 3), C2, "nn.Conv2d"),
    ("conv2d_attrs", lambda: nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                               groups=2), C2, "nn.Conv2d"),
    ("conv2d_depthwise", lambda: nn.Conv2d(4, 8, 3, padding=1, groups=4, bias=False), C2,
     "nn.Conv2d"),
    ("conv2d_same", lambda: nn.Conv2d(4, 3, (2, 4), padding="same", dilation=(2, 1)), C2,
     "nn.Conv2d"),
    ("conv2d_reflect", lambda: nn.Conv2d(4, 3, 3, padding=(1, 2), padding_mode="reflect"), C2,
     "nn.Conv2d"),
    ("conv2d_replicate", lambda: nn.Conv2d(4, 3, 3, stride=2, padding=2, padding_mode="replicate"),
     C2,
     "nn.Conv2d"),
    ("conv2d_circular", lambda: nn.Conv2d(4, 3, 3, padding=(2, 1), padding_mode="circular"), C2,
     "nn.Conv2d"),
    ("conv3d", lambda: nn.Conv3d(4, 3, 3), C3, "nn.Conv3d"),
    ("conv3d_attrs", lambda: nn.Conv3d(4, 6, (2, 3, 2), stride=(1, 2, 2), padding=(1, 0, 2),
                               dilation=(2, 1, 1), groups=2, bias=False), C3, "nn.Conv3d"),
    # One group, no depth dilation: as 2-d convolutions per output slice
    # (depth stride and padding, a dilated and a strided plane dim, batch 2).
    ("conv3d_sliced", lambda: nn.Conv3d(4, 6, (3, 3, 2), stride=(2, 1, 2), padding=(1, 1, 0),
                                dilation=(1, 2, 1)), f32(2, 4, 5, 6, 7), "nn.Conv3d"),
    ("conv3d_replicate", lambda: nn.Conv3d(4, 2, 3, padding=1, padding_mode="replicate"), C3,
     "nn.Conv3d"),
    ("conv3d_circular", lambda: nn.Conv3d(4, 2, 2, padding=(1, 2, 1), padding_mode="circular"), C3,
     "nn.Conv3d"),
    ("convtranspose1d", lambda: nn.ConvTranspose1d(4, 3, 3), C1, "nn.ConvTranspose1d"),
    ("convtranspose1d_attrs", lambda: nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1,
     output_padding=1,
                                                 groups=2, dilation=2, bias=False), C1,
     "nn.ConvTranspose1d"),
    ("convtranspose2d", lambda: nn.ConvTranspose2d(4, 3, 3), C2, "nn.ConvTranspose2d"),
    ("convtranspose2d_attrs", lambda: nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 3), padding=(1,
     0),
                                                 output_padding=(1, 2), groups=2,
                                                 dilation=(1, 2)), C2, "nn.ConvTranspose2d"),
    ("convtranspose3d", lambda: nn.ConvTranspose3d(4, 3, 2), C3, "nn.ConvTranspose3d"),
    ("convtranspose3d_dilation", lambda: nn.ConvTranspose3d(4, 3, (2, 3, 2), stride=(1, 2, 1),
                                                    dilation=(2, 1, 3)), C3,
     "nn.ConvTranspose3d"),
    ("convtranspose3d_attrs", lambda: nn.ConvTranspose3d(4, 2, (3, 2, 2), stride=(2, 1, 2),
                                                 padding=(1, 0, 1), output_padding=(1, 0, 1),
                                                 groups=2, bias=False), C3,
     "nn.ConvTranspose3d"),
    ("linear", lambda: nn.Linear(9, 5), C1, "nn.Linear"),
    ("linear_nobias", lambda: nn.Linear(9, 4, bias=False), C1, "nn.Linear"),
]:
    case("nn_" + name, lambda mod=mod: nn.Sequential(mod()), [inp], ty)

# Functional forms whose weights are graph inputs (pnnx turns constant
# weights into the nn.* module).
case("F_conv1d", lambda: Fn(lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, groups=2)),
     [C1, f32(6, 2, 3), f32(6)], "F.conv1d")
case("F_conv2d", lambda: Fn(lambda x, w, b: F.conv2d(x, w, b, padding=(2, 1), dilation=(2, 1))),
     [C2, f32(3, 4, 3, 2), f32(3)], "F.conv2d")
case("F_conv2d_nobias", lambda: Fn(lambda x, w: F.conv2d(x, w, stride=2, groups=4)),
     [C2, f32(8, 1, 3, 3)], "F.conv2d")
case("F_conv3d", lambda: Fn(lambda x, w: F.conv3d(x, w, padding=1)), [C3, f32(2, 4, 3, 3, 3)],
     "F.conv3d")
case("F_conv3d_attrs", lambda: Fn(lambda x, w, b: F.conv3d(
    x, w, b, stride=(1, 2, 1), padding=(1, 0, 2), dilation=(2, 1, 2), groups=2)),
     [C3, f32(6, 2, 2, 3, 2), f32(6)], "F.conv3d")
case("F_conv_transpose1d", lambda: Fn(lambda x, w, b: F.conv_transpose1d(
    x, w, b, stride=2, output_padding=1)), [C1, f32(4, 3, 3), f32(3)], "F.conv_transpose1d")
case("F_conv_transpose2d", lambda: Fn(lambda x, w: F.conv_transpose2d(
    x, w, stride=(1, 2), padding=1, groups=2)), [C2, f32(4, 2, 3, 3)], "F.conv_transpose2d")
case("F_conv_transpose1d_attrs", lambda: Fn(lambda x, w: F.conv_transpose1d(
    x, w, stride=3, padding=2, output_padding=1, groups=2, dilation=2)), [C1, f32(4, 3, 3)],
     "F.conv_transpose1d")
case("F_conv_transpose3d_attrs", lambda: Fn(lambda x, w, b: F.conv_transpose3d(
    x, w, b, stride=(2, 1, 1), padding=(0, 1, 1), output_padding=(1, 0, 0), groups=4,
    dilation=(1, 2, 2))), [C3, f32(4, 1, 2, 3, 2), f32(4)], "F.conv_transpose3d")
case("F_conv_transpose3d", lambda: Fn(lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2)),
     [C3, f32(4, 2, 2, 2, 2), f32(2)], "F.conv_transpose3d")
case("F_linear", lambda: Fn(lambda x, w, b: F.linear(x, w, b)), [C1, f32(5, 9), f32(5)],
     "F.linear")
case("F_linear_nobias", lambda: Fn(lambda x, w: F.linear(x, w)), [f32(3, 9), f32(5, 9)],
     "F.linear")
case("F_conv2d_const", lambda: Fn(lambda m, x: F.conv2d(x, m.w, m.b, padding=1),
                                  w=torch.randn(3, 4, 3, 3), b=torch.randn(3)), [C2],
     "nn.Conv2d")

# --- normalization ------------------------------------------------------------------

for name, mod, inp, ty in [
    ("batchnorm1d", lambda: nn.BatchNorm1d(4), C1, "nn.BatchNorm1d"),
    ("batchnorm1d_2d", lambda: nn.BatchNorm1d(9, eps=0.1), f32(3, 9), "nn.BatchNorm1d"),
    ("batchnorm2d", lambda: nn.BatchNorm2d(4, affine=False), C2, "nn.BatchNorm2d"),
    ("batchnorm3d", lambda: nn.BatchNorm3d(4), C3, "nn.BatchNorm3d"),
    ("layernorm", lambda: nn.LayerNorm(8), C2, "nn.LayerNorm"),
    ("layernorm_2dims", lambda: nn.LayerNorm((7, 8), eps=1e-3, elementwise_affine=False), C2,
     "nn.LayerNorm"),
    ("groupnorm", lambda: nn.GroupNorm(2, 4), C2, "nn.GroupNorm"),
    ("groupnorm_noaffine", lambda: nn.GroupNorm(4, 4, eps=0.01, affine=False), C3, "nn.GroupNorm"),
    ("groupnorm_1d", lambda: nn.GroupNorm(1, 4), C1, "nn.GroupNorm"),
    ("instancenorm1d", lambda: nn.InstanceNorm1d(4), C1, "nn.InstanceNorm1d"),
    ("instancenorm1d_affine", lambda: nn.InstanceNorm1d(4, eps=0.1, affine=True), C1,
     "nn.InstanceNorm1d"),
    ("instancenorm2d", lambda: nn.InstanceNorm2d(4, affine=True), C2, "nn.InstanceNorm2d"),
    ("instancenorm2d_unbatched", lambda: nn.InstanceNorm2d(4, affine=True), f32(4, 5, 6),
     "nn.InstanceNorm2d"),
    ("instancenorm1d_unbatched", lambda: nn.InstanceNorm1d(4), f32(4, 7), "nn.InstanceNorm1d"),
    ("instancenorm2d_stats", lambda: nn.InstanceNorm2d(4, track_running_stats=True), C2,
     "nn.InstanceNorm2d"),
    ("instancenorm3d", lambda: nn.InstanceNorm3d(4, affine=True), C3, "nn.InstanceNorm3d"),
    ("instancenorm1d_stats", lambda: nn.InstanceNorm1d(4, eps=0.01, track_running_stats=True), C1,
     "nn.InstanceNorm1d"),
    ("instancenorm3d_stats", lambda: nn.InstanceNorm3d(4, affine=True, track_running_stats=True),
     C3, "nn.InstanceNorm3d"),
]:
    case("nn_" + name, lambda mod=mod: nn.Sequential(mod()), [inp], ty)

case("F_batch_norm", lambda: Fn(lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, eps=0.01)),
     [C2, f32(4), pos(4), f32(4), f32(4)], "F.batch_norm")
case("F_batch_norm_noaffine", lambda: Fn(lambda x, m, v: F.batch_norm(x, m, v)),
     [C1, f32(4), pos(4)], "F.batch_norm")
case("F_layer_norm", lambda: Fn(lambda x, w, b: F.layer_norm(x, (7, 8), w, b, eps=1e-3)),
     [C2, f32(7, 8), f32(7, 8)], "F.layer_norm")
case("F_layer_norm_plain", lambda: Fn(lambda x: F.layer_norm(x, (9,))), [C1], "F.layer_norm")
case("F_layer_norm_const", lambda: Fn(lambda m, x: F.layer_norm(x, (8,), m.w, m.b),
                                      w=torch.rand(8) + 0.5, b=torch.randn(8)), [C2],
     "nn.LayerNorm")
# Layer norms written out by hand, which pnnx leaves as reductions and
# expressions (fuse-layer-norm makes them one F.layer_norm under -O).
def hand_layer_norm(m, x):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5) * m.w + m.b


def hand_layer_norm_2d(m, x):
    mean = x.mean((-2, -1), keepdim=True)
    d = x - mean
    var = (d * d).mean((-2, -1), keepdim=True)
    return m.b + m.w * ((x - mean) / torch.sqrt(var + 1e-3))


case("hand_layer_norm", lambda: Fn(hand_layer_norm, w=torch.rand(9) + 0.5, b=torch.randn(9)),
     [C1], ["torch.mean", "pnnx.Expression"])
case("hand_layer_norm_rsqrt", lambda: Fn(lambda x: (x - x.mean(-1, keepdim=True)) * torch.rsqrt(
    x.var(-1, keepdim=True, unbiased=False) + 1e-6)), [C1], ["torch.mean", "torch.var"])
case("hand_layer_norm_2d", lambda: Fn(hand_layer_norm_2d, w=torch.rand(7, 8) + 0.5,
                                      b=torch.randn(7, 8)), [C2], ["torch.mean", "pnnx.Expression"])

# Pads pnnx leaves before a window op (fold-pad takes them into its
# padding under -O): before a 3-d convolution, an average pool counting
# the pad, a max pool after a pad of -inf.
case("pad_conv3d", lambda: Fn(lambda m, x: m.c(F.pad(x, (1, 1, 2, 2, 1, 1))), c=nn.Conv3d(4, 3, 3)),
     [C3], ["F.pad", "nn.Conv3d"])
# Uneven pads pnnx leaves before a convolution (TensorFlow's "same" at a
# stride pads one more after): fold-pad writes them as (before, after)
# pairs of the convolution's padding, on the strip, depthwise, grouped and
# 1-d paths.
case("pad_conv2d_asym", lambda: Fn(lambda m, x: m.c(F.pad(x, (0, 1, 0, 1))),
                                   c=nn.Conv2d(4, 8, 3, stride=2)), [f32(1, 4, 9, 10)],
     ["F.pad", "nn.Conv2d"])
case("pad_conv2d_asym_depthwise", lambda: Fn(lambda m, x: m.c(F.pad(x, (1, 2, 0, 1))),
                                             c=nn.Conv2d(4, 4, 3, stride=2, groups=4)),
     [f32(1, 4, 9, 10)], ["F.pad", "nn.Conv2d"])
case("pad_conv2d_asym_grouped", lambda: Fn(lambda m, x: m.c(F.pad(x, (2, 0, 1, 2))),
                                           c=nn.Conv2d(8, 8, 3, padding=1, groups=2)),
     [f32(1, 8, 7, 9)], ["F.pad", "nn.Conv2d"])
case("pad_conv1d_asym", lambda: Fn(lambda m, x: m.c(F.pad(x, (2, 1))),
                                   c=nn.Conv1d(4, 6, 4, padding=1)), [C1],
     ["F.pad", "nn.Conv1d"])
case("pad_avg_pool2d", lambda: Fn(lambda x: F.avg_pool2d(F.pad(x, (1, 1, 1, 1)), 3, stride=2)),
     [C2], ["F.pad", "F.avg_pool2d"])
case("pad_max_pool2d", lambda: Fn(lambda x: F.max_pool2d(F.pad(x, (1, 1, 1, 1), value=float("-inf")),
                                                          3, stride=2)), [C2],
     ["F.pad", "F.max_pool2d"])

case("F_group_norm", lambda: Fn(lambda x, w, b: F.group_norm(x, 2, w, b, eps=0.1)),
     [C2, f32(4), f32(4)], "F.group_norm")
case("F_group_norm_plain", lambda: Fn(lambda x: F.group_norm(x, 4)), [C3], "F.group_norm")
case("F_instance_norm", lambda: Fn(lambda x, w, b: F.instance_norm(x, weight=w, bias=b)),
     [C2, f32(4), f32(4)], "F.instance_norm")
case("F_instance_norm_plain", lambda: Fn(lambda x: F.instance_norm(x, eps=0.01)), [C1],
     "F.instance_norm")
case("F_instance_norm_stats", lambda: Fn(lambda x, m, v: F.instance_norm(x, m, v)),
     [C2, f32(4), pos(4)], "F.instance_norm")

# --- pooling ----------------------------------------------------------------------------

Q1, Q2, Q3 = f32(2, 3, 11), f32(1, 3, 9, 10), f32(1, 2, 6, 7, 8)
for name, mod, inp, ty in [
    ("maxpool1d", lambda: nn.MaxPool1d(3), Q1, "nn.MaxPool1d"),
    ("maxpool1d_attrs", lambda: nn.MaxPool1d(3, stride=2, padding=1, dilation=2, ceil_mode=True),
     Q1,
     "nn.MaxPool1d"),
    ("maxpool2d", lambda: nn.MaxPool2d(2), Q2, "nn.MaxPool2d"),
    ("maxpool2d_attrs", lambda: nn.MaxPool2d((3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2),
                                     ceil_mode=True), Q2, "nn.MaxPool2d"),
    ("maxpool3d", lambda: nn.MaxPool3d(2), Q3, "nn.MaxPool3d"),
    ("maxpool3d_attrs", lambda: nn.MaxPool3d((3, 2, 3), stride=(2, 1, 2), padding=(1, 0, 1),
                                     dilation=(1, 2, 1), ceil_mode=True), Q3, "nn.MaxPool3d"),
    ("avgpool1d", lambda: nn.AvgPool1d(3), Q1, "nn.AvgPool1d"),
    ("avgpool1d_attrs", lambda: nn.AvgPool1d(4, stride=3, padding=2, ceil_mode=True,
                                     count_include_pad=False), Q1, "nn.AvgPool1d"),
    ("avgpool2d", lambda: nn.AvgPool2d(3, stride=2), Q2, "nn.AvgPool2d"),
    ("avgpool2d_attrs", lambda: nn.AvgPool2d((3, 2), stride=(2, 3), padding=(1, 1), ceil_mode=True,
                                     count_include_pad=False), Q2, "nn.AvgPool2d"),
    ("avgpool2d_divisor", lambda: nn.AvgPool2d(2, padding=1, divisor_override=3), Q2,
     "nn.AvgPool2d"),
    ("avgpool3d", lambda: nn.AvgPool3d(2), Q3, "nn.AvgPool3d"),
    ("avgpool3d_attrs", lambda: nn.AvgPool3d((3, 2, 3), stride=(1, 2, 2), padding=(1, 1, 0),
                                     ceil_mode=True, count_include_pad=False), Q3,
     "nn.AvgPool3d"),
    ("avgpool3d_divisor", lambda: nn.AvgPool3d(2, stride=1, padding=1, divisor_override=5), Q3,
     "nn.AvgPool3d"),
    ("adaptiveavgpool1d", lambda: nn.AdaptiveAvgPool1d(4), Q1, "nn.AdaptiveAvgPool1d"),
    ("adaptiveavgpool2d", lambda: nn.AdaptiveAvgPool2d((4, None)), Q2, "nn.AdaptiveAvgPool2d"),
    ("adaptiveavgpool3d", lambda: nn.AdaptiveAvgPool3d((4, 3, None)), Q3, "nn.AdaptiveAvgPool3d"),
    ("adaptivemaxpool1d", lambda: nn.AdaptiveMaxPool1d(5), Q1, "nn.AdaptiveMaxPool1d"),
    ("adaptivemaxpool2d", lambda: nn.AdaptiveMaxPool2d((4, 3)), Q2, "nn.AdaptiveMaxPool2d"),
    ("adaptivemaxpool3d", lambda: nn.AdaptiveMaxPool3d((2, 5, 3)), Q3, "nn.AdaptiveMaxPool3d"),
    ("lppool1d", lambda: nn.LPPool1d(2, 3), pos(2, 3, 11), "nn.LPPool1d"),
    ("lppool1d_attrs", lambda: nn.LPPool1d(3.0, 4, stride=2, ceil_mode=True), pos(2, 3, 11),
     "nn.LPPool1d"),
    ("lppool2d", lambda: nn.LPPool2d(2, 2), pos(1, 3, 9, 10), "nn.LPPool2d"),
    ("lppool2d_attrs", lambda: nn.LPPool2d(1.5, (3, 2), stride=(2, 1), ceil_mode=True),
     pos(1, 3, 9, 10), "nn.LPPool2d"),
]:
    case("nn_" + name, lambda mod=mod: nn.Sequential(mod()), [inp], ty)

case("nn_maxpool1d_indices", lambda: Fn(lambda m, x: m.p(x), p=nn.MaxPool1d(3, 2, 1,
                                                                           return_indices=True)),
     [Q1], "nn.MaxPool1d")
case("nn_maxpool2d_indices", lambda: Fn(lambda m, x: m.p(x), p=nn.MaxPool2d(
    3, 2, 1, return_indices=True)), [Q2], "nn.MaxPool2d")
case("nn_maxpool3d_indices", lambda: Fn(lambda m, x: m.p(x), p=nn.MaxPool3d(
    2, return_indices=True)), [Q3], "nn.MaxPool3d")
case("nn_adaptivemaxpool2d_indices", lambda: Fn(lambda m, x: m.p(x), p=nn.AdaptiveMaxPool2d(
    (3, 4), return_indices=True)), [Q2], "nn.AdaptiveMaxPool2d")
for name, f, inp, ty in [
    ("max_pool1d", lambda x: F.max_pool1d(x, 2, 1), Q1, "F.max_pool1d"),
    ("max_pool2d", lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), Q2, "F.max_pool2d"),
    ("max_pool3d", lambda x: F.max_pool3d(x, (2, 3, 2), 2, 1), Q3, "F.max_pool3d"),
    ("max_pool1d_dilation", lambda x: F.max_pool1d(x, 3, 2, 1, dilation=2), Q1, "F.max_pool1d"),
    ("max_pool2d_dilation", lambda x: F.max_pool2d(x, (2, 3), 1, (1, 0), dilation=(2, 3)), Q2,
     "F.max_pool2d"),
    ("max_pool3d_dilation", lambda x: F.max_pool3d(x, 2, (1, 2, 1), 0, dilation=(2, 1, 3),
                                                   ceil_mode=True), Q3, "F.max_pool3d"),
    ("avg_pool1d", lambda x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False), Q1,
     "F.avg_pool1d"),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 2, 1, divisor_override=2), Q2, "F.avg_pool2d"),
    ("avg_pool2d_attrs", lambda x: F.avg_pool2d(x, (3, 2), (2, 3), (1, 1), ceil_mode=True), Q2,
     "F.avg_pool2d"),
    ("avg_pool3d", lambda x: F.avg_pool3d(x, 2, 2, 1, ceil_mode=True), Q3, "F.avg_pool3d"),
    ("adaptive_avg_pool1d", lambda x: F.adaptive_avg_pool1d(x, 3), Q1, "F.adaptive_avg_pool1d"),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (2, 4)), Q2,
     "F.adaptive_avg_pool2d"),
    ("adaptive_avg_pool3d", lambda x: F.adaptive_avg_pool3d(x, 3), Q3, "F.adaptive_avg_pool3d"),
    ("adaptive_max_pool1d", lambda x: F.adaptive_max_pool1d(x, 4), Q1, "F.adaptive_max_pool1d"),
    ("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, 5), Q2, "F.adaptive_max_pool2d"),
    ("adaptive_max_pool3d", lambda x: F.adaptive_max_pool3d(x, (3, 2, 5)), Q3,
     "F.adaptive_max_pool3d"),
    ("lp_pool1d", lambda x: F.lp_pool1d(x, 2.0, 3, 2), pos(2, 3, 11), "F.lp_pool1d"),
    ("lp_pool2d", lambda x: F.lp_pool2d(x, 3.0, 2), pos(1, 3, 9, 10), "F.lp_pool2d"),
]:
    case("F_" + name, lambda f=f: Fn(f), [inp], ty)

# --- resampling ----------------------------------------------------------------------------

U1, U2, U3 = f32(1, 2, 5), f32(1, 2, 4, 5), f32(1, 2, 3, 4, 3)
for name, mod, inp, ty in [
    ("upsample_nearest", lambda: nn.Upsample(scale_factor=2), U2, "nn.Upsample"),
    ("upsample_nearest_size", lambda: nn.Upsample(size=(7, 9)), U2, "nn.Upsample"),
    ("upsample_nearest_1d", lambda: nn.Upsample(scale_factor=2.5), U1, "nn.Upsample"),
    ("upsample_nearest_3d", lambda: nn.Upsample(size=(5, 6, 4)), U3, "nn.Upsample"),
    ("upsample_bilinear", lambda: nn.Upsample(scale_factor=(1.5, 2), mode="bilinear"), U2,
     "nn.Upsample"),
    ("upsample_bilinear_align", lambda: nn.Upsample(size=(7, 8), mode="bilinear",
     align_corners=True),
     U2, "nn.Upsample"),
    ("upsample_bicubic", lambda: nn.Upsample(scale_factor=2, mode="bicubic"), U2, "nn.Upsample"),
    ("upsample_bicubic_align", lambda: nn.Upsample(size=(6, 9), mode="bicubic",
     align_corners=True), U2,
     "nn.Upsample"),
    ("upsample_linear", lambda: nn.Upsample(scale_factor=1.7, mode="linear"), U1, "nn.Upsample"),
    ("upsample_linear_align", lambda: nn.Upsample(size=8, mode="linear", align_corners=True), U1,
     "nn.Upsample"),
    # Long axes: source indices past ~1000 are off by an ulp in float (PyTorch
    # computes them in double), which moves outputs by up to 3e-4.
    ("upsample_linear_long_align", lambda: nn.Upsample(scale_factor=1.5, mode="linear",
                                               align_corners=True), f32(1, 1, 1600), "nn.Upsample"),
    ("upsample_bicubic_long", lambda: nn.Upsample(size=(2400, 2), mode="bicubic"), f32(1, 1, 1600, 2),
     "nn.Upsample"),
    ("upsample_bilinear_long_align", lambda: nn.Upsample(size=(2400, 2), mode="bilinear",
                                                 align_corners=True), f32(1, 1, 1600, 2), "nn.Upsample"),
    ("upsample_nearest_long", lambda: nn.Upsample(size=(2399, 2)), f32(1, 1, 1600, 2), "nn.Upsample"),
    ("upsample_trilinear", lambda: nn.Upsample(scale_factor=(2, 1.5, 2), mode="trilinear"), U3,
     "nn.Upsample"),
    ("upsample_trilinear_align", lambda: nn.Upsample(size=(4, 6, 5), mode="trilinear",
                                             align_corners=True), U3, "nn.Upsample"),
    ("upsample_nearest_exact", lambda: nn.Upsample(size=(7, 8), mode="nearest-exact"), U2,
     "nn.Upsample"),
    ("upsample_nearest_exact_1d", lambda: nn.Upsample(scale_factor=1.6, mode="nearest-exact"), U1,
     "nn.Upsample"),
    ("upsample_nearest_exact_3d", lambda: nn.Upsample(size=(4, 7, 5), mode="nearest-exact"), U3,
     "nn.Upsample"),
    ("upsamplingnearest2d", lambda: nn.UpsamplingNearest2d(scale_factor=3), U2,
     "nn.UpsamplingNearest2d"),
    ("upsamplingbilinear2d", lambda: nn.UpsamplingBilinear2d(scale_factor=2), U2,
     "nn.UpsamplingBilinear2d"),
    ("upsamplingbilinear2d_size", lambda: nn.UpsamplingBilinear2d(size=(6, 9)), U2,
     "nn.UpsamplingBilinear2d"),
]:
    case("nn_" + name, lambda mod=mod: nn.Sequential(mod()), [inp], ty)

for name, f, inp, ty in [
    ("interpolate_nearest", lambda x: F.interpolate(x, scale_factor=(0.6, 1.5)), U2,
     "F.upsample_nearest"),
    ("interpolate_bilinear", lambda x: F.interpolate(x, size=(3, 8), mode="bilinear"), U2,
     "F.upsample"),
    ("interpolate_bilinear_align", lambda x: F.interpolate(
        x, scale_factor=1.5, mode="bilinear", align_corners=True), U2, "F.upsample"),
    ("interpolate_recompute", lambda x: F.interpolate(
        x, scale_factor=1.7, mode="bilinear", recompute_scale_factor=True), U2, "F.interpolate"),
    ("interpolate_bicubic", lambda x: F.interpolate(x, size=(6, 3), mode="bicubic"), U2,
     "F.upsample"),
    ("interpolate_linear", lambda x: F.interpolate(x, scale_factor=0.7, mode="linear"), U1,
     "F.upsample"),
    ("interpolate_trilinear", lambda x: F.interpolate(x, size=(2, 5, 6), mode="trilinear"), U3,
     "F.upsample"),
    ("interpolate_nearest_3d", lambda x: F.interpolate(x, scale_factor=(1, 2, 1.5)), U3,
     "F.upsample_nearest"),
    ("upsample_nearest", lambda x: F.upsample_nearest(x, scale_factor=2), U2,
     "F.upsample_nearest"),
    ("upsample_bilinear", lambda x: F.upsample_bilinear(x, size=(5, 7)), U2, "F.upsample"),
    ("upsample", lambda x: F.upsample(x, scale_factor=2, mode="bilinear"), U2, "F.upsample"),
]:
    case("F_" + name, lambda f=f: Fn(f), [inp], ty)

G = unit(1, 5, 6, 2)
for mode in ["bilinear", "nearest", "bicubic"]:
    for pad in ["zeros", "border", "reflection"]:
        for align in [False, True]:
            case("F_grid_sample_%s_%s%s" % (mode, pad, "_align" if align else ""),
                 lambda mode=mode, pad=pad, align=align: Fn(lambda x, g: F.grid_sample(
                     x, g * 1.2, mode=mode, padding_mode=pad, align_corners=align)),
                 [f32(1, 2, 4, 5), G], "F.grid_sample")
case("F_grid_sample_3d", lambda: Fn(lambda x, g: F.grid_sample(x, g, align_corners=False)),
     [f32(1, 2, 3, 4, 5), unit(1, 2, 3, 4, 3)], "F.grid_sample")
case("F_affine_grid", lambda: Fn(lambda t: F.affine_grid(t, [2, 3, 4, 5], align_corners=False)),
     [f32(2, 2, 3)], "F.affine_grid")
case("F_affine_grid_align", lambda: Fn(lambda t: F.affine_grid(t, [1, 2, 3, 4],
                                                               align_corners=True)),
     [f32(1, 2, 3)], "F.affine_grid")

case("nn_unfold", seq(lambda: nn.Unfold(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2,
     1))),
     [f32(1, 2, 5, 6)], "nn.Unfold")
case("F_unfold", lambda: Fn(lambda x: F.unfold(x, 2)), [f32(2, 3, 4, 4)], "F.unfold")
case("F_unfold_attrs", lambda: Fn(lambda x: F.unfold(x, (3, 2), dilation=(1, 2), padding=(2, 1),
                                                     stride=(2, 3))), [f32(1, 2, 6, 7)],
     "F.unfold")
case("nn_fold", seq(lambda: nn.Fold(output_size=(4, 5), kernel_size=(2, 3), padding=1, stride=(1,
     2))),
     [f32(1, 12, 15)], "nn.Fold")
case("F_fold", lambda: Fn(lambda x: F.fold(x, (5, 4), 2, dilation=(2, 1))), [f32(2, 8, 9)],
     "F.fold")

# --- recurrent layers ----------------------------------------------------------------------

S = f32(5, 2, 6)
SB = f32(2, 5, 6)
for kind in ["LSTM", "GRU", "RNN"]:
    cls = getattr(nn, kind)
    case("nn_%s" % kind.lower(), lambda cls=cls: Fn(lambda m, x: m.r(x), r=cls(6, 4)), [S],
         "nn." + kind)
    case("nn_%s_batch_first_bidir" % kind.lower(), lambda cls=cls: Fn(
        lambda m, x: m.r(x), r=cls(6, 4, batch_first=True, bidirectional=True)), [SB],
        "nn." + kind)
    case("nn_%s_layers" % kind.lower(), lambda cls=cls: Fn(
        lambda m, x: m.r(x), r=cls(6, 3, num_layers=2, bias=False, bidirectional=True)), [S],
        "nn." + kind)
    case("nn_%s_unbatched" % kind.lower(), lambda cls=cls: Fn(lambda m, x: m.r(x)[0],
                                                               r=cls(6, 5)), [f32(4, 6)],
         "nn." + kind)
case("nn_lstm_state", lambda: Fn(lambda m, x, h, c: m.r(x, (h, c)), r=nn.LSTM(
    6, 4, num_layers=2, batch_first=True)), [SB, f32(2, 2, 4), f32(2, 2, 4)], "nn.LSTM")
case("nn_lstm_proj", lambda: Fn(lambda m, x: m.r(x), r=nn.LSTM(6, 5, proj_size=3,
                                                               bidirectional=True)),
     [S], "nn.LSTM")
case("nn_gru_state", lambda: Fn(lambda m, x, h: m.r(x, h), r=nn.GRU(6, 4, bidirectional=True)),
     [S, f32(2, 2, 4)], "nn.GRU")
case("nn_rnn_relu", lambda: Fn(lambda m, x, h: m.r(x, h), r=nn.RNN(
    6, 4, nonlinearity="relu", num_layers=2, batch_first=True)), [SB, f32(2, 2, 4)], "nn.RNN")

# --- attention -------------------------------------------------------------------------------

E = f32(4, 2, 8)
EB = f32(2, 4, 8)
case("nn_mha", lambda: Fn(lambda m, q: m.a(q, q, q), a=nn.MultiheadAttention(8, 2)), [E],
     "nn.MultiheadAttention")
case("nn_mha_batch_first", lambda: Fn(lambda m, q, k: m.a(q, k, k, need_weights=False)[0],
                                      a=nn.MultiheadAttention(8, 4, batch_first=True)),
     [EB, f32(2, 3, 8)], "nn.MultiheadAttention")
case("nn_mha_kvdim", lambda: Fn(lambda m, q, k, v: m.a(q, k, v), a=nn.MultiheadAttention(
    8, 2, kdim=5, vdim=3)), [E, f32(3, 2, 5), f32(3, 2, 3)], "nn.MultiheadAttention")
case("nn_mha_bias_kv", lambda: Fn(lambda m, q: m.a(q, q, q)[0], a=nn.MultiheadAttention(
    8, 2, add_bias_kv=True)), [E], "nn.MultiheadAttention")
case("nn_mha_zero_attn", lambda: Fn(lambda m, q: m.a(q, q, q)[0], a=nn.MultiheadAttention(
    8, 2, add_zero_attn=True, bias=False)), [E], "nn.MultiheadAttention")
case("nn_mha_float_mask", lambda: Fn(lambda m, q, mask: m.a(q, q, q, attn_mask=mask)[0],
                                     a=nn.MultiheadAttention(8, 2)), [E, f32(4, 4)],
     "nn.MultiheadAttention")
case("nn_mha_const_mask", lambda: Fn(lambda m, q: m.a(q, q, q, attn_mask=m.mask)[0],
                                     a=nn.MultiheadAttention(8, 2, batch_first=True),
                                     mask=torch.triu(torch.full((4, 4), float("-inf")), 1)),
     [EB], "nn.MultiheadAttention")
case("nn_mha_bool_mask", lambda: Fn(lambda m, q: m.a(q, q, q, attn_mask=m.mask.bool())[0],
                                    a=nn.MultiheadAttention(8, 2),
                                    mask=torch.triu(torch.ones(4, 4), 1)), [E],
     "nn.MultiheadAttention")

# --- reductions --------------------------------------------------------------------------------

R = f32(2, 3, 4, 5)
for name, f, ty in [
    ("sum", lambda x: torch.sum(x, dim=(1, -1), keepdim=True), "torch.sum"),
    ("sum_all", lambda x: torch.sum(x), "torch.sum"),
    ("mean", lambda x: torch.mean(x, dim=-2), "torch.mean"),
    ("mean_keepdim", lambda x: x.mean((0, 2), keepdim=True), "torch.mean"),
    ("prod", lambda x: torch.prod(x, 2, keepdim=True), "torch.prod"),
    ("amax", lambda x: torch.amax(x, dim=(-1, 1)), "torch.amax"),
    ("amin", lambda x: torch.amin(x, dim=0, keepdim=True), "torch.amin"),
    ("max_dim", lambda x: torch.max(x, dim=1)[0], "torch.max"),
    ("max_dim_indices", lambda x: torch.max(x, dim=-1, keepdim=True), "torch.max"),
    ("max_all", lambda x: torch.max(x), "torch.max"),
    ("min_dim", lambda x: torch.min(x, 2, keepdim=True)[0], "torch.min"),
    ("min_dim_indices", lambda x: torch.min(x, dim=0), "torch.min"),
    ("min_all", lambda x: torch.min(x), "torch.min"),
    ("argmax", lambda x: torch.argmax(x, dim=1), "torch.argmax"),
    ("argmax_keepdim", lambda x: torch.argmax(x, dim=-1, keepdim=True), "torch.argmax"),
    ("argmin", lambda x: torch.argmin(x, dim=2), "torch.argmin"),
    ("logsumexp", lambda x: torch.logsumexp(x, dim=1), "torch.logsumexp"),
    ("logsumexp_keepdim", lambda x: torch.logsumexp(x, dim=(-1, 0), keepdim=True),
     "torch.logsumexp"),
    ("std", lambda x: torch.std(x, dim=1), "torch.std"),
    ("std_biased", lambda x: torch.std(x, dim=(2, 3), unbiased=False, keepdim=True),
     "torch.std"),
    ("var", lambda x: torch.var(x, dim=-1, keepdim=True), "torch.var"),
    ("var_biased", lambda x: torch.var(x, dim=(0, 1), unbiased=False), "torch.var"),
    ("norm", lambda x: torch.norm(x, dim=1), "torch.norm"),
    ("norm_p1", lambda x: torch.norm(x, p=1, dim=(2, 3), keepdim=True), "torch.norm"),
    ("norm_fro", lambda x: torch.norm(x, p="fro", dim=(1, 2)), "torch.norm"),
    ("norm_inf", lambda x: torch.norm(x, p=float("inf"), dim=-1), "torch.norm"),
    ("cumsum", lambda x: torch.cumsum(x, dim=2), "torch.cumsum"),
    ("cumsum_neg", lambda x: torch.cumsum(x, dim=-1), "torch.cumsum"),
    ("cumprod", lambda x: torch.cumprod(x, dim=1), "torch.cumprod"),
    ("topk", lambda x: torch.topk(x, 2, dim=-1), "torch.topk"),
    ("topk_smallest", lambda x: torch.topk(x, 3, dim=1, largest=False)[0], "torch.topk"),
]:
    case("reduce_" + name, lambda f=f: Fn(f), [R], ty)

# pnnx writes torch.sort and Tensor.sort as aten::sort, dim, descending
# (and stable) as literal operands; kc imports it as torch.sort.
TIES = lambda: torch.randint(0, 4, (2, 3, 6)).float()  # noqa: E731
case("sort", lambda: Fn(lambda x: torch.sort(x, dim=1)), [R], "aten::sort")
case("sort_descending", lambda: Fn(lambda x: x.sort(descending=True)[0]), [R], "aten::sort")
case("sort_stable_ties", lambda: Fn(lambda x: torch.sort(x, dim=-1, descending=True, stable=True)),
     [TIES], "aten::sort")
case("sort_stable_ascending", lambda: Fn(lambda x: torch.sort(x, dim=0, stable=True)), [TIES],
     "aten::sort")

# --- elementwise math and comparisons ------------------------------------------------------------

for name, f, inp, ty in [
    ("clamp", lambda x: torch.clamp(x, -0.5, 0.7), R, "torch.clamp"),
    ("clamp_min", lambda x: torch.clamp(x, min=0.2), R, "torch.clamp"),
    ("clamp_max", lambda x: x.clamp(max=-0.1), R, "torch.clamp"),
    ("clip", lambda x: torch.clip(x, -1, 1), R, "torch.clamp"),
    ("lgamma", lambda x: torch.lgamma(x), pos(2, 3, 4), "torch.lgamma"),
    ("cross", lambda x: torch.cross(x, x.flip(0), dim=1), f32(2, 3, 4), "torch.cross"),
    ("diag", lambda x: torch.diag(x), f32(4, 5), "torch.diag"),
    ("diag_offset", lambda x: torch.diag(x, -1), f32(4, 5), "torch.diag"),
    ("diag_vector", lambda x: torch.diag(x, 1), f32(4), "torch.diag"),
]:
    case("math_" + name, lambda f=f: Fn(f), [inp], ty)

for name, f, ty in [
    ("eq", lambda a, b: torch.eq(a, b.round()), "torch.eq"),
    ("ne", lambda a, b: torch.ne(a.round(), b.round()), "torch.ne"),
    ("gt", lambda a, b: torch.gt(a, b), "torch.gt"),
    ("lt", lambda a, b: a < b, "torch.lt"),
    ("le", lambda a, b: torch.le(a, b), "torch.le"),
    ("where", lambda a, b: torch.where(a > b, a, b * 2), "torch.where"),
    ("masked_fill", lambda a, b: a.masked_fill(b > 0, -3.0), "Tensor.masked_fill"),
    ("logical_and", lambda a, b: torch.logical_and(a > 0, b > 0), "torch.logical_and"),
    ("logical_or", lambda a, b: torch.logical_or(a > 0, b > 0), "torch.logical_or"),
    ("logical_xor", lambda a, b: torch.logical_xor(a > 0, b > 0), "torch.logical_xor"),
    ("logical_not", lambda a, b: torch.logical_not(a > b), "torch.logical_not"),
]:
    case("cmp_" + name, lambda f=f: Fn(f), [f32(2, 3, 4), f32(2, 3, 4)], ty)

for name, f, inputs, ty in [
    ("and", lambda a, b: torch.bitwise_and(a, b), [i64(100, 2, 5), i64(100, 2, 5)],
     "torch.bitwise_and"),
    ("or", lambda a, b: torch.bitwise_or(a, b), [i64(100, 2, 5), i64(100, 2, 5)],
     "torch.bitwise_or"),
    ("xor", lambda a, b: torch.bitwise_xor(a, b), [i64(100, 2, 5), i64(100, 2, 5)],
     "torch.bitwise_xor"),
    ("not", lambda a: torch.bitwise_not(a), [i64(100, 2, 5)], "torch.bitwise_not"),
    ("left_shift", lambda a, b: torch.bitwise_left_shift(a, b), [i64(100, 2, 5), i64(4, 2, 5)],
     "torch.bitwise_left_shift"),
    ("right_shift", lambda a, b: torch.bitwise_right_shift(a, b), [i64(100, 2, 5), i64(4, 2, 5)],
     "torch.bitwise_right_shift"),
    ("and_bool", lambda a, b: torch.bitwise_and(a > 0, b > 0), [f32(2, 5), f32(2, 5)],
     "torch.bitwise_and"),
]:
    case("bitwise_" + name, lambda f=f: Fn(f), inputs, ty)

# Python's &, | and ^ on masks: pnnx writes them into expressions (and, or,
# xor) with bool results.
for name, f, inputs in [
    ("or", lambda a, b: (a > 0) | (b > 0.5), [f32(2, 3, 4), f32(2, 3, 4)]),
    ("and_xor", lambda a, b: ((a > 0) & (b > 0)) ^ (a > b), [f32(2, 3, 4), f32(2, 3, 4)]),
]:
    case("expr_mask_" + name, lambda f=f: Fn(f), inputs, "pnnx.Expression")

case("cmp_ge_scalar", lambda: Fn(lambda a: torch.ge(a, 0.3)), [f32(2, 3, 4)], "torch.ge")
case("cmp_gt_broadcast", lambda: Fn(lambda a, b: torch.gt(a, b)), [f32(2, 3, 4), f32(3, 1)],
     "torch.gt")
case("cmp_eq_int", lambda: Fn(lambda a, b: torch.eq(a, b)), [i64(3, 2, 5), i64(3, 2, 5)],
     "torch.eq")
case("cmp_where_broadcast", lambda: Fn(lambda a, b: torch.where(a > 0, a, b)),
     [f32(2, 3, 4), f32(4)], "torch.where")
case("cmp_where_scalar", lambda: Fn(lambda a: torch.where(a > 0.5, a, 0.0)), [f32(2, 3, 4)],
     "torch.where")

# --- products ----------------------------------------------------------------------------------------

for name, f, inps, ty in [
    ("matmul", lambda a, b: torch.matmul(a, b), [f32(2, 1, 3, 4), f32(3, 4, 5)], "torch.matmul"),
    ("matmul_vec", lambda a, b: a @ b, [f32(3, 4), f32(4)], "torch.matmul"),
    ("bmm", lambda a, b: torch.bmm(a, b), [f32(2, 3, 4), f32(2, 4, 5)], "torch.bmm"),
    ("mm", lambda a, b: torch.mm(a, b), [f32(3, 4), f32(4, 5)], "torch.mm"),
    ("mv", lambda a, b: torch.mv(a, b), [f32(3, 4), f32(4)], "torch.mv"),
    ("addmm", lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0),
     [f32(3, 5), f32(3, 4), f32(4, 5)], "torch.addmm"),
    ("addmm_bcast", lambda c, a, b: torch.addmm(c, a, b), [f32(5), f32(3, 4), f32(4, 5)],
     "torch.addmm"),
    ("baddbmm", lambda c, a, b: torch.baddbmm(c, a, b, beta=-1.0, alpha=0.5),
     [f32(2, 3, 5), f32(2, 3, 4), f32(2, 4, 5)], "torch.baddbmm"),
]:
    case("prod_" + name, lambda f=f: Fn(f), inps, ty)

for name, eq, shapes in [
    ("matmul", "ij,jk->ik", [(3, 4), (4, 5)]),
    ("bmm", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("attention", "bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
    ("transpose", "ij->ji", [(3, 4)]),
    ("permute_implicit", "bchw->bwhc", [(1, 2, 3, 4)]),
    ("sum", "ijk->j", [(2, 3, 4)]),
    ("trace", "ii->", [(4, 4)]),
    ("diagonal", "ii->i", [(4, 4)]),
    ("dot", "i,i->", [(5,), (5,)]),
    ("outer", "i,j->ij", [(3,), (4,)]),
    ("broadcast", "bn,n->b", [(3, 4), (4,)]),
    ("ellipsis", "...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)]),
    ("three", "ab,bc,cd->ad", [(2, 3), (3, 4), (4, 2)]),
    ("implicit", "ij,jk", [(3, 4), (4, 2)]),
]:
    case("einsum_" + name, lambda eq=eq: Fn(lambda *x: torch.einsum(eq, *x)),
         [f32(*s) for s in shapes], "torch.einsum")

# --- creation ------------------------------------------------------------------------------------------
# pnnx folds these to constants at static shapes: the fixtures have '?' dims.

for name, f, ty in [
    ("zeros", lambda x: torch.zeros(x.size(0), 4) + x[:, :1], "torch.zeros"),
    ("ones", lambda x: x[:, :1] * torch.ones(x.size(0), 4), "torch.ones"),
    ("full", lambda x: torch.full((x.size(0), 1), 2.5) + x, "torch.full"),
    ("zeros_like", lambda x: torch.zeros_like(x) - x, "torch.zeros_like"),
    ("ones_like", lambda x: torch.ones_like(x) - x, "torch.ones_like"),
    ("full_like", lambda x: torch.full_like(x, -1.5) * x, "torch.full_like"),
    ("new_zeros", lambda x: x.new_zeros((x.size(0), 4)) + x[:, :1], "Tensor.new_zeros"),
    ("new_ones", lambda x: x.new_ones((x.size(0), 4)) * x[:, :1], "Tensor.new_ones"),
    ("new_empty_fill", lambda x: x.new_empty((x.size(0), 3)).fill_(0.5), "Tensor.new_empty"),
    ("empty_fill", lambda x: torch.empty(x.size(0), 2).fill_(2.0), "torch.empty"),
    ("empty_like_fill", lambda x: torch.empty_like(x).fill_(-2.0), "torch.empty_like"),
    ("zeros_like_long", lambda x: torch.zeros_like(x, dtype=torch.long), "torch.zeros_like"),
    ("ones_like_bool", lambda x: torch.ones_like(x, dtype=torch.bool), "torch.ones_like"),
    ("full_like_long", lambda x: torch.full_like(x, 7, dtype=torch.long), "torch.full_like"),
    ("empty_like_fill_long", lambda x: torch.empty_like(x, dtype=torch.long).fill_(3),
     "torch.empty_like"),
    ("arange", lambda x: x + torch.arange(x.size(1)), "torch.arange"),
    ("arange_float", lambda x: torch.arange(0.5, x.size(0), 0.5), "torch.arange"),
    # dtype given, and torch.full's taken from an integer fill value
    ("zeros_long", lambda x: torch.zeros(x.size(0), 4, dtype=torch.long), "torch.zeros"),
    ("ones_bool", lambda x: torch.ones(x.size(0), 3, dtype=torch.bool), "torch.ones"),
    ("empty_long_fill", lambda x: torch.empty(x.size(0), 2, dtype=torch.long).fill_(3),
     "torch.empty"),
    ("full_int", lambda x: torch.full((x.size(0), 2), 7), "torch.full"),
    ("full_dtype", lambda x: torch.full((x.size(0), 2), 3, dtype=torch.float) * x[:, :2],
     "torch.full"),
    ("new_zeros_long", lambda x: x.new_zeros((x.size(0), 4), dtype=torch.long), "Tensor.new_zeros"),
    ("new_ones_bool", lambda x: x.new_ones((x.size(0), 2), dtype=torch.bool), "Tensor.new_ones"),
    ("new_empty_long", lambda x: x.new_empty((x.size(0), 2), dtype=torch.long).fill_(-4),
     "Tensor.new_empty"),
    ("arange_dtype", lambda x: x + torch.arange(x.size(1), dtype=torch.float), "torch.arange"),
]:
    case("create_" + name, lambda f=f: Fn(f), [f32(2, 4)], ty, shape2=[(3, 4)])

# A forward returning a list (or tuple) of arithmetic results: pnnx writes one
# pnnx.Expression `[item, ...]` feeding pnnx.Output.
case("expr_list_output", lambda: Fn(lambda a, b: [a + b, a * 2]), [f32(2, 3, 4), f32(2, 3, 4)],
     "pnnx.Expression")
case("expr_list_output_operand", lambda: Fn(lambda a, b: [torch.relu(a), b * 2 - a]),
     [f32(2, 3, 4), f32(3, 4)], ["pnnx.Expression", "F.relu"])
case("expr_list_output_operands", lambda: Fn(lambda a, b: [torch.relu(a), torch.sigmoid(b)]),
     [f32(2, 3), f32(4)], ["pnnx.Expression", "F.relu", "F.sigmoid"])

case("fill", lambda: Fn(lambda x: x.clone().fill_(0.75) + x), [f32(2, 3, 4)], "Tensor.fill")


def slice_assign(x, y):
    d = x.clone()
    d[:, 1:3] = y
    return d


case("slice_copy", lambda: Fn(slice_assign), [f32(2, 5), f32(2, 2)], "Tensor.slice_copy")

# --- indexing and integer inputs -------------------------------------------------------------------------

case("nn_embedding", lambda: Fn(lambda m, i: m.e(i), e=nn.Embedding(10, 4)), [i64(10, 2, 5)],
     "nn.Embedding")
case("nn_embedding_padding", lambda: Fn(lambda m, i: m.e(i), e=nn.Embedding(
    10, 3, padding_idx=0)), [i64(10, 7)], "nn.Embedding")
case("F_embedding", lambda: Fn(lambda i, w: F.embedding(i, w)), [i64(6, 2, 3), f32(6, 4)],
     "F.embedding")
case("index_select", lambda: Fn(lambda x, i: torch.index_select(x, 1, i)),
     [f32(2, 5, 3), i64(5, 4)], "torch.index_select")
case("index_select_const", lambda: Fn(lambda x: torch.index_select(
    x, -1, torch.tensor([2, 0, 2]))), [f32(2, 5, 3)], "torch.index_select")
case("gather", lambda: Fn(lambda x, i: torch.gather(x, 1, i)), [f32(2, 5, 3), i64(5, 2, 4, 3)],
     "torch.gather")
case("scatter_add", lambda: Fn(lambda x, i, s: torch.scatter_add(x, 0, i, s)),
     [f32(3, 4), i64(3, 2, 4), f32(2, 4)], "torch.scatter_add")
case("tensor_index", lambda: Fn(lambda x, i: x[i]), [f32(5, 3), i64(5, 4)], "Tensor.index")
case("tensor_index_dim", lambda: Fn(lambda x, i: x[:, i]), [f32(2, 5, 3), i64(5, 4)],
     "Tensor.index")
# A bool mask indexed, 4 one-byte elements after the index (a 4-byte row
# that is not one float).
case("tensor_index_bool", lambda: Fn(lambda x, i: (x > 0)[:, i]), [f32(2, 5, 4), i64(5, 3)],
     "Tensor.index")
case("tensor_index_apart", lambda: Fn(lambda x, i, j: x[:, i, :, j]),
     [f32(2, 4, 3, 5), lambda: torch.randint(-4, 4, (2, 3)), i64(5, 3)], "Tensor.index")
case("tensor_index_adjacent", lambda: Fn(lambda x, i, j: x[:, i, j]),
     [f32(2, 4, 5, 3), i64(4, 3), lambda: torch.randint(-5, 5, (2, 1))], "Tensor.index")
case("tensor_index_put", lambda: Fn(lambda x, i, v: x.index_put((i,), v)),
     [f32(5, 3), i64(5, 2), f32(2, 3)], "Tensor.index_put")
case("masked_select", lambda: Fn(lambda x: torch.masked_select(x, x > 0)), [f32(2, 3)],
     "torch.masked_select", shape2=[(3, 3)])
case("repeat_interleave", lambda: Fn(lambda x: torch.repeat_interleave(x, 2, dim=1)),
     [f32(2, 3, 4)], "torch.repeat_interleave")
case("repeat_interleave_flat", lambda: Fn(lambda x: torch.repeat_interleave(x, 3)),
     [f32(2, 3)], "torch.repeat_interleave")
case("slice_scatter", lambda: Fn(lambda x, y: torch.slice_scatter(x, y, dim=1, start=1, end=5,
                                                                  step=2)),
     [f32(2, 6, 3), f32(2, 2, 3)], "torch.slice_scatter")
# pnnx drops storage_offset: only offset 0 converts faithfully.
case("as_strided", lambda: Fn(lambda x: torch.as_strided(x, (3, 3), (2, 1))), [f32(4, 5)],
     "torch.as_strided")
case("tensor_size", lambda: Fn(lambda x: x.reshape(x.size(0), -1)), [f32(2, 3, 4)],
     "Tensor.reshape")

# --- torchvision -------------------------------------------------------------------------------------------

case("tv_roi_align", lambda: Fn(lambda m, x, r: m.r(x, r), r=torchvision.ops.RoIAlign(
    (2, 3), 0.5, 2, aligned=True)),
     [f32(1, 3, 8, 8), lambda: torch.tensor([[0, 1.0, 2.0, 9.0, 12.0], [0, 4.0, 0.5, 14.0, 6.0]])],
     "torchvision.ops.RoIAlign", torchvision=True)
case("tv_roi_align_unaligned", lambda: Fn(lambda m, x, r: m.r(x, r), r=torchvision.ops.RoIAlign(
    3, 1.0, -1)), [f32(1, 2, 6, 7), lambda: torch.tensor([[0, 0.5, 1.0, 5.0, 4.5]])],
     "torchvision.ops.RoIAlign", torchvision=True)
case("tv_deform_conv2d", lambda: Fn(lambda m, x, o: m.d(x, o), d=torchvision.ops.DeformConv2d(
    2, 3, 3, padding=1)), [f32(1, 2, 5, 5), f32(1, 18, 5, 5)], "torchvision.ops.DeformConv2d",
     torchvision=True)

case("tv_deform_conv2d_mask", lambda: Fn(lambda m, x, o, k: m.d(x, o, k),
                                         d=torchvision.ops.DeformConv2d(
                                             4, 2, (3, 2), stride=2, padding=1, dilation=(1, 2),
                                             groups=2, bias=False)),
     [f32(1, 4, 7, 8), f32(1, 24, 4, 4), lambda: torch.rand(1, 12, 4, 4)],
     "torchvision.ops.DeformConv2d", torchvision=True)

# --- complex and Fourier transforms ---------------------------------------------------------------------------

case("fft_rfft_irfft", lambda: Fn(lambda x: torch.fft.irfft(torch.fft.rfft(x) * 2, n=8)),
     [f32(2, 8)], "torch.fft.rfft")
case("fft_fft_real", lambda: Fn(lambda x: torch.view_as_real(torch.fft.fft(x))), [f32(2, 8)],
     "torch.fft.fft")

# --- attributes at a second value ---------------------------------------------------------------
# For every op kc runs, each attribute pnnx writes takes a value besides its
# default in some fixture (test/OpFixtureTest.cpp; the exceptions, with the
# reason, in default-only.txt). These give the ones the cases above leave at
# one value their other value.


def slice_assign_step(x, y):
    d = x.clone()
    d[:, ::2] = y
    return d


for name, f, inps, ty in [
    ("F_avg_pool1d_attrs", lambda x: F.avg_pool1d(x, 4, stride=3, padding=2, ceil_mode=True), [Q1],
     "F.avg_pool1d"),
    ("F_avg_pool2d_exclude_pad", lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
     [Q2], "F.avg_pool2d"),
    ("F_avg_pool3d_attrs", lambda x: F.avg_pool3d(x, (2, 3, 2), stride=(1, 2, 1), padding=(1, 1, 0),
                                                   count_include_pad=False, divisor_override=3),
     [Q3], "F.avg_pool3d"),
    ("F_conv1d_attrs", lambda x, w: F.conv1d(x, w, stride=3, padding=3, dilation=2, groups=2),
     [C1, f32(6, 2, 3)], "F.conv1d"),
    ("F_conv_transpose1d_padding", lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1),
     [C1, f32(4, 3, 3), f32(3)], "F.conv_transpose1d"),
    ("F_conv_transpose2d_attrs", lambda x, w, b: F.conv_transpose2d(
        x, w, b, stride=(2, 1), padding=(0, 1), output_padding=(1, 0), dilation=(2, 1)),
     [C2, f32(4, 3, 3, 2), f32(3)], "F.conv_transpose2d"),
    ("F_fold_attrs", lambda x: F.fold(x, (5, 6), (2, 2), padding=1, stride=(2, 1)),
     [f32(1, 8, 21)], "F.fold"),
    ("F_glu_dim", lambda x: F.glu(x, dim=1), [f32(2, 4, 3, 6)], "F.glu"),
    ("F_log_softmax_dim", lambda x: F.log_softmax(x, dim=1), [X], "F.log_softmax"),
    ("F_lrn_attrs", lambda x: F.local_response_norm(x, 3, alpha=0.01, beta=0.5, k=2.0),
     [f32(2, 5, 7)], "F.local_response_norm"),
    ("F_lp_pool1d_attrs", lambda x: F.lp_pool1d(x, 1.5, 4, stride=3, ceil_mode=True),
     [pos(2, 3, 11)], "F.lp_pool1d"),
    ("F_lp_pool2d_attrs", lambda x: F.lp_pool2d(x, 2.0, (3, 2), stride=(2, 1), ceil_mode=True),
     [pos(1, 3, 9, 10)], "F.lp_pool2d"),
    ("F_max_pool1d_ceil", lambda x: F.max_pool1d(x, 3, 2, 0, ceil_mode=True), [Q1],
     "F.max_pool1d"),
    ("F_max_pool1d_indices", lambda x: F.max_pool1d(x, 3, 2, 1, return_indices=True), [Q1],
     "F.max_pool1d"),
    ("F_max_pool2d_indices", lambda x: F.max_pool2d(x, (2, 3), 2, return_indices=True), [Q2],
     "F.max_pool2d"),
    ("F_max_pool3d_indices", lambda x: F.max_pool3d(x, 2, 1, 1, return_indices=True), [Q3],
     "F.max_pool3d"),
    ("F_interpolate_align", lambda x: F.interpolate(x, scale_factor=(1.3, 0.8), mode="bicubic",
                                                    align_corners=True,
                                                    recompute_scale_factor=True), [U2],
     "F.interpolate"),
    ("F_embedding_flags", lambda i, w: F.embedding(i, w, scale_grad_by_freq=True, sparse=True),
     [i64(6, 2, 3), f32(6, 4)], "F.embedding"),
    ("slice_copy_step", slice_assign_step, [f32(2, 5), f32(2, 3)], "Tensor.slice_copy"),
    ("to_copy", lambda x: x.to(torch.int64, copy=True), [HALVES], "Tensor.to"),
    ("reduce_amax_keepdim", lambda x: torch.amax(x, dim=0, keepdim=True), [R], "torch.amax"),
    ("reduce_amin_dims", lambda x: torch.amin(x, dim=(1, 2)), [R], "torch.amin"),
    ("reduce_argmin_keepdim", lambda x: torch.argmin(x, dim=-1, keepdim=True), [R],
     "torch.argmin"),
    ("reduce_prod_last", lambda x: torch.prod(x, -1), [R], "torch.prod"),
    ("math_cross_last", lambda a, b: torch.cross(a, b, dim=-1), [f32(2, 4, 3), f32(2, 4, 3)],
     "torch.cross"),
    ("cmp_ge", lambda a, b: torch.ge(a, b), [f32(2, 3, 4), f32(2, 3, 4)], "torch.ge"),
    # torch 1.13's slice_scatter miscounts the slice unless step is given
    ("slice_scatter_dim0", lambda x, y: torch.slice_scatter(x, y, dim=0, start=2, end=4,
                                                            step=1),
     [f32(4, 3), f32(2, 3)], "torch.slice_scatter"),
]:
    case(name, lambda f=f: Fn(f), inps, ty)

for name, mod, inp, ty in [
    ("avgpool1d_stride", lambda: nn.AvgPool1d(3, stride=2), Q1, "nn.AvgPool1d"),
    ("batchnorm1d_noaffine", lambda: nn.BatchNorm1d(4, affine=False), C1, "nn.BatchNorm1d"),
    ("batchnorm2d_eps", lambda: nn.BatchNorm2d(4, eps=1e-3), C2, "nn.BatchNorm2d"),
    ("batchnorm3d_noaffine", lambda: nn.BatchNorm3d(4, eps=0.1, affine=False), C3,
     "nn.BatchNorm3d"),
    ("convtranspose2d_nobias", lambda: nn.ConvTranspose2d(4, 3, 3, stride=2, bias=False), C2,
     "nn.ConvTranspose2d"),
    ("instancenorm2d_eps", lambda: nn.InstanceNorm2d(4, eps=0.1), C2, "nn.InstanceNorm2d"),
    ("instancenorm3d_eps", lambda: nn.InstanceNorm3d(4, eps=0.2), C3, "nn.InstanceNorm3d"),
    ("softmin_dim", lambda: nn.Softmin(dim=1), X, "nn.Softmin"),
    ("unfold_default", lambda: nn.Unfold(kernel_size=2), f32(1, 2, 5, 6), "nn.Unfold"),
    ("fold_dilation", lambda: nn.Fold(output_size=(4, 5), kernel_size=(2, 3), dilation=(2, 1)),
     f32(1, 12, 6), "nn.Fold"),
    ("upsamplingnearest2d_size", lambda: nn.UpsamplingNearest2d(size=(6, 7)), U2,
     "nn.UpsamplingNearest2d"),
]:
    case("nn_" + name, lambda mod=mod: nn.Sequential(mod()), [inp], ty)

case("nn_embedding_sparse", lambda: Fn(lambda m, i: m.e(i), e=nn.Embedding(10, 4, sparse=True)),
     [i64(10, 2, 5)], "nn.Embedding")
case("nn_adaptivemaxpool1d_indices", lambda: Fn(lambda m, x: m.p(x), p=nn.AdaptiveMaxPool1d(
    5, return_indices=True)), [Q1], "nn.AdaptiveMaxPool1d")
case("nn_adaptivemaxpool3d_indices", lambda: Fn(lambda m, x: m.p(x), p=nn.AdaptiveMaxPool3d(
    (2, 5, 3), return_indices=True)), [Q3], "nn.AdaptiveMaxPool3d")
case("tv_deform_conv2d_nopad", lambda: Fn(lambda m, x, o: m.d(x, o),
                                          d=torchvision.ops.DeformConv2d(2, 3, 3)),
     [f32(1, 2, 5, 5), f32(1, 18, 3, 3)], "torchvision.ops.DeformConv2d", torchvision=True)

# --- f16 models -----------------------------------------------------------------------------------
# Models whose tensors are f16, as `module.half()` traced on a GPU would be
# (PyTorch 1.13 has no f16 kernels on the CPU, where fixtures are made):
# make_fixtures.py writes pnnx's files with every f32 in f16 and takes the
# reference from PyTorch in f32 on the f16 values, rounded to f16.


class HalfCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.c3 = nn.Conv2d(16, 24, 1)
        self.fc = nn.Linear(24, 10)
        self.ln = nn.LayerNorm(10)

    def forward(self, x):
        x = torch.relu(self.c1(x))
        x = F.hardswish(self.c3(self.c2(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return torch.softmax(self.ln(self.fc(x)), dim=-1)


class HalfAttention(nn.Module):
    """matmul/softmax attention with pnnx's dynamic reshapes (`?` dims)."""

    def __init__(self, d=16, heads=2):
        super().__init__()
        self.heads, self.qkv, self.proj = heads, nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.softmax(q @ k.transpose(-2, -1) * (d // self.heads) ** -0.5, dim=-1)
        return self.ln(x + self.proj(F.gelu((a @ v).transpose(1, 2).reshape(b, t, d))))


case("half_cnn", HalfCnn, [f32(1, 3, 12, 12)], "nn.Conv2d", half=True)
case("half_attention", HalfAttention, [f32(2, 5, 16)], "nn.Linear", shape2=[(1, 7, 16)],
     half=True)
case("half_mha", lambda: Fn(lambda m, q: m.a(q, q, q)[0], a=nn.MultiheadAttention(8, 2)), [E],
     "nn.MultiheadAttention", half=True)
case("half_lstm", lambda: Fn(lambda m, x: m.r(x)[0], r=nn.LSTM(6, 5, batch_first=True)),
     [f32(2, 4, 6)], "nn.LSTM", half=True)

# --- pnnx's dynamic forms -----------------------------------------------------------------------
# With '?' dims pnnx keeps the sizes a module reads as expressions of the
# input's shape, given to the op as the operand of an attribute ($shape,
# $sizes, $end, ...); kc evaluates them when it makes a plan for an input.
for name, f, ty in [
    ("view", lambda x: x.view(x.size(0), -1) * 2, "Tensor.reshape"),
    ("reshape_half", lambda x: x.reshape(x.size(0), 2, x.size(1) // 2, -1), "Tensor.reshape"),
    ("slice_half", lambda x: x[:, : x.size(1) // 2] + 1, "Tensor.slice"),
    ("expand", lambda x: x[:, :1].expand(x.size(0), x.size(1), 3) - x, "Tensor.expand"),
    ("repeat", lambda x: x.repeat(1, x.size(0), 1), "Tensor.repeat"),
]:
    case("dyn_" + name, lambda f=f: Fn(f), [f32(2, 6, 3)], ty, shape2=[(3, 4, 3)])
