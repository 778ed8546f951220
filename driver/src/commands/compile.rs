//! `tilec FILE [-o OUT] [--emit ...]`: the compiler proper. The pipeline reads top to bottom: parse, verify,
//! run the pass pipeline, emit.

use std::io::Write;
use std::time::Instant;

use tilec_ir::{Module, SourceFile};
use tilec_passes::{PassContext, PassManager, PassRegistry, Target, TimingKind, TimingReport};

use crate::cli::{CompileArgs, Emit, Report};
use crate::error::DriverError;
use crate::input::{diagnostics, parse_and_verify, read_source, write_output};

pub fn run(args: &CompileArgs) -> Result<(), DriverError> {
    let target: Target = args.target.parse().map_err(|e: tilec_passes::UnknownTarget| DriverError::Usage(e.to_string()))?;
    let backend_target: tilec_lower_ptx::Target =
        args.target.parse().map_err(|e: tilec_lower_ptx::Error| DriverError::Usage(e.to_string()))?;
    let opt: tilec_lower_ptx::OptLevel =
        args.opt_level.parse().map_err(|e: tilec_lower_ptx::Error| DriverError::Usage(e.to_string()))?;
    let start = Instant::now();
    let source = read_source(&args.input)?;
    let mut module = parse_and_verify(&source)?;
    let front_end = start.elapsed();
    let mut timing = run_pipeline(args, target, &source, &mut module)?;
    if args.report.contains(&Report::BankConflicts) {
        if args.emit == Emit::Tir {
            return Err(DriverError::Usage("--report bank-conflicts looks at lowered code: use it with --emit nvgpu, llvm or ptx".into()));
        }
        let options = tilec_passes::bank_conflicts::BankConflictOptions::default();
        for report in tilec_passes::bank_conflicts::analyze_module_bank_conflicts(&module, &options) {
            let text = report.render(Some(&source));
            eprint!("{text}{}", if text.ends_with('\n') { "" } else { "\n" });
        }
    }
    let emit_start = Instant::now();
    let mut kernels = Vec::new();
    let output = match args.emit {
        Emit::Tir | Emit::Nvgpu => tilec_ir::print_module(&module),
        Emit::Llvm => tilec_lower_ptx::emit_ir(&module, backend_target, tilec_lower_ptx::Backend::Llvm, opt)
            .map_err(|e| diagnostics(&source, vec![e.to_diagnostic()]))?,
        Emit::Ptx => {
            let compiled = tilec_lower_ptx::compile(&module, backend_target, args.backend.into(), opt)
                .map_err(|e| diagnostics(&source, vec![e.to_diagnostic()]))?;
            kernels = compiled.kernels;
            compiled.ptx
        }
        Emit::Mlir => tilec_lower_ptx::emit_ir(&module, backend_target, tilec_lower_ptx::Backend::Mlir, opt)
            .map_err(|e| diagnostics(&source, vec![e.to_diagnostic()]))?,
    };
    if let Some(path) = &args.manifest {
        if args.emit != Emit::Ptx {
            return Err(DriverError::Usage("--manifest describes PTX kernels: use it with --emit ptx".into()));
        }
        let json = serde_json::to_string_pretty(&kernels).map_err(|e| DriverError::Usage(format!("manifest: {e}")))?;
        write_output(path, format!("{json}\n").as_bytes())?;
    }
    write_output(&args.output, output.as_bytes())?;
    if let Some(timing) = timing.as_mut() {
        timing.push_front("parse + verify", TimingKind::Other, front_end);
        timing.push("emit", TimingKind::Other, emit_start.elapsed());
        eprint!("{timing}");
    }
    Ok(())
}

/// Runs the pass pipeline over the module; returns the timing report when `--timing` asked for one.
pub fn run_pipeline(
    args: &CompileArgs,
    target: Target,
    source: &SourceFile,
    module: &mut Module,
) -> Result<Option<TimingReport>, DriverError> {
    let registry = PassRegistry::with_builtin();
    let default = match args.emit {
        Emit::Tir => tilec_passes::default_pipeline(target).to_string(),
        _ => tilec_passes::full_pipeline(target),
    };
    let text = args.pipeline.as_deref().unwrap_or(&default);
    let mut pm = PassManager::from_pipeline(&registry, text)
        .map_err(|d| diagnostics(&SourceFile::new("--pipeline", text), vec![d]))?
        .verify_each(!args.no_verify_each)
        .print_ir_after_all(args.print_ir_after_all)
        .timing(args.timing);
    for name in &args.print_ir_after {
        pm = pm.print_ir_after(name);
    }
    for name in &args.print_ir_before {
        pm = pm.print_ir_before(name);
    }
    for name in pm.unmatched_print_filters() {
        let hint = registry.suggest(&name).map(|s| format!("; did you mean '{s}'?")).unwrap_or_default();
        eprintln!("tilec: warning: --print-ir-before/after '{name}' names no pass of the pipeline{hint}");
    }
    let mut cx = PassContext::new(target);
    let mut stderr = std::io::stderr().lock();
    match pm.run(module, &mut cx) {
        Ok(report) => {
            for dump in &report.dumps {
                let _ = writeln!(stderr, "{dump}");
            }
            if args.remarks {
                for remark in &cx.remarks {
                    let _ = writeln!(stderr, "remark: [{}] {}", remark.pass, remark.message);
                }
            }
            Ok(report.timing)
        }
        Err(e) => {
            for dump in &e.report.dumps {
                let _ = writeln!(stderr, "{dump}");
            }
            Err(diagnostics(source, e.diagnostics.0))
        }
    }
}
