#!/usr/bin/env bash
# wgpipe device call 1: bench (wgmma in flight vs main's schedule), correctness bundles, sanitizers, ncu.
cd "$(dirname "$0")"
OUT="$1"
chmod +x tilec-gpu-runner
{ nvidia-smi -L; date; } > "$OUT/log" 2>&1
./tilec-gpu-runner check/* >> "$OUT/log" 2>&1
tar czf "$OUT/outs.tgz" check/*/*.out.bin 2>>"$OUT/log"
./tilec-gpu-runner bench bench/* --json "$OUT/bench.jsonl" > "$OUT/bench.log" 2>&1
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool ./tilec-gpu-runner check/n256x128_k64_s4 > "$OUT/san-$tool.log" 2>&1
done
timeout 150 ncu --clock-control none -k regex:gemm --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section Occupancy --section LaunchStats --print-details all \
  ./tilec-gpu-runner bench bench/n256x128_k64_s4_4096x4096x4096 > "$OUT/ncu.txt" 2>&1
date >> "$OUT/log"
