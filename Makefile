# tilec build, demo and test entry points.
#
# The README's two commands are `make demo` and `make test`: each installs what is missing
# (scripts/setup.sh: Debian's LLVM/MLIR 22 packages, ptxas from PyPI into .tools/), builds, and runs.

# The demo: compile the GEMM to PTX (with the per-pass timing and the bank-conflict report), show the start
# of the PTX, and have ptxas assemble it for sm_80 with its resource report (registers, spills, shared memory).
DEMO_CMD = mkdir -p out && \
  $(TILEC) examples/gemm.tir --emit ptx --target sm_80 -o out/gemm.sm_80.ptx --timing --remarks --report bank-conflicts && \
  sed -n '1,40p' out/gemm.sm_80.ptx && echo '  ...' && \
  $(PTXAS) -arch=sm_80 -v out/gemm.sm_80.ptx -o out/gemm.sm_80.cubin

# `make test` fails unless every example compiles to PTX that ptxas accepts (scripts/validate-ptx.sh).
REQUIRE_PTX_EXAMPLES ?= 1

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.ONESHELL:

ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
LLVM_BIN := /usr/lib/llvm-22/bin
CARGO_TARGET_DIR ?= $(ROOT)/target
TILEC := $(CARGO_TARGET_DIR)/release/tilec
PTXAS := $(ROOT)/.tools/nvcc/nvidia/cu13/bin/ptxas
LIT := $(LLVM_BIN)/lit
CARGO ?= cargo

export CARGO_TARGET_DIR PTXAS TILEC REQUIRE_PTX_EXAMPLES
export PATH := $(LLVM_BIN):$(CARGO_TARGET_DIR)/release:$(HOME)/.cargo/bin:$(PATH)

header = printf '\n\033[1m==== %s ====\033[0m\n' "$(1)"

.PHONY: help setup build demo test lit lit-only cargo-test validate-ptx fuzz-smoke lint clean distclean

help:
	@echo "make demo    install what is missing, build, run the demo ($(DEMO_CMD))"
	@echo "make test    install what is missing, build, run cargo tests + lit + ptxas validation"
	@echo "make build   cargo build --release of the workspace ($(TILEC))"
	@echo "make lit     the lit/FileCheck suite in tests/lit"
	@echo "make lint    clippy's no-unwrap/expect/panic lints on the library crates"
	@echo "scripts/fuzz.sh  a long fuzz run (make test runs a bounded one)"
	@echo "make clean   remove build outputs (keeps .tools/); make distclean also removes .tools/"

setup:
	@$(call header,setup: scripts/setup.sh)
	bash $(ROOT)/scripts/setup.sh

build: setup
	@$(call header,build: cargo build --release --workspace)
	start=$$(date +%s)
	$(CARGO) build --release --workspace
	echo "build: $$(( $$(date +%s) - start )) s; tilec at $(TILEC) ($$(du -h $(TILEC) | cut -f1))"

demo: build
	@$(call header,demo: $(DEMO_CMD))
	$(DEMO_CMD)

# The test parts run one after another even when one fails; the target fails if any failed.
test: build
	@failed=()
	$(MAKE) --no-print-directory cargo-test || failed+=("cargo test")
	$(MAKE) --no-print-directory lit-only || failed+=("lit")
	$(MAKE) --no-print-directory validate-ptx || failed+=("ptxas validation")
	$(MAKE) --no-print-directory fuzz-smoke || failed+=("fuzz")
	$(MAKE) --no-print-directory lint || failed+=("lint")
	$(call header,make test: summary)
	if [ "$${#failed[@]}" -ne 0 ]; then
	  printf 'make test: FAILED parts: %s\n' "$${failed[*]}"; exit 1
	fi
	echo "make test: every part (cargo test, lit, ptxas validation, fuzz, lint) succeeded"

cargo-test:
	@$(call header,cargo test --workspace --release)
	TILEC_REQUIRE_PTXAS=1 $(CARGO) test --workspace --release

lit: build lit-only

# lit fails by itself on a failing test or on an empty suite; a run where nothing passed (everything
# UNSUPPORTED) is turned into a failure here.
lit-only:
	@$(call header,lit tests/lit)
	mkdir -p $(ROOT)/.lit-out
	$(LIT) -sv $(ROOT)/tests/lit 2>&1 | tee $(ROOT)/.lit-out/lit.log
	if ! grep -Eq 'Passed *: *[1-9]' $(ROOT)/.lit-out/lit.log; then
	  echo "lit: no test passed"; exit 1
	fi

validate-ptx:
	@$(call header,ptxas validation of examples/*.tir for sm_80 sm_90 sm_90a)
	bash $(ROOT)/scripts/validate-ptx.sh

# A bounded fuzz run (fuzz/, built by `make build`): 2000 iterations or 20 s, whichever comes first; any
# finding fails it. The long run is scripts/fuzz.sh.
FUZZ_ITERATIONS ?= 2000
FUZZ_SECONDS ?= 20
fuzz-smoke:
	@$(call header,fuzz: tilec-fuzz --iterations $(FUZZ_ITERATIONS) --seconds $(FUZZ_SECONDS))
	$(CARGO_TARGET_DIR)/release/tilec-fuzz --iterations $(FUZZ_ITERATIONS) --seconds $(FUZZ_SECONDS) --seed 0 --root $(ROOT)

# No unwrap/expect/panic! reachable from user input ([lints.clippy] in ir/, layout/, passes/, compiler/, gpu-runner/, driver/Cargo.toml;
# a scoped #[allow] only where an `// Invariant:` comment says why it cannot fail), and clippy clean under
# -D warnings.
lint:
	@$(call header,lint: cargo clippy)
	if ! $(CARGO) clippy --version >/dev/null 2>&1; then
	  printf '\033[1;33mlint: SKIPPED: cargo clippy is not installed\033[0m\n'; exit 0
	fi
	$(CARGO) clippy --release -p tilec-ir -p tilec-layout -p tilec-passes -p tilec-lower-ptx -p tilec-compiler -p tilec-gpu-runner --lib --bins -- -D warnings
	$(CARGO) clippy --release -p tilec --lib --bins -- -D warnings

clean:
	$(CARGO) clean
	rm -rf $(ROOT)/.lit-out $(ROOT)/out

distclean: clean
	rm -rf $(ROOT)/.tools
