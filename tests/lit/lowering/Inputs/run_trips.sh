#!/usr/bin/env bash
# run_trips.sh TILEC GEMM_TRIPS.tir TMPDIR: `tilec sim` of gemm_trips.tir at sm_90a for pipeline_stages 1..4,
# fragments_ahead true/false and %T = 0, 1, 2, 5 k-steps; prints each run's %C line, prefixed by the case.
set -euo pipefail
tilec="$1" input="$2" tmp="$3"
mkdir -p "$tmp"
for s in 1 2 3 4; do
  for f in true false; do
    sed "s/num_warps = 4,/num_warps = 4, pipeline_stages = $s, fragments_ahead = $f,/" "$input" > "$tmp/trips_${s}_$f.tir"
    for t in 0 1 2 5; do
      echo "stages=$s fragments_ahead=$f T=$t $("$tilec" sim "$tmp/trips_${s}_$f.tir" --target sm_90a --arg A=65x160 --arg B=160x72 --arg C=65x72 --arg T=$t | grep '%C:')"
    done
  done
done
