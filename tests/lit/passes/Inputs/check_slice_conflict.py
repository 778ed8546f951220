"""Checks the kernels of slice_conflict.tir outside tilec, in float64 with plain Python, on the tensors
`tilec interp|sim --output` wrote (row-major, one row per line):

  check_slice_conflict.py bias_twice A B V C D    C = D = A·B + v (v broadcast over the rows)
  check_slice_conflict.py rows_twice A B M        M[i] = max_j (A·B)[i][j] + sum_j (A·B)[i][j]
  check_slice_conflict.py col_sums X Y Z          Z[j] = sum_i X[i][j] + sum_i Y[i][j]

within 1e-4 + 1e-4 |x| (f32 accumulation in another order). Prints the largest error; exits 1 on a mismatch."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from tables import compare, read  # noqa: E402


def matmul(a, b):
    return [[sum(a[i][p] * b[p][j] for p in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


mode = sys.argv[1]
if mode == "bias_twice":
    a, b, v, c, d = (read(p) for p in sys.argv[2:7])
    want = [[x + v[0][j] for j, x in enumerate(row)] for row in matmul(a, b)]
    worst = max(compare("C", c, want, 1e-4, 1e-4), compare("D", d, want, 1e-4, 1e-4))
elif mode == "rows_twice":
    a, b, m = (read(p) for p in sys.argv[2:5])
    want = [[max(row) + sum(row)] for row in matmul(a, b)]
    worst = compare("M", m, want, 1e-4, 1e-4)
elif mode == "col_sums":
    x, y, z = (read(p) for p in sys.argv[2:5])
    want = [[sum(r[j] for r in x) + sum(r[j] for r in y) for j in range(len(x[0]))]]
    worst = compare("Z", z, want, 1e-4, 1e-4)
else:
    sys.exit(f"unknown mode {mode}")
print(f"{mode}: within tolerance of the reference, max abs err {worst:.3e}")
