#!/usr/bin/env python3
"""Prints the README table of scripts/bench-hopper.sh's results (tilec-gpu-runner bench --json lines).

Usage: python3 scripts/bench_hopper_table.py RESULTS.jsonl [MORE.jsonl ...]

One row per kernel and shape, kernels in the order first seen, shapes in the order first seen: kernel (file,
backend, target, --param settings, the narrower-copy variant where the shape needs one), M×N×K, types, tilec's TF/s,
cuBLAS's TF/s in the same process, the ratio, and the check against cuBLAS. Several runs of one kernel and
shape (several files) are shown as a range, min–max. Standard library only.
"""
import os
import sys

from bench_jsonl import read_rows


def kernel(r):
    """`gemm_hopper.tir (llvm, sm_90a)` from the label `examples/gemm_hopper.tir (llvm, sm_90a)`; settings
    and the alignment variant stay: `gemm_256x128.tir (llvm, sm_90a, BK=64, narrow copies)`."""
    label = r.get("label") or r["kernel"]
    path, _, rest = label.partition(" (")
    parts = [p.strip() for p in rest.rstrip(")").split(", ")] if rest else []
    # parts: backend, target, then NAME=V settings and `global_alignment = [...]` (which holds commas).
    backend = parts[:2]
    tail = ", ".join(parts[2:])
    settings, _, variant = tail.partition("global_alignment")
    settings = [s for s in settings.rstrip(", ").split(", ") if s]
    shown = backend + settings + (["narrow copies"] if variant else [])
    return os.path.basename(path) + f" ({', '.join(shown)})"


def span(values, spec):
    values = [v for v in values if v is not None]
    if not values:
        return "—"
    lo, hi = min(values), max(values)
    return format(lo, spec) if format(lo, spec) == format(hi, spec) else f"{format(lo, spec)}–{format(hi, spec)}"


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 1
    rows = read_rows(paths)
    if rows is None:
        return 1
    groups = {}
    kernels, shapes = [], []
    for r in rows:
        k, s = kernel(r), f"{r['m']}×{r['n']}×{r['k']}"
        if k not in kernels:
            kernels.append(k)
        if s not in shapes:
            shapes.append(s)
        groups.setdefault((k, s), []).append(r)
    gpus = sorted({r.get("gpu", "?") for r in rows})
    print(f"GPU: {', '.join(gpus)}\n")
    print("| kernel | M×N×K | types | TF/s | cuBLAS TF/s | ratio | check |")
    print("|---|---|---|---|---|---|---|")
    for k in kernels:
        for s in shapes:
            g = groups.get((k, s))
            if not g:
                continue
            r = g[0]
            checks = sorted({x["check"] for x in g})
            print(
                f"| {k} | {s} | {r['a']}·{r['b']}→{r['c']} | {span([x.get('tilec_tflops') for x in g], '.0f')} | "
                f"{span([x.get('cublas_tflops') for x in g], '.0f')} | {span([x.get('ratio') for x in g], '.2f')} | {', '.join(checks)} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
