#!/usr/bin/env bash
# scripts/gpu-suite.sh: the GPU checks, in three steps (the GPU machine has no Rust, LLVM or MLIR).
#
#   scripts/gpu-suite.sh prepare     # here: build tilec + the small runner, write bundles into .device/
#   (on the GPU machine, from the repository root, with .device carried):
#       bash scripts/gpu-suite.sh device "$OUT"
#   scripts/gpu-suite.sh check DIR   # here: unpack the results (DIR holds outs.tgz) and compare with the oracles;
#                                    # print the benchmark table from DIR/bench.jsonl
#   scripts/gpu-suite.sh seeds [DIR] # here, no GPU: the seed bundles with the simulator standing in for the GPU
#
# Bundles: every seed experiment, on the seed document's own input matrices (result buffers zeroed), checked
# against the warp simulator AND, bit for bit, against the per-lane values and result matrices the seed
# documents printed on real hardware (tilec compare --golden; which tables: .device/seed-inputs/*/golden-tables,
# written by tilec-tests' seed-inputs from shared/seeds/, or SEEDS=DIR); the tile examples (oracle: the
# reference interpreter); and the GEMM at several shapes, some ragged. Benchmarks (BENCH below): each kernel against
# cuBLAS in one process on the GPU machine, checked against cuBLAS's result.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEV="$ROOT/.device"
TARGET="${TARGET:-sm_90}"
SEEDS="${SEEDS:-$ROOT/../shared/seeds}"
cd "$ROOT"

# The benchmarks, FILE:M,N,K (one bench bundle each; add kernels and shapes here).
BENCH=(
  # fp16 -> f32: the 256x128 tile over 8 warps (the fast one) and gemm.tir (128x128, 4 warps) at every shape;
  # bf16 -> f32 (256x128) and int8 -> int32 (B column-major, and both row-major) likewise; the others at 4096^3.
  examples/gemm_256x128.tir:1024,1024,1024
  examples/gemm_256x128.tir:2048,2048,2048
  examples/gemm_256x128.tir:4096,4096,4096
  examples/gemm_256x128.tir:8192,8192,8192
  examples/gemm_256x128.tir:4096,1024,8192
  examples/gemm_256x128.tir:8192,8192,1024
  examples/gemm.tir:1024,1024,1024
  examples/gemm.tir:2048,2048,2048
  examples/gemm.tir:4096,4096,4096
  examples/gemm.tir:8192,8192,8192
  examples/gemm.tir:4096,1024,8192
  examples/gemm.tir:8192,8192,1024
  examples/gemm_bf16_256x128.tir:1024,1024,1024
  examples/gemm_bf16_256x128.tir:2048,2048,2048
  examples/gemm_bf16_256x128.tir:4096,4096,4096
  examples/gemm_bf16_256x128.tir:8192,8192,8192
  examples/gemm_bf16_256x128.tir:4096,1024,8192
  examples/gemm_bf16_256x128.tir:8192,8192,1024
  examples/gemm_s8_b_col.tir:1024,1024,1024
  examples/gemm_s8_b_col.tir:2048,2048,2048
  examples/gemm_s8_b_col.tir:4096,4096,4096
  examples/gemm_s8_b_col.tir:8192,8192,8192
  examples/gemm_s8_b_col.tir:4096,1024,8192
  examples/gemm_s8_b_col.tir:8192,8192,1024
  examples/gemm_s8_128.tir:1024,1024,1024
  examples/gemm_s8_128.tir:2048,2048,2048
  examples/gemm_s8_128.tir:4096,4096,4096
  examples/gemm_s8_128.tir:8192,8192,8192
  examples/gemm_s8_128.tir:4096,1024,8192
  examples/gemm_s8_128.tir:8192,8192,1024
  examples/gemm_bf16.tir:4096,4096,4096
  examples/gemm_f16_out.tir:4096,4096,4096
  examples/gemm_bf16_out.tir:4096,4096,4096
  examples/gemm_a_col.tir:4096,4096,4096
  examples/gemm_b_col.tir:4096,4096,4096
  examples/gemm_ab_col.tir:4096,4096,4096
  # Any size (rows not 16-byte aligned: tilec bench compiles the variant the shape allows, global_alignment):
  # K = 4100 (A's rows 8-byte aligned: 8-byte cp.async), K = 4098 (4-byte), N = 4100 (B), odd K (A copied
  # synchronously, B by cp.async), odd N (the other way round), odd sizes (both synchronous), and the same
  # for bf16 and int8 (single-byte loads; cuBLAS gets zero-padded copies: its int8 needs multiples of 4).
  examples/gemm_256x128.tir:4096,4096,4100
  examples/gemm_256x128.tir:4096,4096,4098
  examples/gemm_256x128.tir:4096,4100,4096
  examples/gemm_256x128.tir:4096,4096,4097
  examples/gemm_256x128.tir:4096,4097,4096
  examples/gemm_256x128.tir:4095,4095,4095
  examples/gemm_256x128.tir:4097,4097,4097
  examples/gemm_bf16_256x128.tir:4097,4097,4097
  examples/gemm_s8_b_col.tir:4097,4097,4097
  examples/gemm_s8_b_col.tir:4096,4096,4098
)

