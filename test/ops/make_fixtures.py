#!/usr/bin/python3
"""Writes the op fixtures of test/ops/fixtures.

For every case of cases.py: seed, build a tiny PyTorch module, give the
parameters and buffers that start constant (norm affines, running
statistics, zero biases) random values, make seeded inputs, trace it, convert
it with the real pnnx, and write into fixtures/<case>/

    model.pnnx.param  model.pnnx.bin   what pnnx wrote (fp16=0)
    in0.npy ...                         the inputs
    out0.npy ...                        the ORIGINAL module's outputs

The script checks that pnnx wrote every op type the case names (pnnx
rewrites some modules into other ops: the fixture must test what kc will be
given) and that the converted graph declares the outputs PyTorch returned.

A `half` case is an f16 model (see `halve`): its files are pnnx's with every
f32 in f16, its reference PyTorch's f32 computation on the f16 values,
rounded to f16.
Run it with Debian's Python (torch 1.13, torchvision):

    PNNX=../shared/tools/pnnx/pnnx /usr/bin/python3 test/ops/make_fixtures.py [--only REGEX]

It is deterministic: one thread, a seed per case from its name; running it
again rewrites the same bytes. kc's build and tests never run it.
"""

import argparse
import copy
import warnings
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cases  # noqa: E402

FIXTURES = os.path.join(HERE, "fixtures")


def case_seed(name):
    return zlib.crc32(name.encode()) % (2**31)


def flatten(out):
    if isinstance(out, torch.Tensor):
        return [out]
    r = []
    for o in out:
        r.extend(flatten(o))
    return r


def shape_arg(t):
    dt = {torch.float32: "f32", torch.int64: "i64", torch.bool: "bool"}[t.dtype]
    if dt == "bool":
        raise ValueError("pnnx takes no bool inputs")
    return "[" + ",".join(str(d) for d in t.shape) + "]" + dt


def param_ops(text):
    """(op type, inputs, outputs, annotations, expr) of each line of a .pnnx.param."""
    ops = []
    for line in text.splitlines()[2:]:
        f = line.split()
        if len(f) < 4:
            continue
        nin, nout = int(f[2]), int(f[3])
        ins, outs = f[4:4 + nin], f[4 + nin:4 + nin + nout]
        ann = {}
        for tok in f[4 + nin + nout:]:
            m = re.match(r"#(\S+?)=\((.*)\)(\w+)$", tok)
            if m:
                ann[m.group(1)] = (m.group(2), m.group(3))
        expr = next((t[5:] for t in f[4 + nin + nout:] if t.startswith("expr=")), "")
        ops.append((f[0], ins, outs, ann, expr))
    return ops


def list_items(expr):
    """The top-level items of a list expression `[a,f(b,c),...]`."""
    items, depth, cur = [], 0, ""
    for ch in expr[1:-1]:
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        cur += ch
    return items + [cur] if cur else items


def declared_outputs(ops):
    """The annotated (shape, dtype) of each model output, tuples flattened."""
    made, ann = {}, {}
    for op in ops:
        ann.update(op[3])
        for o in op[2]:
            made[o] = op
    res = []

    def add(operand):
        producer = made.get(operand)
        if producer and producer[0] == "prim::TupleConstruct":
            for i in producer[1]:
                add(i)
        elif producer and producer[0] == "pnnx.Expression" and producer[4].startswith("["):
            # a list of results: its items carry no annotation
            res.extend(["list item"] * len(list_items(producer[4])))
        else:
            res.append(ann.get(operand))

    for op in ops:
        if op[0] == "pnnx.Output":
            for i in op[1]:
                add(i)
    return res


def torch_decl(t):
    dt = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64", torch.int32: "i32",
          torch.bool: "bool"}.get(t.dtype, str(t.dtype))
    return (",".join(str(d) for d in t.shape), dt)


