"""A TMA box copy checked outside tilec: B (given as zeros) holds A's elements inside the box of R x C at
(r0, c0), and zeros elsewhere.

  check_tma_box.py A B r0 c0 R C
"""
import sys


def read(path):
    with open(path) as f:
        return [[float(x) for x in line.split()] for line in f if line.strip()]


a, b = read(sys.argv[1]), read(sys.argv[2])
r0, c0, rows, cols = (int(x) for x in sys.argv[3:7])
for i, row in enumerate(b):
    for j, got in enumerate(row):
        inside = r0 <= i < r0 + rows and c0 <= j < c0 + cols
        want = a[i][j] if inside else 0.0
        if got != want:
            print(f"B[{i}][{j}] = {got}, expected {want}")
            sys.exit(1)
print(f"ok: the {rows}x{cols} box at ({r0}, {c0}) copied, nothing else written")
