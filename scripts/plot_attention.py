#!/usr/bin/env python3
"""Bar chart (SVG, written by hand: no matplotlib needed) of attention TF/s from `scripts/bench_attention.py --json`.

Usage: python3 scripts/plot_attention.py RECORDS.jsonl OUT.svg [--tuned PREFIX] [--skip SUBSTRING]

One group of bars per shape (B·H x S x d, causal marked): each tilec case at that shape (the kernel as written,
and the cases whose directory name starts with PREFIX, default `best_`, labelled "tuned"), then SDPA flash
(FlashAttention-2) and SDPA cuDNN as measured in the same process. When a case appears several times, the last
record counts; --skip leaves out the cases whose directory name contains SUBSTRING (experiments).
"""
import json
import os
import sys
from xml.sax.saxutils import escape

COLORS = {"tilec": "#8fb3d9", "tuned": "#1f5fa8", "flash": "#e08a2c", "cudnn": "#6a9f3a"}


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    prefix = "best_"
    if "--tuned" in args:
        i = args.index("--tuned")
        prefix = args[i + 1]
        del args[i : i + 2]
    skip = None
    if "--skip" in args:
        i = args.index("--skip")
        skip = args[i + 1]
        del args[i : i + 2]
    records = [json.loads(line) for line in open(args[0]) if line.strip()]
    records = [r for r in records if not (skip and skip in os.path.basename(r["case"].rstrip("/")))]
    groups = {}
    for r in records:
        key = (r["bh"], r["s"], r["d"], r["causal"])
        name = os.path.basename(r["case"].rstrip("/"))
        bars = groups.setdefault(key, {})
        bars["tuned" if name.startswith(prefix) else "tilec"] = r["tilec_tflops"]
        for backend in ("flash", "cudnn"):
            if r.get(f"{backend}_tflops"):
                bars[backend] = r[f"{backend}_tflops"]
    order = ["tilec", "tuned", "flash", "cudnn"]
    labels = {"tilec": "tilec (as written)", "tuned": "tilec (tuned)", "flash": "SDPA flash (FA2)", "cudnn": "SDPA cuDNN"}
    top = max(v for bars in groups.values() for v in bars.values())
    top = (int(top / 100) + 1) * 100
    width, height, left, bottom, bar, gap = 760, 380, 60, 60, 28, 40
    plot_h = height - bottom - 40
    y = lambda v: height - bottom - v / top * plot_h
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">']
    out.append(f'<rect width="{width}" height="{height}" fill="white"/>')
    out.append(f'<text x="{left}" y="20" font-size="14">Attention forward, fp16, H100 80GB HBM3: TF/s (4·B·H·S²·d / time, half for causal)</text>')
    for t in range(0, top + 1, 100):
        out.append(f'<line x1="{left}" y1="{y(t):.1f}" x2="{width - 10}" y2="{y(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{t}</text>')
    x = left + gap / 2
    for (bh, s, d, causal), bars in groups.items():
        x0 = x
        for kind in order:
            if kind not in bars:
                continue
            v = bars[kind]
            out.append(f'<rect x="{x:.1f}" y="{y(v):.1f}" width="{bar}" height="{height - bottom - y(v):.1f}" fill="{COLORS[kind]}"/>')
            out.append(f'<text x="{x + bar / 2:.1f}" y="{y(v) - 4:.1f}" text-anchor="middle" font-size="10">{v:.0f}</text>')
            x += bar + 2
        label = f"{bh}×{s}×{d}{' causal' if causal else ''}"
        out.append(f'<text x="{(x0 + x) / 2:.1f}" y="{height - bottom + 16}" text-anchor="middle">{escape(label)}</text>')
        x += gap
    lx = left
    for kind in order:
        out.append(f'<rect x="{lx}" y="{height - 22}" width="12" height="12" fill="{COLORS[kind]}"/>')
        out.append(f'<text x="{lx + 16}" y="{height - 12}">{escape(labels[kind])}</text>')
        lx += 170
    out.append("</svg>")
    with open(args[1], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
