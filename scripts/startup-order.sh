#!/usr/bin/env bash
# scripts/startup-order.sh [TILEC]: regenerates driver/startup-order.txt, the functions a `tilec` process runs
# before it can answer a cache hit (LLVM's and MLIR's static constructors and what they call, the Rust
# start-up, the cache lookup), in the order they first run. driver/build.rs hands the file to the linker
# (`--symbol-ordering-file`), which places those functions side by side: a cache hit then faults in ~60
# pages of code instead of ~400 scattered over the 100 MB of `.text`.
#
# The list is measured, not written: valgrind's callgrind records every function `tilec --version` and a
# cache hit of examples/gemm.tir execute (names kept mangled); only names defined in TILEC are kept. A stale
# list (after an LLVM upgrade or a refactor) is harmless: the linker skips names it does not find and the
# start-up is only slower. Regenerate it when `perf stat -e page-faults tilec --version` grows.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TILEC="${1:-${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec}"
command -v valgrind >/dev/null || { echo "startup-order: needs valgrind" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
run() { valgrind --tool=callgrind --demangle=no --callgrind-out-file="$tmp/$1.cg" "${@:2}" >/dev/null 2>&1; }
run version "$TILEC" --version
# The cache's key names the mapped shared libraries, so the entry is made under valgrind too: the second run hits.
export TILEC_CACHE_DIR="$tmp/cache"
run fill "$TILEC" "$ROOT/examples/gemm.tir" -o "$tmp/gemm.ptx"
run hit "$TILEC" "$ROOT/examples/gemm.tir" -o "$tmp/gemm.ptx"
nm --defined-only "$TILEC" | awk '$2 ~ /^[tTwW]$/ {print $3}' | sort -u > "$tmp/defined"
python3 - "$tmp/version.cg" "$tmp/hit.cg" > "$tmp/order" <<'PY'
import re, sys
seen = set()
for path in sys.argv[1:]:
    names = {}
    for line in open(path):
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not m:
            continue
        if m.group(3):
            names[m.group(2)] = m.group(3)
        name = names.get(m.group(2))
        if m.group(1) == "fn" and name and name not in seen:
            seen.add(name)
            print(name)
PY
# Keep the first-run order, only names the binary defines.
awk 'NR == FNR { defined[$0] = 1; next } defined[$0]' "$tmp/defined" "$tmp/order" > "$ROOT/driver/startup-order.txt"
echo "startup-order: $(wc -l < "$ROOT/driver/startup-order.txt") functions in driver/startup-order.txt"