# The same GEMMs compiled for sm_90a (wgmma, README "GEMM on wgmma against cuBLAS").
BENCH_SM90A=(
  examples/gemm.tir:4096,4096,4096
  examples/gemm.tir:8192,8192,8192
  examples/gemm_256x128.tir:4096,4096,4096
  examples/gemm_256x128.tir:8192,8192,8192
  examples/gemm_bf16_256x128.tir:4096,4096,4096
  examples/gemm_bf16_256x128.tir:8192,8192,8192
  examples/gemm_s8_b_col.tir:4096,4096,4096
  # The Hopper configurations (128x256x64, 8 warps, 3 stages, wgmma; scripts/bench-hopper.sh has every shape).
  examples/gemm_hopper.tir:4096,4096,4096
  examples/gemm_hopper.tir:8192,8192,8192
  examples/gemm_bf16_hopper.tir:4096,4096,4096
  examples/gemm_bf16_hopper.tir:8192,8192,8192
  examples/gemm_s8_hopper.tir:4096,4096,4096
  examples/gemm_s8_hopper.tir:8192,8192,8192
)

# prepare_seeds TILEC: the seed's inputs and printed outputs into $DEV/seed-inputs/seed_X/, a bundle per program.
# prepare_seeds TILEC OUTDIR BACKEND: one bundle per seed program, on the seed's own inputs.
prepare_seeds() {
  [ -d "$DEV/seed-inputs" ] || "${CARGO_TARGET_DIR:-$ROOT/target}/release/seed-inputs" --seeds "$SEEDS" "$DEV/seed-inputs"
  local f t name inputs
  for f in examples/seeds/*.tir; do
    name="seed_$(basename "$f" .tir)" inputs=()
    for t in "$DEV/seed-inputs/$name"/*.txt; do
      case "$t" in *.golden.txt) continue ;; esac
      inputs+=(--input "$(basename "$t" .txt)=$t")
    done
    [ ${#inputs[@]} -gt 0 ] || { echo "no seed inputs for $f" >&2; return 1; }
    "$1" bundle "$f" -o "$DEV/$2/$name" --target "$TARGET" --backend "$3" "${inputs[@]}"
  done
}

# check_bundle TILEC DIR: against the oracle's results, and a seed bundle against the seed's printed values too.
check_bundle() {
  local b="$2" golden=() g
  case "$(basename "$b")" in
  seed_*)
    for g in "$DEV/seed-inputs/$(basename "$b")"/*.golden.txt; do
      [ -f "$g" ] && golden+=(--golden "$(basename "$g" .golden.txt)=$g")
    done
    [ ${#golden[@]} -gt 0 ] || { echo "$b: no golden tables in $DEV/seed-inputs (run prepare)" >&2; return 1; }
    ;;
  esac
  "$1" compare "$b" ${golden[@]+"${golden[@]}"}
}

case "${1:-}" in
prepare)
  cargo build --release -p tilec -p tilec-gpu-runner -p tilec-tests
  TILEC="${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec"
  rm -rf "$DEV" && mkdir -p "$DEV/bundles" "$DEV/bench"
  "${CARGO_TARGET_DIR:-$ROOT/target}/release/seed-inputs" --seeds "$SEEDS" "$DEV/seed-inputs"
  cp "${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec-gpu-runner" "$DEV/"
  # Every checked bundle twice: PTX from the LLVM backend (bundles/) and from the MLIR backend (bundles-mlir/).
  for backend in llvm mlir; do
    out=bundles; [ "$backend" = llvm ] || out="bundles-$backend"
    mkdir -p "$DEV/$out"
    prepare_seeds "$TILEC" "$out" "$backend"
    b=(--target "$TARGET" --backend "$backend")
    "$TILEC" bundle examples/mma.tir -o "$DEV/$out/mma" "${b[@]}"
    "$TILEC" bundle examples/copy_s2r.tir -o "$DEV/$out/copy_s2r" "${b[@]}"
    for shape in 128,128,32 200,72,40 256,256,256 513,1000,264 1024,1024,1024; do
      "$TILEC" bundle examples/gemm.tir -o "$DEV/$out/gemm_${shape//,/x}" --shape "$shape" "${b[@]}"
    done
    # The 256x128 tiles over 8 warps (the benchmarked kernels), ragged and not.
    for shape in 200,72,40 513,1000,264; do
      "$TILEC" bundle examples/gemm_256x128.tir -o "$DEV/$out/gemm_256x128_${shape//,/x}" --shape "$shape" "${b[@]}"
    done
    "$TILEC" bundle examples/gemm_bf16_256x128.tir -o "$DEV/$out/gemm_bf16_256x128_513x1000x264" --shape 513,1000,264 "${b[@]}"
    "$TILEC" bundle examples/gemm_epilogue.tir -o "$DEV/$out/gemm_epilogue_72x80x48" --shape 72,80,48 --arg alpha=2 --arg beta=-1 "${b[@]}"
    "$TILEC" bundle examples/gemm_s8.tir -o "$DEV/$out/gemm_s8_72x48x80" --shape 72,48,80 "${b[@]}"
    # Elementwise math on register tiles (exp2, rsqrt: the GPU's .approx instructions, docs/math.md), ragged.
    "$TILEC" bundle examples/elementwise.tir -o "$DEV/$out/elementwise_100x80" --arg x=100x80 --arg y=100x80 --arg s=0.5 "${b[@]}"
    # Batched GEMM (rank-3 tensors, rank-reducing copies, grid z = batch): aligned, and ragged in M, N and K.
    "$TILEC" bundle examples/gemm_batched.tir -o "$DEV/$out/gemm_batched_3x256x128x64" --arg A=3x256x64 --arg B=3x64x128 --arg C=3x256x128 "${b[@]}"
    "$TILEC" bundle examples/gemm_batched.tir -o "$DEV/$out/gemm_batched_5x200x72x40" --arg A=5x200x40 --arg B=5x40x72 --arg C=5x200x72 "${b[@]}"
    # Reductions, broadcasts and masks (issue 16): row softmax, ragged in both extents.
    "$TILEC" bundle examples/softmax.tir -o "$DEV/$out/softmax_100x150" --arg x=100x150 --arg y=100x150 "${b[@]}"
    # Flash-attention forward (issue 17): Q, K, V, O all [batch*heads, S, d] row-major; ragged S (masked last
    # key block, dropped query rows), several heads on grid z; causal (skipped and masked blocks); head dim 128
    # from the same files (--param D=128); a 128-row query block over 8 warps with 64-key blocks.
    "$TILEC" bundle examples/attention_fwd.tir -o "$DEV/$out/attention_fwd_2x100x64" --arg Q=2x100x64 --arg K=2x100x64 --arg V=2x100x64 --arg O=2x100x64 "${b[@]}"
    "$TILEC" bundle examples/attention_fwd.tir -o "$DEV/$out/attention_fwd_4x256x64" --arg Q=4x256x64 --arg K=4x256x64 --arg V=4x256x64 --arg O=4x256x64 "${b[@]}"
    "$TILEC" bundle examples/attention_fwd_causal.tir -o "$DEV/$out/attention_fwd_causal_2x150x64" --arg Q=2x150x64 --arg K=2x150x64 --arg V=2x150x64 --arg O=2x150x64 "${b[@]}"
    "$TILEC" bundle examples/attention_fwd.tir --param D=128 -o "$DEV/$out/attention_fwd_d128_2x100x128" --arg Q=2x100x128 --arg K=2x100x128 --arg V=2x100x128 --arg O=2x100x128 "${b[@]}"
    "$TILEC" bundle examples/attention_fwd_causal.tir --param D=128 -o "$DEV/$out/attention_fwd_causal_d128_2x150x128" --arg Q=2x150x128 --arg K=2x150x128 --arg V=2x150x128 --arg O=2x150x128 "${b[@]}"
    "$TILEC" bundle examples/attention_fwd.tir --param D=128 --param BM=128 --param num_warps=8 --param BN=64 -o "$DEV/$out/attention_fwd_d128_bm128_2x300x128" --arg Q=2x300x128 --arg K=2x300x128 --arg V=2x300x128 --arg O=2x300x128 "${b[@]}"
    "$TILEC" bundle examples/gemm_bias_relu.tir -o "$DEV/$out/gemm_bias_relu_200x136x72" --arg A=200x72 --arg B=72x136 --arg bias=1x136 --arg C=200x136 "${b[@]}"
    "$TILEC" bundle examples/gemm_bias_relu_1d.tir -o "$DEV/$out/gemm_bias_relu_1d_200x136x72" --arg A=200x72 --arg B=72x136 --arg bias=136 --arg C=200x136 "${b[@]}"
    # GELU (tanh form) epilogue, f16 out: tile.tanh is tanh.approx.f32 on the GPU (docs/math.md's tolerance).
    "$TILEC" bundle examples/gemm_bias_gelu.tir -o "$DEV/$out/gemm_bias_gelu_200x136x72" --arg A=200x72 --arg B=72x136 --arg bias=1x136 --arg C=200x136 "${b[@]}"
    "$TILEC" bundle examples/layernorm.tir -o "$DEV/$out/layernorm_100x150" --arg x=100x150 --arg gamma=1x150 --arg beta=1x150 --arg y=100x150 "${b[@]}"
    # Hopper (issue 18): two warps meeting at an mbarrier three times (try_wait.parity loops), and the wgmma
    # fence/commit/wait of one warpgroup; sm_90a PTX, expected results from the simulator. (setmaxnreg is only
    # assembled, not run: its register counts must fit what ptxas allocated, which nothing checks yet.)
    "$TILEC" bundle examples/hopper/mbarrier_rounds.tir -o "$DEV/$out/mbarrier_rounds" --target sm_90a --backend "$backend"
    "$TILEC" bundle tests/lit/backend/Inputs/wgmma_sync.tir -o "$DEV/$out/wgmma_sync" --target sm_90a --backend "$backend"
    # One warpgroup's 64x64 tile through nvgpu.warpgroup.mma (wgmma.mma_async m64n64k16, A and B read from
    # 128-byte-swizzled shared tiles through descriptors); expected results from the simulator, whose f32
    # accumulation order inside one wgmma the GPU need not share (compare's tolerance covers it).
    "$TILEC" bundle examples/hopper/wgmma_gemm_tile.tir -o "$DEV/$out/wgmma_gemm_tile" --target sm_90a --backend "$backend"
    # TMA (issue 18): 64x64 boxes of a ragged 100x72 f16 tensor through tensor maps the runner encodes
    # (cuTensorMapEncodeTiled, 128-byte swizzle), completing on an mbarrier; 2x + 1 in shared memory; TMA
    # stores clipped at %B's edge; and with %B 128x128, the zero fill of the boxes' part outside %A.
    "$TILEC" bundle examples/hopper/tma_copy.tir -o "$DEV/$out/tma_copy_100x72" --target sm_90a --backend "$backend" --arg A=100x72 --arg B=100x72 --grid 2,2,1
    "$TILEC" bundle examples/hopper/tma_copy.tir -o "$DEV/$out/tma_copy_fill_128x128" --target sm_90a --backend "$backend" --arg A=100x72 --arg B=128x128 --grid 2,2,1
    # The tile-level GEMMs on sm_90a: tile.mma becomes wgmma reading A and B from shared memory (wgmma's panel
    # layouts, descriptors, MN-major B for row-major f16/bf16, K-major int8), odd sizes through synchronous copies.
    h=(--target sm_90a --backend "$backend")
    "$TILEC" bundle examples/gemm.tir -o "$DEV/$out/wgmma_gemm_513x1000x264" --shape 513,1000,264 "${h[@]}"
    "$TILEC" bundle examples/gemm.tir -o "$DEV/$out/wgmma_gemm_70x76x66" --shape 70,76,66 "${h[@]}"
    "$TILEC" bundle examples/gemm_256x128.tir -o "$DEV/$out/wgmma_gemm_256x128_261x133x67" --shape 261,133,67 "${h[@]}"
    "$TILEC" bundle examples/gemm_bf16_256x128.tir -o "$DEV/$out/wgmma_gemm_bf16_256x128_261x133x67" --shape 261,133,67 "${h[@]}"
    "$TILEC" bundle examples/gemm_s8_b_col.tir -o "$DEV/$out/wgmma_gemm_s8_b_col_67x45x38" --shape 67,45,38 "${h[@]}"
    # The Hopper configurations (examples/gemm_hopper.tir, gemm_bf16_hopper.tir: 128x256x64 over two warpgroups,
    # 3 stages), ragged in M, N and K (a partial k-step) and at odd sizes (synchronous copies).
    "$TILEC" bundle examples/gemm_hopper.tir -o "$DEV/$out/wgmma_gemm_hopper_300x200x136" "${h[@]}"
    "$TILEC" bundle examples/gemm_hopper.tir -o "$DEV/$out/wgmma_gemm_hopper_261x133x67" --shape 261,133,67 "${h[@]}"
    "$TILEC" bundle examples/gemm_bf16_hopper.tir -o "$DEV/$out/wgmma_gemm_bf16_hopper_300x200x136" "${h[@]}"
    # persistent = true: P blocks loop over the tiles (the device step caps P at 2, TILEC_PERSISTENT_MAX_BLOCKS,
    # so that blocks run several tiles of these small inputs); K = 72 (2 k-steps), 136, and 67 (cp.async variant).
    for shape in 261,136,72 300,200,136 261,133,67; do
      "$TILEC" bundle examples/gemm_hopper.tir -o "$DEV/$out/persistent_gemm_hopper_${shape//,/x}" --shape "$shape" --param persistent=true "${h[@]}"
    done
    "$TILEC" bundle examples/gemm_bf16_hopper.tir -o "$DEV/$out/persistent_gemm_bf16_hopper_300x520x200" --shape 300,520,200 --param persistent=true "${h[@]}"
    "$TILEC" bundle examples/gemm_bf16_hopper.tir -o "$DEV/$out/wgmma_gemm_bf16_hopper_261x133x67" --shape 261,133,67 "${h[@]}"
    "$TILEC" bundle examples/gemm_s8_hopper.tir -o "$DEV/$out/wgmma_gemm_s8_hopper_300x300x200" "${h[@]}"
    "$TILEC" bundle examples/gemm_s8_hopper.tir -o "$DEV/$out/wgmma_gemm_s8_hopper_261x133x70" --shape 261,133,70 "${h[@]}"
    # Column-major B by TMA (a map over its transpose; K a multiple of 16 bytes, ragged M, N and last k-step),
    # fp16 B column-major and column-major A (two column panels of its transpose) too.
    "$TILEC" bundle examples/gemm_s8_hopper.tir -o "$DEV/$out/wgmma_gemm_s8_hopper_261x133x528" --shape 261,133,528 "${h[@]}"
    "$TILEC" bundle examples/gemm_s8_hopper.tir -o "$DEV/$out/wgmma_gemm_s8_hopper_300x200x144" --shape 300,200,144 "${h[@]}"
    "$TILEC" bundle examples/gemm_b_col.tir -o "$DEV/$out/wgmma_gemm_b_col_300x200x136" --shape 300,200,136 "${h[@]}"
    "$TILEC" bundle examples/gemm_a_col.tir -o "$DEV/$out/wgmma_gemm_a_col_200x136x72" --shape 200,136,72 "${h[@]}"
    "$TILEC" bundle examples/gemm_bias_relu.tir -o "$DEV/$out/wgmma_gemm_bias_relu_200x136x72" --arg A=200x72 --arg B=72x136 --arg bias=1x136 --arg C=200x136 "${h[@]}"
    "$TILEC" bundle examples/gemm_bias_gelu.tir -o "$DEV/$out/wgmma_gemm_bias_gelu_200x136x72" --arg A=200x72 --arg B=72x136 --arg bias=1x136 --arg C=200x136 "${h[@]}"
    # The flash-attention forward on sm_90a: S = Q·Kᵀ by wgmma from shared Q and K, O += P·V by wgmma with P
    # from registers (the RS form) and V MN-major from shared memory; ragged S (masked last key block), d 64
    # and 128, causal.
    "$TILEC" bundle examples/attention_fwd.tir -o "$DEV/$out/wgmma_attention_fwd_2x100x64" --arg Q=2x100x64 --arg K=2x100x64 --arg V=2x100x64 --arg O=2x100x64 "${h[@]}"
    "$TILEC" bundle examples/attention_fwd.tir --param D=128 -o "$DEV/$out/wgmma_attention_fwd_d128_2x300x128" --arg Q=2x300x128 --arg K=2x300x128 --arg V=2x300x128 --arg O=2x300x128 "${h[@]}"
    "$TILEC" bundle examples/attention_fwd_causal.tir -o "$DEV/$out/wgmma_attention_fwd_causal_2x150x64" --arg Q=2x150x64 --arg K=2x150x64 --arg V=2x150x64 --arg O=2x150x64 "${h[@]}"
    # A block that stores an intermediate and copies it back (the barrier the lowering places, issue 16).
    "$TILEC" bundle tests/lit/sim/Inputs/roundtrip_through_global.tir -o "$DEV/$out/roundtrip_through_global" "${b[@]}"
    # Back-to-back GEMM D = (A·B)·C with P kept in registers (issue 16): small-integer inputs make P exact in
    # f16 and D exact in f32, so the default tolerance holds whatever order the tensor cores add in; ragged M.
    # Then P through shared memory (2x2 warp grids: copy_r2s, barrier, ldmatrix), and a copy_r2s round trip.
    mkdir -p "$DEV/b2b-inputs" && python3 tests/lit/cli/Inputs/b2b_inputs.py "$DEV/b2b-inputs" 200 96
    b2b=(--arg A=200x96 --arg B=96x64 --arg D=200x64 --input A="$DEV/b2b-inputs/A.txt" --input B="$DEV/b2b-inputs/B.txt" --input C="$DEV/b2b-inputs/C.txt")
    "$TILEC" bundle examples/b2b_gemm.tir -o "$DEV/$out/b2b_gemm_200x96" "${b2b[@]}" "${b[@]}"
    "$TILEC" bundle tests/lit/sim/Inputs/b2b_through_shared.tir -o "$DEV/$out/b2b_through_shared_200x96" "${b2b[@]}" "${b[@]}"
    "$TILEC" bundle tests/lit/sim/Inputs/roundtrip_through_shared.tir -o "$DEV/$out/roundtrip_through_shared" "${b[@]}"
    # The GEMM variants (issue 9) at a ragged shape and at 256^3: bf16 in; alpha/beta epilogues with fp16 and
    # bf16 C; column-major A, B, both (their buffers hold the columns in order: see tilec bundle).
    for shape in 200,72,40 256,256,256; do
      s="${shape//,/x}"
      "$TILEC" bundle examples/gemm_bf16.tir -o "$DEV/$out/gemm_bf16_$s" --shape "$shape" "${b[@]}"
      "$TILEC" bundle examples/gemm_f16_out.tir -o "$DEV/$out/gemm_f16_out_$s" --shape "$shape" --arg alpha=2 --arg beta=-1 "${b[@]}"
      "$TILEC" bundle examples/gemm_bf16_out.tir -o "$DEV/$out/gemm_bf16_out_$s" --shape "$shape" --arg alpha=0.5 --arg beta=3 "${b[@]}"
      for v in gemm_a_col gemm_b_col gemm_ab_col; do
        "$TILEC" bundle "examples/$v.tir" -o "$DEV/$out/${v}_$s" --shape "$shape" "${b[@]}"
      done
    done
    # Any size: rows that are not 16-byte aligned get the variant the shape allows (global_alignment per
    # argument): synchronous 1- and 2-byte loads (odd K and N), 4- and 8-byte cp.async.
    "$TILEC" bundle examples/gemm_256x128.tir -o "$DEV/$out/gemm_256x128_261x133x67" --shape 261,133,67 "${b[@]}"
    "$TILEC" bundle examples/gemm_bf16_256x128.tir -o "$DEV/$out/gemm_bf16_256x128_261x133x67" --shape 261,133,67 "${b[@]}"
    "$TILEC" bundle examples/gemm.tir -o "$DEV/$out/gemm_70x76x66" --shape 70,76,66 "${b[@]}"
    "$TILEC" bundle examples/gemm_s8.tir -o "$DEV/$out/gemm_s8_67x45x37" --shape 67,45,37 "${b[@]}"
    "$TILEC" bundle examples/gemm_s8_b_col.tir -o "$DEV/$out/gemm_s8_b_col_67x45x38" --shape 67,45,38 "${b[@]}"
    "$TILEC" bundle examples/gemm_ab_col.tir -o "$DEV/$out/gemm_ab_col_67x45x37" --shape 67,45,37 "${b[@]}"
    "$TILEC" bundle examples/gemm_f16_out.tir -o "$DEV/$out/gemm_f16_out_67x45x37" --shape 67,45,37 --arg alpha=2 --arg beta=-1 "${b[@]}"
    # s8 at the 128x128x64 tile: N and K multiples of 16 (16-byte cp.async of int8 rows); exact.
    for shape in 200,80,48 256,256,256; do
      "$TILEC" bundle examples/gemm_s8_128.tir -o "$DEV/$out/gemm_s8_128_${shape//,/x}" --shape "$shape" "${b[@]}"
    done
  done
  # sm_90a (whatever TARGET is): the wgmma GEMM with A and B copied by TMA (B one load per column panel), the
  # file and its BK=64 variant, through both backends; ragged M and N with TMA's zero fill (261x136x72,
  # 513x1000x264), and odd K (261x133x67: rows not 16-byte aligned, the launch-time variant without TMA).
  for backend in llvm mlir; do
    out=bundles; [ "$backend" = llvm ] || out="bundles-$backend"
    for shape in 261,136,72 513,1000,264 261,133,67; do
      s="${shape//,/x}"
      "$TILEC" bundle examples/gemm_256x128.tir -o "$DEV/$out/gemm_256x128_sm90a_$s" --shape "$shape" --target sm_90a --backend "$backend"
      "$TILEC" bundle examples/gemm_256x128.tir -o "$DEV/$out/gemm_256x128_bk64_sm90a_$s" --shape "$shape" --param BK=64 --target sm_90a --backend "$backend"
    done
  done
  # Benchmarks against cuBLAS: one bench bundle per BENCH entry (PTX + bench.json; no data, the inputs are made
  # on the GPU machine), run there by `tilec-gpu-runner bench`, which also checks each result against cuBLAS's.
  for entry in "${BENCH[@]}"; do
    "$TILEC" bench "${entry%%:*}" --shape "${entry#*:}" --target "$TARGET" --bundle "$DEV/bench"
  done
  # The wgmma GEMMs (sm_90a) at the issue's shapes, in their own directory (the bundle names are the file's).
  mkdir -p "$DEV/bench-sm90a"
  for entry in "${BENCH_SM90A[@]}"; do
    "$TILEC" bench "${entry%%:*}" --shape "${entry#*:}" --target sm_90a --bundle "$DEV/bench-sm90a"
  done
  # gemm_256x128 at BK=64 (tilec bench has no --param: a copy with the attribute changed; the bundle is named
  # after the copy), through both backends.
  mkdir -p "$DEV/variants"
  sed 's/BK = 32, num_warps = 8,/BK = 64, num_warps = 8,/' examples/gemm_256x128.tir > "$DEV/variants/gemm_256x128_bk64.tir"
  grep -q 'BK = 64' "$DEV/variants/gemm_256x128_bk64.tir"
  for shape in 4096,4096,4096 8192,8192,8192; do
    for backend in llvm mlir; do
      "$TILEC" bench "$DEV/variants/gemm_256x128_bk64.tir" --shape "$shape" --target sm_90a --backend "$backend" --bundle "$DEV/bench-sm90a"
    done
    "$TILEC" bench examples/gemm_256x128.tir --shape "$shape" --target sm_90a --backend mlir --bundle "$DEV/bench-sm90a"
  done
  du -sh "$DEV"
  ;;
device)
  OUT="${2:?usage: gpu-suite.sh device OUT_DIR}"
  cd "$DEV"
  chmod +x tilec-gpu-runner
  { nvidia-smi -L; TILEC_PERSISTENT_MAX_BLOCKS=2 ./tilec-gpu-runner bundles/* bundles-mlir/*; } 2>&1 | tee "$OUT/run.log" || true
  for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" ./tilec-gpu-runner bundles/gemm_200x72x40 bundles/gemm_256x256x256 \
      bundles/gemm_256x128_261x133x67 bundles/gemm_70x76x66 bundles/gemm_s8_67x45x37 bundles-mlir/gemm_256x128_261x133x67 \
      bundles/softmax_100x150 bundles/layernorm_100x150 bundles/gemm_bias_relu_200x136x72 bundles/b2b_gemm_200x96 \
      bundles/b2b_through_shared_200x96 bundles/roundtrip_through_shared bundles/roundtrip_through_global \
      bundles/gemm_batched_5x200x72x40 bundles-mlir/softmax_100x150 bundles-mlir/b2b_through_shared_200x96 \
      bundles/attention_fwd_4x256x64 bundles/attention_fwd_causal_2x150x64 bundles-mlir/attention_fwd_d128_2x100x128 > "$OUT/$tool.log" 2>&1 || true
  done
  # One archive per backend: each stays under the 16 MB a returned file may have.
  tar czf "$OUT/outs-llvm.tgz" bundles/*/*.out.bin
  tar czf "$OUT/outs-mlir.tgz" bundles-mlir/*/*.out.bin
  # Benchmarks: each kernel and cuBLAS in one process on the same inputs, CUDA-event timed (median of 50 after
  # 10 warm-up launches), tilec's result checked against cuBLAS's; one JSON line per shape in bench.jsonl
  # (scripts/bench_table.py and scripts/plot_bench.py read it).
  ./tilec-gpu-runner bench bench/* bench-sm90a/* --json "$OUT/bench.jsonl" 2>&1 | tee "$OUT/bench.log" || true
  # A cross-check of cuBLAS's figures through another caller, torch (fp16 output), at the fp16 GEMM's shapes.
  shapes=()
  for entry in "${BENCH[@]}"; do [ "${entry%%:*}" = examples/gemm.tir ] && shapes+=("${entry#*:}"); done
  python3 "$ROOT/scripts/cublas_baseline.py" "${shapes[@]}" 2>&1 | tee -a "$OUT/bench.log" || true
  ;;
check)
  IN="${2:?usage: gpu-suite.sh check DIR_WITH_outs-*.tgz}"
  TILEC="${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec"
  for archive in "$IN"/outs-*.tgz; do tar xzf "$archive" -C "$DEV"; done
  status=0
  for b in "$DEV"/bundles/*/ "$DEV"/bundles-mlir/*/; do
    check_bundle "$TILEC" "${b%/}" || status=1
  done
  # The benchmark table, when the device step wrote results.
  if [ -f "$IN/bench.jsonl" ]; then python3 scripts/bench_table.py "$IN/bench.jsonl" || status=1; fi
  exit $status
  ;;
seeds)
  # Here, without a GPU, a test of the seed plumbing: the seed bundles only, the simulator's expected results
  # standing in for the GPU's outputs (the simulator reproduces the seeds: ir/tests/sim_seeds.rs), then check.
  # Writes into DIR (default: a new temporary directory), never into .device.
  cargo build --release -p tilec -p tilec-tests
  TILEC="${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec"
  DEV="${2:-$(mktemp -d)}"
  rm -rf "$DEV/seed-inputs" "$DEV"/bundles/seed_* && mkdir -p "$DEV/bundles"
  prepare_seeds "$TILEC" bundles llvm
  status=0
  for b in "$DEV"/bundles/seed_*/; do
    for e in "$b"*.expected.bin; do cp "$e" "${e%.expected.bin}.out.bin"; done
    check_bundle "$TILEC" "${b%/}" || status=1
  done
  exit $status
  ;;
*)
  sed -n 2,16p "$0"; exit 1 ;;
esac
