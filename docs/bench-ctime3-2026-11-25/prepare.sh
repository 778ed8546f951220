#!/usr/bin/env bash
# docs/bench-ctime3-2026-11-25/prepare.sh OLD_TILEC NEW_TILEC DEV: the GPU A/B of the masked-store change
# (issue 15 item 9): bench bundles of the kernels whose PTX changed, built by both binaries and labelled
# `before:`/`after:` (run in one runner process, before/after/after/before), and checked bundles of ragged
# shapes (the masked epilogue) built by the new binary. Run from the repository root; DEV is a carried dir.
set -euo pipefail
OLD="$1" NEW="$2" DEV="$3"
rm -rf "$DEV/bench" "$DEV/check" && mkdir -p "$DEV/bench" "$DEV/check"
BENCH=(
  sm_90:examples/gemm.tir:4096,4096,4096
  sm_90:examples/gemm.tir:8192,8192,8192
  sm_90:examples/gemm_256x128.tir:4096,4096,4096
  sm_90:examples/gemm_256x128.tir:8192,8192,8192
  sm_80:examples/gemm_256x128.tir:4096,4096,4096
  sm_90:examples/gemm_bf16_256x128.tir:8192,8192,8192
  sm_90a:examples/gemm_hopper.tir:4096,4096,4096
  sm_90a:examples/gemm_hopper.tir:8192,8192,8192
)
i=0
for entry in "${BENCH[@]}"; do
  IFS=: read -r target file shape <<<"$entry"
  for side in before after; do
    bin="$OLD"; [ "$side" = after ] && bin="$NEW"
    tmp="$(mktemp -d)"
    "$bin" bench "$file" --shape "$shape" --target "$target" --bundle "$tmp" >/dev/null
    d="$(printf '%02d' "$i")-$side"
    mv "$tmp"/* "$DEV/bench/$d" && rmdir "$tmp"
    sed -i "s|\"label\": \"|\"label\": \"$side: |" "$DEV/bench/$d/bench.json"
  done
  i=$((i + 1))
done
# Ragged shapes: every masked store path (vector, scalar fallbacks, nothing) against the interpreter.
"$NEW" bundle examples/gemm.tir -o "$DEV/check/gemm_513x1000x264" --shape 513,1000,264 --target sm_90
"$NEW" bundle examples/gemm.tir -o "$DEV/check/gemm_200x72x40" --shape 200,72,40 --target sm_90
"$NEW" bundle examples/gemm_256x128.tir -o "$DEV/check/gemm_256x128_513x1000x264" --shape 513,1000,264 --target sm_90
"$NEW" bundle examples/gemm_bf16_256x128.tir -o "$DEV/check/gemm_bf16_256x128_513x1000x264" --shape 513,1000,264 --target sm_90
"$NEW" bundle examples/gemm_hopper.tir -o "$DEV/check/gemm_hopper_513x1000x264" --shape 513,1000,264 --target sm_90a
"$NEW" bundle examples/attention_fwd.tir -o "$DEV/check/attention_fwd_2x100x64" --arg Q=2x100x64 --arg K=2x100x64 --arg V=2x100x64 --arg O=2x100x64 --target sm_90
du -sh "$DEV"
