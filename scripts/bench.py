#!/usr/bin/python3
"""Times kc against PyTorch (jit) and ncnn on the reference models and the zoo, in the same run.

  scripts/bench.sh [--rounds 3] [--iters 30] [--warmup 3] [--models reference,zoo,ops] [--threads 1,2]

--models takes model names and three words: `reference`, the five reference models of
../shared/models ($KC_MODELS_DIR), `zoo`, every model of the zoo ($KC_ZOO_DIR, default
../shared-zoo, made by scripts/zoo.py make), and `ops`, one model per operator family
($KC_ZOO_DIR/ops, scripts/zoo.py make --set ops; scripts/op_models.py); the default is all three. For every
(model, threads) pair and every round, kc-run -O --bench, ncnn_bench (fp32, same threads) and
../shared/bench/torch_bench.py --mode jit run back to back (interleaved, so drift in machine
load hits all three); the reported figure is the median over rounds of each tool's median
latency. ncnn is the second peer when its driver (../shared/tools/ncnn/ncnn_bench or
$KC_NCNN_BENCH) and the model's ncnn files (<zoo>/ncnn/<model>/, from the same pnnx conversion:
scripts/zoo.py make, and scripts/zoo.py reference-ncnn for the reference models) are there; the
run says which are missing. Writes docs/benchmarks.md.

With --baseline OTHER_BUILD_DIR, the kc-run of another build (an older commit built beside
this one, e.g. `git worktree add ../base main` and its own scripts/build.sh) runs in the same
rounds too, and a table compares the two builds; --no-torch leaves PyTorch out.
"""
import argparse
import functools
import json
import os
import re
import shlex
import statistics
import subprocess
import sys


root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
shared = os.path.join(root, "..", "shared")
ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--iters", type=int, default=30)
ap.add_argument("--warmup", type=int, default=3, help="untimed runs before each tool's timed ones")
ap.add_argument("--models", default="reference,zoo,ops",
                help="comma-separated names; 'reference', 'zoo' and 'ops' stand for those sets")
ap.add_argument("--threads", default="1,2")
ap.add_argument("--build", default=os.environ.get("KC_BUILD_DIR", os.path.join(root, "build")))
ap.add_argument("--models-dir", default=os.environ.get("KC_MODELS_DIR", os.path.join(shared, "models")))
ap.add_argument("--zoo-dir", default=os.path.normpath(os.environ.get("KC_ZOO_DIR") or
                                                      os.path.join(root, "..", "shared-zoo")))
ap.add_argument("--torch-bench", default=os.path.join(shared, "bench", "torch_bench.py"))
ap.add_argument("--ncnn-bench", default=os.environ.get("KC_NCNN_BENCH",
                                                       os.path.join(shared, "tools", "ncnn", "ncnn_bench")))
ap.add_argument("--out", default=os.path.join(root, "docs", "benchmarks.md"))
ap.add_argument("--note", default="", help="a sentence on the conditions of the run, for the page")
ap.add_argument("--baseline", help="another build directory whose kc-run runs in the same rounds")
ap.add_argument("--no-torch", action="store_true", help="skip PyTorch (compare builds only)")
args = ap.parse_args()

REFERENCE = ["resnet18", "mobilenet_v2", "yolo_small", "unet_small", "tiny_transformer"]


# The sets made by scripts/zoo.py: torchvision models, and one model per operator family.
SETS = {"zoo": args.zoo_dir, "ops": os.path.join(args.zoo_dir, "ops")}


def set_models(word):
    d = SETS[word]
    if not os.path.isdir(d):
        return []
    return sorted(n for n in os.listdir(d) if os.path.isfile(os.path.join(d, n, "model.pnnx.param")))


def set_dir(model):
    """The folder of the set that holds `model`, or None for a reference model."""
    for d in SETS.values():
        if os.path.isfile(os.path.join(d, model, "model.pnnx.param")):
            return d
    return None


