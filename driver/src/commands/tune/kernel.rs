//! `tilec tune FILE --arg NAME=SHAPE...`: tuning a kernel that is not a GEMM (attention, softmax, ...).
//!
//! The search space is the GEMM tune's (`--stages`, `--warps`, `--fragments`, `--param`, including list values
//! such as `--param warp_tile=16x32,32x32`); each candidate is the input with its attributes set in the text,
//! compiled at the shapes of `--arg` (the grid and the kernel's parameters follow from the shapes and the
//! candidate's block sizes, as `tilec bundle` derives them), and written as a timing bundle (`bundle.json`:
//! no data, the runner makes the inputs from `--seed`; `--flops` for the TF/s column) with the candidate's
//! `tune.json` beside it. Candidates are ranked by their median time; nothing checks their numerics here
//! (there is no reference to compare with at these sizes): check the winner with `tilec bundle`/`compare` at a
//! small shape, or with a harness that has its own reference (`scripts/bench_attention.py`).
//!
//! With `--bundle DIR` the candidates go to `DIR/<file>_<candidate>/` for `tilec-gpu-runner tune DIR` on the
//! GPU machine; without it, on a machine with a GPU, they are written to a temporary directory and run here.

use std::collections::BTreeMap;
use std::path::Path;

use tilec_compiler::Options;
use tilec_gpu_runner::tune::{self, AttrValue, Candidate, TuneJob, TuneWork};
use tilec_gpu_runner::Bundle;
use tilec_ir::{Func, SourceFile};

use super::{candidates, compile_all, pick, report_skipped, stem, write_best, write_candidates, Compiled, Skipped};
use crate::cli::{backend_name, RunInputs, TuneArgs};
use crate::commands::bench::open_gpu_unless_bundling;
use crate::commands::bundle::{abi_params, tensor_extents};
use crate::commands::interp::{arg_names, located_or_usage, prepare_args, select_func};
use crate::error::DriverError;
use crate::input::{compile_error, parse_and_verify, read_source, write_output};

/// What every candidate's compilation shares.
struct Setup<'a> {
    source: &'a SourceFile,
    args: &'a TuneArgs,
    target: tilec_ir::Target,
    ptxas: Option<&'a tilec_lower_ptx::ptxas::Ptxas>,
}

pub(super) fn run(args: &TuneArgs) -> Result<String, DriverError> {
    if args.repeat == 0 {
        return Err(DriverError::Usage("--repeat must be at least 1".into()));
    }
    let source = read_source(&args.input)?;
    let module = parse_and_verify(&source)?;
    let space = candidates(args, &module, &source.name)?;
    let (gpu, target) = open_gpu_unless_bundling(args.bundle.is_some(), args.target.as_deref())?;
    let func = select_func(&module, args.func.as_deref())?;
    let ptxas = tilec_lower_ptx::ptxas::Ptxas::locate().ok();
    if ptxas.is_none() {
        eprintln!("tilec tune: note: ptxas not found: candidates are not assembled here (no register counts; the GPU's driver assembles them); set PTXAS=/path/to/ptxas or put it on PATH");
    }
    let setup = Setup { source: &source, args, target, ptxas: ptxas.as_ref() };
    let (compiled, skipped) = compile_all(space, |name, attrs| compile(&setup, func, name, attrs));
    report_skipped(&skipped, compiled.is_empty(), args.verbose, target)?;
    let stem = stem(&args.input, &func.name);
    let Some((ctx, stream, _cublas)) = gpu else {
        let dir = args.bundle.as_deref().ok_or_else(|| DriverError::Environment("no GPU opened".into()))?;
        return write_candidates(&args.input, dir, &stem, &compiled, target);
    };
    // Here, with a GPU: the runner reads timing bundles from directories, so write them to a temporary one.
    let dir = std::env::temp_dir().join(format!("tilec-tune-{}", std::process::id()));
    let dir_text = dir.display().to_string();
    write_candidates(&args.input, &dir_text, &stem, &compiled, target)?;
    let jobs: Result<Vec<TuneJob>, _> =
        compiled.iter().map(|c| tune::read_job(&dir.join(format!("{stem}_{}", c.job.candidate.name)))).collect();
    let jobs = jobs.map_err(|e| DriverError::Usage(e.to_string()));
    let records = jobs.map(|jobs| tune::run_jobs(&ctx, &stream, None, &jobs));
    let _ = std::fs::remove_dir_all(&dir);
    let records = records?;
    eprint!("{}", tune::table(&records));
    if let Some(path) = &args.json {
        tune::append_records(Path::new(path), &records).map_err(|e| DriverError::Usage(e.to_string()))?;
    }
    let best = pick(&records, &func.name, None, "this run")?;
    write_best(args, &source, &module, &func.name, best, &records)?;
    Ok(String::new())
}

