//! `tilec-gpu-runner [--json FILE] BUNDLE_DIR...`: runs each bundle (see `bundle.rs`) on GPU 0, timing those with
//! `repeat` set; with `--json`, appends one JSON line per bundle (`RunRecord`) to FILE.
//! `tilec-gpu-runner bench BENCH_DIR... [--json FILE]`: times each bench bundle (see `bench/spec.rs`, written by
//! `tilec bench --bundle`) against cuBLAS and checks it; with `--json`, appends one JSON line per shape to FILE.
//! `tilec-gpu-runner tune DIR... [--json FILE]`: runs tune candidates (bench bundles with a `tune.json`, written by
//! `tilec tune --bundle DIR`; DIR itself stands for all of them) with a progress bar, prints the ranked table and,
//! with `--json`, appends one JSON line per candidate to FILE for `tilec tune --results FILE`.
//! Exit codes: 0 ok, 1 a bad bundle, a failed launch or a failed check, 2 no GPU/driver/cuBLAS.

use std::path::PathBuf;

const USAGE: &str = "usage: tilec-gpu-runner [--json FILE] BUNDLE_DIR...      run (and time) bundles (bundle.json, see gpu-runner/src/bundle.rs)
       tilec-gpu-runner bench BENCH_DIR... [--json FILE]  time GEMMs against cuBLAS (bench.json, from `tilec bench --bundle`)
       tilec-gpu-runner tune DIR... [--json FILE]         rank tune candidates (from `tilec tune --bundle DIR`)";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "--help" || a == "-h") {
        eprintln!("{USAGE}");
        std::process::exit(if args.is_empty() { 1 } else { 0 });
    }
    let command = if args[0] == "bench" || args[0] == "tune" { args[0].as_str() } else { "run" };
    let mut dirs = Vec::new();
    let mut json = None;
    let mut rest = args[usize::from(command != "run")..].iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--json" => match rest.next() {
                Some(file) => json = Some(PathBuf::from(file)),
                None => usage_error("--json needs a FILE"),
            },
            flag if flag.starts_with("--") => usage_error(&format!("unknown option '{flag}'")),
            dir => dirs.push(PathBuf::from(dir)),
        }
    }
    if dirs.is_empty() {
        usage_error(&format!("{command} needs at least one directory"));
    }
    let result = match command {
        "tune" => tilec_gpu_runner::tune::run_dirs(&dirs, json.as_deref()),
        "bench" => tilec_gpu_runner::bench::run_dirs(&dirs, json.as_deref()),
        _ => tilec_gpu_runner::run_all(&dirs, json.as_deref()),
    };
    if let Err(e) = result {
        eprintln!("tilec-gpu-runner: error: {e}");
        std::process::exit(e.exit_code());
    }
}

fn usage_error(message: &str) -> ! {
    eprintln!("tilec-gpu-runner: error: {message}\n{USAGE}");
    std::process::exit(1);
}
