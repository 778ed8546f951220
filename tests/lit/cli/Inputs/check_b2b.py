"""Checks D = (A·B)·C from examples/b2b_gemm.tir against NumPy (or plain Python): A·B rounded to f16,
then multiplied by C in f64. Usage: check_b2b.py A B C D"""
import sys


def read(path):
    with open(path) as f:
        return [[float(x) for x in line.split()] for line in f if line.strip()]


a, b, c, d = (read(p) for p in sys.argv[1:5])
try:
    import numpy as np

    p = (np.array(a) @ np.array(b)).astype(np.float16).astype(np.float64)
    want = (p @ np.array(c)).tolist()
except ImportError:
    import struct

    def f16(x):
        return struct.unpack("e", struct.pack("e", x))[0]

    p = [[f16(sum(a[i][t] * b[t][j] for t in range(len(b)))) for j in range(len(b[0]))] for i in range(len(a))]
    want = [[sum(p[i][t] * c[t][j] for t in range(len(c))) for j in range(len(c[0]))] for i in range(len(p))]
rows, cols = len(want), len(want[0])
if len(d) != rows or any(len(r) != cols for r in d):
    sys.exit(f"D is {len(d)}x{len(d[0]) if d else 0}, expected {rows}x{cols}")
bad = sum(1 for i in range(rows) for j in range(cols) if d[i][j] != want[i][j])
if bad:
    sys.exit(f"{bad} of {rows * cols} elements of D differ from (A·B)·C")
print(f"D = (A·B)·C exactly ({rows}x{cols})")
