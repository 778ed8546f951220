#!/usr/bin/env bash
# scripts/bench-compile-instructions.sh [TILEC...]: instructions executed by a cold compile of examples/gemm.tir
# to PTX (cache off), counted by valgrind's callgrind: a benchmark (not a test) whose figures, unlike wall or CPU
# time, do not depend on the load of a shared machine. Prints the total and the parts (inclusive counts) of the
# front end, the LLVM IR pipeline, NVPTX code generation and, inside it, SLSR and instruction selection.
# Each run takes 1-3 minutes under valgrind.
#
#   scripts/bench-compile-instructions.sh /work/main/target/release/tilec target/release/tilec
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INPUT="${INPUT:-$ROOT/examples/gemm.tir}"
[ $# -gt 0 ] || set -- "${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec"
command -v valgrind >/dev/null || { echo "bench-compile-instructions: needs valgrind" >&2; exit 2; }
tmp="$(mktemp -d)"
printf '%-40s %8s %8s %8s %8s %8s %8s\n' binary total front-end IR-pipe codegen SLSR isel
for b in "$@"; do
  TILEC_CACHE=0 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$b" "$INPUT" --emit ptx -o "$tmp/out.ptx" \
    >/dev/null 2>&1
  callgrind_annotate --inclusive=yes "$tmp/cg" 2>/dev/null | python3 -c '
import re, sys
pats = {"total": "PROGRAM TOTALS", "front-end": "tilec_compiler::compiler::Compiler::lower ",
        "IR-pipe": "NvptxTargetMachine::optimize ", "codegen": "NvptxTargetMachine::emit_ptx ",
        "SLSR": "StraightLineStrengthReduceLegacyPass::runOnFunction",
        "isel": "SelectionDAGISel::runOnMachineFunction"}
got = {}
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+)", line)
    if not m: continue
    for k, p in pats.items():
        if p in line + " " and k not in got: got[k] = int(m.group(1).replace(",", ""))
print(" ".join(f"{got.get(k, 0) / 1e9:7.2f}G" for k in pats))' | sed "s|^|$(printf '%-40s ' "${b: -40}")|"
done
rm -rf "$tmp"
