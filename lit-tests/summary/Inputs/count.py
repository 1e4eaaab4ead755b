"""Counts, from a .pnnx.param alone, what kc-opt --summary must report: the
elements of every @weight, and the calls and FLOPs of nn.Conv2d (2 per
multiply-add, 1 per bias element). Written apart from kc's cost rules, as
an independent check of them; prints FileCheck lines."""
import re
import sys

params = 0
conv_flops = 0
convs = 0
for line in open(sys.argv[1]):
    tok = line.split()
    if len(tok) < 4 or tok[0] == "7767517" or not tok[0][0].isalpha():
        continue
    for t in tok:
        m = re.match(r"@[^=]+=\(([\d,]+)\)f32$", t)
        if m:
            n = 1
            for d in m.group(1).split(","):
                n *= int(d)
            params += n
    if tok[0] == "nn.Conv2d":
        convs += 1
        a = dict(t.split("=", 1) for t in tok if "=" in t)
        nin, nout = int(tok[2]), int(tok[3])
        out = [t for t in tok if t.startswith("#" + tok[4 + nin] + "=")][0]
        o = 1
        for d in re.search(r"\(([\d,]+)\)", out).group(1).split(","):
            o *= int(d)
        k = 1
        for d in a["kernel_size"].strip("()").split(","):
            k *= int(d)
        cin_per_group = int(a["in_channels"]) // int(a.get("groups", "1"))
        conv_flops += 2 * o * cin_per_group * k + (o if a.get("bias") == "True" else 0)
print(f"CHECK-DAG: {{{{^}}}} nn.Conv2d {convs} {conv_flops} (")
print(f"CHECK-DAG: {{{{^}}}}parameters: {params} (")
