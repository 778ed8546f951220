#!/usr/bin/env bash
OUT="$1"; ROOT="$(pwd)"
cd "$ROOT/.device-chk" && chmod +x tilec-gpu-runner
{ ./tilec-gpu-runner llvm/* mlir/*; for tool in memcheck racecheck synccheck; do echo "== $tool"; timeout 90 compute-sanitizer --tool $tool ./tilec-gpu-runner llvm/gemm_hopper_261x133x67 llvm/gemm_hopper_ws_300x200x136 mlir/gemm_bf16_hopper_300x200x136 2>&1 | tail -3; done; } > "$OUT/check.log" 2>&1
cd "$ROOT" && bash scripts/bench-hopper.sh device "$OUT" > "$OUT/hopper.log" 2>&1
cd "$ROOT/.device-hopper" && H=$(ls -d bench-hopper/*gemm_hopper*4096x4096x4096* | head -1); echo "$H" > "$OUT/ncu.txt"
timeout 100 ncu --clock-control none -k regex:gemm --launch-skip 3 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --print-details all ../.device-chk/tilec-gpu-runner bench "$H" >> "$OUT/ncu.txt" 2>&1
