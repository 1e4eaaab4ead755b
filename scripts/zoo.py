#!/usr/bin/python3
"""The model zoo: torchvision models converted by the real pnnx, for conformance and benchmarks.

  scripts/zoo.py make [--only a,b]      convert the zoo into $KC_ZOO_DIR
  scripts/zoo.py make --set layers      single layers cut from the zoo, into $KC_ZOO_DIR/layers
  scripts/zoo.py make --set ops         one model per operator family (scripts/op_models.py),
                                        into $KC_ZOO_DIR/ops
  scripts/zoo.py reference-ncnn         ncnn files of the reference models (../shared/models)
  scripts/zoo.py list                   the zoo's names, one a line
  scripts/zoo.py torch-bench NAME ...   ../shared/bench/torch_bench.py on a zoo model
  scripts/zoo.py fixtures               the small zoo-shaped models committed in test/zoo

Each model is made exactly as ../shared/bench/gen.py made the reference models (that script's
own convert(): seed = crc32(name), BatchNorm statistics calibrated then perturbed, eval mode,
seeded normal input, `pnnx model.pt inputshape=[...] fp16=0`, PyTorch's outputs from the
ORIGINAL module, pnnx's generated Python checked against them), from torchvision's constructor
with weights=None. The zoo directory ($KC_ZOO_DIR, default ../shared-zoo beside the project)
then holds, per model, what ../shared/models holds:

  <zoo>/<name>/model.pnnx.param, model.pnnx.bin, in0.npy, out0.npy, meta.json
  <zoo>/ncnn/<name>/model.ncnn.param, model.ncnn.bin, model_ncnn.py, pnnx.log

`--set layers` makes single-layer models (one depthwise, grouped or 1x1 convolution, or one
squeeze-and-excitation block, at a shape the zoo has) the same way into <zoo>/layers/, with
their ncnn files in <zoo>/layers/ncnn/: `KC_ZOO_DIR=<zoo>/layers scripts/bench.sh --models zoo
--out layers.md` then times one kernel of kc against ncnn's.

`--set ops` makes the models of scripts/op_models.py, one per operator family kc runs beyond
the reference models (recurrent layers, einsum, sort and topk, masks, norms, pads, resampling,
grid_sample, 3-d convolution and pooling, attention variants, ...), at sizes where the kernel
takes the time: `KC_ZOO_DIR=<zoo>/ops scripts/bench.sh --models zoo --threads 1 --out ops.md`
times each against PyTorch.

`fixtures` makes, the same way, miniatures of three zoo architectures (a few channels, 48x48
input, 10 classes; 95-155 KB each) into test/zoo/, which the project commits: they put the
zoo's layer kinds (5x5 and dilated depthwise convolutions, squeeze-and-excitation gates with
Hardsigmoid and Sigmoid, Hardswish, SiLU, grouped convolutions) under the conformance test
where the zoo itself is absent, as in CI.

`reference-ncnn` re-runs gen.py (--keep-dir) on the reference models to get their ncnn files
into <zoo>/ncnn/<name>/ and checks that the regenerated .pnnx.bin holds the weights of
../shared/models (to 1e-5 of each tensor's largest value: on another CPU they differ in the last
bits), so ncnn runs the weights kc runs.

Needs pnnx (../shared/tools/pnnx or $PNNX) and Debian's python3-torch, python3-torchvision;
run with /usr/bin/python3. kc's build and tests never need this script: the conformance test
reads whatever the zoo directory holds and skips itself when there is none.
"""
import argparse
import os
import runpy
import shutil
import subprocess
import sys
import tempfile

from op_models import OPS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(ROOT, "..", "shared")
BENCH = os.path.join(SHARED, "bench")

# torchvision constructor -> input shape. 224x224 but for inception_v3, whose stem expects 299.
ZOO = {
    "mobilenet_v3_large": (1, 3, 224, 224),
    "mobilenet_v3_small": (1, 3, 224, 224),
    "efficientnet_b0": (1, 3, 224, 224),
    "efficientnet_b1": (1, 3, 224, 224),
    "shufflenet_v2_x1_0": (1, 3, 224, 224),
    "mnasnet1_0": (1, 3, 224, 224),
    "regnet_x_400mf": (1, 3, 224, 224),
    "regnet_y_400mf": (1, 3, 224, 224),
    "squeezenet1_1": (1, 3, 224, 224),
    "googlenet": (1, 3, 224, 224),
    "resnet50": (1, 3, 224, 224),
    "densenet121": (1, 3, 224, 224),
    "convnext_tiny": (1, 3, 224, 224),
    "resnext50_32x4d": (1, 3, 224, 224),
    "inception_v3": (1, 3, 299, 299),
    "efficientnet_v2_s": (1, 3, 224, 224),
}


