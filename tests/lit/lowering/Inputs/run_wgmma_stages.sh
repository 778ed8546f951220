#!/usr/bin/env bash
# run_wgmma_stages.sh TILEC GEMM_256x128.tir TMPDIR: `tilec sim` of the 256x128 wgmma GEMM with BK = 64 at sm_90a
# for pipeline_stages 1..4 and K = 136 and 320 (3 and 5 k-steps: odd trip counts, a ragged last k-step, and
# the ring's remainder loops); prints each run's %C line, prefixed by the case.
set -euo pipefail
tilec="$1" input="$2" tmp="$3"
mkdir -p "$tmp"
for s in 1 2 3 4; do
  sed "s/BK = 32, num_warps = 8,/BK = 64, num_warps = 8, pipeline_stages = $s,/" "$input" > "$tmp/wgmma_$s.tir"
  for k in 136 320; do
    echo "stages=$s K=$k $("$tilec" sim "$tmp/wgmma_$s.tir" --target sm_90a --shape 257,130,$k | grep '%C:')"
  done
done
