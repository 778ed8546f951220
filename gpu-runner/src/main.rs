//! `tilec-gpu-runner BUNDLE_DIR...`: runs each bundle (see `bundle.rs`) on GPU 0.
//! Exit codes: 0 ok, 1 a bad bundle or a failed launch, 2 no GPU/driver.

use std::path::PathBuf;

fn main() {
    let dirs: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if dirs.is_empty() || dirs.iter().any(|d| d.as_os_str() == "--help") {
        eprintln!("usage: tilec-gpu-runner BUNDLE_DIR...  (each holds bundle.json, see gpu-runner/src/bundle.rs)");
        std::process::exit(if dirs.is_empty() { 1 } else { 0 });
    }
    if let Err(e) = tilec_gpu_runner::run_all(&dirs) {
        eprintln!("tilec-gpu-runner: error: {e}");
        std::process::exit(e.exit_code());
    }
}