def _conv(cin, cout, k, stride=1, groups=1, act=None):
    """A convolution (padding k // 2) with bias, and its activation if any."""
    def build():
        from collections import OrderedDict
        import torch.nn as nn
        layers = [("conv", nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups))]
        return nn.Sequential(OrderedDict(layers + ([("act", getattr(nn, act)())] if act else [])))
    return build


def _se(channels, squeeze, activation, gate):
    """torchvision's squeeze-and-excitation block (mobilenet_v3: ReLU, Hardsigmoid; efficientnet:
    SiLU, Sigmoid)."""
    def build():
        import torch.nn as nn
        from torchvision.ops import SqueezeExcitation
        return SqueezeExcitation(channels, squeeze, getattr(nn, activation), getattr(nn, gate))
    return build


# name -> (builder, input shape, where the zoo has it): the layer kinds the zoo spends its time
# in outside the reference models' shapes.
LAYERS = {
    "dw3x3_144_56": (_conv(144, 144, 3, 1, 144), (1, 144, 56, 56), "efficientnet_b0 stage 2"),
    "dw5x5_120_28": (_conv(120, 120, 5, 1, 120), (1, 120, 28, 28), "mobilenet_v3_large"),
    "dw5x5_240_28_s2": (_conv(240, 240, 5, 2, 240), (1, 240, 28, 28), "efficientnet_b0 stage 4"),
    "dw5x5_672_14": (_conv(672, 672, 5, 1, 672), (1, 672, 14, 14), "efficientnet_b0 stage 5"),
    "dw5x5_960_7": (_conv(960, 960, 5, 1, 960), (1, 960, 7, 7), "mobilenet_v3_large last stage"),
    "grouped3x3_g10_160_14": (_conv(160, 160, 3, 1, 10), (1, 160, 14, 14), "regnet_x_400mf stage 3"),
    "grouped3x3_g25_400_7": (_conv(400, 400, 3, 1, 25), (1, 400, 7, 7), "regnet_x_400mf stage 4"),
    "grouped3x3_g32_256_28": (_conv(256, 256, 3, 1, 32), (1, 256, 28, 28), "resnext50_32x4d stage 2"),
    "conv1x1_160_960_7_hswish": (_conv(160, 960, 1, act="Hardswish"), (1, 160, 7, 7),
                                 "mobilenet_v3_large expansion"),
    "conv1x1_112_672_14_silu": (_conv(112, 672, 1, act="SiLU"), (1, 112, 14, 14), "efficientnet_b0 expansion"),
    "conv1x1_40_240_28_hswish": (_conv(40, 240, 1, act="Hardswish"), (1, 40, 28, 28), "mobilenet_v3_small"),
    "se_672_14_hsigmoid": (_se(672, 168, "ReLU", "Hardsigmoid"), (1, 672, 14, 14), "mobilenet_v3_large"),
    "se_480_14_sigmoid": (_se(480, 20, "SiLU", "Sigmoid"), (1, 480, 14, 14), "efficientnet_b0 stage 5"),
}


def _tiny_mobilenet_v3():
    from functools import partial
    from torchvision.models.mobilenetv3 import InvertedResidualConfig, MobileNetV3
    # input, kernel, expanded, output channels, SE, activation, stride, dilation
    b = partial(InvertedResidualConfig, width_mult=1.0)
    return MobileNetV3([b(8, 3, 8, 8, True, "RE", 2, 1), b(8, 3, 24, 16, False, "RE", 2, 1),
                        b(16, 5, 48, 16, True, "HS", 1, 1), b(16, 5, 48, 24, True, "HS", 2, 1),
                        b(24, 5, 64, 24, True, "HS", 1, 2)], last_channel=32, num_classes=10)


def _tiny_efficientnet():
    from torchvision.models.efficientnet import EfficientNet, MBConvConfig
    # expand ratio, kernel, stride, input, output channels, layers
    return EfficientNet([MBConvConfig(1, 3, 1, 8, 8, 1), MBConvConfig(4, 3, 2, 8, 16, 2),
                         MBConvConfig(4, 5, 2, 16, 24, 1)], dropout=0.2, num_classes=10, last_channel=64)


def _tiny_regnet_y():
    from torchvision.models.regnet import BlockParams, RegNet
    return RegNet(BlockParams.from_init_params(depth=4, w_0=16, w_a=8.0, w_m=2.0, group_width=8, se_ratio=0.25),
                  num_classes=10, stem_width=16)


