#!/usr/bin/env python3
"""Prints a Markdown table of `tilec bench` / `tilec-gpu-runner bench` results (their --json lines), for the README.

Usage: python3 scripts/bench_table.py RESULTS.jsonl [MORE.jsonl ...]

One row per line of input, in input order: kernel (file and backend), shape, types, tilec's median time and throughput, cuBLAS's throughput,
the ratio, and the check against cuBLAS. Standard library only.
"""
import os
import sys

from bench_jsonl import read_rows


def fmt(x, spec):
    return "—" if x is None else format(x, spec)


def rate(x, unit):
    """A throughput: whole numbers, two significant digits below 10."""
    if x is None:
        return "—"
    return f"{x:.0f} {unit}" if x >= 10 else f"{x:.2g} {unit}"


def kernel(r):
    """`gemm.tir (llvm)` from the label `examples/gemm.tir (llvm, sm_90)`; with the variant tilec bench
    compiled for rows that are not 16-byte aligned, `gemm.tir (llvm, global_alignment = [2, 2, 16])`."""
    label = r.get("label") or r["kernel"]
    path, _, rest = label.partition(" (")
    parts = [p.strip() for p in rest.rstrip(")").split(", ", 2)] if rest else []
    shown = parts[:1] + [p for p in parts[2:] if p.startswith("global_alignment")]
    return os.path.basename(path) + (f" ({', '.join(shown)})" if shown else "")


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 1
    rows = read_rows(paths)
    if rows is None:
        return 1
    gpus = sorted({r.get("gpu", "?") for r in rows})
    print(f"GPU: {', '.join(gpus)}\n")
    print("| kernel | M×N×K | types | tilec ms | tilec | cuBLAS | ratio | check |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        unit = r.get("unit", "TF/s")
        layouts = [k.upper() for k in "abc" if r.get(f"{k}_layout") == "col_major"]
        types = f"{r['a']}·{r['b']}→{r['c']}" + (f" ({', '.join(layouts)} col-major)" if layouts else "")
        check = r["check"]
        if check == "ok" and r.get("worst_fraction") is not None and r["c"] != "i32":
            check = f"ok ({r['worst_fraction']:.2f} of tol.)"
        elif check == "ok":
            check = "ok (exact)"
        print(
            f"| {kernel(r)} | {r['m']}×{r['n']}×{r['k']} | {types} | {r['tilec_ms']:.3f} | {rate(r['tilec_tflops'], unit)} "
            f"| {rate(r.get('cublas_tflops'), unit)} | {fmt(r.get('ratio'), '.2f')} | {check} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
