#!/usr/bin/env bash
# scripts/bench-hopper.sh: the sm_90a GEMMs of issue 18 against cuBLAS, in one process on the same inputs
# (tilec-gpu-runner bench: each result checked against cuBLAS's, CUDA-event timed, median of 50 after 10
# warm-up launches), fp16 and bf16, at 2048^3, 4096^3, 8192^3 and two odd shapes (4095x4097x4096: N not a
# multiple of 8, so B's rows are not 16-byte aligned and tilec bench compiles the narrower-copy variant;
# 8192x8192x1000: a short K).
#
#   scripts/bench-hopper.sh prepare [DEV]    here: build tilec and the runner, write one bench bundle per
#                                            kernel and shape into DEV/bench-hopper (DEV: .device-hopper)
#   bash scripts/bench-hopper.sh device OUT [DEV]
#                                            on the GPU machine, with DEV carried: run them, writing
#                                            OUT/bench-hopper.jsonl and OUT/bench-hopper.log
#   python3 scripts/bench_hopper_table.py OUT/bench-hopper.jsonl
#                                            here: the README table (kernel, shape, TF/s, cuBLAS, ratio)
#
# Kernels: the Hopper configurations (examples/gemm_hopper.tir, gemm_bf16_hopper.tir: 128x256x64, 8 warps,
# 3 stages, wgmma, A and B by TMA) through the LLVM and the MLIR backend, and for comparison the sm_80/sm_90
# configuration of the same kernel (gemm_256x128.tir, gemm_bf16_256x128.tir: BK = 32) compiled for sm_90a.
# Variants of a kernel: add `FILE:BACKEND:--param NAME=V ...` entries (tilec bench --param; the settings name
# the bundle and appear in the label).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

SHAPES=(2048,2048,2048 4096,4096,4096 8192,8192,8192 4095,4097,4096 8192,8192,1000)
KERNELS=(
  examples/gemm_hopper.tir:llvm
  examples/gemm_bf16_hopper.tir:llvm
  examples/gemm_hopper.tir:mlir
  examples/gemm_bf16_hopper.tir:mlir
  examples/gemm_256x128.tir:llvm
  examples/gemm_bf16_256x128.tir:llvm
)

case "${1:-}" in
prepare)
  DEV="${2:-$ROOT/.device-hopper}"
  cd "$ROOT"
  cargo build --release -p tilec -p tilec-gpu-runner
  TILEC="${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec"
  rm -rf "$DEV/bench-hopper" && mkdir -p "$DEV/bench-hopper"
  cp "${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec-gpu-runner" "$DEV/"
  shapes=()
  for s in "${SHAPES[@]}"; do shapes+=(--shape "$s"); done
  for entry in "${KERNELS[@]}"; do
    IFS=: read -r file backend params <<<"$entry"
    # shellcheck disable=SC2086 # the --param words of an entry
    "$TILEC" bench "$file" "${shapes[@]}" --target sm_90a --backend "$backend" $params --bundle "$DEV/bench-hopper"
  done
  du -sh "$DEV"
  ;;
device)
  OUT="${2:?usage: bench-hopper.sh device OUT_DIR [DEV]}"
  DEV="${3:-$ROOT/.device-hopper}"
  cd "$DEV"
  chmod +x tilec-gpu-runner
  { nvidia-smi -L; ./tilec-gpu-runner bench bench-hopper/* --json "$OUT/bench-hopper.jsonl"; } 2>&1 | tee "$OUT/bench-hopper.log"
  ;;
*)
  sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 1
  ;;
esac
