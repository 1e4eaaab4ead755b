# Writes the weight archive of conv_bn.pnnx.param: small values whose fused
# results are exact in f32 (eps is 0 in the model).
import struct, sys, zipfile

weights = {
    # conv -> bn: s = gamma / sqrt(var) = (1, 6)
    "conv.weight": (1, 2, 3, 4), "conv.bias": (0.5, -1),
    "bn.running_mean": (1.5, 1), "bn.running_var": (4, 0.25),
    "bn.weight": (2, 3), "bn.bias": (0.25, -2),
    # conv2 (no bias) -> bn2 (affine=False): s = (1, 4)
    "conv2.weight": (1, -1, 0.5, 2),
    "bn2.running_mean": (2, -4), "bn2.running_var": (1, 0.0625),
    # conv3 has a second user (relu): not fused
    "conv3.weight": (1, 0, 0, 1),
    "bn3.running_mean": (0, 0), "bn3.running_var": (1, 1),
    # 2-D Linear -> BatchNorm1d: s = (0.5, 2)
    "fc.weight": (1, 2, 3, 4), "fc.bias": (0, 0),
    "bn4.running_mean": (0, 0), "bn4.running_var": (1, 1),
    "bn4.weight": (0.5, 2), "bn4.bias": (1, 1),
    # 3-D Linear -> BatchNorm1d normalizes dim 1, not the features: not fused
    "fc5.weight": (1, 0, 0, 1),
    "bn5.running_mean": (0, 0, 0), "bn5.running_var": (1, 1, 1),
    # Conv1d (no bias) -> BatchNorm1d: s = (2, 0.25)
    "conv6.weight": (1, 2, 3, 4),
    "bn6.running_mean": (1, -1), "bn6.running_var": (0.25, 16),
}
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for name, values in weights.items():
        z.writestr(name, struct.pack("<%df" % len(values), *values))
