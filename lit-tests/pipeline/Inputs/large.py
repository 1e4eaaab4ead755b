"""Writes a large .pnnx.param to stdout (lit-tests/pipeline/linear.test).

  large.py chain N EXPR   N chained pnnx.Expression ops, each EXPR of @0
  large.py cat N          torch.cat of N inputs of shape (1,2)
"""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
lines = ["7767517"]
if kind == "chain":
    lines.append(f"{n + 2} {n + 1}")
    lines.append("pnnx.Input in 0 1 v0 #v0=(2)f32")
    for i in range(n):
        lines.append(f"pnnx.Expression e{i} 1 1 v{i} v{i + 1} expr={sys.argv[3]} #v{i + 1}=(2)f32")
    lines.append(f"pnnx.Output out 1 0 v{n}")
elif kind == "cat":
    lines.append(f"{n + 2} {n + 1}")
    for i in range(n):
        lines.append(f"pnnx.Input in{i} 0 1 x{i} #x{i}=(1,2)f32")
    names = " ".join(f"x{i}" for i in range(n))
    lines.append(f"torch.cat cat {n} 1 {names} y dim=0 #y=({n},2)f32")
    lines.append("pnnx.Output out 1 0 y")
else:
    sys.exit(f"unknown kind {kind}")
print("\n".join(lines))
