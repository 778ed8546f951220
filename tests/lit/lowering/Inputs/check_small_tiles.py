"""Checks a kernel of small_tiles.tir outside tilec, in float64 with plain Python: reads X, Z, M and S as
`tilec interp|sim --output` wrote them (row-major, one row per line) and compares with
  y = 2x, m = max of each row of y, s = sum of each column of y, z = y - m (rounded to f16 for an f16 Z).

  check_small_tiles.py X Z M S [f16]

m is exact; s within 1e-5 + 1e-5 |s| (f32 additions in another order); z within 1e-6 + 1e-6 |z| for f32 (one
f32 subtraction) and 1e-6 + 1e-3 |z| for f16 (the f32 difference rounded to f16). Prints the largest error;
exits 1 on a mismatch."""
import struct
import sys


def read(path):
    with open(path) as f:
        return [[float(x) for x in line.split()] for line in f if line.strip()]


def to_f16(x):
    return struct.unpack("e", struct.pack("e", x))[0]


def compare(name, got, want, atol, rtol):
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


x, z, m, s = (read(p) for p in sys.argv[1:5])
half = len(sys.argv) > 5 and sys.argv[5] == "f16"
y = [[2 * v for v in row] for row in x]
want_m = [[max(row)] for row in y]
want_s = [[sum(row[j] for row in y) for j in range(len(y[0]))]]
want_z = [[v - mr[0] for v in row] for row, mr in zip(y, want_m)]
if half:
    want_z = [[to_f16(v) for v in row] for row in want_z]
worst = compare("M", m, want_m, 0.0, 0.0)
worst = max(worst, compare("S", s, want_s, 1e-5, 1e-5))
worst = max(worst, compare("Z", z, want_z, 1e-6, 1e-3 if half else 1e-6))
print(f"small tile: within tolerance of the reference, max abs err {worst:.3e}")
