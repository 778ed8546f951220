#!/usr/bin/env bash
# scripts/bench-attention.sh: issue 17's attention forward against PyTorch SDPA (FlashAttention-2 and cuDNN), in
# two steps (the GPU machine has no Rust, LLVM or MLIR):
#
#   scripts/bench-attention.sh prepare [DIR]   # here: build tilec + the runner; write timing bundles (no data:
#                                              # the runner makes the inputs) and this script's tools into DIR
#                                              # (default .device-attn). TUNE=1 adds `tilec tune` candidates
#                                              # per shape; VARIANT_DIR=D adds the .tir copies in D/<stem>/
#   (on the GPU machine, DIR carried):  cd DIR && bash bench-attention.sh device "$OUT"
#
# The shapes (issue 17): fp16, B=4 H=32 S=4096 with d=64 and d=128, B=1 H=16 S=16384 d=128, and the causal d=64
# kernel at B=4 H=32 S=4096 (TF/s = 4*B*H*S^2*d / time, half that for causal). On the GPU machine:
#   1. tilec-gpu-runner times each bundle (inputs from the seed, CUDA events, median; OUT/runner.jsonl);
#   2. bench_attention.py runs the same bundles on torch's tensors, checks O against SDPA and an fp32 reference,
#      and times tilec, SDPA flash and SDPA cuDNN in one process (OUT/attention.jsonl), with normal inputs and
#      again with uniform ones as the runner makes them (NO_UNIFORM=1 skips that); the VARIANT_DIR copies
#      (OUT/variants.jsonl);
#   3. with TUNE=1: tilec-gpu-runner tune over each shape's candidates (OUT/tune.jsonl), then the fastest per
#      shape against SDPA beside the kernel as written (OUT/best.jsonl);
#   4. ncu --set full on one launch of the d=64 and d=128 kernels (the tuned ones with TUNE=1; NCU_CASES="DIR..."
#      chooses, NO_NCU=1 skips): details page and raw metrics in OUT/logs.tgz with the text logs.
set -euo pipefail

# name  source  B*H  S  d  causal  (the head dim is the kernel parameter D: --param D=d)
CASES=(
  "d64 examples/attention_fwd.tir 128 4096 64 no"
  "d128 examples/attention_fwd.tir 128 4096 128 no"
  "d128_s16k examples/attention_fwd.tir 16 16384 128 no"
  "causal_d64 examples/attention_fwd_causal.tir 128 4096 64 causal"
)

# kshape SRC BH S D: the K argument's shape, following the kernel's declared rank (Kᵀ [d, BH*S] for rank 2,
# [BH, S, d] or [BH, d, S] for rank 3, read from the signature).
kshape() {
  local src=$1 bh=$2 s=$3 d=$4 ksig dims
  # The declared extents of %K, e.g. `?x?xD` from `%K: tile<?x?xDxf16, global>`.
  ksig=$(grep -o '%K: tile<[^,>]*' "$src" | head -1)
  dims=$(sed -E 's/^%K: tile<//; s/x[a-z][a-z0-9]*$//' <<<"$ksig")
  case "$dims" in
  *x*x*) case "$dims" in *"x${d}x"* | *"xDx"*) echo "${bh}x${d}x${s}" ;; *) echo "${bh}x${s}x${d}" ;; esac ;;
  *) echo "${d}x$((bh * s))" ;;
  esac
}

# bundle TILEC SRC DIR BH S D CAUSAL [EXTRA...]: one timing bundle (--param D=d and the EXTRA flags).
bundle() {
  local tilec=$1 src=$2 dir=$3 bh=$4 s=$5 d=$6 causal=$7
  shift 7
  local flops=$((4 * bh * s * s * d))
  [ "$causal" = causal ] && flops=$((flops / 2))
  "$tilec" bundle "$src" -o "$dir" --target "${TARGET:-sm_90}" --no-oracle --repeat "${REPEAT:-20}" --warmup 3 --flops "$flops" \
    --param "D=$d" --arg "Q=${bh}x${s}x${d}" --arg "K=$(kshape "$src" "$bh" "$s" "$d")" --arg "V=${bh}x${s}x${d}" \
    --arg "O=${bh}x${s}x${d}" "$@" >/dev/null
}

