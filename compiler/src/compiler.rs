//! [`Compiler`]: the pass registry, and the one path from a module to an output: [`Compiler::lower`] (the
//! pipeline) then [`Compiler::emit`] (the backend), together [`Compiler::compile`].

use std::time::Instant;

use tilec_ir::Module;
use tilec_lower_ptx::KernelInfo;
use tilec_passes::bank_conflicts::{analyze_module_bank_conflicts, BankConflictOptions};
use tilec_passes::{PassContext, PassManager, PassRegistry, TimingKind, TimingReport, Verify};

use crate::error::{CompileError, Log};
use crate::options::{Emit, Options};

/// A module after the pass pipeline: nvgpu-level IR (tile-level for [`Emit::Tir`] or a tile-level
/// pipeline), with what the pipeline logged.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The module the pipeline produced.
    pub module: Module,
    /// Warnings, IR dumps, remarks, bank-conflict reports.
    pub log: Log,
    /// Per pass, when [`Options::timing`] asked for it.
    pub timing: Option<TimingReport>,
}

/// A compiled module.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The output text: PTX, LLVM IR, MLIR, or the printed module for [`Emit::Tir`] / [`Emit::Nvgpu`].
    pub output: String,
    /// The launch description of each kernel (for [`Emit::Ptx`]; empty otherwise).
    pub kernels: Vec<KernelInfo>,
    /// The module the pipeline produced (nvgpu-level unless a tile-level pipeline ran).
    pub lowered: Module,
    /// Warnings, IR dumps, remarks, bank-conflict reports.
    pub log: Log,
    /// Per pass, then `emit` (the backend), when [`Options::timing`] asked for it.
    pub timing: Option<TimingReport>,
}

impl Compiled {
    /// The PTX, for [`Emit::Ptx`] (the output otherwise).
    pub fn ptx(&self) -> &str {
        &self.output
    }
}

/// What [`Compiler::emit`] makes of a lowered module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Emitted {
    /// The output text.
    pub output: String,
    /// The launch description of each kernel (for [`Emit::Ptx`]; empty otherwise).
    pub kernels: Vec<KernelInfo>,
}

/// tilec as a library: a pass registry (the built-in passes, and any an embedder registers) and the
/// compile entry points. [`crate::compile`] and [`crate::lower`] use a `Compiler::default()`.
pub struct Compiler {
    registry: PassRegistry,
}

impl Default for Compiler {
    fn default() -> Compiler {
        Compiler::new()
    }
}

impl Compiler {
    /// A compiler with the built-in passes.
    pub fn new() -> Compiler {
        Compiler { registry: PassRegistry::with_builtin() }
    }

    /// A compiler whose pipelines are looked up in `registry`.
    pub fn with_registry(registry: PassRegistry) -> Compiler {
        Compiler { registry }
    }

    /// The registry, to look passes up.
    pub fn registry(&self) -> &PassRegistry {
        &self.registry
    }

    /// The registry, to register an embedder's passes (then named in [`Options::pipeline`]).
    pub fn registry_mut(&mut self) -> &mut PassRegistry {
        &mut self.registry
    }

    /// Verifies `module`, runs the pipeline ([`Options::pipeline_text`]) and emits ([`Compiler::emit`]).
    pub fn compile(&self, module: Module, options: &Options) -> Result<Compiled, CompileError> {
        let Lowered { module, log, mut timing } = self.lower(module, options)?;
        let start = Instant::now();
        let emitted = match emit(&module, options) {
            Ok(emitted) => emitted,
            Err(CompileError::Backend { diagnostic, .. }) => return Err(CompileError::Backend { diagnostic, log: Box::new(log) }),
            Err(e) => return Err(e),
        };
        if let Some(timing) = timing.as_mut() {
            timing.push("emit", TimingKind::Other, start.elapsed());
        }
        Ok(Compiled { output: emitted.output, kernels: emitted.kernels, lowered: module, log, timing })
    }

