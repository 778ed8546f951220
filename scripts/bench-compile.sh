#!/usr/bin/env bash
# scripts/bench-compile.sh [TILEC...]: compile time of examples/gemm.tir to PTX, a benchmark (not a test).
#
# For each tilec binary given (default: this checkout's target/release/tilec), prints the median, min and max
# wall time of RUNS runs (default 15, after 2 warm-up runs) of:
#   start-up          tilec --version
#   cold, LLVM        tilec examples/gemm.tir --emit ptx                  (cache off: TILEC_CACHE=0)
#   cold, LLVM -O1    the same at -O1 (`default<O1>` instead of the trimmed pipeline of -O2/-O3)
#   cold, MLIR        tilec examples/gemm.tir --emit ptx --backend mlir   (cache off)
#   cache hit, LLVM   the same with the cache on, in a fresh TILEC_CACHE_DIR filled by the warm-up
#   cache hit, MLIR
# A binary without a cache (before it existed) ignores the variables, so its "hit" rows are cold compiles.
# The machine may be shared: the spread (min..max) says how noisy a run was; compare medians. The CPU column
# (user + system time of the child) is much less sensitive to other load than wall time.
#
#   scripts/bench-compile.sh /work/main/target/release/tilec target/release/tilec
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${RUNS:-15}"
INPUT="${INPUT:-$ROOT/examples/gemm.tir}"
[ $# -gt 0 ] || set -- "${CARGO_TARGET_DIR:-$ROOT/target}/release/tilec"
exec python3 - "$RUNS" "$INPUT" "$@" <<'PY'
import os, resource, statistics, subprocess, sys, tempfile, time
runs, src, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
out = tempfile.mkdtemp(prefix="tilec-bench-compile-")
def bench(cmd, env):
    times, cpu = [], []
    for i in range(runs + 2):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if i >= 2:
            times.append((time.perf_counter() - t) * 1e3)
            cpu.append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1e3)
    return statistics.median(times), min(times), max(times), statistics.median(cpu)
print(f"{os.path.basename(src)}, {runs} runs each (+2 warm-up), load average {os.getloadavg()[0]:.1f} at start")
print(f"{'binary':<40} {'case':<17} {'median ms':>10} {'min..max ms':>16} {'CPU ms':>8}")
for b in bins:
    cache = tempfile.mkdtemp(prefix="tilec-bench-cache-")
    off = dict(os.environ, TILEC_CACHE="0")
    on = dict(os.environ, TILEC_CACHE="1", TILEC_CACHE_DIR=cache)
    ptx = ["-o", os.path.join(out, "gemm.ptx")]
    cases = [
        ("start-up", [b, "--version"], off),
        ("cold, LLVM", [b, src, "--emit", "ptx"] + ptx, off),
        ("cold, LLVM -O1", [b, src, "--emit", "ptx", "-O1"] + ptx, off),
        ("cold, MLIR", [b, src, "--emit", "ptx", "--backend", "mlir"] + ptx, off),
        ("cache hit, LLVM", [b, src, "--emit", "ptx"] + ptx, on),
        ("cache hit, MLIR", [b, src, "--emit", "ptx", "--backend", "mlir"] + ptx, on),
    ]
    for name, cmd, env in cases:
        med, lo, hi, cpu = bench(cmd, env)
        print(f"{b[-40:]:<40} {name:<17} {med:>10.1f} {f'{lo:.1f}..{hi:.1f}':>16} {cpu:>8.1f}", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} after {b}")
PY
