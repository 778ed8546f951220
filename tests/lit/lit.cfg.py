# lit configuration for tilec's FileCheck tests (run with `make lit`).
#
# Substitutions available in RUN lines:
#   %tilec      the built compiler (target/release/tilec, or $TILEC)
#   %ptxas      the project-local ptxas (or $PTXAS), see scripts/setup.sh
#   %llc        llc from LLVM 22
#   %mlir-opt   mlir-opt from MLIR 22
#   FileCheck, not   LLVM 22's, by absolute path
# Features for REQUIRES:
#   tilec       the tilec binary exists and `tilec --help` prints a usage text
#   ptxas       ptxas is installed
import os
import re
import shutil
import subprocess

import lit.formats

config.name = "tilec"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tir", ".ll", ".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py"]

config.test_source_root = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(config.test_source_root, "..", ".."))
config.test_exec_root = os.path.join(root, ".lit-out")

llvm_bin = "/usr/lib/llvm-22/bin"
target_dir = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
tilec = os.environ.get("TILEC") or os.path.join(target_dir, "release", "tilec")
ptxas = os.environ.get("PTXAS") or os.path.join(root, ".tools", "nvcc", "nvidia", "cu13", "bin", "ptxas")

config.environment["PATH"] = os.pathsep.join([llvm_bin, os.path.dirname(tilec), config.environment.get("PATH", "")])
for var in ("HOME", "TMPDIR", "RUST_BACKTRACE"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
# Every RUN line compiles: no on-disk cache (it would also write under $HOME). tests/tests/cache.rs tests it.
config.environment["TILEC_CACHE"] = "0"
# Verify after every pass, naming a pass that breaks the IR (a release tilec verifies only the result).
config.environment["TILEC_VERIFY_EACH"] = "1"

# Longest names first, so that %tilec does not eat a prefix of a longer substitution.
config.substitutions.append(("%mlir-opt", os.path.join(llvm_bin, "mlir-opt")))
config.substitutions.append(("%tilec", tilec))
config.substitutions.append(("%ptxas", ptxas))
config.substitutions.append(("%llc", os.path.join(llvm_bin, "llc")))
# Bare tool names, matched as whole words the way LLVM's own lit configs do.
config.substitutions.append((r"(?<![\w/.%-])FileCheck(?![\w.-])", os.path.join(llvm_bin, "FileCheck")))
config.substitutions.append((r"(?<![\w/.%-])not(?=\s)", os.path.join(llvm_bin, "not")))


def tilec_works():
    if not os.access(tilec, os.X_OK):
        return False
    try:
        out = subprocess.run([tilec, "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and "usage" in (out.stdout + out.stderr).lower()


if tilec_works():
    config.available_features.add("tilec")
else:
    lit_config.note("tilec: %s has no CLI yet (or is not built): tests with REQUIRES: tilec are UNSUPPORTED" % tilec)

if os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
else:
    lit_config.note("ptxas not found at %s: run scripts/setup.sh" % ptxas)
