#!/usr/bin/env bash
# docs/bench-masks-2026-11-25/prepare-check.sh BASE NEW: after conjunctions_as_and (lower-ptx/src/llvm/nvptx_target.rs),
# the new PTX against the interpreter (every kernel kind whose PTX changed, ragged shapes, both backends) and the
# attention kernels timed base/new/new/base. Writes .device-mc/ (carried to the GPU machine). Device command:
#   cd .device-mc && bash run.sh "$OUT"
set -euo pipefail
BASE="${1:?usage: prepare-check.sh BASE_TILEC NEW_TILEC}" NEW="${2:?}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
DEV="$ROOT/.device-mc"
rm -rf "$DEV" && mkdir -p "$DEV/attn" "$DEV/check"
cp target/release/tilec-gpu-runner "$DEV/"
cp docs/bench-masks-2026-11-25/run.sh "$DEV/"
export TILEC_CACHE=0
# Attention (timing bundles, the runner makes the inputs): scripts/bench-attention.sh's shapes.
attn() { # NAME SRC BH S D TARGET
  local flops=$((4 * $3 * $4 * $4 * $5)); case "$1" in causal*) flops=$((flops / 2));; esac
  for side in base new; do
    bin="$BASE"; [ "$side" = new ] && bin="$NEW"
    "$bin" bundle "$2" -o "$DEV/attn/$1-$side" --target "$6" --no-oracle --repeat 20 --warmup 3 --flops "$flops" \
      --param "D=$5" --arg "Q=$3x$4x$5" --arg "K=$3x$4x$5" --arg "V=$3x$4x$5" --arg "O=$3x$4x$5" >/dev/null
  done
}
attn d64 examples/attention_fwd.tir 128 4096 64 sm_90
attn d128 examples/attention_fwd.tir 128 4096 128 sm_90
attn causal_d64 examples/attention_fwd_causal.tir 128 4096 64 sm_90
attn d64_sm90a examples/attention_fwd.tir 128 4096 64 sm_90a
# Correctness of the new PTX against the interpreter.
c=(--target sm_90)
h=(--target sm_90a)
B() { "$NEW" bundle "$@" >/dev/null; }
for shape in 200,72,40 513,1000,264 70,76,66; do B examples/gemm.tir -o "$DEV/check/gemm_${shape//,/x}" --shape "$shape" "${c[@]}"; done
B examples/gemm.tir -o "$DEV/check/gemm_sm80_130x136x96" --shape 130,136,96 --target sm_80
B examples/gemm_256x128.tir -o "$DEV/check/gemm_256x128_261x133x67" --shape 261,133,67 "${c[@]}"
B examples/gemm_256x128.tir -o "$DEV/check/gemm_256x128_300x260x232" --shape 300,260,232 "${c[@]}"
B examples/gemm_bf16_256x128.tir -o "$DEV/check/gemm_bf16_256x128_261x133x67" --shape 261,133,67 "${c[@]}"
B examples/gemm_s8.tir -o "$DEV/check/gemm_s8_67x45x37" --shape 67,45,37 "${c[@]}"
B examples/gemm_s8_b_col.tir -o "$DEV/check/gemm_s8_b_col_67x45x38" --shape 67,45,38 "${c[@]}"
B examples/gemm_s8_128.tir -o "$DEV/check/gemm_s8_128_200x80x48" --shape 200,80,48 "${c[@]}"
B examples/gemm_ab_col.tir -o "$DEV/check/gemm_ab_col_67x45x37" --shape 67,45,37 "${c[@]}"
B examples/gemm_a_col.tir -o "$DEV/check/gemm_a_col_200x72x40" --shape 200,72,40 "${c[@]}"
B examples/gemm_b_col.tir -o "$DEV/check/gemm_b_col_200x72x40" --shape 200,72,40 "${c[@]}"
B examples/gemm_bf16.tir -o "$DEV/check/gemm_bf16_200x72x40" --shape 200,72,40 "${c[@]}"
B examples/gemm_f16_out.tir -o "$DEV/check/gemm_f16_out_67x45x37" --shape 67,45,37 --arg alpha=2 --arg beta=-1 "${c[@]}"
B examples/gemm_bf16_out.tir -o "$DEV/check/gemm_bf16_out_200x72x40" --shape 200,72,40 --arg alpha=0.5 --arg beta=3 "${c[@]}"
B examples/gemm_epilogue.tir -o "$DEV/check/gemm_epilogue_72x80x48" --shape 72,80,48 --arg alpha=2 --arg beta=-1 "${c[@]}"
B examples/gemm_batched.tir -o "$DEV/check/gemm_batched_5x200x72x40" --arg A=5x200x40 --arg B=5x40x72 --arg C=5x200x72 "${c[@]}"
B examples/softmax.tir -o "$DEV/check/softmax_100x150" --arg x=100x150 --arg y=100x150 "${c[@]}"
B examples/layernorm.tir -o "$DEV/check/layernorm_100x150" --arg x=100x150 --arg gamma=1x150 --arg beta=1x150 --arg y=100x150 "${c[@]}"
B examples/elementwise.tir -o "$DEV/check/elementwise_100x80" --arg x=100x80 --arg y=100x80 --arg s=0.5 "${c[@]}"
B examples/attention_fwd.tir -o "$DEV/check/attention_fwd_2x100x64" --arg Q=2x100x64 --arg K=2x100x64 --arg V=2x100x64 --arg O=2x100x64 "${c[@]}"
B examples/attention_fwd_causal.tir -o "$DEV/check/attention_fwd_causal_2x150x64" --arg Q=2x150x64 --arg K=2x150x64 --arg V=2x150x64 --arg O=2x150x64 "${c[@]}"
B examples/attention_fwd.tir --param D=128 --param BM=128 --param num_warps=8 --param BN=64 -o "$DEV/check/attention_fwd_d128_bm128_2x300x128" --arg Q=2x300x128 --arg K=2x300x128 --arg V=2x300x128 --arg O=2x300x128 "${c[@]}"
B examples/gemm_bias_relu.tir -o "$DEV/check/gemm_bias_relu_200x136x72" --arg A=200x72 --arg B=72x136 --arg bias=1x136 --arg C=200x136 "${c[@]}"
B examples/gemm_bias_relu_1d.tir -o "$DEV/check/gemm_bias_relu_1d_200x136x72" --arg A=200x72 --arg B=72x136 --arg bias=136 --arg C=200x136 "${c[@]}"
B examples/gemm_bias_gelu.tir -o "$DEV/check/gemm_bias_gelu_200x136x72" --arg A=200x72 --arg B=72x136 --arg bias=1x136 --arg C=200x136 "${c[@]}"
mkdir -p "$DEV/b2b-inputs" && python3 tests/lit/cli/Inputs/b2b_inputs.py "$DEV/b2b-inputs" 200 96
B examples/b2b_gemm.tir -o "$DEV/check/b2b_gemm_200x96" --arg A=200x96 --arg B=96x64 --arg D=200x64 --input A="$DEV/b2b-inputs/A.txt" --input B="$DEV/b2b-inputs/B.txt" --input C="$DEV/b2b-inputs/C.txt" "${c[@]}"
B examples/gemm.tir -o "$DEV/check/wgmma_gemm_513x1000x264" --shape 513,1000,264 "${h[@]}"
B examples/gemm.tir -o "$DEV/check/wgmma_gemm_70x76x66" --shape 70,76,66 "${h[@]}"
B examples/gemm_256x128.tir -o "$DEV/check/gemm_256x128_sm90a_261x136x72" --shape 261,136,72 "${h[@]}"
B examples/gemm_hopper.tir -o "$DEV/check/wgmma_gemm_hopper_261x133x67" --shape 261,133,67 "${h[@]}"
B examples/gemm_hopper.tir -o "$DEV/check/wgmma_gemm_hopper_300x200x136" "${h[@]}"
B examples/gemm_bf16_hopper.tir -o "$DEV/check/wgmma_gemm_bf16_hopper_300x200x136" "${h[@]}"
B examples/gemm_s8_hopper.tir -o "$DEV/check/wgmma_gemm_s8_hopper_261x133x70" --shape 261,133,70 "${h[@]}"
B examples/gemm_s8_hopper.tir -o "$DEV/check/wgmma_gemm_s8_hopper_261x133x528" --shape 261,133,528 "${h[@]}"
B examples/gemm_bias_relu.tir -o "$DEV/check/wgmma_gemm_bias_relu_200x136x72" --arg A=200x72 --arg B=72x136 --arg bias=1x136 --arg C=200x136 "${h[@]}"
B examples/attention_fwd.tir -o "$DEV/check/wgmma_attention_fwd_2x100x64" --arg Q=2x100x64 --arg K=2x100x64 --arg V=2x100x64 --arg O=2x100x64 "${h[@]}"
B examples/gemm_hopper.tir -o "$DEV/check/persistent_gemm_hopper_300x200x136" --shape 300,200,136 --param persistent=true "${h[@]}"
# The same kinds through the MLIR backend (its code generation is the LLVM backend's since 2f12e98).
m=(--target sm_90 --backend mlir)
B examples/gemm.tir -o "$DEV/check/mlir_gemm_200x72x40" --shape 200,72,40 "${m[@]}"
B examples/gemm_b_col.tir -o "$DEV/check/mlir_gemm_b_col_200x72x40" --shape 200,72,40 "${m[@]}"
B examples/gemm_s8_128.tir -o "$DEV/check/mlir_gemm_s8_128_200x80x48" --shape 200,80,48 "${m[@]}"
B examples/gemm_batched.tir -o "$DEV/check/mlir_gemm_batched_5x200x72x40" --arg A=5x200x40 --arg B=5x40x72 --arg C=5x200x72 "${m[@]}"
B examples/softmax.tir -o "$DEV/check/mlir_softmax_100x150" --arg x=100x150 --arg y=100x150 "${m[@]}"
B examples/attention_fwd_causal.tir -o "$DEV/check/mlir_attention_fwd_causal_2x150x64" --arg Q=2x150x64 --arg K=2x150x64 --arg V=2x150x64 --arg O=2x150x64 "${m[@]}"
B examples/gemm_hopper.tir -o "$DEV/check/mlir_wgmma_gemm_hopper_261x133x67" --shape 261,133,67 --target sm_90a --backend mlir
du -sh "$DEV"
