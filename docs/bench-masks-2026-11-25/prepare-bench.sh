#!/usr/bin/env bash
# docs/bench-masks-2026-11-25/prepare-bench.sh BASE NEW: the GEMM A/B of conjunctions_as_and (lower-ptx/src/llvm/nvptx_target.rs):
# 15 GEMM benches, base (main before it) and new (NEW ran it under TILEC_EXPERIMENT_MASKS_AS_AND=1, the same PTX
# as the committed code: checked), base/new/new/base in one runner process. Writes .device-mask/; device command:
#   cd .device-mask && args=(); for b in bench/*-base; do p="${b%-base}"; args+=("$b" "$p-new" "$p-new" "$b"); done
#   ./tilec-gpu-runner bench "${args[@]}" --json $OUT/bench.jsonl > $OUT/bench.log 2>&1
set -euo pipefail
BASE="${1:?usage: prepare.sh BASE_TILEC NEW_TILEC}" NEW="${2:?}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
DEV="$ROOT/.device-mask"
rm -rf "$DEV" && mkdir -p "$DEV/bench" "$DEV/attn" "$DEV/check"
cp target/release/tilec-gpu-runner "$DEV/"
true
export TILEC_CACHE=0
BENCH=(
  sm_90:examples/gemm.tir:4096,4096,4096 sm_90:examples/gemm.tir:8192,8192,8192
  sm_90:examples/gemm_256x128.tir:4096,4096,4096 sm_90:examples/gemm_256x128.tir:8192,8192,8192
  sm_90:examples/gemm_256x128.tir:8192,8192,1024
  sm_90:examples/gemm_256x128.tir:4096,4096,4097 sm_90:examples/gemm_256x128.tir:4096,4096,4100
  sm_90:examples/gemm_256x128.tir:4096,4100,4096
  sm_90:examples/gemm_s8_b_col.tir:4096,4096,4096 sm_90:examples/gemm_s8_b_col.tir:8192,8192,8192
  sm_90:examples/gemm_bf16_256x128.tir:8192,8192,8192 sm_90:examples/gemm_s8_128.tir:4096,4096,4096
  sm_90:examples/gemm.tir:4096,4096,4100 sm_90:examples/gemm_b_col.tir:4096,4096,4096
  sm_90a:examples/gemm_hopper.tir:4096,4096,4096
)
i=0
for entry in "${BENCH[@]}"; do
  IFS=: read -r target file shape <<<"$entry"
  for side in base new; do
    bin="$BASE"; [ "$side" = new ] && bin="$NEW"
    tmp="$(mktemp -d)"
    "$bin" bench "$file" --shape "$shape" --target "$target" --bundle "$tmp" >/dev/null
    d="$(printf '%02d' "$i")-$side"
    mv "$tmp"/* "$DEV/bench/$d" && rmdir "$tmp"
    sed -i "s|\"label\": \"|\"label\": \"$side: |" "$DEV/bench/$d/bench.json"
  done
  i=$((i + 1))
done
du -sh "$DEV"
