#!/usr/bin/env bash
# run_trips.sh TILEC GEMM_TRIPS.tir TMPDIR: `tilec sim` of gemm_trips.tir at sm_90a (wgmma, TMA) and sm_80 (mma.sync,
# cp.async) for pipeline_stages 1..4, fragments_ahead true/false, pipeline_tail peeled/guarded (2 stages and more)
# and %T = 0, 1, 2, 5 k-steps; prints each run's %C line, prefixed by the case.
set -euo pipefail
tilec="$1" input="$2" tmp="$3"
mkdir -p "$tmp"
for target in sm_90a sm_80; do
  for s in 1 2 3 4; do
    for f in true false; do
      for tail in peeled guarded; do
        [ "$s" = 1 ] && [ "$tail" = guarded ] && continue
        sed "s/num_warps = 4,/num_warps = 4, pipeline_stages = $s, fragments_ahead = $f, pipeline_tail = $tail,/" "$input" > "$tmp/trips_${s}_${f}_$tail.tir"
        for t in 0 1 2 5; do
          echo "$target stages=$s fragments_ahead=$f tail=$tail T=$t $("$tilec" sim "$tmp/trips_${s}_${f}_$tail.tir" --target "$target" --arg A=65x160 --arg B=160x72 --arg C=65x72 --arg T=$t | grep '%C:')"
        done
      done
    done
  done
done
