"""examples/hopper/tma_copy.tir checked outside tilec (plain Python, f16 rounding through struct's 'e'):
reads A and B as `tilec sim --output` wrote them (row-major, one row per line) and checks
B[i][j] = f16(f16(2 A[i][j]) + 1) where (i, j) is inside A, and 1 elsewhere (TMA zero-fills the part of a
box outside A, and 2 * 0 + 1 = 1), exactly.

  check_tma_copy.py A B
"""
import struct
import sys


def f16(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


def read(path):
    with open(path) as f:
        return [[float(x) for x in line.split()] for line in f if line.strip()]


a, b = read(sys.argv[1]), read(sys.argv[2])
rows, cols = len(a), len(a[0])
inside = 0
for i, row in enumerate(b):
    for j, got in enumerate(row):
        want = f16(f16(2.0 * a[i][j]) + 1.0) if i < rows and j < cols else 1.0
        inside += i < rows and j < cols
        if got != want:
            print(f"B[{i}][{j}] = {got}, the reference gives {want}")
            sys.exit(1)
print(f"ok: {len(b)}x{len(b[0])} B, {inside} elements from A, {len(b) * len(b[0]) - inside} zero-filled")
