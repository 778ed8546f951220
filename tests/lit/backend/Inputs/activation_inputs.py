"""Writes the inputs of activation-math.tir: X (16x16 f32 from -4 to 4, and 0) and Q (16x16 i8 with -128..127)."""
import sys

x_path, q_path = sys.argv[1:3]
with open(x_path, "w") as f:
    for r in range(16):
        f.write(" ".join(repr(-4.0 + (r * 16 + c) * (8.0 / 255)) if (r, c) != (0, 1) else "0.0" for c in range(16)) + "\n")
with open(q_path, "w") as f:
    for r in range(16):
        f.write(" ".join(str(((r * 16 + c) % 256) - 128) for c in range(16)) + "\n")