def data_dir(model):
    """The folder with the model's .pnnx files, in*.npy and out*.npy."""
    return os.path.join(set_dir(model) or args.models_dir, model)


def in_zoo(model):
    return set_dir(model) is not None


@functools.lru_cache(maxsize=None)
def model_gflop(model):
    """GFLOP of one run of the model after -O, counted by kc's cost rules (kc-opt --summary)."""
    out = subprocess.run([os.path.join(args.build, "bin", "kc-opt"),
                          os.path.join(data_dir(model), "model.pnnx.param"), "-O", "--summary"],
                         check=True, capture_output=True, text=True).stdout
    return int(re.search(r"^FLOPs per run: (\d+)", out, re.M).group(1)) / 1e9


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:200] if lines else "no output"


def run_kc(model, threads, build=None):
    """(median ms, load+compile ms, peak RSS MB), or the error."""
    cmd = [os.path.join(build or args.build, "bin", "kc-run"), "-O", "-q", "--threads", str(threads),
           "--bench", str(args.iters), "--warmup", str(args.warmup),
           os.path.join(data_dir(model), "model.pnnx.param")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, last_line(r.stderr or r.stdout)
    m = re.search(r"latency_ms min=([\d.]+) median=([\d.]+) max=([\d.]+)", r.stdout)
    lc = re.search(r"load\+compile_ms=([\d.]+) peak_rss_mb=([\d.]+)", r.stdout)
    return (float(m.group(2)), float(lc.group(1)), float(lc.group(2))), None


def run_torch(model, threads):
    """(median ms, max abs error against out*.npy), or the error."""
    common = ["--threads", str(threads), "--mode", "jit", "--iters", str(args.iters), "--warmup", str(args.warmup)]
    if in_zoo(model):
        cmd = ["/usr/bin/python3", os.path.join(root, "scripts", "zoo.py"), "torch-bench", model] + common + [
            "--models-dir", set_dir(model)]
    else:
        cmd = ["/usr/bin/python3", args.torch_bench, model] + common + ["--models-dir", args.models_dir]
    r = subprocess.run(cmd, capture_output=True, text=True)
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if r.returncode != 0 or not lines:
        return None, last_line(r.stderr or r.stdout)
    j = json.loads(lines[-1])
    return (float(j["median_ms"]), float(j["max_abs_err"])), None


def ncnn_dir(model):
    return os.path.join(set_dir(model) or args.zoo_dir, "ncnn", model)


def run_ncnn(model, threads):
    """(median ms, max abs error against out*.npy), or the error."""
    cmd = [args.ncnn_bench, ncnn_dir(model), data_dir(model), str(threads), str(args.warmup), str(args.iters), "1"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    j = json.loads(lines[-1]) if lines else {}
    if r.returncode != 0 or "median_ms" not in j:
        return None, j.get("error") or last_line(r.stderr or r.stdout)
    return (float(j["median_ms"]), float(j["max_abs_err"])), None


def output_scale(model):
    """Largest |value| of PyTorch's outputs (meta.json), for judging a peer's error."""
    try:
        meta = json.load(open(os.path.join(data_dir(model), "meta.json")))
        return max(o["stats"]["max_abs"] for o in meta["outputs"])
    except (OSError, KeyError, ValueError):
        return 1.0


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


def med(values):
    return statistics.median(values) if values else None


def fmt(v, digits=3):
    return f"{v:.{digits}f}" if v is not None else "–"


models = []
for word in args.models.split(","):
    models += REFERENCE if word == "reference" else set_models(word) if word in SETS else [word]
    if word in SETS and not set_models(word):
        print(f"bench: no {word} set in {SETS[word]} (scripts/zoo.py make"
              f"{' --set ops' if word == 'ops' else ''} makes it)", file=sys.stderr)
threads = [int(t) for t in args.threads.split(",")]
have_ncnn = os.access(args.ncnn_bench, os.X_OK)
if not have_ncnn:
    print(f"bench: no ncnn driver at {args.ncnn_bench}: ncnn not measured", file=sys.stderr)
ncnn_models = [m for m in models if have_ncnn and os.path.isfile(os.path.join(ncnn_dir(m), "model.ncnn.param"))]
if have_ncnn and len(ncnn_models) < len(models):
    print("bench: no ncnn files for " + ", ".join(m for m in models if m not in ncnn_models) +
          " (scripts/zoo.py make / reference-ncnn): ncnn not measured there", file=sys.stderr)
peak, blas_core = gemm_peak()
isa = kernel_isa()
results, errors = {}, {}


def ncnn_right(model, e):
    """ncnn's answer within 1e-3 of the largest output value (the README's known faults are not)."""
    return e["ncnn_err"] and max(e["ncnn_err"]) <= 1e-3 * max(output_scale(model), 1.0)


def spread(v):
    return f"{min(v):.3f}–{max(v):.3f}" if v else "–"


def page(rounds):
    """Writes docs/benchmarks.md from the results of the rounds so far; returns its lines."""
    lines = [
        "# Benchmarks",
        "",
        "kc (`kc-run -O`) against PyTorch 1.13 (`torch.jit` trace + freeze + optimize_for_inference,",
        "Debian's `python3-torch`) and ncnn (fp32, the same pnnx conversion, `../shared/tools/ncnn/ncnn_bench`)",
        "on the same machine in the same run, batch 1. Each figure is the",
        f"median over {rounds} interleaved rounds of each tool's median over {args.iters} timed runs",
        f"(after {args.warmup} untimed ones).",
        "Ratios are kc's time over the peer's (below 1: kc is faster). GFLOP counts every op of the model",
        "after `-O` by kc's cost rules (`kc-opt -O --summary`; docs/ops.md); the peak is OpenBLAS sgemm",
        f"(1024³) measured by `kc-gemm-peak` in the same run: {peak.get(1, 0):.0f} GFLOP/s on 1 thread,",
        f"{peak.get(2, 0):.0f} on 2 (OpenBLAS's {blas_core} kernels).",
        "The models below the line are the zoo: torchvision models (`weights=None`) converted by the real",
        "pnnx exactly as the reference models were (`scripts/zoo.py`), and the `op_*` models, one per",
        "operator family kc runs beyond the reference models (`scripts/op_models.py`).",
        "",
        f"Machine: {machine()}. kc's GEMM kernels: {isa}.",
        "",
    ] + ([args.note, ""] if args.note else []) + [
        "Made by `" + shlex.join(["bash", "scripts/bench.sh"] + sys.argv[1:]) + "`.",
        "",
        "| model | threads | kc ms | ncnn ms | PyTorch ms | kc/ncnn | kc/PyTorch | GFLOP | kc GFLOP/s | share of peak | load+compile ms | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes = []
    zoo_started = False
    for model in models:
        gf = model_gflop(model)
        if in_zoo(model) and not zoo_started and model != models[0]:
            lines.append("| | | | | | | | | | | | |")
        zoo_started = zoo_started or in_zoo(model)
        for t in threads:
            e = results[(model, t)]
            kc, th, nc = med(e["kc"]), med(e["torch"]), med(e["ncnn"])
            nc_ok = nc is not None and ncnn_right(model, e)
            if nc is not None and not nc_ok and t == threads[0]:
                notes.append(f"- {model}: ncnn's output differs from PyTorch's by up to {max(e['ncnn_err']):.3g} "
                             f"(largest |value| {output_scale(model):.3g}); its time is given, its ratio is not.")
            rate = gf / (kc / 1000.0) if kc else 0
            share = rate / peak[t] * 100 if kc and peak.get(t) else 0
            lines.append(
                f"| {model} | {t} | {fmt(kc)} | {fmt(nc)} | {fmt(th)} | "
                f"{fmt(kc / nc, 2) if kc and nc_ok else '–'} | {fmt(kc / th, 2) if kc and th else '–'} | "
                f"{gf:.3f} | {fmt(kc and rate, 1)} | {f'{share:.0f}%' if kc else '–'} | {fmt(med(e['lc']), 1)} | "
                f"{fmt(med(e['rss']), 1)} |")
    for (model, tool), err in sorted(errors.items()):
        notes.append(f"- {model}: {tool} did not run: `{err}`")
    for model in models:
        if model not in ncnn_models:
            notes.append(f"- {model}: ncnn not measured (" + ("no driver" if not have_ncnn else
                                                             f"no {ncnn_dir(model)}/model.ncnn.param") + ").")
    if notes:
        lines += ["", "Where a figure is missing:", ""] + notes
    lines += [
        "",
        "The host's speed drifts (a tool's per-round medians can differ by 40 %), so the table",
        "below gives each tool's spread over the rounds and its best round, the figure nearest",
        "to a quiet machine; the ratios above, of medians, are the figures of record.",
        "",
        "| model | threads | kc ms, best–worst round | ncnn ms, best–worst round | PyTorch ms, best–worst round | best-round kc/ncnn | best-round kc/PyTorch |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for model in models:
        for t in threads:
            e = results[(model, t)]
            kb = min(e["kc"]) if e["kc"] else None
            nb = min(e["ncnn"]) if e["ncnn"] and ncnn_right(model, e) else None
            tb = min(e["torch"]) if e["torch"] else None
            lines.append(f"| {model} | {t} | {spread(e['kc'])} | {spread(e['ncnn'])} | {spread(e['torch'])} | "
                         f"{fmt(kb / nb, 2) if kb and nb else '–'} | {fmt(kb / tb, 2) if kb and tb else '–'} |")
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
                kc, base = med(e["kc"]), med(e["base"])
                ok = kc and base
                lines.append(f"| {model} | {t} | {fmt(kc)} | {fmt(base)} | {fmt(ok and kc / base)} | "
                             f"{fmt(ok and min(e['kc']) / min(e['base']))} |")
    open(args.out, "w").write("\n".join(lines) + "\n")
    return lines


for r in range(args.rounds):
    for model in models:
        for t in threads:
            e = results.setdefault((model, t), {"kc": [], "torch": [], "ncnn": [], "lc": [], "rss": [],
                                                "torch_err": [], "ncnn_err": [], "base": []})
            # With a baseline, the two builds take turns at going first.
            if args.baseline and r % 2:
                base, err = run_kc(model, t, args.baseline)
                e["base"] += [base[0]] if base else []
            kc, err = run_kc(model, t)
            if kc:
                e["kc"].append(kc[0])
                e["lc"].append(kc[1])
                e["rss"].append(kc[2])
            else:
                errors[(model, "kc")] = err
            if args.baseline and not r % 2:
                base, err = run_kc(model, t, args.baseline)
                e["base"] += [base[0]] if base else []
            nc = None
            if model in ncnn_models:
                nc, err = run_ncnn(model, t)
                if nc:
                    e["ncnn"].append(nc[0])
                    e["ncnn_err"].append(nc[1])
                else:
                    errors[(model, "ncnn")] = err
            th, err = (None, "--no-torch") if args.no_torch else run_torch(model, t)
            if th:
                e["torch"].append(th[0])
                e["torch_err"].append(th[1])
            else:
                errors[(model, "PyTorch")] = err
            print(f"round {r + 1}: {model} threads={t}: kc {fmt(kc and kc[0])} ms, ncnn {fmt(nc and nc[0])}"
                  f" ms, torch {fmt(th and th[0])} ms", file=sys.stderr, flush=True)
    # The page after every round, so that a long run stopped early still leaves one.
    text = page(r + 1)
print("\n".join(text))


