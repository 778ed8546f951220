"""Writes small-integer inputs for examples/b2b_gemm.tir into DIR (the --input format: row-major, one row
per line): A (M x K) in -2..2, B (K x 64) and C (64 x 64) in -1..1, so that A·B is exact in f16 and D is
exact in f32 whatever the summation order. Usage: b2b_inputs.py DIR M K"""
import random
import sys

out, m, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(7)


def write(name, rows, cols, lo, hi):
    with open(f"{out}/{name}.txt", "w") as f:
        for _ in range(rows):
            f.write(" ".join(str(rng.randint(lo, hi)) for _ in range(cols)) + "\n")


write("A", m, k, -2, 2)
write("B", k, 64, -1, 1)
write("C", 64, 64, -1, 1)
