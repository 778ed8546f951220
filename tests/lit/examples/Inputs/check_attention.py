"""Attention forward checked outside tilec, in float64 with plain Python (numpy is not required): reads the
tensors `tilec interp|sim --output` wrote (row-major, one row per line) and compares O with
softmax(Q·Kᵀ / sqrt(d))·V computed per head.

  check_attention.py [--causal] S Q K V O

Q, K, V and O hold batch*heads*S rows of d values (a [batch*heads, S, d] tensor, row-major, as `--output`
writes it: its [batch*heads*S, d] flattening). --causal: query i sees keys j <= i.

Tolerance 2e-3 + 2e-3 |o|: the kernel rounds the probabilities P to f16 before P·V (as flash attention
does) and O to f16. Prints the largest error; exits 1 on a mismatch."""
import math
import sys


def read(path):
    with open(path) as f:
        return [[float(x) for x in line.split()] for line in f if line.strip()]


args = sys.argv[1:]
causal = "--causal" in args
args = [a for a in args if not a.startswith("--")]
S = int(args[0])
q, k, v, o = (read(p) for p in args[1:5])
d = len(q[0])
assert len(q) % S == 0, f"Q has {len(q)} rows, not a multiple of S = {S}"
heads = len(q) // S
for name, t in (("K", k), ("V", v), ("O", o)):
    assert len(t) == len(q) and all(len(r) == d for r in t), f"{name} is not {len(q)}x{d}"
scale = 1.0 / math.sqrt(d)
worst = 0.0
for h in range(heads):
    base = h * S
    for i in range(S):
        qi = q[base + i]
        keys = range(i + 1) if causal else range(S)
        s = [scale * sum(a * b for a, b in zip(qi, k[base + j])) for j in keys]
        m = max(s)
        e = [math.exp(x - m) for x in s]
        tot = sum(e)
        for c in range(d):
            want = sum(e[t] * v[base + j][c] for t, j in enumerate(keys)) / tot
            got = o[base + i][c]
            err = abs(got - want)
            worst = max(worst, err)
            if not err <= 2e-3 + 2e-3 * abs(want):
                print(f"O[{h}][{i}][{c}] = {got}, the reference gives {want}")
                sys.exit(1)
print(f"attention{' causal' if causal else ''}: within tolerance of the reference, max abs err {worst:.3e}")
