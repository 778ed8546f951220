#!/usr/bin/env bash
# Bundles for the GPU check of packed_half_lanes (lower-ptx/src/llvm/nvptx_target.rs), 2026-11-29:
#   bash docs/bench-f16lanes-2026-11-29/prepare.sh BASE NEW   # here; writes .device-f16/
#   (device, carry [".device-f16"]): bash .device-f16/run.sh "$OUT"
# Timing (base/new/new/base in one runner process): the batched GEMM with f16 output on sm_90a through both
# backends (the kernel whose wgmma ptxas serialised), gemm_batched.tir with f32 output beside it (unchanged PTX),
# and the changed mma.sync epilogues (gemm_f16_out, gemm_bf16_out at 4096^3, sm_90). Checks: NEW's PTX of every
# kernel whose PTX changed, against the interpreter at ragged shapes; memcheck on two.
set -euo pipefail
BASE="${1:?BASE tilec}" NEW="${2:?NEW tilec}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEV="$ROOT/.device-f16"
cd "$ROOT"
rm -rf "$DEV" && mkdir -p "$DEV/time" "$DEV/bench" "$DEV/check"
cargo build --release -q -p tilec-gpu-runner
cp target/release/tilec-gpu-runner "$DEV/"
cp docs/bench-f16lanes-2026-11-29/run.sh "$DEV/run.sh"
export TILEC_CACHE=0
Z=16 M=2048 N=2048 K=2048
flops=$((2 * Z * M * N * K))
for side in base new; do
  bin="$BASE"; [ "$side" = new ] && bin="$NEW"
  for be in llvm mlir; do
    "$bin" bundle examples/gemm_batched_f16_out.tir -o "$DEV/time/f16out_${be}-$side" --target sm_90a --backend "$be" \
      --no-oracle --repeat 30 --warmup 5 --flops "$flops" --arg "A=${Z}x${M}x${K}" --arg "B=${Z}x${K}x${N}" --arg "C=${Z}x${M}x${N}" >/dev/null
  done
  "$bin" bundle examples/gemm_batched.tir -o "$DEV/time/f32out_llvm-$side" --target sm_90a \
    --no-oracle --repeat 30 --warmup 5 --flops "$flops" --arg "A=${Z}x${M}x${K}" --arg "B=${Z}x${K}x${N}" --arg "C=${Z}x${M}x${N}" >/dev/null
  i=0
  for f in gemm_f16_out gemm_bf16_out; do
    tmp="$(mktemp -d)"
    "$bin" bench "examples/$f.tir" --shape 4096,4096,4096 --target sm_90 --bundle "$tmp" >/dev/null
    mv "$tmp"/* "$DEV/bench/$i-$side" && rmdir "$tmp"
    sed -i "s|\"label\": \"|\"label\": \"$side: |" "$DEV/bench/$i-$side/bench.json"
    i=$((i + 1))
  done
done
B() { "$NEW" bundle "$@" >/dev/null; }
h=(--target sm_90a) c=(--target sm_90)
for be in llvm mlir; do
  B examples/gemm_batched_f16_out.tir -o "$DEV/check/f16out_sm90a_${be}" --arg A=3x200x72 --arg B=3x72x136 --arg C=3x200x136 "${h[@]}" --backend "$be"
  B examples/gemm_batched_f16_out.tir -o "$DEV/check/f16out_sm90_${be}" --arg A=3x67x40 --arg B=3x40x45 --arg C=3x67x45 "${c[@]}" --backend "$be"
  B examples/gemm_f16_out.tir -o "$DEV/check/gemm_f16_out_${be}" --shape 67,45,37 --arg alpha=2 --arg beta=-1 "${c[@]}" --backend "$be"
  B examples/gemm_bf16_out.tir -o "$DEV/check/gemm_bf16_out_${be}" --shape 200,72,40 --arg alpha=0.5 --arg beta=3 "${c[@]}" --backend "$be"
  B examples/gemm_epilogue.tir -o "$DEV/check/gemm_epilogue_${be}" --shape 72,80,48 --arg alpha=2 --arg beta=-1 "${c[@]}" --backend "$be"
  B examples/gemm_bias_gelu.tir -o "$DEV/check/gemm_bias_gelu_${be}" --arg A=200x72 --arg B=72x136 --arg bias=1x136 --arg C=200x136 "${c[@]}" --backend "$be"
  B examples/gemm_bias_gelu.tir -o "$DEV/check/gemm_bias_gelu_sm90a_${be}" --arg A=200x72 --arg B=72x136 --arg bias=1x136 --arg C=200x136 "${h[@]}" --backend "$be"
done
du -sh "$DEV"
