"""Checks outside tilec, in plain Python, what tile.transpose computed (the files `tilec interp|sim --output`
writes: row-major, one row per line):

  check_matmul_t.py transpose X T      T == Xᵀ exactly
  check_matmul_t.py abt A B C          C == A·Bᵀ within 1e-4 + 1e-4 |c| (f32 accumulation of f16 products)
  check_matmul_t.py ab A B C           C == A·B, likewise

Prints a line saying so; exits 1 on a mismatch."""
import sys


def read(path):
    with open(path) as f:
        return [[float(x) for x in line.split()] for line in f if line.strip()]


mode, paths = sys.argv[1], sys.argv[2:]
if mode == "transpose":
    x, t = read(paths[0]), read(paths[1])
    want = [list(col) for col in zip(*x)]
    if t != want:
        print("transpose: T is not Xᵀ")
        sys.exit(1)
    print(f"transpose: T = Xᵀ exactly ({len(t)}x{len(t[0])})")
    sys.exit(0)
a, b, c = (read(p) for p in paths)
if mode == "abt":
    b = [list(col) for col in zip(*b)]
worst = 0.0
for i, row in enumerate(c):
    for j, got in enumerate(row):
        want = sum(a[i][k] * b[k][j] for k in range(len(b)))
        err = abs(got - want)
        worst = max(worst, err)
        if not err <= 1e-4 + 1e-4 * abs(want):
            print(f"{mode}: C[{i}][{j}] = {got}, the reference gives {want}")
            sys.exit(1)
print(f"{mode}: within tolerance of the reference, max abs err {worst:.3e}")