    /// Verifies `module` and runs the pipeline over it: [`Options::pipeline`], or the default for
    /// [`Options::emit`] (for [`Emit::Tir`] the tile-level pipeline, else the whole one down to nvgpu-level
    /// IR). What `sim` simulates and `check` checks.
    pub fn lower(&self, mut module: Module, options: &Options) -> Result<Lowered, CompileError> {
        tilec_ir::verify::verify_module(&module).map_err(CompileError::Invalid)?;
        // Every op the target cannot lower (nvgpu-level input), each at its op, before any pass runs.
        let illegal: Vec<_> = module.funcs.iter().flat_map(|f| tilec_ir::verify::target_legality(f, options.target)).collect();
        if !illegal.is_empty() {
            return Err(CompileError::Invalid(tilec_ir::Diagnostics(illegal)));
        }
        let text = options.pipeline_text();
        let mut pm = PassManager::from_pipeline(&self.registry, &text)
            .map_err(|diagnostic| CompileError::Pipeline { text: text.clone(), diagnostic })?
            .verify(if options.verify_each { Verify::EachPass } else { Verify::AtEnd })
            .print_ir_after_all(options.print_ir.after_all)
            .timing(options.timing);
        for name in &options.print_ir.after {
            pm = pm.print_ir_after(name);
        }
        for name in &options.print_ir.before {
            pm = pm.print_ir_before(name);
        }
        let mut log = Log::default();
        for name in pm.unmatched_print_filters() {
            // A name no pass has is a typo: an error, as an unknown pass in --pipeline is. A real pass that
            // this pipeline does not run is only a warning.
            if !self.registry.contains(&name) {
                let hint = tilec_ir::diag::NameHint::new(&name, self.registry.names()).note("passes");
                return Err(CompileError::Unsupported(format!("--print-ir-before/after '{name}' names no pass; {hint}")));
            }
            let mut passes = pm.pass_names();
            passes.sort_unstable();
            passes.dedup();
            let hint = tilec_ir::diag::NameHint::new(&name, passes).note("passes in the pipeline");
            log.warnings.push(format!("--print-ir-before/after '{name}' names no pass of the pipeline; {hint}"));
        }
        let mut cx = PassContext::new(options.target);
        match pm.run(&mut module, &mut cx) {
            Ok(report) => {
                log.dumps = report.dumps;
                log.remarks = std::mem::take(&mut cx.remarks);
                log.pass_warnings = std::mem::take(&mut cx.warnings);
                if options.bank_conflicts {
                    log.bank_conflicts = analyze_module_bank_conflicts(&module, &BankConflictOptions::default());
                }
                Ok(Lowered { module, log, timing: report.timing })
            }
            Err(e) => {
                log.dumps = e.report.dumps;
                log.remarks = std::mem::take(&mut cx.remarks);
                log.pass_warnings = std::mem::take(&mut cx.warnings);
                Err(CompileError::Pass { diagnostics: e.diagnostics, log: Box::new(log) })
            }
        }
    }

    /// Emits an already lowered module (what [`Compiler::lower`] returned): see [`emit`].
    pub fn emit(&self, lowered: &Module, options: &Options) -> Result<Emitted, CompileError> {
        emit(lowered, options)
    }
}

/// Emits a lowered module as [`Options::emit`] says: printed tilec IR, or through the backend (LLVM IR, MLIR,
/// PTX with the kernels' launch descriptions). The pipeline does not run: for a module lowered once and
/// emitted for several options, or one lowered by [`crate::specialize`].
pub fn emit(lowered: &Module, options: &Options) -> Result<Emitted, CompileError> {
    let backend_error = |e: tilec_lower_ptx::TranslateError| CompileError::Backend { diagnostic: e.to_diagnostic(), log: Box::default() };
    match options.emit {
        Emit::Tir | Emit::Nvgpu => Ok(Emitted { output: tilec_ir::print_module(lowered), kernels: Vec::new() }),
        #[cfg(any(feature = "llvm", feature = "mlir"))]
        Emit::Llvm | Emit::Mlir => {
            let output = tilec_lower_ptx::emit_ir(lowered, options.target, options.effective_backend(), options.opt_level).map_err(backend_error)?;
            Ok(Emitted { output, kernels: Vec::new() })
        }
        #[cfg(any(feature = "llvm", feature = "mlir"))]
        Emit::Ptx => {
            let compiled = tilec_lower_ptx::compile(lowered, options.target, options.backend, options.opt_level).map_err(backend_error)?;
            Ok(Emitted { output: compiled.ptx, kernels: compiled.kernels })
        }
        #[cfg(not(any(feature = "llvm", feature = "mlir")))]
        other => {
            let _ = backend_error;
            Err(CompileError::Unsupported(format!("--emit {other} needs a backend: this build of tilec-compiler has neither feature 'llvm' nor 'mlir'")))
        }
    }
}

