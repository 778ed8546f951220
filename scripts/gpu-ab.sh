#!/usr/bin/env bash
# scripts/gpu-ab.sh: an A/B of two tilec binaries on the GPU (a benchmark, not a test), in three steps:
#
#   scripts/gpu-ab.sh prepare BASE NEW   # here: write .device-ab/ (bench bundles of both binaries, check bundles
#                                        # of NEW, the runner); `ptxas -v` of every bench kernel into ptxas.txt
#   (device, repository root, carry [".device-ab"]):  bash .device-ab/run.sh "$OUT"
#   scripts/gpu-ab.sh report DIR         # here: the paired ratios (new/base) from DIR/bench.jsonl, DIR/attn.jsonl
#
# Timing: every GEMM bench (BENCH: the shapes whose kernels differ most: the 255-register 256x128 tiles and their
# odd-alignment variants, int8, bf16, Hopper) and the attention kernels run base/new/new/base in one runner process,
# so clocks and the other tenants' load hit both alike; the report gives new/base per kernel. Checks: NEW's PTX
# against the reference interpreter for every kernel kind, ragged shapes, both backends, and compute-sanitizer's
# memcheck on five of them. (Folded from docs/bench-masks-2026-11-25/{prepare-bench,prepare-check,run}.sh.)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEV="$ROOT/.device-ab"
cd "$ROOT"
PTXAS="${PTXAS:-$ROOT/.tools/nvcc/nvidia/cu13/bin/ptxas}"

BENCH=(
  sm_90:examples/gemm.tir:4096,4096,4096 sm_90:examples/gemm.tir:8192,8192,8192
  sm_90:examples/gemm.tir:4096,4096,4100 sm_90:examples/gemm.tir:2048,2048,2080
  sm_90:examples/gemm_256x128.tir:4096,4096,4096 sm_90:examples/gemm_256x128.tir:8192,8192,8192
  sm_90:examples/gemm_256x128.tir:8192,8192,1024 sm_90:examples/gemm_256x128.tir:4096,4096,4192
  sm_90:examples/gemm_256x128.tir:4096,4096,4097 sm_90:examples/gemm_256x128.tir:4096,4096,4100
  sm_90:examples/gemm_256x128.tir:4096,4100,4096
  sm_90:examples/gemm_s8_b_col.tir:4096,4096,4096 sm_90:examples/gemm_s8_b_col.tir:8192,8192,8192
  sm_90:examples/gemm_bf16_256x128.tir:8192,8192,8192 sm_90:examples/gemm_s8_128.tir:4096,4096,4096
  sm_90:examples/gemm_b_col.tir:4096,4096,4096 sm_90:examples/gemm_f16_out.tir:4096,4096,4096
  sm_90a:examples/gemm_hopper.tir:4096,4096,4096 sm_90a:examples/gemm_hopper.tir:4096,4096,4160
  sm_90a:examples/gemm.tir:4096,4096,4096
)