case "${1:-}" in
prepare)
  ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  cd "$ROOT"
  DEV="${2:-$ROOT/.device-attn}"
  cargo build --release -p tilec -p tilec-gpu-runner
  TILEC="${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec"
  rm -rf "$DEV" && mkdir -p "$DEV/bundles"
  cp "${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec-gpu-runner" scripts/bench-attention.sh scripts/bench_attention.py "$DEV/"
  for c in "${CASES[@]}"; do
    read -r name src bh s d causal <<<"$c"
    bundle "$TILEC" "$src" "$DEV/bundles/$name" "$bh" "$s" "$d" "$causal"
    if [ "$causal" = causal ]; then echo "$name:causal"; else echo "$name"; fi >>"$DEV/cases.txt"
  done
  if [ -n "${VARIANT_DIR:-}" ]; then
    # Block-size variants: VARIANT_DIR/<source stem>/*.tir (copies of the example with other attributes), each
    # bundled at the shapes of its source's cases; packed into bundles.tgz (PTX compresses well).
    for c in "${CASES[@]}"; do
      read -r name src bh s d causal <<<"$c"
      for v in "$VARIANT_DIR/$(basename "$src" .tir)"/*.tir; do
        [ -f "$v" ] || continue
        out="variants/${name}__$(basename "$v" .tir)"
        if REPEAT=10 bundle "$TILEC" "$v" "$DEV/$out" "$bh" "$s" "$d" "$causal" 2>/dev/null; then
          if [ "$causal" = causal ]; then echo "$out:causal"; else echo "$out"; fi >>"$DEV/variants.txt"
        else
          echo "skipped $v at $name (does not compile)"
        fi
      done
    done
    (cd "$DEV" && tar czf bundles.tgz variants && rm -rf variants)
  fi
  if [ -n "${TUNE:-}" ]; then
    # tilec tune over the block sizes, per shape: warps x rows per warp (BM = warps * WM) x BN x stages. One tune
    # run per (warps, WM, BN), so that only consistent sets are compiled (BM, warp_tile = [WM, BN] and the P.V
    # mma's [WM, D] agree); each in its own directory (a run replaces its directory's candidates).
    mkdir -p "$DEV/tune"
    for c in "${CASES[@]}"; do
      read -r name src bh s d causal <<<"$c"
      flops=$((4 * bh * s * s * d))
      [ "$causal" = causal ] && flops=$((flops / 2))
      for warps in 4 8; do
        for wm in 16 32; do
          for bn in ${TUNE_BN:-32 64}; do
            "$TILEC" tune "$src" --bundle "$DEV/tune/$name/w${warps}_r${wm}_bn${bn}" --target "${TARGET:-sm_90}" --repeat 10 --warmup 2 \
              --arg "Q=${bh}x${s}x${d}" --arg "K=$(kshape "$src" "$bh" "$s" "$d")" --arg "V=${bh}x${s}x${d}" --arg "O=${bh}x${s}x${d}" \
              --flops "$flops" --warps "$warps" --stages 2,3 --fragments on --param "D=$d" --param "BM=$((warps * wm))" \
              --param "BN=$bn" --param "WM=$wm" 2>&1 | grep -E "skipped|candidate\(s\) in" || true
          done
        done
      done
      if [ "$causal" = causal ]; then echo "$name causal"; else echo "$name plain"; fi >>"$DEV/tune.txt"
    done
    (cd "$DEV" && tar czf tune.tgz tune && rm -rf tune)
  fi
  du -sh "$DEV"
  ;;
device)
  OUT="${2:?usage: bench-attention.sh device OUT}"
  HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  cd "$HERE"
  # Records (*.jsonl) go to OUT; the text logs into logs/, packed as OUT/logs.tgz at the end (OUT takes 8 files).
  LOG="$HERE/logs"
  mkdir -p "$LOG"
  [ -f bundles.tgz ] && tar xzf bundles.tgz
  export PYTHONUNBUFFERED=1
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$LOG/gpu.txt"
  python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name())' | tee -a "$LOG/gpu.txt"
  mapfile -t cases <cases.txt
  dirs=()
  for c in "${cases[@]}"; do dirs+=("bundles/${c%%:*}"); done
  echo "== runner"
  ./tilec-gpu-runner --json "$OUT/runner.jsonl" "${dirs[@]}" 2>&1 | tee "$LOG/runner.txt" || true
  echo "== tilec vs SDPA"
  args=()
  for c in "${cases[@]}"; do args+=("bundles/$c"); done
  python3 bench_attention.py --json "$OUT/attention.jsonl" "${args[@]}" 2>&1 | tee "$LOG/attention.txt" || true
  if [ -z "${NO_UNIFORM:-}" ]; then
    echo "== the same, uniform inputs (as the runner makes them)"
    python3 bench_attention.py --dist uniform --json "$OUT/attention.jsonl" "${args[@]}" 2>&1 | tee "$LOG/attention-uniform.txt" | tail -n 5 || true
  fi
  if [ -f variants.txt ]; then
    echo "== variants"
    python3 bench_attention.py --repeat 10 --no-torch-timing --json "$OUT/variants.jsonl" $(cat variants.txt) >"$LOG/variants.txt" 2>&1 || true
    tail -n 60 "$LOG/variants.txt"
  fi
  ncu_dirs=(${NCU_CASES:-bundles/d64 bundles/d128})
  if [ -f tune.tgz ]; then
    tar xzf tune.tgz
    echo "== tilec-gpu-runner tune"
    while read -r name kind; do
      ./tilec-gpu-runner tune tune/"$name"/* --json "$OUT/tune.jsonl" >"$LOG/tune-$name.txt" 2>"$LOG/tune-$name.err" || true
      head -n 8 "$LOG/tune-$name.txt"
    done <tune.txt
    # The fastest candidate of each shape against SDPA, checked, beside the kernel as written.
    best=()
    ncu_dirs=()
    while read -r name kind; do
      # The table's first line names the kernel and the shapes: `@attention_fwd Q=128x4096x64 ... on GPU: N candidate(s)`.
      head=$(head -1 "$LOG/tune-$name.txt")
      b=$(python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; r=[x for x in r if x.get("median_ms") and x["func"]==sys.argv[2] and x["shapes"]==sys.argv[3].split()]; print(min(r, key=lambda x: x["median_ms"])["candidate"])' \
        "$OUT/tune.jsonl" "$(sed -E 's/^@([a-z0-9_]+) .*/\1/' <<<"$head")" "$(sed -E 's/^@[a-z0-9_]+ //; s/ on .*//' <<<"$head")") || continue
      dir=$(ls -d tune/"$name"/*/*_"$b" | head -1)
      if [ "$kind" = causal ]; then best+=("bundles/$name:causal" "$dir:causal"); else best+=("bundles/$name" "$dir"); fi
      case "$name" in d64 | d128) ncu_dirs+=("$dir") ;; esac
    done <tune.txt
    echo "== best against SDPA"
    python3 bench_attention.py --json "$OUT/best.jsonl" "${best[@]}" 2>&1 | tee "$LOG/best.txt" | tail -n 10 || true
  fi
  if [ -z "${NO_NCU:-}" ] && command -v ncu >/dev/null; then
    for dir in "${ncu_dirs[@]}"; do
      name=$(basename "$dir")
      echo "== ncu $name"
      ncu --set full -c 1 -o "$LOG/ncu-$name" ./tilec-gpu-runner "$dir" >"$LOG/ncu-$name.log" 2>&1 || tail -5 "$LOG/ncu-$name.log"
      ncu --import "$LOG/ncu-$name.ncu-rep" --page details >"$LOG/ncu-$name.details.txt" 2>&1 || true
      ncu --import "$LOG/ncu-$name.ncu-rep" --page raw --csv >"$LOG/ncu-$name.raw.csv" 2>&1 || true
      rm -f "$LOG/ncu-$name.ncu-rep"
      grep -E "Registers Per|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Duration|Block Limit (Reg|Shared)|Warp Cycles Per Issued|Issue Slots Busy" "$LOG/ncu-$name.details.txt" | head -20 || true
    done
  fi
  tar czf "$OUT/logs.tgz" -C "$HERE" logs
  ;;
*)
  sed -n '2,22p' "$0"
  exit 1
  ;;
esac
