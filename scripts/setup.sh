#!/usr/bin/env bash
# scripts/setup.sh: install what tilec needs to build and test, only what is missing.
#
#   * Debian packages (LLVM/MLIR 22, FileCheck, lit, not, libclang for bindgen), see ../shared/toolchain.md
#   * ptxas from the PyPI wheel `nvidia-cuda-nvcc`, into the project-local .tools/ (never globally)
#   * checks that cargo, lit, FileCheck, not and llc-22 are there
#
# Idempotent and fast when everything is installed (a few dpkg-query calls).
# Prints `PTXAS=<path>` as its last line so callers can pick it up.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LLVM_PREFIX=/usr/lib/llvm-22
APT_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libclang-22-dev clang-22
  libpolly-22-dev zlib1g-dev libzstd-dev libxml2-dev
)
# The ptxas wheel: 13.5.37 is the version verified to validate PTX for sm_80/86/89/90/90a here.
NVCC_WHEEL="nvidia-cuda-nvcc==13.5.37"
NVCC_DIR="$ROOT/.tools/nvcc"
PTXAS="$NVCC_DIR/nvidia/cu13/bin/ptxas"

say() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 2; }

# Run a command as root: directly when root, through sudo when available.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "need root (or sudo) to run: $*"
  fi
}

# ---- Debian packages --------------------------------------------------------
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || die "missing packages ${missing[*]} and no apt-get (not Debian?)"
  say "installing Debian packages: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  say "Debian packages: all ${#APT_PACKAGES[@]} installed"
fi

# ---- cargo ------------------------------------------------------------------
if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || die "cargo not found: install Rust (rustup, https://rustup.rs) and re-run"
say "cargo: $(cargo --version)"

# ---- LLVM tools used by the tests ------------------------------------------
for tool in FileCheck not lit llc; do
  [ -x "$LLVM_PREFIX/bin/$tool" ] || die "$LLVM_PREFIX/bin/$tool missing (package llvm-22-tools / llvm-22)"
done
say "lit: $LLVM_PREFIX/bin/lit ($("$LLVM_PREFIX/bin/lit" --version 2>&1 | head -1))"

# ---- ptxas (PyPI wheel, project-local) -------------------------------------
if [ ! -x "$PTXAS" ]; then
  PY=""
  for cand in python3 /usr/bin/python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -m pip --version >/dev/null 2>&1; then PY="$cand"; break; fi
  done
  if [ -z "$PY" ]; then
    say "no pip for python3: installing python3-pip"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-pip
    PY=/usr/bin/python3
  fi
  say "installing $NVCC_WHEEL into $NVCC_DIR (ptxas only, no other package is touched)"
  rm -rf "$NVCC_DIR"
  "$PY" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --target "$NVCC_DIR" "$NVCC_WHEEL"
  [ -x "$PTXAS" ] || die "the wheel installed but $PTXAS is missing"
fi
"$PTXAS" --version >/dev/null 2>&1 || die "$PTXAS does not run"
say "ptxas: $PTXAS ($("$PTXAS" --version | tail -1))"
echo "PTXAS=$PTXAS"
