#!/usr/bin/env bash
# The device half of prepare-check.sh (run inside .device-mc): checks, memcheck, attention base/new/new/base.
OUT="${1:?usage: run.sh OUT}"
chmod +x tilec-gpu-runner
nvidia-smi -L > "$OUT/check.log"
TILEC_PERSISTENT_MAX_BLOCKS=2 ./tilec-gpu-runner check/* >> "$OUT/check.log" 2>&1
compute-sanitizer --tool memcheck ./tilec-gpu-runner check/gemm_200x72x40 check/gemm_256x128_261x133x67 \
  check/softmax_100x150 check/attention_fwd_2x100x64 check/wgmma_gemm_hopper_261x133x67 > "$OUT/memcheck.log" 2>&1
tar czf "$OUT/outs.tgz" check/*/*.out.bin
args=(); for b in attn/*-base; do p="${b%-base}"; args+=("$b" "$p-new" "$p-new" "$b"); done
./tilec-gpu-runner --json "$OUT/attn.jsonl" "${args[@]}" > "$OUT/attn.log" 2>&1
tail -n 3 "$OUT/check.log" "$OUT/attn.log"
