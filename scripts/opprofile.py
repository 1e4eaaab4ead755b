#!/usr/bin/python3
"""Where kc's time goes, per op and per kernel class, with GFLOP/s and GB/s: `kc-run --profile`
joined with the shapes of `kc-opt -O`.

  scripts/opprofile.py [--models a,b] [--threads 1] [--rounds 3] [--bench 20] [--top 8] [--out F.md]
                      [--zoo-dir DIR]

Models are names in the zoo ($KC_ZOO_DIR, default ../shared-zoo; see zoo.py) or the reference
set ($KC_MODELS_DIR, default ../shared/models), or paths to a .pnnx.param; the default is every
zoo model present. Each round runs `kc-run MODEL -O --profile --bench N --threads T` once per
model (rounds interleave the models); an op's time is the least of its per-round means, the
figure least disturbed by other work on the machine (the per-round means include the first run,
which also packs the weights: 1 run in N+4). GFLOP/s counts the multiply-adds of convolutions,
linear layers, matmuls and attention (opcost.py); GB/s is the least traffic an op can have
(operands, weights and result read or written once) over its time. The peak is OpenBLAS sgemm
measured by kc-gemm-peak in the same run. Where ncnn's driver and the model's ncnn files are
present (see bench.py), each round also times ncnn on the model, so the top of the output sets
kc's time (kc-run's least latency of a round, without profiling) beside ncnn's (least median).

Prints Markdown: the top ops of each model and a table per kernel class across the models.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opcost  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
zoo_dir = os.path.normpath(os.environ.get("KC_ZOO_DIR") or os.path.join(root, "..", "shared-zoo"))
models_dir = os.environ.get("KC_MODELS_DIR") or os.path.join(root, "..", "shared", "models")
ncnn_bench = os.environ.get("KC_NCNN_BENCH", os.path.join(root, "..", "shared", "tools", "ncnn", "ncnn_bench"))


def model_param(name):
    if name.endswith(".param"):
        return name
    for d in (zoo_dir, models_dir):
        p = os.path.join(d, name, "model.pnnx.param")
        if os.path.isfile(p):
            return p
    sys.exit(f"opprofile.py: error: no model '{name}' in {zoo_dir} or {models_dir}")


def zoo_models():
    if not os.path.isdir(zoo_dir):
        return []
    return sorted(n for n in os.listdir(zoo_dir) if os.path.isfile(os.path.join(zoo_dir, n, "model.pnnx.param")))


def ncnn_ms(name, threads, iters):
    """ncnn's median latency on the model, or None where it cannot run it here."""
    param = model_param(name)
    ndir = os.path.join(os.path.dirname(os.path.dirname(param)), "ncnn", os.path.basename(os.path.dirname(param)))
    if not os.access(ncnn_bench, os.X_OK) or not os.path.isfile(os.path.join(ndir, "model.ncnn.param")):
        return None
    r = subprocess.run([ncnn_bench, ndir, os.path.dirname(param), str(threads), "3", str(iters), "1"],
                       capture_output=True, text=True)
    m = re.search(r'"median_ms":([\d.]+)', r.stdout)
    return float(m.group(1)) if r.returncode == 0 and m else None


# op, name and shapes, ms/run, GFLOP/s, GB/s, share.
_ROW = re.compile(r'^(\S+)\s+(.*?)\s+([\d.]+)\s+(\S+)\s+(\S+)\s+([\d.]+)%$')


def profile(build, param, threads, bench):
    """{step name: (op as kc-run names it, ms per run)} of one kc-run --profile."""
    cmd = [os.path.join(build, "bin", "kc-run"), param, "-O", "-q", "--profile", "--threads", str(threads),
           "--bench", str(bench), "--warmup", "3"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr or r.stdout).strip().splitlines()[-1]
    rows, table = {}, False
    lat = re.search(r"latency_ms min=([\d.]+)", r.stdout)
    rows["<latency>"] = ("", float(lat.group(1)) if lat else 0.0)
    for line in r.stdout.splitlines():
        if line.startswith("op ") and "ms/run" in line:
            table = True
            continue
        m = _ROW.match(line.strip()) if table else None
        if m:
            rows[(m.group(2) or m.group(1))] = (m.group(1), float(m.group(3)))
    return rows, None


def gemm_peak(build, threads):
    out = subprocess.run([os.path.join(build, "bin", "kc-gemm-peak")], capture_output=True, text=True).stdout
    m = re.search(r"threads=%d n=\d+ gflops=([\d.]+)" % threads, out)
    return float(m.group(1)) if m else 0.0


