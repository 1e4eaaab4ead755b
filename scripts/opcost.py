"""What each op of a model computes and moves: FLOPs, bytes and a kernel class, from kc's IR text.

`kc-opt MODEL [-O]` prints the typed IR (docs/ir.md); read_module() turns its @main into one
record per call (name, op, attributes, operand and result shapes), and the functions below
give each record its arithmetic (2 FLOPs a multiply-add: convolutions, linear layers, matmuls,
attention), its minimum memory traffic (every operand, weight and result read or written once,
in f32) and a class that groups the records kernels treat alike (a 5x5 stride-2 depthwise
convolution, a 1x1 one, an SE gate, ...). Used by bench.py (a model's GFLOP) and opprofile.py
(GFLOP/s and GB/s per op of `kc-run --profile`).
"""
import re
import subprocess

_CALL = re.compile(r'^\s*%(\S+) = (@?[\w.:]+)\((.*?)\)(?: \{(.*)\})? : (.+?)(?: name\("(.*)"\))?$')
_DEF = re.compile(r'^\s*%(\S+) = (.*) : (.+?)(?: name\(".*"\))?$')
_PARAM = re.compile(r'%(\w+): ([a-z0-9]+\[[^\]]*\])')
_SHAPE = re.compile(r'([a-z]+[0-9]*)\[([^\]]*)\]')
_BYTES = {"f32": 4, "f16": 2, "f64": 8, "i64": 8, "i32": 4, "i8": 1, "u8": 1, "bool": 1}


def shape_of(type_text):
    """(dtype, [dims]) of a tensor type like f32[1,3,224,224]; None for tuples or unknowns."""
    m = _SHAPE.fullmatch(type_text.strip())
    if not m:
        return None
    dims = [int(d) if d.isdigit() else -1 for d in m.group(2).split(",") if d]
    return m.group(1), dims


def numel(dims):
    n = 1
    for d in dims:
        n *= max(d, 0)
    return n


def _ints(attrs, key):
    m = re.search(r'\b' + key + r'=\[([^\]]*)\]', attrs)
    if m:
        return [int(x) for x in m.group(1).split(",") if x.strip().lstrip("-").isdigit()]
    m = re.search(r'\b' + key + r'=(-?\d+)\b', attrs)
    return [int(m.group(1))] if m else []


def _int(attrs, key, default=0):
    v = _ints(attrs, key)
    return v[0] if v else default


def read_module(text):
    """Calls of @main in kc IR text, in order, plus each expression function's operations."""
    funcs, current, types, ops = {}, None, {}, []
    for line in text.splitlines():
        if line.startswith("fn @"):
            current = line[4:line.index("(")]
            funcs[current] = []
            if current == "main":
                for name, t in _PARAM.findall(line):
                    types[name] = t
            continue
        if current is None:
            continue
        if current != "main":
            m = re.search(r'program=\[(.*?)\]', line)
            if m:
                funcs[current] += [t.strip('"') for t in m.group(1).split(",") if not t.startswith('"%')]
            else:
                m = _CALL.match(line)
                if m:
                    funcs[current].append(m.group(2))
            continue
        m = _CALL.match(line)
        if m:
            var, op, args, attrs, rtype, name = m.groups()
            types[var] = rtype
            operands = [types[v] for v in re.findall(r'(?<![@\w])%(\w+)', args) if v in types]
            weights = re.findall(r'@[^:(),]+: ([a-z0-9]+\[[^\]]*\])', args)
            ops.append({"var": var, "op": op, "attrs": attrs or "", "name": name or "",
                        "inputs": [shape_of(t) for t in operands], "weights": [shape_of(t) for t in weights],
                        "output": shape_of(rtype)})
            continue
        m = _DEF.match(line)
        if m:
            types[m.group(1)] = m.group(3)
    for rec in ops:
        if rec["op"].startswith("@"):
            rec["expr"] = funcs.get(rec["op"][1:], [])
    return ops


