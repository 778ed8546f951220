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

/// The C++ compiler's `libstdc++.a`, if it has one (`c++ -print-file-name` prints the bare name when not).
fn static_libstdcxx() -> Option<PathBuf> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let output = Command::new(cxx).arg("-print-file-name=libstdc++.a").output().ok()?;
    let path = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    (path.is_absolute() && path.exists()).then_some(path)
}
