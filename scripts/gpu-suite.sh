#!/usr/bin/env bash
# scripts/gpu-suite.sh: the GPU checks, in three steps (the GPU machine has no Rust, LLVM or MLIR).
#
#   scripts/gpu-suite.sh prepare     # here: build tilec + the small runner, write bundles into .device/
#   (on the GPU machine, from the repository root, with .device carried):
#       bash scripts/gpu-suite.sh device "$OUT"
#   scripts/gpu-suite.sh check DIR   # here: unpack the results (DIR holds outs.tgz) and compare with the oracles
#
# Bundles: every seed experiment (oracle: the warp simulator, itself bit-exact against the seeds), the
# tile examples (oracle: the reference interpreter), and the GEMM at several shapes, some ragged.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEV="$ROOT/.device"
TARGET="${TARGET:-sm_90}"
cd "$ROOT"

case "${1:-}" in
prepare)
  cargo build --release -p tilec -p tilec-gpu-runner
  TILEC="${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec"
  rm -rf "$DEV" && mkdir -p "$DEV/bundles" "$DEV/bench"
  cp "${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec-gpu-runner" "$DEV/"
  for f in examples/seeds/*.tir; do
    "$TILEC" bundle "$f" -o "$DEV/bundles/seed_$(basename "$f" .tir)" --target "$TARGET"
  done
  "$TILEC" bundle examples/mma.tir -o "$DEV/bundles/mma" --target "$TARGET"
  "$TILEC" bundle examples/copy_s2r.tir -o "$DEV/bundles/copy_s2r" --target "$TARGET"
  for shape in 128,128,32 200,72,40 256,256,256 513,1000,264 1024,1024,1024; do
    "$TILEC" bundle examples/gemm.tir -o "$DEV/bundles/gemm_${shape//,/x}" --shape "$shape" --target "$TARGET"
  done
  "$TILEC" bundle examples/gemm_epilogue.tir -o "$DEV/bundles/gemm_epilogue_72x80x48" --shape 72,80,48 --arg alpha=2 --arg beta=-1 --target "$TARGET"
  "$TILEC" bundle examples/gemm_s8.tir -o "$DEV/bundles/gemm_s8_72x48x80" --shape 72,48,80 --target "$TARGET"
  # Timing runs: inputs made on the GPU machine, no oracle (the checked runs above cover correctness).
  for shape in 1024,1024,1024 2048,2048,2048 4096,4096,4096 8192,8192,8192; do
    "$TILEC" bundle examples/gemm.tir -o "$DEV/bench/gemm_${shape//,/x}" --shape "$shape" --target "$TARGET" --no-oracle --repeat 20
  done
  du -sh "$DEV"
  ;;
device)
  OUT="${2:?usage: gpu-suite.sh device OUT_DIR}"
  cd "$DEV"
  chmod +x tilec-gpu-runner
  { nvidia-smi -L; ./tilec-gpu-runner bundles/*; } 2>&1 | tee "$OUT/run.log" || true
  for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" ./tilec-gpu-runner bundles/gemm_200x72x40 bundles/gemm_256x256x256 > "$OUT/$tool.log" 2>&1 || true
  done
  tar czf "$OUT/outs.tgz" bundles/*/*.out.bin
  # Timing: tilec's GEMM (median of 20 launches) and cuBLAS through torch at the same shapes, same run.
  { ./tilec-gpu-runner bench/*; python3 "$ROOT/scripts/cublas_baseline.py" 1024,1024,1024 2048,2048,2048 4096,4096,4096 8192,8192,8192; } 2>&1 | tee "$OUT/bench.log" || true
  ;;
check)
  IN="${2:?usage: gpu-suite.sh check DIR_WITH_outs.tgz}"
  TILEC="${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec"
  tar xzf "$IN/outs.tgz" -C "$DEV"
  status=0
  for b in "$DEV"/bundles/*/; do
    "$TILEC" compare "${b%/}" || status=1
  done
  exit $status
  ;;
*)
  sed -n 2,10p "$0"; exit 1 ;;
esac
