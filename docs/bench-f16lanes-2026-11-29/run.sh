#!/usr/bin/env bash
# The device half of docs/bench-f16lanes-2026-11-29/prepare.sh (repository root, .device-f16 carried).
set -uo pipefail
OUT="${1:?usage: run.sh OUT}"
cd "$(dirname "${BASH_SOURCE[0]}")"
chmod +x tilec-gpu-runner
nvidia-smi -L > "$OUT/check.log"
./tilec-gpu-runner check/* >> "$OUT/check.log" 2>&1
compute-sanitizer --tool memcheck ./tilec-gpu-runner check/f16out_sm90a_llvm check/gemm_f16_out_llvm > "$OUT/memcheck.log" 2>&1
args=(); for b in time/*-base; do p="${b%-base}"; args+=("$b" "$p-new" "$p-new" "$b"); done
./tilec-gpu-runner --json "$OUT/time.jsonl" "${args[@]}" > "$OUT/time.log" 2>&1
args=(); for b in bench/*-base; do p="${b%-base}"; args+=("$b" "$p-new" "$p-new" "$b"); done
./tilec-gpu-runner bench "${args[@]}" --json "$OUT/bench.jsonl" > "$OUT/bench.log" 2>&1
tail -n 4 "$OUT"/*.log
