#!/usr/bin/env python3
"""scripts/ptx-loop-mix.py BEFORE.ptx AFTER.ptx: the instruction mix of every loop of two PTX files, side by side.

A loop is a label and a later branch back to it (the k-loop of a GEMM is `$L__BB0_2`). For each loop, in order,
prints the number of instructions before and after and, when they differ, the count per opcode (the first
dotted part: `mma`, `ld`, `cp`, `add`, ...) that changed. Register names are ignored, so two loops that list the
same instructions in any register allocation compare equal. Used with `scripts/ptx-snapshot.sh`:

    for f in /tmp/before/*.llvm.ptx; do echo "$f"; scripts/ptx-loop-mix.py "$f" "/tmp/after/$(basename "$f")"; done
"""
import collections
import re
import sys


def loops(path):
    lines = open(path).read().splitlines()
    labels, out = {}, []
    for i, line in enumerate(lines):
        m = re.match(r'^(\$L__\w+):', line)
        if m:
            labels[m.group(1)] = i
        m = re.search(r'\bbra(?:\.uni)?\s+(\$L__\w+);', line)
        if m and m.group(1) in labels and labels[m.group(1)] < i:
            mix = collections.Counter()
            for text in lines[labels[m.group(1)]:i + 1]:
                text = text.strip()
                if not text or text.startswith(('//', '$', '.')) or text in '{}':
                    continue
                text = re.sub(r'^@!?%p\d+\s+', '', text)
                mix[text.split()[0].rstrip(';').split('.')[0]] += 1
            out.append((m.group(1), sum(mix.values()), mix))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    before, after = loops(sys.argv[1]), loops(sys.argv[2])
    for (label, n_before, mix_before), (_, n_after, mix_after) in zip(before, after):
        diff = {k: mix_after[k] - mix_before[k] for k in sorted(set(mix_before) | set(mix_after)) if mix_after[k] != mix_before[k]}
        print(f"  loop {label}: {n_before} -> {n_after} instructions" + (f", changed: {diff}" if diff else ""))
    if len(before) != len(after):
        print(f"  the number of loops differs: {len(before)} -> {len(after)}")


if __name__ == "__main__":
    main()
