//! Link options of the `tilec` executable that make its start-up cheap (issue 15: a cache hit is mostly
//! process start-up).
//!
//! LLVM and MLIR are linked statically: 3.2 MB of vtables and type-info objects in `.data.rel.ro`. In the
//! default position-independent executable against the shared libstdc++, the dynamic loader patches ~297,000
//! relative relocations and ~19,500 symbolic ones (every type-info object points at a vtable of libstdc++'s
//! `__cxxabiv1`) at every start, writing, and so copying, every page of that section (~570 page faults and
//! ~3 ms of CPU per run). Two options leave it untouched:
//!
//! * `-no-pie`: a fixed load address, so the linker resolves the addresses inside the executable;
//! * libstdc++ linked statically (from a directory holding only `libstdc++.a`, searched before the system's,
//!   because the LLVM and MLIR crates ask for `-lstdc++`): the linker resolves the type-info vtables too.
//!
//! `tilec --version` goes from ~1,690 page faults and 11.7 ms of CPU to ~900 and 7.6 ms (`perf stat`). Where
//! the compiler has no `libstdc++.a`, libstdc++ stays shared (a warning says so) and only `-no-pie` applies.
//!
//! Most of what remains is code faulted in page by page: the ~700 static constructors of LLVM and MLIR
//! (command-line options, pass and dialect registries) and the template instances they call are spread
//! over the 100 MB of `.text`. With LLD (Rust's default linker on x86-64 Linux) two more options gather them:
//!
//! * `-z keep-text-section-prefix`: the constructors' `.text.startup` sections side by side;
//! * `--symbol-ordering-file=startup-order.txt`: the ~2,700 functions a cache hit runs, measured by
//!   `scripts/startup-order.sh`, first in `.text`, in the order they run.
//!
//! A cache hit of `examples/gemm.tir` then takes ~470 page faults instead of ~990 and ~8 ms instead of ~13
//! (wall, median of 60 paired runs, `farm-bench`); peak memory 49 → 18 MiB. The order changes no code: the
//! same functions at other addresses. With another linker (`RUSTC_LINKER`, or `-C linker…` in the flags) they
//! are left out, with a warning.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if target_os != "linux" || target_env != "gnu" {
        return;
    }
    println!("cargo:rustc-link-arg-bin=tilec=-no-pie");
    if links_with_rust_lld() {
        let order = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("startup-order.txt");
        println!("cargo:rerun-if-changed={}", order.display());
        println!("cargo:rustc-link-arg-bin=tilec=-Wl,-z,keep-text-section-prefix");
        if order.exists() {
            // Names the binary no longer defines (a stale list) are skipped quietly: only start-up is slower.
            println!("cargo:rustc-link-arg-bin=tilec=-Wl,--symbol-ordering-file={},--no-warn-symbol-ordering", order.display());
        }
    } else {
        println!("cargo:warning=tilec is not linked by Rust's LLD: start-up code is not gathered (slower cache hits)");
    }
    match static_libstdcxx() {
        Some(archive) => {
            let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else { return };
            let dir = out.join("static-libstdcxx");
            let link = dir.join("libstdc++.a");
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::remove_file(&link);
            if std::os::unix::fs::symlink(&archive, &link).is_ok() {
                println!("cargo:rustc-link-search=native={}", dir.display());
            }
        }
        None => println!("cargo:warning=no libstdc++.a found: tilec links the shared libstdc++ (slower start-up)"),
    }
}

/// Whether rustc links this target with its own LLD (the default for x86_64-unknown-linux-gnu since Rust
/// 1.90), i.e. no other linker or linker flavour was asked for.
fn links_with_rust_lld() -> bool {
    let target = std::env::var("TARGET").unwrap_or_default();
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    target == "x86_64-unknown-linux-gnu"
        && std::env::var_os("RUSTC_LINKER").is_none()
        && !flags.split('\x1f').any(|flag| flag.contains("linker") || flag.contains("link-self-contained"))
}

/// The C++ compiler's `libstdc++.a`, if it has one (`c++ -print-file-name` prints the bare name when not).
fn static_libstdcxx() -> Option<PathBuf> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let output = Command::new(cxx).arg("-print-file-name=libstdc++.a").output().ok()?;
    let path = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    (path.is_absolute() && path.exists()).then_some(path)
}