/// Compiles one candidate at the shapes of `--arg` into a timing bundle.
fn compile(setup: &Setup<'_>, func: &Func, name: &str, attrs: &BTreeMap<String, AttrValue>) -> Result<Compiled, Skipped> {
    let skip = |detail: String| Skipped {
        name: name.to_string(),
        attrs: attrs.clone(),
        reason: detail.lines().next().unwrap_or_default().trim_start_matches("tilec: error: ").to_string(),
        detail,
    };
    let args = setup.args;
    let text = tilec_ir::set_func_attributes(&setup.source.text, &func.name, &super::attrs_as_text(attrs))
        .ok_or_else(|| skip(format!("could not set the attributes of @{} in the input", func.name)))?;
    let source = SourceFile::new(setup.source.name.clone(), text);
    let module = parse_and_verify(&source).map_err(|e| skip(e.render(false)))?;
    let f = module.funcs.into_iter().find(|g| g.name == func.name).ok_or_else(|| skip("the kernel disappeared".into()))?;
    let inputs = RunInputs { shape: None, args: args.args.clone(), seed: args.seed, files: Vec::new(), grid: None, func: None, params: Vec::new() };
    // Shapes only: the inputs are made on the GPU machine; the grid follows the candidate's block sizes.
    let (values, launch) = prepare_args(&f, &inputs, false).map_err(|d| skip(located_or_usage(&source, d).render(false)))?;
    let options = Options { target: setup.target, backend: args.backend.into(), ..Options::default() };
    let (compiled, _) =
        tilec_compiler::compile_for_extents(&f, &options, &tensor_extents(&values)).map_err(|e| skip(compile_error(&source, e).render(false)))?;
    let ptx = compiled.output;
    let kernel = compiled.kernels.into_iter().next().ok_or_else(|| skip("no kernel compiled".into()))?;
    let (mut registers, mut spill_bytes) = (None, None);
    if let Some(ptxas) = setup.ptxas {
        let report = ptxas.assemble(&ptx, setup.target).map_err(|e| skip(format!("ptxas: {e}")))?;
        if let Some(r) = report.kernel(&kernel.name) {
            registers = Some(r.registers);
            spill_bytes = Some(r.spill_stores + r.spill_loads);
        }
    }
    let params = abi_params(&f, &kernel, &values, &arg_names(&f), Some(args.seed), launch.grid).map_err(|e| skip(e.render(false)))?;
    let shared_bytes = u32::try_from(kernel.dynamic_shared_bytes).map_err(|_| skip(format!("{} bytes of shared memory", kernel.dynamic_shared_bytes)))?;
    let bundle = Bundle {
        ptx: "kernel.ptx".into(),
        kernel: kernel.name.clone(),
        grid: launch.grid,
        block: kernel.block,
        persistent: kernel.persistent,
        shared_bytes,
        repeat: args.repeat,
        warmup: args.warmup,
        flops: args.flops,
        label: format!("{} ({}, {}) {name}", setup.source.name, backend_name(args.backend), setup.target),
        params,
    };
    let candidate = Candidate {
        name: name.to_string(),
        func: func.name.clone(),
        source: setup.source.name.clone(),
        attrs: attrs.clone(),
        registers,
        spill_bytes,
    };
    // The directory is set where the bundle is written (`write_candidates`).
    let job = TuneJob { candidate, work: TuneWork::Kernel { dir: Default::default(), bundle }, origin: name.to_string() };
    Ok(Compiled { job, ptx, shared_bytes: kernel.shared_bytes })
}

/// `DIR/bundle.json` and `DIR/kernel.ptx`.
pub(super) fn write_timing_bundle(dir: &Path, bundle: &Bundle, ptx: &str) -> Result<(), DriverError> {
    let shown = dir.display().to_string();
    std::fs::create_dir_all(dir).map_err(|e| DriverError::io(&shown, &e))?;
    let json = serde_json::to_string_pretty(bundle).map_err(|e| DriverError::Usage(format!("{}: {e}", tilec_gpu_runner::BUNDLE_JSON)))?;
    write_output(&dir.join(&bundle.ptx).display().to_string(), ptx.as_bytes())?;
    write_output(&dir.join(tilec_gpu_runner::BUNDLE_JSON).display().to_string(), format!("{json}\n").as_bytes())
}