def kc_module(kc_opt, model, optimize=True):
    """read_module() of `kc-opt MODEL [-O]`."""
    cmd = [kc_opt, model] + (["-O"] if optimize else [])
    return read_module(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def flops(rec):
    """Multiply-adds x 2 of the compute-bound ops, else 0."""
    op, a, out = rec["op"], rec["attrs"], rec["output"]
    if out is None:
        return 0
    o = numel(out[1])
    if op in ("nn.Conv2d", "nn.Conv1d", "nn.Conv3d"):
        return 2 * o * _int(a, "in_channels") // max(_int(a, "groups", 1), 1) * numel(_ints(a, "kernel_size"))
    if op in ("nn.ConvTranspose2d", "nn.ConvTranspose1d"):
        i = rec["inputs"][0]
        return 2 * numel(i[1]) * _int(a, "out_channels") // max(_int(a, "groups", 1), 1) * numel(
            _ints(a, "kernel_size")) if i else 0
    if op == "nn.Linear":
        return 2 * o * _int(a, "in_features")
    if op in ("torch.matmul", "torch.bmm", "torch.mm"):
        i = rec["inputs"][0] if rec["inputs"] else None
        return 2 * o * i[1][-1] if i else 0
    if op == "nn.MultiheadAttention":
        e = _int(a, "embed_dim")
        seq = out[1][1] if "batch_first=true" in a else out[1][0]
        return 2 * o * e * 4 + 4 * o * seq
    return 0


def traffic(rec):
    """Bytes every operand, weight and result takes, read or written once."""
    total = 0
    for s in rec["inputs"] + rec["weights"] + [rec["output"]]:
        if s:
            total += numel(s[1]) * _BYTES.get(s[0], 4)
    return total


def _hw(shape):
    return "x".join(str(d) for d in shape[1][2:]) if shape and len(shape[1]) > 2 else "?"


def _on_1x1(shape):
    return shape is not None and len(shape[1]) == 4 and shape[1][2] * shape[1][3] == 1


# The classes that make up squeeze-and-excitation blocks (and a classifier's global pool).
SE_CLASSES = ("global average pool", "1x1 on 1x1 (SE / head)", "activation on 1x1",
              "expr mul by a 1x1 plane")


def kernel_class(rec):
    """A name for the kernel shape family the op belongs to."""
    op, a = rec["op"], rec["attrs"]
    out, ins = rec["output"], [i for i in rec["inputs"] if i]
    if op in ("nn.AdaptiveAvgPool2d", "F.adaptive_avg_pool2d") and _on_1x1(out):
        return SE_CLASSES[0]
    if op.startswith("nn.") and op not in ("nn.Conv2d", "nn.Linear") and _on_1x1(out) and ins and _on_1x1(ins[0]):
        return SE_CLASSES[2]
    if op.startswith("@") and rec.get("expr") == ["mul"] and any(_on_1x1(i) for i in ins) and not _on_1x1(out):
        return SE_CLASSES[3]
    if op in ("nn.Conv2d", "nn.Conv1d"):
        k = "x".join(str(v) for v in _ints(a, "kernel_size"))
        s = max(_ints(a, "stride") or [1])
        d = max(_ints(a, "dilation") or [1])
        g, cin, cout = _int(a, "groups", 1), _int(a, "in_channels"), _int(a, "out_channels")
        tail = (f" s{s}" if s > 1 else "") + (f" d{d}" if d > 1 else "")
        if g > 1 and g == cin:
            return f"depthwise {k}{tail}"
        if g > 1:
            return f"grouped {k}{tail} ({cin // g} ch/group)"
        if _on_1x1(rec["output"]):
            return SE_CLASSES[1] if k in ("1x1", "1") else f"conv {k} on 1x1"
        return f"conv {k}{tail}"
    if op.startswith("@"):
        return "expr " + " ".join(rec.get("expr", [])[:4])
    return op


def describe(rec):
    """Channels and plane of a convolution, else the output shape."""
    a, out = rec["attrs"], rec["output"]
    if rec["op"] in ("nn.Conv2d", "nn.Conv1d") and rec["inputs"] and rec["inputs"][0]:
        g = _int(a, "groups", 1)
        return (f"{_int(a, 'in_channels')}->{_int(a, 'out_channels')}" + (f" g{g}" if g > 1 else "") +
                f" {_hw(rec['inputs'][0])}->{_hw(out)}")
    return "x".join(str(d) for d in out[1]) if out else "?"
