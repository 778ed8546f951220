"""Row-wise kernels checked outside tilec, in float64 with plain Python (numpy is not required): reads the
tensors `tilec interp|sim --output` wrote (row-major, one row per line) and compares with a reference.

  check_rows.py softmax X Y               y = softmax of each row of x            (1e-5 + 1e-5 |y|)
  check_rows.py layernorm X G B Y [EPS]   y = (x - mean) / sqrt(var + eps) * g + b (1e-4 + 1e-4 |y|)
  check_rows.py gemm_bias_relu A B BIAS C c = max(A·B + bias, 0)                  (1e-4 + 1e-4 |c|)
  check_rows.py gemm_bias_gelu A B BIAS C c = gelu_tanh(A·B + bias), C in f16      (1e-3 + 1e-3 |c|)
  check_rows.py rowstats X M S            m = max of each row, s = sum             (exact max; 1e-5 sum)

Prints the largest error; exits 1 on a mismatch."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from tables import compare, read  # noqa: E402


mode = sys.argv[1]
if mode == "softmax":
    x, y = read(sys.argv[2]), read(sys.argv[3])
    want = []
    for row in x:
        m = max(row)
        e = [math.exp(v - m) for v in row]
        s = sum(e)
        want.append([v / s for v in e])
    worst = compare("y", y, want, 1e-5, 1e-5)
elif mode == "layernorm":
    x, g, b, y = (read(p) for p in sys.argv[2:6])
    eps = float(sys.argv[6]) if len(sys.argv) > 6 else 1e-5
    g, b = g[0], b[0]
    want = []
    for row in x:
        n = len(row)
        mean = sum(row) / n
        var = sum((v - mean) ** 2 for v in row) / n
        r = 1.0 / math.sqrt(var + eps)
        want.append([(v - mean) * r * g[j] + b[j] for j, v in enumerate(row)])
    worst = compare("y", y, want, 1e-4, 1e-4)
elif mode == "gemm_bias_relu":
    a, bm, bias, c = (read(p) for p in sys.argv[2:6])
    bias = bias[0]
    k = len(bm)
    want = [[max(sum(a[i][p] * bm[p][j] for p in range(k)) + bias[j], 0.0) for j in range(len(bias))] for i in range(len(a))]
    worst = compare("C", c, want, 1e-4, 1e-4)
elif mode == "gemm_bias_gelu":
    # PyTorch's gelu(approximate="tanh"), exactly (math.tanh in float64); C was rounded to f16.
    a, bm, bias, c = (read(p) for p in sys.argv[2:6])
    bias = bias[0]
    k = len(bm)

    def gelu(x):
        return 0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))

    want = [[gelu(sum(a[i][p] * bm[p][j] for p in range(k)) + bias[j]) for j in range(len(bias))] for i in range(len(a))]
    worst = compare("C", c, want, 1e-3, 1e-3)
elif mode == "rowstats":
    x, m, s = (read(p) for p in sys.argv[2:5])
    worst = compare("m", m, [[max(row)] for row in x], 0.0, 0.0)
    worst = max(worst, compare("s", s, [[sum(row)] for row in x], 1e-5, 1e-5))
else:
    sys.exit(f"unknown mode {mode}")
print(f"{mode}: within tolerance of the reference, max abs err {worst:.3e}")
