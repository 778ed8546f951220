"""Checks a kernel of small_tiles.tir outside tilec, in float64 with plain Python: reads X, Z, M and S as
`tilec interp|sim --output` wrote them (row-major, one row per line) and compares with
  y = 2x, m = max of each row of y, s = sum of each column of y, z = y - m (rounded to f16 for an f16 Z).

  check_small_tiles.py X Z M S [f16]

m is exact; s within 1e-5 + 1e-5 |s| (f32 additions in another order); z within 1e-6 + 1e-6 |z| for f32 (one
f32 subtraction) and 1e-6 + 1e-3 |z| for f16 (the f32 difference rounded to f16). Prints the largest error;
exits 1 on a mismatch."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from tables import compare, read  # noqa: E402


def to_f16(x):
    return struct.unpack("e", struct.pack("e", x))[0]


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
