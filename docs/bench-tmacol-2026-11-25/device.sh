#!/usr/bin/env bash
# Device commands of the tmacol helper (TMA for column-major B): checks through both backends, memcheck, bench.
set -u
OUT="$1"
cd "$(dirname "$0")"
chmod +x tilec-gpu-runner
nvidia-smi -L > "$OUT/check.log" 2>&1
./tilec-gpu-runner bundles/llvm/* bundles/mlir/* >> "$OUT/check.log" 2>&1; echo "runner rc=$?" >> "$OUT/check.log"
compute-sanitizer --tool memcheck ./tilec-gpu-runner bundles/llvm/s8_hopper_261x133x528 bundles/mlir/s8_hopper_261x133x528 bundles/llvm/b_col_300x200x136 bundles/mlir/a_col_200x136x72 > "$OUT/memcheck.log" 2>&1; echo "memcheck rc=$?" >> "$OUT/memcheck.log"
tar czf "$OUT/outs.tgz" bundles/*/*/*.out.bin
./tilec-gpu-runner bench bench/*/* --json "$OUT/bench.jsonl" > "$OUT/bench.log" 2>&1; echo "bench rc=$?" >> "$OUT/bench.log"
