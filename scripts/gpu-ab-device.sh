#!/usr/bin/env bash
# The device half of scripts/gpu-ab.sh (run from the repository root with .device-ab carried):
#   bash .device-ab/run.sh "$OUT"
set -uo pipefail
OUT="${1:?usage: run.sh OUT}"
cd "$(dirname "${BASH_SOURCE[0]}")"
chmod +x tilec-gpu-runner
nvidia-smi -L > "$OUT/check.log"
TILEC_PERSISTENT_MAX_BLOCKS=2 ./tilec-gpu-runner check/* >> "$OUT/check.log" 2>&1
compute-sanitizer --tool memcheck ./tilec-gpu-runner check/gemm_200x72x40 check/gemm_256x128_261x133x67 \
  check/softmax_100x150 check/attention_fwd_2x100x64 check/wgmma_gemm_hopper_261x133x67 > "$OUT/memcheck.log" 2>&1
args=(); for b in bench/*-base; do [ -d "$b" ] || continue; p="${b%-base}"; args+=("$b" "$p-new" "$p-new" "$b"); done
[ ${#args[@]} -eq 0 ] || ./tilec-gpu-runner bench "${args[@]}" --json "$OUT/bench.jsonl" > "$OUT/bench.log" 2>&1
args=(); for b in attn/*-base; do p="${b%-base}"; args+=("$b" "$p-new" "$p-new" "$b"); done
./tilec-gpu-runner --json "$OUT/attn.jsonl" "${args[@]}" > "$OUT/attn.log" 2>&1
tail -n 3 "$OUT"/*.log
