#!/usr/bin/env bash
set -uo pipefail
OUT="$1"; cd "$(dirname "${BASH_SOURCE[0]}")"; chmod +x tilec-gpu-runner
nvidia-smi -L > "$OUT/bench.log"
for round in 1 2; do
args=(); for b in bench/*-base; do p="${b%-base}"; args+=("$b" "$p-new" "$p-new" "$b"); done
./tilec-gpu-runner bench "${args[@]}" --json "$OUT/bench$round.jsonl" >> "$OUT/bench.log" 2>&1
done
tail -n 30 "$OUT/bench.log"
