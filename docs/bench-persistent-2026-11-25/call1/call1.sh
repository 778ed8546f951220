#!/usr/bin/env bash
# persistent-grid helper, GPU call 1: check bundles (P capped at 2 blocks so blocks run several tiles), sanitizers, bench.
OUT="$1"
cd "$(dirname "$0")"
chmod +x tilec-gpu-runner
{ nvidia-smi -L; TILEC_PERSISTENT_MAX_BLOCKS=2 ./tilec-gpu-runner bundles/* bundles-mlir/*; } > "$OUT/run.log" 2>&1
tar czf "$OUT/outs-llvm.tgz" bundles/*/*.out.bin
tar czf "$OUT/outs-mlir.tgz" bundles-mlir/*/*.out.bin
for tool in racecheck memcheck synccheck; do
  TILEC_PERSISTENT_MAX_BLOCKS=2 compute-sanitizer --tool $tool ./tilec-gpu-runner bundles/hopper_p_261x136x72 bundles/hopper_p_300x200x136 bundles-mlir/hopper_p_400x520x200 bundles/hopper_p_261x133x67 > "$OUT/$tool.log" 2>&1
done
./tilec-gpu-runner bench bench/*/* --json "$OUT/bench.jsonl" > "$OUT/bench.log" 2>&1