prepare() {
  local base="$1" new="$2"
  rm -rf "$DEV" && mkdir -p "$DEV/bench" "$DEV/attn" "$DEV/check"
  cargo build --release -q -p tilec-gpu-runner
  cp target/release/tilec-gpu-runner "$DEV/"
  cp "$ROOT/scripts/gpu-ab-device.sh" "$DEV/run.sh"
  export TILEC_CACHE=0
  local i=0 entry target file shape side bin tmp d
  : > "$DEV/ptxas.txt"
  # GEMMS=0: no GEMM benches (when NEW's GEMM PTX is BASE's, byte for byte: check that instead).
  [ "${GEMMS:-1}" = 0 ] && BENCH=()
  for entry in "${BENCH[@]}"; do
    IFS=: read -r target file shape <<<"$entry"
    for side in base new; do
      bin="$base"; [ "$side" = new ] && bin="$new"
      tmp="$(mktemp -d)"
      "$bin" bench "$file" --shape "$shape" --target "$target" --bundle "$tmp" >/dev/null
      d="$(printf '%02d' "$i")-$side"
      mv "$tmp"/* "$DEV/bench/$d" && rmdir "$tmp"
      sed -i "s|\"label\": \"|\"label\": \"$side: |" "$DEV/bench/$d/bench.json"
      if [ -x "$PTXAS" ]; then
        printf '%s %s %s: ' "$d" "$file" "$shape" >> "$DEV/ptxas.txt"
        "$PTXAS" -arch="${target}" -v "$DEV/bench/$d/kernel.ptx" -o /dev/null 2>&1 | grep -oE 'Used [0-9]+ registers|[0-9]+ bytes spill (stores|loads)' | tr '\n' ' ' >> "$DEV/ptxas.txt"
        echo >> "$DEV/ptxas.txt"
      fi
    done
    i=$((i + 1))
  done
  attn() { # NAME SRC BH S D TARGET
    local flops=$((4 * $3 * $4 * $4 * $5)); case "$1" in causal*) flops=$((flops / 2));; esac
    local src side bin
    for side in base new; do
      bin="$base" src="$2"; [ "$side" = new ] && bin="$new"
      # BASE_STRIP_ATTRS="a b": kernel attributes the base binary predates, taken out of its copy of the source.
      if [ "$side" = base ] && [ -n "${BASE_STRIP_ATTRS:-}" ]; then
        src="$DEV/attn/$(basename "$2")"
        cp "$2" "$src"
        for a in $BASE_STRIP_ATTRS; do sed -i -E "s/ $a = [^,}]+,?//" "$src"; done
      fi
      "$bin" bundle "$src" -o "$DEV/attn/$1-$side" --target "$6" --no-oracle --repeat 20 --warmup 3 --flops "$flops" \
        --param "D=$5" --arg "Q=$3x$4x$5" --arg "K=$3x$4x$5" --arg "V=$3x$4x$5" --arg "O=$3x$4x$5" >/dev/null
    done
  }
  attn d64 examples/attention_fwd.tir 128 4096 64 sm_90
  attn d128 examples/attention_fwd.tir 128 4096 128 sm_90
  attn causal_d64 examples/attention_fwd_causal.tir 128 4096 64 sm_90
  attn d64_sm90a examples/attention_fwd.tir 128 4096 64 sm_90a
  attn d128_sm90a examples/attention_fwd.tir 128 4096 128 sm_90a
  attn causal_d64_sm90a examples/attention_fwd_causal.tir 128 4096 64 sm_90a
  checks "$new"
  du -sh "$DEV"
}

# Correctness of NEW's PTX against the reference interpreter: every kernel kind, ragged shapes (every K % 32 and
# T % stages case of the rings), both backends.
checks() {
  local NEW="$1" c=(--target sm_90) h=(--target sm_90a) m=(--target sm_90 --backend mlir) shape
  B() { "$NEW" bundle "$@" >/dev/null; }
  for shape in 200,72,40 513,1000,264 70,76,66 130,136,96 130,136,128 130,136,160 64,64,32; do
    B examples/gemm.tir -o "$DEV/check/gemm_${shape//,/x}" --shape "$shape" "${c[@]}"
  done
  B examples/gemm.tir -o "$DEV/check/gemm_sm80_130x136x96" --shape 130,136,96 --target sm_80
  B examples/gemm.tir -o "$DEV/check/gemm_s3_130x136x224" --shape 130,136,224 --param pipeline_stages=3 "${c[@]}"
  B examples/gemm.tir -o "$DEV/check/gemm_s2_130x136x100" --shape 130,136,100 --param pipeline_stages=2 "${c[@]}"
  B examples/gemm.tir -o "$DEV/check/gemm_noahead_130x136x200" --shape 130,136,200 --param fragments_ahead=false "${c[@]}"
  B examples/gemm_256x128.tir -o "$DEV/check/gemm_256x128_261x133x67" --shape 261,133,67 "${c[@]}"
  B examples/gemm_256x128.tir -o "$DEV/check/gemm_256x128_300x260x232" --shape 300,260,232 "${c[@]}"
  B examples/gemm_bf16_256x128.tir -o "$DEV/check/gemm_bf16_256x128_261x133x67" --shape 261,133,67 "${c[@]}"
  B examples/gemm_s8.tir -o "$DEV/check/gemm_s8_67x45x37" --shape 67,45,37 "${c[@]}"
  B examples/gemm_s8_b_col.tir -o "$DEV/check/gemm_s8_b_col_67x45x38" --shape 67,45,38 "${c[@]}"
  B examples/gemm_s8_128.tir -o "$DEV/check/gemm_s8_128_200x80x48" --shape 200,80,48 "${c[@]}"
  B examples/gemm_ab_col.tir -o "$DEV/check/gemm_ab_col_67x45x37" --shape 67,45,37 "${c[@]}"
  B examples/gemm_a_col.tir -o "$DEV/check/gemm_a_col_200x72x40" --shape 200,72,40 "${c[@]}"
  B examples/gemm_b_col.tir -o "$DEV/check/gemm_b_col_200x72x40" --shape 200,72,40 "${c[@]}"
  B examples/gemm_bf16.tir -o "$DEV/check/gemm_bf16_200x72x40" --shape 200,72,40 "${c[@]}"
  B examples/gemm_f16_out.tir -o "$DEV/check/gemm_f16_out_67x45x37" --shape 67,45,37 --arg alpha=2 --arg beta=-1 "${c[@]}"
  B examples/gemm_bf16_out.tir -o "$DEV/check/gemm_bf16_out_200x72x40" --shape 200,72,40 --arg alpha=0.5 --arg beta=3 "${c[@]}"
  B examples/gemm_epilogue.tir -o "$DEV/check/gemm_epilogue_72x80x48" --shape 72,80,48 --arg alpha=2 --arg beta=-1 "${c[@]}"
  B examples/gemm_batched.tir -o "$DEV/check/gemm_batched_5x200x72x40" --arg A=5x200x40 --arg B=5x40x72 --arg C=5x200x72 "${c[@]}"
  B examples/softmax.tir -o "$DEV/check/softmax_100x150" --arg x=100x150 --arg y=100x150 "${c[@]}"
  B examples/layernorm.tir -o "$DEV/check/layernorm_100x150" --arg x=100x150 --arg gamma=1x150 --arg beta=1x150 --arg y=100x150 "${c[@]}"
  B examples/elementwise.tir -o "$DEV/check/elementwise_100x80" --arg x=100x80 --arg y=100x80 --arg s=0.5 "${c[@]}"
  B examples/attention_fwd.tir -o "$DEV/check/attention_fwd_2x100x64" --arg Q=2x100x64 --arg K=2x100x64 --arg V=2x100x64 --arg O=2x100x64 "${c[@]}"
  B examples/attention_fwd_causal.tir -o "$DEV/check/attention_fwd_causal_2x150x64" --arg Q=2x150x64 --arg K=2x150x64 --arg V=2x150x64 --arg O=2x150x64 "${c[@]}"
  B examples/attention_fwd.tir --param D=128 --param BM=128 --param num_warps=8 --param BN=64 -o "$DEV/check/attention_fwd_d128_bm128_2x300x128" --arg Q=2x300x128 --arg K=2x300x128 --arg V=2x300x128 --arg O=2x300x128 "${c[@]}"
  B examples/gemm_bias_relu.tir -o "$DEV/check/gemm_bias_relu_200x136x72" --arg A=200x72 --arg B=72x136 --arg bias=1x136 --arg C=200x136 "${c[@]}"
  B examples/gemm_bias_relu_1d.tir -o "$DEV/check/gemm_bias_relu_1d_200x136x72" --arg A=200x72 --arg B=72x136 --arg bias=136 --arg C=200x136 "${c[@]}"
  B examples/gemm_bias_gelu.tir -o "$DEV/check/gemm_bias_gelu_200x136x72" --arg A=200x72 --arg B=72x136 --arg bias=1x136 --arg C=200x136 "${c[@]}"
  mkdir -p "$DEV/b2b-inputs" && python3 tests/lit/cli/Inputs/b2b_inputs.py "$DEV/b2b-inputs" 200 96
  B examples/b2b_gemm.tir -o "$DEV/check/b2b_gemm_200x96" --arg A=200x96 --arg B=96x64 --arg D=200x64 --input A="$DEV/b2b-inputs/A.txt" --input B="$DEV/b2b-inputs/B.txt" --input C="$DEV/b2b-inputs/C.txt" "${c[@]}"
  B examples/gemm.tir -o "$DEV/check/wgmma_gemm_513x1000x264" --shape 513,1000,264 "${h[@]}"
  B examples/gemm.tir -o "$DEV/check/wgmma_gemm_70x76x66" --shape 70,76,66 "${h[@]}"
  B examples/gemm_256x128.tir -o "$DEV/check/gemm_256x128_sm90a_261x136x72" --shape 261,136,72 "${h[@]}"
  B examples/gemm_hopper.tir -o "$DEV/check/wgmma_gemm_hopper_261x133x67" --shape 261,133,67 "${h[@]}"
  B examples/gemm_hopper.tir -o "$DEV/check/wgmma_gemm_hopper_300x200x136" "${h[@]}"
  B examples/gemm_bf16_hopper.tir -o "$DEV/check/wgmma_gemm_bf16_hopper_300x200x136" "${h[@]}"
  B examples/gemm_s8_hopper.tir -o "$DEV/check/wgmma_gemm_s8_hopper_261x133x70" --shape 261,133,70 "${h[@]}"
  B examples/gemm_s8_hopper.tir -o "$DEV/check/wgmma_gemm_s8_hopper_261x133x528" --shape 261,133,528 "${h[@]}"
  B examples/gemm_bias_relu.tir -o "$DEV/check/wgmma_gemm_bias_relu_200x136x72" --arg A=200x72 --arg B=72x136 --arg bias=1x136 --arg C=200x136 "${h[@]}"
  B examples/attention_fwd.tir -o "$DEV/check/wgmma_attention_fwd_2x100x64" --arg Q=2x100x64 --arg K=2x100x64 --arg V=2x100x64 --arg O=2x100x64 "${h[@]}"
  B examples/gemm_hopper.tir -o "$DEV/check/persistent_gemm_hopper_300x200x136" --shape 300,200,136 --param persistent=true "${h[@]}"
  B examples/gemm_hopper.tir -o "$DEV/check/ws_gemm_hopper_300x200x136" --shape 300,200,136 --param warp_specialize=true "${h[@]}"
  B examples/gemm.tir -o "$DEV/check/mlir_gemm_200x72x40" --shape 200,72,40 "${m[@]}"
  B examples/gemm.tir -o "$DEV/check/mlir_gemm_130x136x96" --shape 130,136,96 "${m[@]}"
  B examples/gemm_b_col.tir -o "$DEV/check/mlir_gemm_b_col_200x72x40" --shape 200,72,40 "${m[@]}"
  B examples/gemm_s8_128.tir -o "$DEV/check/mlir_gemm_s8_128_200x80x48" --shape 200,80,48 "${m[@]}"
  B examples/gemm_batched.tir -o "$DEV/check/mlir_gemm_batched_5x200x72x40" --arg A=5x200x40 --arg B=5x40x72 --arg C=5x200x72 "${m[@]}"
  B examples/softmax.tir -o "$DEV/check/mlir_softmax_100x150" --arg x=100x150 --arg y=100x150 "${m[@]}"
  B examples/attention_fwd_causal.tir -o "$DEV/check/mlir_attention_fwd_causal_2x150x64" --arg Q=2x150x64 --arg K=2x150x64 --arg V=2x150x64 --arg O=2x150x64 "${m[@]}"
  B examples/gemm_hopper.tir -o "$DEV/check/mlir_wgmma_gemm_hopper_261x133x67" --shape 261,133,67 --target sm_90a --backend mlir
}

report() {
  python3 - "$1" <<'PY'
import json, math, os, sys, collections
d = sys.argv[1]
for name in ("bench.jsonl", "attn.jsonl"):
    p = os.path.join(d, name)
    if not os.path.exists(p): continue
    runs = collections.defaultdict(lambda: {"base": [], "new": []})
    for line in open(p):
        r = json.loads(line)
        if "tilec_ms" in r:  # a GEMM bench: the label starts with the side, the shape is beside it
            side, label = r["label"].split(": ", 1)
            key, ms = f'{label} {r["m"]}x{r["n"]}x{r["k"]}', r["tilec_ms"]
        else:  # an attention bundle, named NAME-base or NAME-new
            key, side = r["bundle"].rsplit("-", 1)
            ms = r["median_ms"]
        runs[key][side].append(ms)
    print(f"{name}: new/base of the median times (base/new/new/base, one process)")
    ratios = []
    for k, v in runs.items():
        if v["base"] and v["new"]:
            q = (sum(v["new"]) / len(v["new"])) / (sum(v["base"]) / len(v["base"]))
            ratios.append(q)
            print(f"  {q:6.3f}  {k}")
    if ratios:
        print(f"  geomean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}")
PY
}

case "${1:-}" in
  prepare) prepare "${2:?usage: gpu-ab.sh prepare BASE NEW}" "${3:?usage: gpu-ab.sh prepare BASE NEW}" ;;
  report) report "${2:?usage: gpu-ab.sh report DIR}" ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
