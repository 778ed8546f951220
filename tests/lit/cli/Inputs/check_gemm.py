"""A GEMM's result checked outside tilec: reads A (MxK), B (KxN) and C (MxN) as written by
`tilec interp|sim --output`, computes A·B in float64 and compares (f32 accumulation: relative 1e-5 plus
absolute 1e-5). Prints the largest error; exits 1 on a mismatch."""
import sys


def read(path):
    with open(path) as f:
        return [[float(x) for x in line.split()] for line in f if line.strip()]


a, b, c = (read(p) for p in sys.argv[1:4])
m, n, k = (int(x) for x in sys.argv[4:7])
assert len(a) == m and all(len(r) == k for r in a), "A is not MxK"
assert len(b) == k and all(len(r) == n for r in b), "B is not KxN"
assert len(c) == m and all(len(r) == n for r in c), "C is not MxN"
worst = 0.0
for i in range(m):
    for j in range(n):
        want = sum(a[i][p] * b[p][j] for p in range(k))
        err = abs(c[i][j] - want)
        worst = max(worst, err)
        if err > 1e-5 + 1e-5 * abs(want):
            print(f"C[{i}][{j}] = {c[i][j]}, A·B gives {want}")
            sys.exit(1)
print(f"C = A·B within tolerance, max abs err {worst:.3e}")
