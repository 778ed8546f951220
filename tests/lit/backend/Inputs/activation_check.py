"""Checks tilec interp's outputs of activation-math.tir against Python's math module (no tilec code):
abs exact, tanh and sigmoid within 1 f32 ulp of the exact value (the interpreter rounds the f64 result once),
tanh on f16 within 1 f16 ulp (computed in f32, rounded to f16), |i8| wrapping (|-128| = -128)."""
import math
import struct
import sys


def read(path):
    with open(path) as f:
        return [float(v) for v in f.read().split()]


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def close(got, want, ulp):
    return abs(got - want) <= ulp * max(abs(want), 2.0**-126)


x, q, ya, yt, ys, yh, yq = (read(p) for p in sys.argv[1:8])
x = [f32(v) for v in x]
results = {
    "abs": all(a == abs(v) for a, v in zip(ya, x)),
    "tanh": all(close(t, math.tanh(v), 2.0**-23) for t, v in zip(yt, x)),
    "sigmoid": all(close(s, 1.0 / (1.0 + math.exp(-v)), 2.0**-23) for s, v in zip(ys, x)),
    "tanh-f16": all(close(h, math.tanh(v), 2.0**-10) for h, v in zip(yh, x)),
    "abs-i8": all(a == (abs(int(v)) if v != -128 else -128) for a, v in zip(yq, q)),
}
print(" ".join(f"{k} {'ok' if v else 'WRONG'}" for k, v in results.items()))
