//! `tilec FILE [-o OUT] [--emit ...]`: the compiler proper. The pipeline reads top to bottom: parse, verify,
//! run the pass pipeline, emit.

use std::io::Write;
use std::time::Instant;

use tilec_ir::{Module, SourceFile};
use tilec_ir::Target;
use tilec_passes::{PassContext, PassManager, PassRegistry, TimingKind, TimingReport};

use crate::cache::{Cache, Key, KeyBuilder};
use crate::cli::{Backend, CompileArgs, Emit, Report};
use crate::error::DriverError;
use crate::target::parse_target;
use crate::input::{diagnostics, parse_and_verify, read_source, write_output};

pub fn run(args: &CompileArgs) -> Result<(), DriverError> {
    let target = parse_target(&args.target)?;
    let emit = args.emit();
    let opt: tilec_lower_ptx::OptLevel =
        args.opt_level.parse().map_err(|e: tilec_lower_ptx::Error| DriverError::Usage(e.to_string()))?;
    let start = Instant::now();
    let source = read_source(&args.input)?;
    let cached = cache_for(args).map(|cache| {
        let keys = CacheKeys::new(args, &source, target, opt);
        (cache, keys)
    });
    if let Some((cache, keys)) = &cached {
        if let Some((output, manifest)) = keys.lookup(cache) {
            if let (Some(path), Some(json)) = (&args.manifest, &manifest) {
                write_output(path, json)?;
            }
            return write_output(&args.output, &output);
        }
    }
    let mut module = parse_and_verify(&source)?;
    let front_end = start.elapsed();
    let mut timing = run_pipeline(args, target, &source, &mut module)?;
    if args.report.contains(&Report::BankConflicts) {
        if emit == Emit::Tir {
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
    let mut manifest_json = None;
    let output = match emit {
        Emit::Tir | Emit::Nvgpu => tilec_ir::print_module(&module),
        Emit::Llvm => tilec_lower_ptx::emit_ir(&module, target, tilec_lower_ptx::Backend::Llvm, opt)
            .map_err(|e| diagnostics(&source, vec![e.to_diagnostic()]))?,
        Emit::Ptx => {
            let compiled = tilec_lower_ptx::compile(&module, target, args.backend.into(), opt)
                .map_err(|e| diagnostics(&source, vec![e.to_diagnostic()]))?;
            kernels = compiled.kernels;
            compiled.ptx
        }
        Emit::Mlir => tilec_lower_ptx::emit_ir(&module, target, tilec_lower_ptx::Backend::Mlir, opt)
            .map_err(|e| diagnostics(&source, vec![e.to_diagnostic()]))?,
    };
    if let Some(path) = &args.manifest {
        if emit != Emit::Ptx {
            return Err(DriverError::Usage("--manifest describes PTX kernels: use it with --emit ptx".into()));
        }
        let json = serde_json::to_string_pretty(&kernels).map_err(|e| DriverError::Usage(format!("manifest: {e}")))?;
        let json = format!("{json}\n");
        write_output(path, json.as_bytes())?;
        manifest_json = Some(json);
    }
    write_output(&args.output, output.as_bytes())?;
    if let Some((cache, keys)) = &cached {
        keys.store(cache, output.as_bytes(), manifest_json.as_deref().map(str::as_bytes));
    }
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
    let default = match args.emit() {
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
        let mut passes = pm.pass_names();
        passes.sort_unstable();
        passes.dedup();
        let hint = tilec_ir::diag::NameHint::new(&name, passes).note("passes in the pipeline");
        eprintln!("tilec: warning: --print-ir-before/after '{name}' names no pass of the pipeline; {hint}");
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

/// The cache the compile command uses, or `None`: disabled (`--no-cache`, `TILEC_CACHE=0`, no cache
/// directory), or bypassed because the run prints something besides its output (`--timing`, `--remarks`,
/// `--print-ir-*`, `--report`), which a cache hit would not reproduce.
fn cache_for(args: &CompileArgs) -> Option<Cache> {
    let prints_more = args.timing
        || args.remarks
        || args.print_ir_after_all
        || !args.print_ir_after.is_empty()
        || !args.print_ir_before.is_empty()
        || !args.report.is_empty();
    if args.no_cache || prints_more {
        return None;
    }
    Cache::from_env()
}

/// The cache keys of one compile: its output, and its manifest when `--manifest` asks for one (a second
/// entry, so a run without `--manifest` and one with it share the output).
struct CacheKeys {
    output: Key,
    manifest: Option<Key>,
}

impl CacheKeys {
    /// Everything the output depends on: this compiler build, the input text (not its path: the outputs
    /// do not mention it), and the options that change the output. The target and level are normalised
    /// (`sm90` and `sm_90` share entries); the backend counts only where it is used.
    fn new(args: &CompileArgs, source: &SourceFile, target: Target, opt: tilec_lower_ptx::OptLevel) -> Self {
        let backend = match (args.emit(), args.backend) {
            (Emit::Ptx, Backend::Mlir) | (Emit::Mlir, _) => "mlir",
            (Emit::Ptx, Backend::Llvm) | (Emit::Llvm, _) => "llvm",
            (Emit::Tir | Emit::Nvgpu, _) => "none",
        };
        let mut key = KeyBuilder::new();
        key.field("input", source.text.as_bytes())
            .field("emit", args.emit().to_string().as_bytes())
            .field("target", target.chip().as_bytes())
            .field("backend", backend.as_bytes())
            .field("opt", opt.to_string().as_bytes())
            .field("pipeline", args.pipeline.as_deref().unwrap_or("<default>").as_bytes())
            .field("verify-each", if args.no_verify_each { b"no" } else { b"yes" });
        let output = key.finish();
        let manifest = args.manifest.is_some().then(|| key.field("artifact", b"manifest").finish());
        CacheKeys { output, manifest }
    }

    /// The output and, when asked for, the manifest; a miss unless every entry asked for is there.
    fn lookup(&self, cache: &Cache) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
        let output = cache.lookup(&self.output)?;
        let manifest = match &self.manifest {
            Some(key) => Some(cache.lookup(key)?),
            None => None,
        };
        Some((output, manifest))
    }

    /// Stores what a successful compile wrote; failures are ignored (the next run compiles again).
    fn store(&self, cache: &Cache, output: &[u8], manifest: Option<&[u8]>) {
        if let (Some(key), Some(json)) = (&self.manifest, manifest) {
            let _ = cache.store(key, json);
        }
        let _ = cache.store(&self.output, output);
    }
}
