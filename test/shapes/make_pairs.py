#!/usr/bin/env python3
"""Makes the reference pairs of the reference models at other input shapes.

For each line of pairs.txt (`model shape [shape...]`, one shape per input)
and each run shape of dynamic.txt (`model shape shape2 run-shape...`):
rebuilds the model's original PyTorch module with the weights of its
committed .bin (../shared/bench: the seed, the norm statistics), checks that
it reproduces the model's own out*.npy at the shape it was converted at,
then runs it on the inputs of hashedInput (below; test/ConformanceTest.cpp
makes the same ones) and writes `<model>-<shape>/out<i>.npy`.

For each line of dynamic.txt it also traces the module and converts it with
the real pnnx at `inputshape=shape inputshape2=shape2`, so that the dims
that differ become `?`, checks that the .bin pnnx writes is byte for byte
the committed one, and keeps the .param as `dynamic/<model>.pnnx.param`.

Needs python3-torch, python3-torchvision and numpy (and pnnx for
dynamic.txt); kc's build never runs it.

    PNNX=../shared/tools/pnnx/pnnx python3 test/shapes/make_pairs.py [--shared ../shared]
"""
import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def hashed_input(shape, salt):
    """Values in [-1, 1) that a few integer operations give exactly in C++:
    element i of input `salt` is ((i + salt * 7919) * 2654435761 mod 2^32 >> 8) / 2^23 - 1."""
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.uint64) + np.uint64(salt * 7919)
    h = (i * np.uint64(2654435761)) % np.uint64(2 ** 32)
    x = (h >> np.uint64(8)).astype(np.float32) / np.float32(2 ** 23) - np.float32(1)
    return x.reshape(shape)


def flatten(out):
    if isinstance(out, torch.Tensor):
        return [out]
    return [t for o in out for t in flatten(o)]


def list_lines(name):
    for line in open(os.path.join(HERE, name)):
        line = line.split("#")[0].split()
        if line:
            yield line[0], [tuple(int(d) for d in w.split("x")) for w in line[1:]]


def rebuild(name, shared):
    """The original module of `name`, checked against its committed out*.npy."""
    from models import REGISTRY  # noqa: E402
    from reference import model_seed, randomize_norms  # noqa: E402
    spec = REGISTRY[name]
    seed = model_seed(name)
    torch.manual_seed(seed)
    model = spec.build()
    randomize_norms(model, spec.input_shapes, seed)
    model.eval()
    mdir = os.path.join(shared, "models", name)
    ins = [torch.from_numpy(np.load(os.path.join(mdir, f"in{i}.npy")))
           for i in range(len(spec.input_shapes))]
    with torch.no_grad():
        got = flatten(model(*ins))
    for i, g in enumerate(got):
        ref = np.load(os.path.join(mdir, f"out{i}.npy"))
        err = float(np.max(np.abs(g.numpy() - ref)))
        if err > 1e-4 * max(1.0, float(np.max(np.abs(ref)))):
            sys.exit(f"{name}: the rebuilt module differs from out{i}.npy by {err}")
    return model


def write_pair(name, model, shapes):
    xs = [torch.from_numpy(hashed_input(s, k)) for k, s in enumerate(shapes)]
    with torch.no_grad():
        outs = flatten(model(*xs))
    out_dir = os.path.join(HERE, name + "-" + "-".join("x".join(map(str, s)) for s in shapes))
    os.makedirs(out_dir, exist_ok=True)
    for i, o in enumerate(outs):
        np.save(os.path.join(out_dir, f"out{i}.npy"), np.ascontiguousarray(o.float().numpy()))
    print(out_dir, [tuple(o.shape) for o in outs])


def convert_dynamic(name, model, shape, shape2, shared):
    pnnx = os.environ.get("PNNX", os.path.join(shared, "tools", "pnnx", "pnnx"))
    arg = lambda s: "[" + ",".join(map(str, s)) + "]"  # noqa: E731
    with tempfile.TemporaryDirectory() as td:
        traced = torch.jit.trace(model, (torch.zeros(shape),), check_trace=False)
        traced.save(os.path.join(td, "model.pt"))
        r = subprocess.run([pnnx, "model.pt", "inputshape=" + arg(shape),
                            "inputshape2=" + arg(shape2), "fp16=0"],
                           cwd=td, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{name}: pnnx failed: {r.stderr[-2000:]}")
        committed = os.path.join(shared, "models", name, "model.pnnx.bin")
        if not filecmp.cmp(os.path.join(td, "model.pnnx.bin"), committed, shallow=False):
            sys.exit(f"{name}: pnnx wrote other weights than {committed}")
        os.makedirs(os.path.join(HERE, "dynamic"), exist_ok=True)
        out = os.path.join(HERE, "dynamic", name + ".pnnx.param")
        shutil.copyfile(os.path.join(td, "model.pnnx.param"), out)
        print(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(HERE, "..", "..", "..", "shared"))
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.shared, "bench"))
    for name, shapes in list_lines("pairs.txt"):
        write_pair(name, rebuild(name, args.shared), shapes)
    for name, shapes in list_lines("dynamic.txt"):
        model = rebuild(name, args.shared)
        convert_dynamic(name, model, shapes[0], shapes[1], args.shared)
        for s in shapes[2:]:
            write_pair(name, model, [s])


if __name__ == "__main__":
    main()
