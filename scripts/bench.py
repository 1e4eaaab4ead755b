#!/usr/bin/python3
"""Times kc against PyTorch (jit) on the reference models, in the same run.

  scripts/bench.sh [--rounds 3] [--iters 30] [--models resnet18,...] [--threads 1,2]
                   [--baseline OTHER_BUILD_DIR] [--no-torch]

For every (model, threads) pair and every round, kc-run -O --bench and
../shared/bench/torch_bench.py --mode jit run back to back (interleaved, so
drift in machine load hits both); the reported figure is the median over
rounds of each tool's median latency. Writes docs/benchmarks.md.

With --baseline, the kc-run of another build (an older commit built beside
this one, e.g. `git worktree add ../base main` and its own scripts/build.sh)
runs in the same rounds too, and a table compares the two builds.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--iters", type=int, default=30)
ap.add_argument("--models", default="resnet18,mobilenet_v2,yolo_small,unet_small,tiny_transformer")
ap.add_argument("--threads", default="1,2")
ap.add_argument("--build", default=os.environ.get("KC_BUILD_DIR", os.path.join(root, "build")))
ap.add_argument("--models-dir", default=os.environ.get("KC_MODELS_DIR",
                                                       os.path.join(root, "..", "shared", "models")))
ap.add_argument("--torch-bench", default=os.path.join(root, "..", "shared", "bench", "torch_bench.py"))
ap.add_argument("--out", default=os.path.join(root, "docs", "benchmarks.md"))
ap.add_argument("--baseline", help="another build directory whose kc-run runs in the same rounds")
ap.add_argument("--no-torch", action="store_true", help="skip PyTorch (compare builds only)")
args = ap.parse_args()


def model_gflop(param):
    """GFLOP of one run of the model after -O, counted by kc's cost rules (kc-opt --summary)."""
    out = subprocess.run([os.path.join(args.build, "bin", "kc-opt"), param, "-O", "--summary"],
                         check=True, capture_output=True, text=True).stdout
    return int(re.search(r"^FLOPs per run: (\d+)", out, re.M).group(1)) / 1e9


def run_kc(model, threads, build=None):
    cmd = [os.path.join(build or args.build, "bin", "kc-run"), "-O", "-q", "--threads", str(threads),
           "--bench", str(args.iters), "--warmup", "3",
           os.path.join(args.models_dir, model, "model.pnnx.param")]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"latency_ms min=([\d.]+) median=([\d.]+) max=([\d.]+)", out)
    lc = re.search(r"load\+compile_ms=([\d.]+) peak_rss_mb=([\d.]+)", out)
    return float(m.group(2)), float(lc.group(1)), float(lc.group(2))


def run_torch(model, threads):
    cmd = ["/usr/bin/python3", args.torch_bench, model, "--threads", str(threads), "--mode", "jit",
           "--iters", str(args.iters), "--models-dir", args.models_dir]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    line = [l for l in out.splitlines() if l.startswith("{")][-1]
    return float(json.loads(line)["median_ms"])


def gemm_peak():
    """sgemm GFLOP/s per thread count, and the OpenBLAS kernels measured."""
    out = subprocess.run([os.path.join(args.build, "bin", "kc-gemm-peak")], check=True,
                         capture_output=True, text=True).stdout
    core = re.search(r"openblas_core=(\S+)", out)
    return ({int(m.group(1)): float(m.group(2))
             for m in re.finditer(r"threads=(\d+) n=\d+ gflops=([\d.]+)", out)},
            core.group(1) if core else "unknown")


def kernel_isa():
    """The instruction set of kc's GEMM kernels, as kc-run names it."""
    out = subprocess.run([os.path.join(args.build, "bin", "kc-run"),
                          os.path.join(args.models_dir, "tiny_transformer", "model.pnnx.param")],
                         check=True, capture_output=True, text=True).stdout
    isa = re.search(r"ms, (\w+) kernels\)", out)
    return isa.group(1) if isa else "unknown"


def machine():
    """One line naming the CPU: figures differ across machine types."""
    info = {}
    try:
        for line in open("/proc/cpuinfo"):
            key, _, value = line.partition(":")
            info.setdefault(key.strip(), value.strip())
    except OSError:
        return "unknown CPU"
    flags = info.get("flags", "").split()
    isa = "AVX-512" if "avx512f" in flags else "AVX2 + FMA, no AVX-512" if "avx2" in flags else "no AVX2"
    return (f"{info.get('model name', 'unknown CPU')} (family {info.get('cpu family', '?')}, "
            f"model {info.get('model', '?')}), {os.cpu_count()} cores, {isa}")


