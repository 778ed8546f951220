#!/usr/bin/env bash
# Long fuzz run of tilec (issue 10): builds tilec-fuzz in release mode and runs it for a while.
#
#   scripts/fuzz.sh                      # 30 minutes, seed = today's date (YYYYMMDD)
#   scripts/fuzz.sh --seconds 600 --seed 7
#   FUZZ_SECONDS=3600 scripts/fuzz.sh    # an hour
#
# Extra arguments go to tilec-fuzz (see `tilec-fuzz --help`). Findings land in fuzz/crashes/<hash>.tir
# with a minimised <hash>.min.tir and a note <hash>.txt; exit code 1 if there is any. Turn each into a
# regression test: copy the .min.tir to tests/fuzz-regressions/<what-it-broke>.tir with a comment saying
# what it found, fix the bug, and `cargo test -p tilec-tests --test fuzz_regressions` checks it from then on.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_TARGET_DIR
SECONDS_BUDGET="${FUZZ_SECONDS:-1800}"
SEED="${FUZZ_SEED:-$(date +%Y%m%d)}"
cargo build --release -p tilec-fuzz --manifest-path "$ROOT/Cargo.toml"
args=(--seconds "$SECONDS_BUDGET" --seed "$SEED" --root "$ROOT")
# Later arguments win: `scripts/fuzz.sh --seconds 60` overrides the default budget.
exec "$CARGO_TARGET_DIR/release/tilec-fuzz" "${args[@]}" "$@"
