#!/usr/bin/env bash
# lead call 2: variants, gpu-suite's bench, the MLIR bundles + sanitizers, ncu on gemm_hopper 4096^3
OUT="$1"; ROOT="$(pwd)"
cd "$ROOT/.device-var" && chmod +x tilec-gpu-runner
./tilec-gpu-runner bench bench/*/* --json "$OUT/variants.jsonl" > "$OUT/variants.log" 2>&1
cd "$ROOT/.device" && chmod +x tilec-gpu-runner
{ ./tilec-gpu-runner bundles-mlir/*; for tool in memcheck racecheck; do echo "== $tool"; compute-sanitizer --tool $tool ./tilec-gpu-runner bundles-mlir/gemm_256x128_261x133x67 bundles-mlir/softmax_100x150 bundles-mlir/b2b_through_shared_200x96 bundles-mlir/attention_fwd_d128_2x100x128 bundles-mlir/wgmma_gemm_hopper_261x133x67 bundles-mlir/wgmma_attention_fwd_d128_2x300x128 2>&1 | tail -4; done; } > "$OUT/mlir.log" 2>&1
./tilec-gpu-runner bench bench/* bench-sm90a/* --json "$OUT/bench.jsonl" > "$OUT/bench.log" 2>&1
cd "$ROOT/.device-var"
timeout 120 ncu --clock-control none -k regex:gemm --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section Occupancy --section LaunchStats --print-details all \
  ./tilec-gpu-runner bench bench/hopper_default/gemm_hopper_4096x4096x4096 > "$OUT/ncu.txt" 2>&1
