"""A warpgroup MMA tile checked outside tilec, in plain Python: reads A (64xK), Bt (NxK: B column-major) and
C (64xN) as written by `tilec sim --output`, and computes C = A·B two ways:
- as the simulator states its wgmma arithmetic (ir/src/sim/wgmma.rs): per instruction of KSTEP columns of K,
  the exact products summed in double precision in increasing k, plus the accumulator, rounded once to
  float32 (integers: exact, wrapped to 32 bits) -- this must match bit for bit;
- plainly in double precision, within f32 accumulation tolerance (relative 1e-5 plus absolute 1e-5).
Usage: check_wgmma.py A Bt C KSTEP [int] [b-row-major]. With b-row-major the second file is B (KxN, an MN-major
operand) instead of Bt. Prints the largest error; exits 1 on a mismatch."""
import struct
import sys


def read(path):
    with open(path) as f:
        return [[float(x) for x in line.split()] for line in f if line.strip()]


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def wrap32(x):
    return float((int(x) + 2**31) % 2**32 - 2**31)


a, bt, c = (read(p) for p in sys.argv[1:4])
kstep = int(sys.argv[4])
integer = "int" in sys.argv[5:]
if "b-row-major" in sys.argv[5:]:
    bt = [list(col) for col in zip(*bt)]
m, k, n = len(a), len(a[0]), len(bt)
assert m == 64 and all(len(r) == k for r in a) and all(len(r) == k for r in bt), "A is not 64xK or Bt not NxK"
assert len(c) == 64 and all(len(r) == n for r in c), "C is not 64xN"
worst = 0.0
for i in range(m):
    for j in range(n):
        acc = 0.0
        for k0 in range(0, k, kstep):
            part = 0.0
            for p in range(k0, k0 + kstep):
                part += a[i][p] * bt[j][p]
            acc = wrap32(part + acc) if integer else f32(part + acc)
        if c[i][j] != acc:
            print(f"C[{i}][{j}] = {c[i][j]!r}, the stated wgmma arithmetic gives {acc!r}")
            sys.exit(1)
        want = sum(a[i][p] * bt[j][p] for p in range(k))
        err = abs(c[i][j] - want)
        worst = max(worst, err)
        if not integer and err > 1e-5 + 1e-5 * abs(want):
            print(f"C[{i}][{j}] = {c[i][j]!r} differs from A·B = {want!r} beyond f32 tolerance")
            sys.exit(1)
print(f"C = A·B bit for bit as stated, max abs err to double precision {worst:.3e}")
