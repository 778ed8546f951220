//! `tilec run FILE`: on a machine with a GPU, compile, run and check in one step — a bundle in a temporary
//! directory (`tilec bundle`), launched in-process by the same launcher as `tilec-gpu-runner`, then checked
//! against the oracle (`tilec compare`). Without a GPU it says what is missing and exits with 2.

use crate::cli::{BundleArgs, RunArgs};
use crate::commands::{bundle, compare};
use crate::error::DriverError;

pub fn run(args: &RunArgs) -> Result<String, DriverError> {
    // Fail fast, before compiling, when there is no GPU to run on.
    let ctx = tilec_gpu_runner::open_gpu().map_err(|e| DriverError::Environment(e.to_string()))?;
    let dir = match &args.keep {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::env::temp_dir().join(format!("tilec-run-{}", std::process::id())),
    };
    let dir_text = dir.display().to_string();
    let bundle_args = BundleArgs {
        input: args.input.clone(),
        output: dir_text.clone(),
        target: args.target.clone(),
        backend: args.backend,
        repeat: args.repeat,
        warmup: 0,
        flops: None,
        no_oracle: !args.check,
        inputs: args.inputs.clone(),
    };
    let mut out = bundle::run(&bundle_args)?;
    let stream = ctx.default_stream();
    let launched = tilec_gpu_runner::run_bundle(&ctx, &stream, &dir).map_err(|e| DriverError::Usage(e.to_string()));
    let checked = launched.and_then(|record| {
        out.push_str(&format!("gpu: {}\n", record.summary()));
        if args.check {
            compare::run(&crate::cli::CompareArgs { bundle: dir_text.clone(), golden: Vec::new() })
        } else {
            Ok(String::new())
        }
    });
    if args.keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    out.push_str(&checked?);
    Ok(out)
}
