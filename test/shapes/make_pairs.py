#!/usr/bin/env python3
"""Makes the reference pairs of the reference models at other input shapes.

For each line of pairs.txt (`model shape [shape...]`, one shape per input):
rebuilds the model's original PyTorch module with the weights of its
committed .bin (../shared/bench: the seed, the norm statistics), checks that
it reproduces the model's own out*.npy at the shape it was converted at,
then runs it on the inputs of hashedInput (below; test/ShapeTest.cpp makes
the same ones) and writes `<model>-<shape>/out<i>.npy`.

Needs python3-torch, python3-torchvision and numpy; kc's build never runs it.

    python3 test/shapes/make_pairs.py [--shared ../shared]
"""
import argparse
import os
import sys

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(HERE, "..", "..", "..", "shared"))
    args = ap.parse_args()
    bench = os.path.join(args.shared, "bench")
    sys.path.insert(0, bench)
    from models import REGISTRY  # noqa: E402
    from reference import model_seed, randomize_norms  # noqa: E402

    for line in open(os.path.join(HERE, "pairs.txt")):
        line = line.split("#")[0].split()
        if not line:
            continue
        name, shapes = line[0], [tuple(int(d) for d in s.split("x")) for s in line[1:]]
        spec = REGISTRY[name]
        seed = model_seed(name)
        torch.manual_seed(seed)
        model = spec.build()
        randomize_norms(model, spec.input_shapes, seed)
        model.eval()
        mdir = os.path.join(args.shared, "models", name)
        ins = [torch.from_numpy(np.load(os.path.join(mdir, f"in{i}.npy")))
               for i in range(len(spec.input_shapes))]
        with torch.no_grad():
            got = flatten(model(*ins))
        for i, g in enumerate(got):
            ref = np.load(os.path.join(mdir, f"out{i}.npy"))
            err = float(np.max(np.abs(g.numpy() - ref)))
            if err > 1e-4 * max(1.0, float(np.max(np.abs(ref)))):
                sys.exit(f"{name}: the rebuilt module differs from out{i}.npy by {err}")
        xs = [torch.from_numpy(hashed_input(s, k)) for k, s in enumerate(shapes)]
        with torch.no_grad():
            outs = flatten(model(*xs))
        out_dir = os.path.join(HERE, name + "-" + "-".join("x".join(map(str, s)) for s in shapes))
        os.makedirs(out_dir, exist_ok=True)
        for i, o in enumerate(outs):
            np.save(os.path.join(out_dir, f"out{i}.npy"), np.ascontiguousarray(o.float().numpy()))
        print(out_dir, [tuple(o.shape) for o in outs])


if __name__ == "__main__":
    main()
