"""A batched GEMM's result checked outside tilec: reads A (batch x M x K), B (batch x K x N) and C (batch x M x N)
as written by `tilec interp|sim --output` (row-major: the rows of A[0], then of A[1], ...), computes
C[b] = A[b]·B[b] in float64 and compares (f32 accumulation: relative 1e-5 plus absolute 1e-5; an optional
ninth argument `f16` for a C rounded to fp16 once: relative 2^-11, half an fp16 ulp, on top). Prints the
largest error; exits 1 on a mismatch."""
import sys


def read(path, batch, rows, cols, name):
    with open(path) as f:
        lines = [[float(x) for x in line.split()] for line in f if line.strip()]
    assert len(lines) == batch * rows and all(len(r) == cols for r in lines), f"{name} is not {batch}x{rows}x{cols}"
    return [lines[b * rows:(b + 1) * rows] for b in range(batch)]


batch, m, n, k = (int(x) for x in sys.argv[4:8])
rtol = 1e-5 + (2.0**-11 if sys.argv[8:9] == ["f16"] else 0.0)
a = read(sys.argv[1], batch, m, k, "A")
b = read(sys.argv[2], batch, k, n, "B")
c = read(sys.argv[3], batch, m, n, "C")
worst = 0.0
for z in range(batch):
    for i in range(m):
        for j in range(n):
            want = sum(a[z][i][p] * b[z][p][j] for p in range(k))
            err = abs(c[z][i][j] - want)
            worst = max(worst, err)
            if err > 1e-5 + rtol * abs(want):
                print(f"C[{z}][{i}][{j}] = {c[z][i][j]}, A[{z}]·B[{z}] gives {want}")
                sys.exit(1)
print(f"C[b] = A[b]·B[b] for {batch} batches within tolerance, max abs err {worst:.3e}")
