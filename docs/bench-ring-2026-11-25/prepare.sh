#!/usr/bin/env bash
# 3-way A/B: base (main), rem (one rolled remainder loop), roll (the whole k-loop rolled, stage as a value).
set -euo pipefail
BASE=/work/baseline-tilec NEW=/work/wt-ring/target/release/tilec DEV=/work/main/.device-ring
rm -rf "$DEV/bench" "$DEV/check" && mkdir -p "$DEV/bench" "$DEV/check"
BENCH=(
  sm_90:examples/gemm.tir:4096,4096,4096
  sm_90:examples/gemm.tir:8192,8192,8192
  sm_90:examples/gemm_256x128.tir:4096,4096,4096
  sm_90:examples/gemm_256x128.tir:8192,8192,8192
  sm_90:examples/gemm_bf16_256x128.tir:8192,8192,8192
  sm_90:examples/gemm_s8_b_col.tir:4096,4096,4096
  sm_90:examples/gemm.tir:4096,4096,4100
  sm_80:examples/gemm.tir:4096,4096,4096
)
i=0
for entry in "${BENCH[@]}"; do
  IFS=: read -r target file shape <<<"$entry"
  for side in base rem roll; do
    bin="$BASE"; env=(); [ "$side" != base ] && bin="$NEW"; [ "$side" = roll ] && env=(TILEC_EXPERIMENT_ROLLED=1)
    tmp="$(mktemp -d)"
    env "${env[@]}" TILEC_CACHE=0 "$bin" bench "$file" --shape "$shape" --target "$target" --bundle "$tmp" >/dev/null
    d="$(printf '%02d' "$i")-$side"
    mv "$tmp"/* "$DEV/bench/$d" && rmdir "$tmp"
    sed -i "s|\"label\": \"|\"label\": \"$side: |" "$DEV/bench/$d/bench.json"
  done
  i=$((i + 1))
done
for side in rem roll; do
  env=(); [ "$side" = roll ] && env=(TILEC_EXPERIMENT_ROLLED=1)
  env "${env[@]}" TILEC_CACHE=0 $NEW bundle examples/gemm.tir -o "$DEV/check/$side-gemm_513x1000x264" --shape 513,1000,264 --target sm_90
  env "${env[@]}" TILEC_CACHE=0 $NEW bundle examples/gemm.tir -o "$DEV/check/$side-gemm_200x72x40" --shape 200,72,40 --target sm_90
  env "${env[@]}" TILEC_CACHE=0 $NEW bundle examples/gemm.tir -o "$DEV/check/$side-gemm_130x96x136" --shape 130,136,96 --target sm_80
  env "${env[@]}" TILEC_CACHE=0 $NEW bundle examples/gemm_256x128.tir -o "$DEV/check/$side-gemm_256x128_300x260x232" --shape 300,260,232 --target sm_90
  env "${env[@]}" TILEC_CACHE=0 $NEW bundle examples/gemm_s8_b_col.tir -o "$DEV/check/$side-gemm_s8_b_col_200x136x176" --shape 200,136,176 --target sm_90
  env "${env[@]}" TILEC_CACHE=0 $NEW bundle examples/attention_fwd.tir -o "$DEV/check/$side-attention_fwd_2x100x64" --arg Q=2x100x64 --arg K=2x100x64 --arg V=2x100x64 --arg O=2x100x64 --target sm_90
done
cp /work/main/.device/tilec-gpu-runner "$DEV/"
du -sh "$DEV"
