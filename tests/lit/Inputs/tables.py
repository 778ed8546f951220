"""Shared by the lit checkers' Python references: read a whitespace-separated table of numbers (the format of
`tilec interp/sim --output`) and compare two tables element by element within atol + rtol * |expected|.

A checker imports it with `sys.path.insert(0, <this directory>)`; lit skips `Inputs` directories."""

import sys


def read(path):
    with open(path) as f:
        return [[float(x) for x in line.split()] for line in f if line.strip()]


def compare(name, got, want, atol, rtol):
    """Exit 1 at the first element outside atol + rtol * |want|; otherwise return the largest absolute error."""
    worst = 0.0
    assert len(got) == len(want), f"{name}: {len(got)} rows, expected {len(want)}"
    for i, (g_row, w_row) in enumerate(zip(got, want)):
        assert len(g_row) == len(w_row), f"{name}: row {i} has {len(g_row)} values, expected {len(w_row)}"
        for j, (g, w) in enumerate(zip(g_row, w_row)):
            err = abs(g - w)
            worst = max(worst, err)
            if not err <= atol + rtol * abs(w):
                print(f"{name}[{i}][{j}] = {g}, the reference gives {w}")
                sys.exit(1)
    return worst
