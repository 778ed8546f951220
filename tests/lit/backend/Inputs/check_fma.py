"""The rounding error of the f32 product x*x, from exact rationals (tests/lit/backend/fma-ftz.test).

usage: check_fma.py INPUT ERRORS: each ERRORS value must equal x*x (exact) - f32(x*x), where f32() rounds to
nearest even; a product rounded before the add would make every error 0. (x*x of an f32 has at most 48
significant bits, so float() of it is exact and f32() rounds once.)
"""
import struct
import sys
from fractions import Fraction


def f32(v):
    """v rounded to the nearest f32 (struct packs with round-to-nearest-even)."""
    return struct.unpack("<f", struct.pack("<f", float(v)))[0]


def main():
    xs = [[f32(float(t)) for t in line.split()] for line in open(sys.argv[1]) if line.strip()]
    es = [[float(t) for t in line.split()] for line in open(sys.argv[2]) if line.strip()]
    nonzero = 0
    for xr, er in zip(xs, es, strict=True):
        for x, e in zip(xr, er, strict=True):
            exact = Fraction(x) * Fraction(x)
            want = f32(exact - Fraction(f32(exact)))
            if f32(e) != want:
                print(f"fma: x = {x!r}: got {e!r}, want {want!r}")
                sys.exit(1)
            nonzero += want != 0
    print(f"fma: every error exact ({nonzero} nonzero)")


main()
