#!/usr/bin/env bash
# scripts/ptx-snapshot.sh DIR: every example's PTX (examples/*.tir, examples/seeds/*.tir, examples/hopper/*.tir) for sm_80 and
# sm_90 through both backends, and its nvgpu-level IR, written into DIR as NAME.TARGET.BACKEND.ptx and
# NAME.TARGET.nvgpu. A refactor that must not change codegen compares two snapshots with `diff -r`:
#
#   scripts/ptx-snapshot.sh /tmp/before      # on the commit before
#   scripts/ptx-snapshot.sh /tmp/after       # after the change
#   diff -r /tmp/before /tmp/after && echo byte-identical
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TILEC="${TILEC:-${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec}"
OUT="${1:?usage: scripts/ptx-snapshot.sh DIR}"
[ -x "$TILEC" ] || { echo "ptx-snapshot: $TILEC is not built (run make build)" >&2; exit 2; }
mkdir -p "$OUT"
for example in "$ROOT"/examples/*.tir "$ROOT"/examples/seeds/*.tir "$ROOT"/examples/hopper/*.tir; do
  name="$(basename "$example" .tir)"
  # A header line `// targets: sm_90` limits an example to the targets whose instructions it uses.
  only="$(sed -n 's|^// targets: *||p' "$example" | head -n 1)"
  targets=(sm_80 sm_90)
  # sm_90a only for the examples whose `// targets:` line names it (Hopper's arch-specific instructions).
  if grep -qw -- sm_90a <<<"$only"; then targets+=(sm_90a); fi
  for target in "${targets[@]}"; do
    if [ -n "$only" ] && ! grep -qw -- "$target" <<<"$only"; then continue; fi
    "$TILEC" "$example" --emit nvgpu --target "$target" -o "$OUT/$name.$target.nvgpu"
    for backend in llvm mlir; do
      "$TILEC" "$example" --emit ptx --target "$target" --backend "$backend" -o "$OUT/$name.$target.$backend.ptx"
    done
  done
done
echo "ptx-snapshot: $(ls "$OUT" | wc -l) files in $OUT"
