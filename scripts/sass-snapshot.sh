#!/usr/bin/env bash
# scripts/sass-snapshot.sh PTXDIR SASSDIR: the machine code ptxas makes of every PTX file of a ptx-snapshot
# (scripts/ptx-snapshot.sh), disassembled, one NAME.TARGET.BACKEND.sass per file. A compile-time change that
# alters the PTX but not what runs on the GPU shows as identical SASS: then kernel speed is unchanged by
# construction, without a GPU benchmark. The GPU's driver compiles PTX itself, so identical SASS from this
# ptxas (the project's, .tools/nvcc, 13.5) is strong evidence, not proof; a change that alters SASS needs the
# GPU A/B benchmark (same process, before/after/after/before).
#
#   scripts/ptx-snapshot.sh /tmp/before-ptx && scripts/sass-snapshot.sh /tmp/before-ptx /tmp/before-sass
#   ... change, rebuild ...
#   scripts/ptx-snapshot.sh /tmp/after-ptx && scripts/sass-snapshot.sh /tmp/after-ptx /tmp/after-sass
#   diff -r /tmp/before-sass /tmp/after-sass && echo SASS-identical
#
# Needs nvdisasm: installed on first use from the PyPI wheel `nvidia-cuda-nvdisasm` into .tools/nvdisasm
# (project-local, like ptxas). FILTER (a grep -E pattern on the file name) limits the files, e.g.
# FILTER='\.llvm\.ptx$'.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PTX_DIR="${1:?usage: scripts/sass-snapshot.sh PTXDIR SASSDIR}"
OUT="${2:?usage: scripts/sass-snapshot.sh PTXDIR SASSDIR}"
PTXAS="$ROOT/.tools/nvcc/nvidia/cu13/bin/ptxas"
NVDISASM="$ROOT/.tools/nvdisasm/nvidia/cu13/bin/nvdisasm"
[ -x "$PTXAS" ] || { echo "sass-snapshot: no ptxas at $PTXAS (run make setup)" >&2; exit 2; }
if [ ! -x "$NVDISASM" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps \
    --target "$ROOT/.tools/nvdisasm" "nvidia-cuda-nvdisasm==13.5.37" >&2
fi
mkdir -p "$OUT"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
n=0
for ptx in "$PTX_DIR"/*.ptx; do
  name="$(basename "$ptx" .ptx)"
  if [ -n "${FILTER:-}" ] && ! grep -qE -- "$FILTER" <<<"$name.ptx"; then continue; fi
  target="$(sed -n 's/^\.target[[:space:]]*\([a-z0-9_]*\).*/\1/p' "$ptx" | head -n 1)"
  "$PTXAS" -arch="$target" -O3 "$ptx" -o "$tmp/k.cubin"
  # -c: code sections only; -hex off; the /*offset*/ comments stay (a shifted offset is a real difference).
  "$NVDISASM" -c "$tmp/k.cubin" > "$OUT/$name.sass"
  n=$((n + 1))
done
echo "sass-snapshot: $n files in $OUT"
