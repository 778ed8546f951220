#!/usr/bin/env bash
# wgpipe device call 2: warp-specialized variants vs the in-flight ring, correctness, sanitizers, ncu.
cd "$(dirname "$0")"
OUT="$1"
chmod +x tilec-gpu-runner
{ nvidia-smi -L; date; } > "$OUT/log" 2>&1
timeout 90 ./tilec-gpu-runner check2/* >> "$OUT/log" 2>&1; echo "check rc=$?" >> "$OUT/log"
tar czf "$OUT/outs2.tgz" check2/*/*.out.bin 2>>"$OUT/log"
timeout 240 ./tilec-gpu-runner bench bench2/* --json "$OUT/bench2.jsonl" > "$OUT/bench2.log" 2>&1; echo "bench rc=$?" >> "$OUT/log"
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool ./tilec-gpu-runner check2/w256x128_k64_s4 > "$OUT/san-$tool.log" 2>&1
done
timeout 120 ncu --clock-control none -k regex:gemm --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section LaunchStats --print-details all \
  ./tilec-gpu-runner bench bench2/w256x128_k64_s4_4096x4096x4096 > "$OUT/ncu2.txt" 2>&1
date >> "$OUT/log"