def rate(flops, traffic, ms):
    """'GFLOP/s' for ops with arithmetic, else 'GB/s' of their least traffic."""
    if ms <= 0:
        return ""
    return f"{flops / ms / 1e6:.1f} GFLOP/s" if flops else f"{traffic / ms / 1e6:.1f} GB/s"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bench", type=int, default=20)
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--build", default=os.environ.get("KC_BUILD_DIR", os.path.join(root, "build")))
    ap.add_argument("--out", default="")
    ap.add_argument("--zoo-dir", default=None, help="default $KC_ZOO_DIR, else ../shared-zoo")
    args = ap.parse_args()
    global zoo_dir
    zoo_dir = os.path.normpath(args.zoo_dir) if args.zoo_dir else zoo_dir
    names = args.models.split(",") if args.models else zoo_models()
    if not names:
        sys.exit(f"opprofile.py: no zoo in {zoo_dir} (make it with scripts/zoo.py make) and no --models")
    kc_opt = os.path.join(args.build, "bin", "kc-opt")
    graphs = {n: {r["name"]: r for r in opcost.kc_module(kc_opt, model_param(n)) if r["name"]} for n in names}
    best, failed, ncnn = {}, {}, {}
    for r in range(args.rounds):
        for n in names:
            rows, err = profile(args.build, model_param(n), args.threads, args.bench)
            nc = ncnn_ms(n, args.threads, args.bench)
            if nc is not None:
                ncnn[n] = min(nc, ncnn.get(n, nc))
            if rows is None:
                failed[n] = err
                continue
            for step, (op, ms) in rows.items():
                key = (n, step)
                best[key] = (op, min(ms, best.get(key, (op, float("inf")))[1]))
            print(f"round {r + 1}: {n}", file=sys.stderr, flush=True)
    peak = gemm_peak(args.build, args.threads)
    out = [f"kc-run -O --profile, {args.threads} thread(s), least of {args.rounds} rounds' per-op means "
           f"over {args.bench} runs; OpenBLAS sgemm peak {peak:.0f} GFLOP/s (kc-gemm-peak, same run).", ""]
    out += ["| model | kc ms | ncnn ms | kc/ncnn | GFLOP | kc GFLOP/s | top classes (share of kc's op time) | "
            "SE-shaped ops |", "|---|---:|---:|---:|---:|---:|---|---:|"]
    for n in names:
        gf = sum(opcost.flops(rec) for rec in graphs[n].values()) / 1e9
        if n in failed:
            out.append(f"| {n} | – | {ncnn.get(n, 0):.3f} | – | {gf:.3f} | – | does not run | |")
            continue
        kc = best[(n, "<latency>")][1]
        by_class = {}
        for (m, step), (op, ms) in best.items():
            if m == n and step != "<latency>":
                rec = graphs[n].get(step)
                cls = opcost.kernel_class(rec) if rec else op
                by_class[cls] = by_class.get(cls, 0) + ms
        tot = sum(by_class.values()) or 1
        top = ", ".join(f"{c} {100 * v / tot:.0f}%" for c, v in sorted(by_class.items(), key=lambda kv: -kv[1])[:4])
        nc = ncnn.get(n)
        se = sum(v for c, v in by_class.items() if c in opcost.SE_CLASSES)
        out.append(f"| {n} | {kc:.3f} | {f'{nc:.3f}' if nc else '–'} | {f'{kc / nc:.2f}' if nc else '–'} | "
                   f"{gf:.3f} | {gf / kc * 1e3:.1f} | {top} | {100 * se / tot:.0f}% |")
    out.append("")
    classes = {}
    for n in names:
        if n in failed:
            out += [f"### {n}", "", f"does not run: {failed[n]}", ""]
            continue
        steps = [(step, op, ms) for (m, step), (op, ms) in best.items() if m == n and step != "<latency>"]
        total = sum(ms for _, _, ms in steps)
        gf = sum(opcost.flops(rec) for rec in graphs[n].values())
        out += [f"### {n}", "", f"{total:.2f} ms in {len(steps)} steps, {gf / 1e9:.3f} GFLOP, "
                f"{gf / total / 1e6 if total else 0:.1f} GFLOP/s overall", "",
                "| op | class | shape | ms | share | rate |", "|---|---|---|---:|---:|---:|"]
        steps.sort(key=lambda s: -s[2])
        for i, (step, op, ms) in enumerate(steps):
            rec = graphs[n].get(step)
            cls = opcost.kernel_class(rec) if rec else op
            epilogue = "+".join(op.split("+")[1:])
            cls_full = cls + (f" + {epilogue.replace('nn.', '')}" if epilogue else "")
            f, t = (opcost.flops(rec), opcost.traffic(rec)) if rec else (0, 0)
            c = classes.setdefault(cls, {"ms": 0.0, "flops": 0, "traffic": 0, "n": 0, "models": set(), "rates": []})
            c["ms"] += ms
            c["flops"] += f
            c["traffic"] += t
            c["n"] += 1
            c["models"].add(n)
            if ms > 0:
                c["rates"].append((f if f else t) / ms / 1e6)
            if i < args.top:
                out.append(f"| {step} | {cls_full} | {opcost.describe(rec) if rec else ''} | {ms:.3f} | "
                           f"{100 * ms / total:.1f}% | {rate(f, t, ms)} |")
        out.append("")
    grand = sum(c["ms"] for c in classes.values())
    out += ["### Per kernel class, all models", "",
            "| class | ops | models | ms | share | rate (sum over sum) | per-op median |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for cls, c in sorted(classes.items(), key=lambda kv: -kv[1]["ms"]):
        if c["ms"] < 0.002 * grand:
            continue
        unit = "GFLOP/s" if c["flops"] else "GB/s"
        med = statistics.median(c["rates"]) if c["rates"] else 0
        out.append(f"| {cls} | {c['n']} | {len(c['models'])} | {c['ms']:.2f} | {100 * c['ms'] / grand:.1f}% | "
                   f"{rate(c['flops'], c['traffic'], c['ms'])} | {med:.1f} {unit} |")
    text = "\n".join(out) + "\n"
    if args.out:
        open(args.out, "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
