#!/usr/bin/env bash
# scripts/attention-variants.sh [FILE...]: the block-shape variants of the attention examples (default
# examples/attention_fwd.tir and examples/attention_fwd_causal.tir), set with --param without editing the
# body: head dim D in {64, 128}; (BM, WM, num_warps) in {(64, 16, 4), (128, 32, 4), (128, 16, 8)} (every warp
# owns WM whole query rows: num_warps = BM / WM); BN in {32, 64, 128}; pipeline_stages in {1, 2, 3}.
#
# Each variant is compiled for sm_80 and sm_90 through both backends and assembled by ptxas -v (registers,
# spill bytes), and, unless SIM=0, run once on the warp simulator against the interpreter (`tilec sim`, its
# sample_args shapes: ragged S). Prints one line per variant and target: file D BM BN WM warps stages target
# llvm:regs/spill-stores/spill-loads mlir:... sim. Exits 1 if a variant fails to compile or to simulate;
# spills are reported, not failures; a variant whose shared memory exceeds the target's limit is "smem"
# (tilec's located error at the allocation), not a failure. ONLY="D=128 BM=128" (a grep -E on the
# variant's params) narrows it; SIM=0 skips the simulator.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TILEC="${TILEC:-${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec}"
PTXAS="${PTXAS:-$ROOT/.tools/nvcc/nvidia/cu13/bin/ptxas}"
[ -x "$TILEC" ] || { echo "attention-variants: $TILEC is not built" >&2; exit 2; }
[ -x "$PTXAS" ] || { echo "attention-variants: ptxas not found at $PTXAS (run scripts/setup.sh)" >&2; exit 2; }
files=("$@")
[ ${#files[@]} -gt 0 ] || files=("$ROOT/examples/attention_fwd.tir" "$ROOT/examples/attention_fwd_causal.tir")
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0
printf '%-22s %4s %4s %4s %3s %5s %6s %-6s %-18s %-18s %s\n' file D BM BN WM warps stages target llvm mlir sim
for file in "${files[@]}"; do
  name="$(basename "$file" .tir)"
  for d in 64 128; do
    for shape in "64 16 4" "128 32 4" "128 16 8"; do
      read -r bm wm warps <<<"$shape"
      for bn in 32 64 128; do
        for stages in 1 2 3; do
          params=(--param "D=$d" --param "BM=$bm" --param "WM=$wm" --param "num_warps=$warps" --param "BN=$bn" --param "pipeline_stages=$stages")
          if [ -n "${ONLY:-}" ] && ! grep -qE -- "${ONLY}" <<<"D=$d BM=$bm BN=$bn WM=$wm num_warps=$warps pipeline_stages=$stages"; then continue; fi
          sim="-"
          if [ "${SIM:-1}" != 0 ]; then
            if out="$("$TILEC" sim "$file" "${params[@]}" 2>&1)" && grep -q '%O: .*\(bit-exact\|within tolerance\)' <<<"$out"; then
              sim="ok"
            elif grep -q 'bytes of shared memory' <<<"$out"; then
              sim="smem"
            else
              sim="FAIL"; status=1
              printf '%s\n' "$out" | tail -n 5 | sed 's/^/      /' >&2
            fi
          fi
          for target in sm_80 sm_90; do
            cols=()
            for backend in llvm mlir; do
              ptx="$tmp/$name.$target.$backend.ptx"
              if ! "$TILEC" "$file" "${params[@]}" --target "$target" --backend "$backend" -o "$ptx" 2>"$tmp/err"; then
                if grep -q 'bytes of shared memory' "$tmp/err"; then cols+=("smem"); continue; fi
                cols+=("compile-FAIL"); status=1; sed 's/^/      /' "$tmp/err" | head -n 5 >&2; continue
              fi
              if ! log="$("$PTXAS" -v -arch="$target" "$ptx" -o /dev/null 2>&1)"; then
                cols+=("ptxas-FAIL"); status=1; printf '%s\n' "$log" | head -n 5 | sed 's/^/      /' >&2; continue
              fi
              regs="$(sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' <<<"$log" | head -n 1)"
              st="$(sed -n 's/.* \([0-9]*\) bytes spill stores.*/\1/p' <<<"$log" | head -n 1)"
              ld="$(sed -n 's/.* \([0-9]*\) bytes spill loads.*/\1/p' <<<"$log" | head -n 1)"
              cols+=("$regs/${st:-0}/${ld:-0}")
            done
            printf '%-22s %4s %4s %4s %3s %5s %6s %-6s %-18s %-18s %s\n' "$name" "$d" "$bm" "$bn" "$wm" "$warps" "$stages" "$target" "${cols[0]}" "${cols[1]}" "$sim"
          done
        done
      done
    done
  done
done
exit "$status"