models = args.models.split(",")
threads = [int(t) for t in args.threads.split(",")]
peak, blas_core = gemm_peak()
isa = kernel_isa()
results = {}
for r in range(args.rounds):
    for model in models:
        for t in threads:
            # The two builds take turns at going first.
            base = float("nan")
            if args.baseline and r % 2:
                base = run_kc(model, t, args.baseline)[0]
            kc, lc, rss = run_kc(model, t)
            if args.baseline and not r % 2:
                base = run_kc(model, t, args.baseline)[0]
            th = float("nan") if args.no_torch else run_torch(model, t)
            e = results.setdefault((model, t), {"kc": [], "torch": [], "lc": [], "rss": [],
                                                "base": []})
            e["kc"].append(kc)
            e["base"].append(base)
            e["torch"].append(th)
            e["lc"].append(lc)
            e["rss"].append(rss)
            print(f"round {r + 1}: {model} threads={t}: kc {kc:.3f} ms, baseline {base:.3f} ms, "
                  f"torch {th:.3f} ms", file=sys.stderr, flush=True)

lines = [
    "# Benchmarks",
    "",
    "kc (`kc-run -O`) against PyTorch 1.13 (`torch.jit` trace + freeze + optimize_for_inference,",
    "Debian's `python3-torch`) on the same machine in the same run, batch 1. Each figure is the",
    f"median over {args.rounds} interleaved rounds of each tool's median over {args.iters} timed runs.",
    "Ratio = kc / PyTorch (below 1: kc is faster). GFLOP counts every op of the model after",
    "`-O` by kc's cost rules (`kc-opt -O --summary`; docs/ops.md); the peak is OpenBLAS sgemm",
    f"(1024³) measured by `kc-gemm-peak` in the same run: {peak.get(1, 0):.0f} GFLOP/s on 1 thread,",
    f"{peak.get(2, 0):.0f} on 2 (OpenBLAS's {blas_core} kernels).",
    "",
    f"Machine: {machine()}. kc's GEMM kernels: {isa}.",
    "",
    "Made by `" + " ".join(["bash scripts/bench.sh"] + sys.argv[1:]) + "`.",
    "",
    "| model | threads | kc ms | PyTorch ms | ratio | GFLOP | kc GFLOP/s | share of peak | load+compile ms | peak RSS MB |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
]
for model in models:
    gf = model_gflop(os.path.join(args.models_dir, model, "model.pnnx.param"))
    for t in threads:
        e = results[(model, t)]
        kc, th = statistics.median(e["kc"]), statistics.median(e["torch"])
        rate = gf / (kc / 1000.0) if kc > 0 else 0
        share = rate / peak[t] * 100 if t in peak and peak[t] > 0 else 0
        lines.append(f"| {model} | {t} | {kc:.3f} | {th:.3f} | {kc / th:.2f} | {gf:.3f} | {rate:.1f} | "
                     f"{share:.0f}% | {statistics.median(e['lc']):.1f} | {statistics.median(e['rss']):.1f} |")
lines += [
    "",
    "The host's speed drifts (a tool's per-round medians can differ by 40 %), so the table",
    "below gives each tool's spread over the rounds and its best round, the figure nearest",
    "to a quiet machine; the ratio above, of medians, is the figure of record.",
    "",
    "| model | threads | kc ms, best–worst round | PyTorch ms, best–worst round | best-round ratio |",
    "|---|---:|---:|---:|---:|",
]
for model in models:
    for t in threads:
        e = results[(model, t)]
        kb, tb = min(e["kc"]), min(e["torch"])
        lines.append(f"| {model} | {t} | {kb:.3f}–{max(e['kc']):.3f} | {tb:.3f}–{max(e['torch']):.3f} | "
                     f"{kb / tb:.2f} |")
if args.baseline:
    lines += [
        "",
        f"This build against the baseline `{args.baseline}`, its kc-run in the same rounds:",
        "ratio of the medians over rounds, and of the best rounds (below 1: this build is faster).",
        "",
        "| model | threads | kc ms | baseline ms | ratio | best-round ratio |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for model in models:
        for t in threads:
            e = results[(model, t)]
            kc, base = statistics.median(e["kc"]), statistics.median(e["base"])
            lines.append(f"| {model} | {t} | {kc:.3f} | {base:.3f} | {kc / base:.3f} | "
                         f"{min(e['kc']) / min(e['base']):.3f} |")
open(args.out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
