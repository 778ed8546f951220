//! `tilec FILE [-o OUT] [--emit ...]`: the compiler proper. Reads top to bottom: read (or hit the cache), parse,
//! verify, then the front door (`tilec_compiler::compile`: pipeline and backend), then print what it logged and
//! write the output and manifest.

use std::io::Write;
use std::time::Instant;

use tilec_compiler::{CompileError, Log, Options, PrintIr};
use tilec_ir::SourceFile;
use tilec_ir::Target;
use tilec_passes::TimingKind;

use crate::cache::{Cache, Key, KeyBuilder};
use crate::cli::{Backend, CompileArgs, Emit, Report};
use crate::error::DriverError;
use crate::target::parse_target;
use crate::input::{compile_error, diagnostics, parse_and_verify, read_source_with, write_output, NO_FUNCTIONS};

pub fn run(args: &CompileArgs) -> Result<(), DriverError> {
    let target = parse_target(&args.target)?;
    let emit = args.emit();
    let opt: tilec_lower_ptx::OptLevel =
        args.opt_level.parse().map_err(|e: tilec_lower_ptx::Error| DriverError::Usage(e.to_string()))?;
    let start = Instant::now();
    let source = read_source_with(&args.input, &args.params)?;
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
    let module = parse_and_verify(&source)?;
    if module.funcs.is_empty() {
        return Err(diagnostics(&source, vec![tilec_ir::Diagnostic::error(tilec_ir::Span::new(0, 0), NO_FUNCTIONS)]));
    }
    let front_end = start.elapsed();
    let options = options(args, target, opt);
    let compiled = match tilec_compiler::compile(module, &options) {
        Ok(compiled) => compiled,
        Err(e) => {
            // What the pipeline logged before the failure (remarks and reports only when it finished).
            if let Some(log) = e.log() {
                print_log(args, &source, log, matches!(e, CompileError::Backend { .. }));
            }
            return Err(compile_error(&source, e));
        }
    };
    print_log(args, &source, &compiled.log, true);
    if args.report.contains(&Report::BankConflicts) && emit == Emit::Tir {
        return Err(DriverError::Usage("--report bank-conflicts looks at lowered code: use it with --emit nvgpu, llvm or ptx".into()));
    }
    let mut manifest_json = None;
    if let Some(path) = &args.manifest {
        if emit != Emit::Ptx {
            return Err(DriverError::Usage("--manifest describes PTX kernels: use it with --emit ptx".into()));
        }
        let json = serde_json::to_string_pretty(&compiled.kernels).map_err(|e| DriverError::Usage(format!("manifest: {e}")))?;
        let json = format!("{json}\n");
        write_output(path, json.as_bytes())?;
        manifest_json = Some(json);
    }
    write_output(&args.output, compiled.output.as_bytes())?;
    // A compile that warned is not cached: a cache hit would not repeat the warning.
    if let (Some((cache, keys)), true) = (&cached, compiled.log.pass_warnings.is_empty()) {
        keys.store(cache, compiled.output.as_bytes(), manifest_json.as_deref().map(str::as_bytes));
    }
    if let Some(mut timing) = compiled.timing {
        timing.push_front("parse + verify", TimingKind::Other, front_end);
        eprint!("{timing}");
    }
    Ok(())
}

/// The front door's options from the command line.
pub fn options(args: &CompileArgs, target: Target, opt: tilec_lower_ptx::OptLevel) -> Options {
    let emit = args.emit();
    Options {
        target,
        backend: args.backend.into(),
        opt_level: opt,
        emit: emit.into(),
        pipeline: args.pipeline.clone(),
        verify_each: args.verifies_each_pass(),
        timing: args.timing,
        print_ir: PrintIr {
            after_all: args.print_ir_after_all,
            after: args.print_ir_after.clone(),
            before: args.print_ir_before.clone(),
        },
        bank_conflicts: args.report.contains(&Report::BankConflicts) && emit != Emit::Tir,
    }
}

/// Prints what the compile logged on stderr: warnings about the options and the IR dumps; when the
/// pipeline `finished`, the remarks (`--remarks`) and the bank-conflict reports (`--report bank-conflicts`).
fn print_log(args: &CompileArgs, source: &SourceFile, log: &Log, finished: bool) {
    crate::input::print_warnings(source, &log.pass_warnings);
    let mut stderr = std::io::stderr().lock();
    for warning in &log.warnings {
        let _ = writeln!(stderr, "tilec: warning: {warning}");
    }
    for dump in &log.dumps {
        let _ = writeln!(stderr, "{dump}");
    }
    if !finished {
        return;
    }
    if args.remarks {
        for remark in &log.remarks {
            let _ = writeln!(stderr, "remark: [{}] {}", remark.pass, remark.message);
        }
    }
    for report in &log.bank_conflicts {
        let text = report.render(Some(source));
        let _ = write!(stderr, "{text}{}", if text.ends_with('\n') { "" } else { "\n" });
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
            .field("verify-each", if args.verifies_each_pass() { b"yes" } else { b"no" });
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
