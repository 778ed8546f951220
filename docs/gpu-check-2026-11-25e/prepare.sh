#!/usr/bin/env bash
# docs/gpu-check-2026-11-25e/prepare.sh: the GPU check of the MLIR backend after it started generating code
# through the LLVM backend's NvptxTargetMachine (TILEC_PIPELINE instead of MLIR's default<O3>, noundef
# parameters). Every kernel whose SASS moved, through the MLIR backend, sm_90 (sm_90a for the Hopper ones):
# the ten seed programs on the seeds' own inputs (checked bit for bit against the printed tables), mma,
# copy_s2r, attention (plain, causal, d128), layernorm, softmax, elementwise, TMA copies; and, unchanged in
# SASS but run anyway, a ragged GEMM per tile kind. Writes .device-e/ (carried to the GPU machine).
#
#   bash docs/gpu-check-2026-11-25e/prepare.sh
#   device: cd .device-e && ./tilec-gpu-runner bundles-mlir/* > $OUT/run.log 2>&1;
#           compute-sanitizer --tool memcheck ./tilec-gpu-runner bundles-mlir/attention_fwd_2x100x64 \
#             bundles-mlir/layernorm_100x150 bundles-mlir/tma_copy_100x72 > $OUT/memcheck.log 2>&1;
#           tar czf $OUT/outs-mlir.tgz bundles-mlir/*/*.out.bin
#   here:   bash docs/gpu-check-2026-11-25e/prepare.sh check DIR_WITH_outs-mlir.tgz
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
DEV="$ROOT/.device-e"
TILEC="$ROOT/target/release/tilec"
SEEDS="${SEEDS:-$ROOT/../shared/seeds}"
if [ "${1:-}" = check ]; then
  tar xzf "${2:?usage: prepare.sh check DIR}/outs-mlir.tgz" -C "$DEV"
  status=0
  for b in "$DEV"/bundles-mlir/*/; do
    b="${b%/}" golden=()
    case "$(basename "$b")" in seed_*)
      for g in "$DEV/seed-inputs/$(basename "$b")"/*.golden.txt; do golden+=(--golden "$(basename "$g" .golden.txt)=$g"); done ;;
    esac
    "$TILEC" compare "$b" ${golden[@]+"${golden[@]}"} || status=1
  done
  exit $status
fi
cargo build --release -p tilec -p tilec-gpu-runner -p tilec-tests
rm -rf "$DEV" && mkdir -p "$DEV/bundles-mlir"
cp target/release/tilec-gpu-runner "$DEV/"
target/release/seed-inputs --seeds "$SEEDS" "$DEV/seed-inputs"
out="$DEV/bundles-mlir"
b=(--target sm_90 --backend mlir)
h=(--target sm_90a --backend mlir)
for f in examples/seeds/*.tir; do
  name="seed_$(basename "$f" .tir)" inputs=()
  for t in "$DEV/seed-inputs/$name"/*.txt; do
    case "$t" in *.golden.txt) continue ;; esac
    inputs+=(--input "$(basename "$t" .txt)=$t")
  done
  "$TILEC" bundle "$f" -o "$out/$name" "${b[@]}" "${inputs[@]}"
done
"$TILEC" bundle examples/mma.tir -o "$out/mma" "${b[@]}"
"$TILEC" bundle examples/copy_s2r.tir -o "$out/copy_s2r" "${b[@]}"
"$TILEC" bundle examples/attention_fwd.tir -o "$out/attention_fwd_2x100x64" --arg Q=2x100x64 --arg K=2x100x64 --arg V=2x100x64 --arg O=2x100x64 "${b[@]}"
"$TILEC" bundle examples/attention_fwd_causal.tir -o "$out/attention_fwd_causal_2x150x64" --arg Q=2x150x64 --arg K=2x150x64 --arg V=2x150x64 --arg O=2x150x64 "${b[@]}"
"$TILEC" bundle examples/attention_fwd.tir --param D=128 -o "$out/attention_fwd_d128_2x100x128" --arg Q=2x100x128 --arg K=2x100x128 --arg V=2x100x128 --arg O=2x100x128 "${b[@]}"
"$TILEC" bundle examples/layernorm.tir -o "$out/layernorm_100x150" --arg x=100x150 --arg gamma=1x150 --arg beta=1x150 --arg y=100x150 "${b[@]}"
"$TILEC" bundle examples/softmax.tir -o "$out/softmax_100x150" --arg x=100x150 --arg y=100x150 "${b[@]}"
"$TILEC" bundle examples/elementwise.tir -o "$out/elementwise_100x80" --arg x=100x80 --arg y=100x80 --arg s=0.5 "${b[@]}"
"$TILEC" bundle examples/hopper/tma_copy.tir -o "$out/tma_copy_100x72" --arg A=100x72 --arg B=100x72 --grid 2,2,1 "${h[@]}"
"$TILEC" bundle examples/hopper/tma_copy.tir -o "$out/tma_copy_fill_128x128" --arg A=100x72 --arg B=128x128 --grid 2,2,1 "${h[@]}"
"$TILEC" bundle examples/hopper/mbarrier_rounds.tir -o "$out/mbarrier_rounds" "${h[@]}"
"$TILEC" bundle examples/attention_fwd.tir -o "$out/wgmma_attention_fwd_2x100x64" --arg Q=2x100x64 --arg K=2x100x64 --arg V=2x100x64 --arg O=2x100x64 "${h[@]}"
"$TILEC" bundle examples/gemm.tir -o "$out/gemm_513x1000x264" --shape 513,1000,264 "${b[@]}"
"$TILEC" bundle examples/gemm_256x128.tir -o "$out/gemm_256x128_261x133x67" --shape 261,133,67 "${b[@]}"
"$TILEC" bundle examples/gemm_s8.tir -o "$out/gemm_s8_67x45x37" --shape 67,45,37 "${b[@]}"
"$TILEC" bundle examples/gemm_hopper.tir -o "$out/wgmma_gemm_hopper_261x133x67" --shape 261,133,67 "${h[@]}"
"$TILEC" bundle examples/gemm_hopper.tir -o "$out/wgmma_gemm_hopper_300x200x136" "${h[@]}"
"$TILEC" bundle examples/gemm_bf16_hopper.tir -o "$out/wgmma_gemm_bf16_hopper_300x200x136" "${h[@]}"
du -sh "$DEV"