# name -> (builder, input shape, what it is)
FIXTURES = {
    "tiny_mobilenet_v3": (_tiny_mobilenet_v3, (1, 3, 48, 48),
                          "torchvision MobileNetV3, 5 blocks of 8-24 channels (3x3 and 5x5 depthwise, "
                          "one dilated; SE with Hardsigmoid; ReLU and Hardswish), 10 classes"),
    "tiny_efficientnet": (_tiny_efficientnet, (1, 3, 48, 48),
                          "torchvision EfficientNet, 4 MBConv blocks of 8-24 channels (3x3 and 5x5 depthwise, "
                          "SiLU, SE with Sigmoid), 10 classes"),
    "tiny_regnet_y": (_tiny_regnet_y, (1, 3, 48, 48),
                      "torchvision RegNet, widths 16 and 32, groups of 8 channels, SE, 10 classes"),
}


def zoo_dir():
    return os.path.normpath(os.environ.get("KC_ZOO_DIR") or os.path.join(ROOT, "..", "shared-zoo"))


def pnnx_path(arg):
    return os.path.abspath(arg or os.environ.get("PNNX") or os.path.join(SHARED, "tools", "pnnx", "pnnx"))


def import_bench():
    """gen.py and models.py of ../shared/bench, with the zoo added to models.REGISTRY."""
    if not os.path.isdir(BENCH):
        sys.exit(f"zoo.py: error: {BENCH} not found (the reference-model generator)")
    sys.path.insert(0, BENCH)
    import gen  # noqa: E402  (imports models from the same folder)
    import models  # noqa: E402
    for name, shape in ZOO.items():
        models.REGISTRY[name] = models.ModelSpec(models._tv(name), [shape], "zoo",
                                                 note=f"torchvision {name}, random init")
    for name, (build, shape, where) in LAYERS.items():
        build.__name__ = name
        models.REGISTRY[name] = models.ModelSpec(build, [shape], "layers", note=f"one layer, as in {where}")
    for name, (module, shapes, family) in OPS.items():
        models.REGISTRY[name] = models.ModelSpec(module, shapes, "ops", note=family)
    return gen, models


def set_of(args):
    """(names, folder) of the set --set names."""
    if args.set == "zoo":
        return list(ZOO), zoo_dir()
    return list(LAYERS if args.set == "layers" else OPS), os.path.join(zoo_dir(), args.set)


def make(args):
    gen, models = import_bench()
    import torch
    torch.set_num_threads(args.threads)
    pnnx = pnnx_path(args.pnnx)
    if not os.path.isfile(pnnx):
        sys.exit(f"zoo.py: error: pnnx not found at {pnnx} (set $PNNX or --pnnx)")
    every, zdir = set_of(args)
    names = args.only.split(",") if args.only else every
    unknown = [n for n in names if n not in every]
    if unknown:
        sys.exit(f"zoo.py: error: not in the {args.set} set: {', '.join(unknown)} (see scripts/zoo.py list)")
    kdir = os.path.join(zdir, "ncnn")
    os.makedirs(kdir, exist_ok=True)
    failed = []
    for name in names:
        print(f"[{name}] {models.REGISTRY[name].input_shapes[0]}", flush=True)
        try:
            gen.convert(name, models.REGISTRY[name], pnnx, os.path.join(zdir, name), kdir,
                        args.pnnx_commit, lambda m: print(m, flush=True))
        except Exception as e:  # a model pnnx cannot convert is reported, the rest go on
            print(f"  -> FAILED: {type(e).__name__}: {str(e)[-1500:]}", flush=True)
            shutil.rmtree(os.path.join(zdir, name), ignore_errors=True)
            failed.append(name)
            continue
        drop_traced(os.path.join(kdir, name))
        print(f"  -> ok: {os.path.join(zdir, name)}", flush=True)
    print(f"zoo: {len(names) - len(failed)} converted, {len(failed)} failed {failed}")
    return 1 if failed else 0


def fixtures(args):
    gen, models = import_bench()
    import torch
    torch.set_num_threads(args.threads)
    pnnx = pnnx_path(args.pnnx)
    out = os.path.join(ROOT, "test", "zoo")
    for name, (build, shape, what) in FIXTURES.items():
        build.__name__ = name
        spec = models.ModelSpec(build, [shape], "fixture", note=what)
        meta = gen.convert(name, spec, pnnx, os.path.join(out, name), None, args.pnnx_commit,
                           lambda m: print(m, flush=True))
        meta["source"] = f"scripts/zoo.py:{build.__name__}"
        meta.pop("files", None)
        gen.write_json(meta, os.path.join(out, name, "meta.json"))
        print(f"{name}: {sum(os.path.getsize(os.path.join(out, name, f)) for f in os.listdir(os.path.join(out, name)))} bytes")
    return 0


