"""tests/lit/sim/Inputs/tma_rank3.tir checked outside tilec: A and B are 3x5x8 (one line per [i][j], 8 values);
B[i][j] = A[i + 1][j + 2] for the box's i < 2, j < 4 where j + 2 < 5, zeros where j + 2 >= 5 (zero fill), and
B keeps its own values outside the box (i = 2, or j = 4).

  check_tma_rank3.py A B_BEFORE B_AFTER
"""
import sys


def read(path):
    with open(path) as f:
        return [line.split() for line in f if line.strip()]


a, before, b = read(sys.argv[1]), read(sys.argv[2]), read(sys.argv[3])
for i in range(3):
    for j in range(5):
        if i < 2 and j < 4:
            want = a[(i + 1) * 5 + j + 2] if j + 2 < 5 else ["0"] * 8
        else:
            want = before[i * 5 + j]
        got = b[i * 5 + j]
        if [float(x) for x in got] != [float(x) for x in want]:
            print(f"B[{i}][{j}] = {got}, expected {want}")
            sys.exit(1)
print("ok: rank-3 box copied, zero-filled past axis 1, nothing written outside the box")
