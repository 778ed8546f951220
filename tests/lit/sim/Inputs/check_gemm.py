"""A GEMM's result checked outside tilec, in plain Python: reads A (MxK), B (KxN) and C (MxN) as `tilec sim
--output` wrote them (row-major, one row per line) and checks C = A·B, summed in double precision, within f32
accumulation tolerance (absolute 1e-4 plus relative 1e-5). Prints the largest error; exits 1 on a mismatch.

  check_gemm.py A B C
"""
import sys


def read(path):
    with open(path) as f:
        return [[float(x) for x in line.split()] for line in f if line.strip()]


a, b, c = (read(p) for p in sys.argv[1:4])
m, k, n = len(a), len(b), len(b[0])
assert all(len(r) == k for r in a), "A is not MxK"
assert len(c) == m and all(len(r) == n for r in c), "C is not MxN"
bt = [list(col) for col in zip(*b)]
worst = 0.0
for i in range(m):
    for j in range(n):
        want = sum(x * y for x, y in zip(a[i], bt[j]))
        err = abs(c[i][j] - want)
        worst = max(worst, err)
        if err > 1e-4 + 1e-5 * abs(want):
            print(f"C[{i}][{j}] = {c[i][j]!r} differs from A·B = {want!r}")
            sys.exit(1)
print(f"C = A·B for {m}x{n}x{k} within f32 tolerance (max abs err {worst:.2e})")