def make(case, pnnx, workdir):
    seed = case_seed(case.name)
    torch.manual_seed(seed)
    module = case.build().eval()
    cases.randomize(module, seed)
    torch.manual_seed(seed + 1)
    inputs = [spec() for spec in case.inputs]
    with torch.no_grad():
        outputs = flatten(module(*inputs))
        traced = torch.jit.trace(module, tuple(inputs), check_trace=False)
    pt = os.path.join(workdir, "m.pt")
    traced.save(pt)
    shapes = ",".join(shape_arg(t) for t in inputs)
    cmd = [pnnx, pt, "inputshape=" + shapes, "fp16=0"]
    if case.shape2:  # a second input shape: pnnx writes '?' for the dims that differ
        cmd.append("inputshape2=" + ",".join(
            shape_arg(torch.zeros(s, dtype=t.dtype)) for s, t in zip(case.shape2, inputs)))
    if case.torchvision:  # pnnx loads torchvision's operators to read the trace
        import glob
        import torchvision
        cmd.append("customop=" + glob.glob(os.path.join(os.path.dirname(torchvision.__file__),
                                                        "_C.*.so"))[0])
    r = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    param = os.path.join(workdir, "m.pnnx.param")
    if r.returncode != 0 or not os.path.exists(param):
        raise RuntimeError("pnnx failed:\n" + r.stdout[-2000:] + r.stderr[-2000:])
    text = open(param).read()
    ops = param_ops(text)
    types = sorted({op[0] for op in ops} - {"pnnx.Input", "pnnx.Output", "prim::TupleConstruct"})
    missing = [t for t in case.expect if t not in types]
    if missing:
        raise RuntimeError("pnnx wrote %s, not %s" % (", ".join(types), ", ".join(missing)))
    if sum(op[0] == "pnnx.Input" for op in ops) != len(inputs):
        raise RuntimeError("pnnx kept %d of the %d inputs (an unused one is dropped)" %
                           (sum(op[0] == "pnnx.Input" for op in ops), len(inputs)))
    decl = declared_outputs(ops)
    got = [torch_decl(t) for t in outputs]
    # pnnx leaves 0-d results and the items of a list expression without an annotation
    decl = [g if (d is None and g[0] == "") or d == "list item" else d
            for d, g in zip(decl, got)] + decl[len(got):]
    if case.shape2:  # '?' dims match any size
        decl = [(",".join(g if a == "?" else a for a, g in zip(d[0].split(","), t[0].split(","))),
                 d[1]) if d and len(d[0].split(",")) == len(t[0].split(",")) else d
                for d, t in zip(decl, got)]
    if decl != got:
        raise RuntimeError("the graph declares outputs %s, PyTorch returned %s" % (decl, got))

    if case.half:
        text, inputs, outputs = halve(module, text, os.path.join(workdir, "m.pnnx.bin"), inputs)
        with open(param, "w") as f:
            f.write(text)
    out = os.path.join(FIXTURES, case.name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    shutil.copy(param, os.path.join(out, "model.pnnx.param"))
    shutil.copy(os.path.join(workdir, "m.pnnx.bin"), os.path.join(out, "model.pnnx.bin"))
    for i, t in enumerate(inputs):
        np.save(os.path.join(out, "in%d.npy" % i), t.numpy())
    for i, t in enumerate(outputs):
        np.save(os.path.join(out, "out%d.npy" % i), t.detach().contiguous().numpy())
    return types


def halve(module, text, bin_path, inputs):
    """The f16 form of a converted model: what pnnx writes for `module.half()`
    (annotations f16, weights f16 in the archive), the inputs rounded to f16,
    and the reference: the module with its parameters and buffers rounded to
    f16, run in f32 on the rounded inputs, its outputs rounded to f16. Every
    weight pnnx wrote must be one of the module's tensors, so that rounding
    the archive rounds the same values."""
    import zipfile
    own = {bytes(t.detach().contiguous().numpy().tobytes())
           for t in list(module.parameters()) + list(module.buffers())}
    with zipfile.ZipFile(bin_path) as z:
        entries = [(i.filename, z.read(i)) for i in z.infolist()]
    with zipfile.ZipFile(bin_path, "w", zipfile.ZIP_STORED) as z:
        for name, data in entries:
            if data not in own:
                raise RuntimeError("weight %s is not one of the module's tensors" % name)
            z.writestr(name, np.frombuffer(data, np.float32).astype(np.float16).tobytes())
    half = copy.deepcopy(module)
    with torch.no_grad():
        for t in list(half.parameters()) + list(half.buffers()):
            if t.is_floating_point():
                t.copy_(t.half().float())
        rounded = [x.half().float() if x.is_floating_point() else x for x in inputs]
        outputs = [o.half() for o in flatten(half(*rounded))]
    inputs = [x.half() if x.is_floating_point() else x for x in inputs]
    return re.sub(r"\)f32\b", ")f16", text), inputs, outputs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pnnx", default=os.environ.get("PNNX", os.path.join(
        HERE, "..", "..", "..", "shared", "tools", "pnnx", "pnnx")))
    ap.add_argument("--only", help="regular expression over case names")
    ap.add_argument("--keep-going", action="store_true", help="report failing cases, go on")
    args = ap.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    selected = [c for c in cases.CASES if not args.only or re.search(args.only, c.name)]
    names = [c.name for c in cases.CASES]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        sys.exit("duplicate case names: " + ", ".join(sorted(dupes)))
    if not args.only:  # a full run leaves no folder of a deleted case behind
        for d in os.listdir(FIXTURES) if os.path.isdir(FIXTURES) else []:
            if d not in names:
                shutil.rmtree(os.path.join(FIXTURES, d))
    failed = 0
    for c in selected:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                types = make(c, os.path.abspath(args.pnnx), tmp)
                print("%-40s %s" % (c.name, " ".join(types)))
            except Exception as e:  # noqa: BLE001
                failed += 1
                print("%-40s FAILED: %s" % (c.name, e))
                if not args.keep_going:
                    sys.exit(1)
    print("%d cases, %d failed" % (len(selected), failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
