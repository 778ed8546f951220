#!/usr/bin/env bash
# run_warp_specialized.sh TILEC GEMM_256x128.tir TMPDIR: `tilec sim` (against the interpreter) of the 256x128 wgmma
# GEMM with BK = 64 and warp_specialize = true at sm_90a, for pipeline_stages 2..4 and K = 8, 136 and 320 (1, 3
# and 5 k-steps: the unrolled loops and their remainders on both sides); prints each run's %C line.
set -euo pipefail
tilec="$1" input="$2" tmp="$3"
mkdir -p "$tmp"
for s in 2 3 4; do
  sed "s/BK = 32, num_warps = 8,/BK = 64, num_warps = 8, pipeline_stages = $s, warp_specialize = true,/" "$input" > "$tmp/ws_$s.tir"
  for k in 8 136 320; do
    echo "stages=$s K=$k $("$tilec" sim "$tmp/ws_$s.tir" --target sm_90a --shape 257,130,$k | grep '%C:')"
  done
done