def drop_traced(keep):
    """The traced model.pt and pnnx's ONNX export (each as large as the weights) are not
    needed after the conversion."""
    for fn in ("model.pt", "model.pnnx.onnx"):
        if os.path.exists(os.path.join(keep, fn)):
            os.remove(os.path.join(keep, fn))


def reference_ncnn(args):
    pnnx = pnnx_path(args.pnnx)
    models_dir = os.environ.get("KC_MODELS_DIR") or os.path.join(SHARED, "models")
    names = args.only.split(",") if args.only else sorted(
        n for n in os.listdir(models_dir) if os.path.isfile(os.path.join(models_dir, n, "model.pnnx.param")))
    kdir = os.path.join(zoo_dir(), "ncnn")
    os.makedirs(kdir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kc-zoo-ref-") as tmp:
        # The reference BLAS, as when ../shared/models was made (../shared/tools/pnnx/README.md).
        blas = "/usr/lib/x86_64-linux-gnu/blas:/usr/lib/x86_64-linux-gnu/lapack"
        env = dict(os.environ, LD_LIBRARY_PATH=blas + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
        r = subprocess.run(["/usr/bin/python3", os.path.join(BENCH, "gen.py"), "--pnnx", pnnx,
                            "--public-dir", tmp, "--keep-dir", kdir, "--threads", str(args.threads),
                            "--only", ",".join(names)], env=env)
        status = r.returncode
        for name in names:
            drop_traced(os.path.join(kdir, name))
            new, old = os.path.join(tmp, name, "model.pnnx.bin"), os.path.join(models_dir, name, "model.pnnx.bin")
            if not os.path.isfile(new):
                print(f"{name}: not regenerated")
                status = 1
                continue
            diff = weight_difference(new, old)
            if diff is None or diff > 1e-5:
                # Then ncnn would run other weights than kc: drop its files.
                print(f"{name}: regenerated weights differ from {old} ({diff}); ncnn files removed")
                shutil.rmtree(os.path.join(kdir, name), ignore_errors=True)
                status = 1
            else:
                print(f"{name}: weights within {diff:.2g} (of each tensor's largest value) of {old}; "
                      f"ncnn files in {os.path.join(kdir, name)}")
    return status


def weight_difference(a, b):
    """Largest difference between two .pnnx.bin archives' tensors, relative to each tensor's
    largest value; None if they do not hold the same tensors. A reconversion on another CPU
    differs in the last bits: the calibrated BatchNorm statistics folded into the weights
    depend on the rounding of PyTorch's kernels."""
    import zipfile
    import numpy as np
    za, zb = zipfile.ZipFile(a), zipfile.ZipFile(b)
    if za.namelist() != zb.namelist():
        return None
    worst = 0.0
    for n in za.namelist():
        x, y = za.read(n), zb.read(n)
        if len(x) != len(y):
            return None
        if x != y:
            x, y = np.frombuffer(x, np.float32), np.frombuffer(y, np.float32)
            worst = max(worst, float(np.abs(x - y).max() / max(np.abs(y).max(), 1e-30)))
    return worst


def torch_bench(rest):
    """Runs torch_bench.py unchanged, with the zoo in its model registry."""
    import_bench()
    sys.argv = [os.path.join(BENCH, "torch_bench.py")] + rest
    if "--models-dir" not in rest:
        sys.argv += ["--models-dir", zoo_dir()]
    runpy.run_path(sys.argv[0], run_name="__main__")
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "torch-bench":
        return torch_bench(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["make", "reference-ncnn", "list", "torch-bench", "fixtures"])
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--set", choices=["zoo", "layers", "ops"], default="zoo", help="for make and list")
    ap.add_argument("--pnnx", default=None, help="pnnx executable (default $PNNX, else ../shared/tools/pnnx/pnnx)")
    ap.add_argument("--pnnx-commit", default="a4d2ea1d4422c9e849f166fd7a4aefb52f942f6a",
                    help="source commit of the pnnx binary, recorded in meta.json")
    ap.add_argument("--threads", type=int, default=2, help="PyTorch threads while converting")
    args = ap.parse_args()
    if args.command == "list":
        print("\n".join(set_of(args)[0]))
        return 0
    return {"make": make, "reference-ncnn": reference_ncnn, "fixtures": fixtures}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
