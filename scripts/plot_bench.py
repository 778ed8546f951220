#!/usr/bin/env python3
"""Plots throughput against problem size for tilec and cuBLAS from `tilec bench` results (their --json lines).

Usage: python3 scripts/plot_bench.py RESULTS.jsonl OUT.png [--only NAME[,NAME...]]

--only keeps the kernels whose file name is one of NAMEs (e.g. gemm_256x128.tir,gemm.tir): a plot of
every variant is hard to read.

One pair of lines (tilec solid, cuBLAS dashed) per kernel (file and backend) and element types (f16·f16→f32, ...),
x = the problem size as 2·M·N·K operations (log scale, each point labelled M×N×K), y = TF/s (TOP/s for integer
GEMMs). When the file holds several runs of a kernel at one shape, the last one is drawn.

Needs matplotlib. It is looked for in the project-local `.tools/py` first (never installed globally):
    python3 -m pip install --target .tools/py matplotlib
"""
import os
import sys

from bench_jsonl import read_rows

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".tools", "py"))


def kernel(r):
    """`gemm.tir/llvm` from the label `examples/gemm.tir (llvm, sm_90)`."""
    label = r.get("label") or r["kernel"]
    path, _, rest = label.partition(" (")
    backend = rest.split(",")[0] if rest else ""
    return os.path.basename(path) + (f"/{backend}" if backend else "")


def load(path):
    rows = read_rows([path])
    if rows is None:
        return None
    latest = {}
    for r in rows:
        key = (r.get("label"), r["a"], r["b"], r["c"], r["m"], r["n"], r["k"])
        latest[key] = r
    return list(latest.values())


def main(argv):
    only = None
    if len(argv) == 4 and argv[2] == "--only":
        only = set(argv[3].split(","))
        argv = argv[:2]
    if len(argv) != 2:
        print("usage: python3 scripts/plot_bench.py RESULTS.jsonl OUT.png [--only NAME[,NAME...]]", file=sys.stderr)
        return 1
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_bench.py: matplotlib is missing; install it into the project: "
              "python3 -m pip install --target .tools/py matplotlib", file=sys.stderr)
        return 2
    rows = load(argv[0])
    if rows is None:
        return 1
    if only is not None:
        rows = [r for r in rows if kernel(r).split("/")[0] in only]
    if not rows:
        print(f"{argv[0]}: no results", file=sys.stderr)
        return 1
    groups = {}
    for r in rows:
        layouts = [k.upper() for k in "abc" if r.get(f"{k}_layout") == "col_major"]
        name = f"{kernel(r)} {r['a']}·{r['b']}→{r['c']}" + (f" ({','.join(layouts)} col-major)" if layouts else "")
        groups.setdefault(name, []).append(r)
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    labelled = set()
    for i, (name, rs) in enumerate(sorted(groups.items())):
        rs.sort(key=lambda r: 2.0 * r["m"] * r["n"] * r["k"])
        x = [2.0 * r["m"] * r["n"] * r["k"] for r in rs]
        unit = rs[0].get("unit", "TF/s")
        color = colors[i % len(colors)]
        ax.plot(x, [r["tilec_tflops"] for r in rs], "o-", color=color, label=f"tilec {name}")
        cub = [(xx, r["cublas_tflops"]) for xx, r in zip(x, rs) if r.get("cublas_tflops") is not None]
        if cub:
            ax.plot([c[0] for c in cub], [c[1] for c in cub], "s--", color=color, alpha=0.7, label=f"cuBLAS {name}")
        for xx, r in zip(x, rs):
            # One label per size: several kernels at one size would print over each other.
            if xx in labelled:
                continue
            labelled.add(xx)
            ax.annotate(f"{r['m']}×{r['n']}×{r['k']}", (xx, r["tilec_tflops"]), textcoords="offset points",
                        xytext=(0, -12), ha="center", fontsize=7)
    units = sorted({r.get("unit", "TF/s") for r in rows})
    ax.set_xscale("log")
    ax.set_xlabel("problem size, 2·M·N·K operations")
    ax.set_ylabel(" or ".join(units))
    gpus = sorted({r.get("gpu", "?") for r in rows})
    ax.set_title(f"GEMM throughput, tilec vs cuBLAS ({', '.join(gpus)})")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(argv[1])
    print(f"{argv[1]}: {len(rows)} result(s), {len(groups)} kernel(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
