use std::cell::RefCell;
use std::rc::Rc;

use melior::dialect::DialectRegistry;
use melior::ir::attribute::ArrayAttribute;
use melior::ir::operation::{OperationLike, OperationRef};
use melior::ir::{AttributeLike, BlockLike, Module};
use melior::pass::PassManager;
use melior::utility::{
    parse_pass_pipeline, register_all_dialects, register_all_llvm_translations, register_all_passes,
};
use melior::Context;

use crate::error::{Error, Result};
use crate::target::{OptLevel, Target};

/// The upstream pipeline from `gpu.module`s holding `nvgpu`/`gpu`/`arith`/`memref`/… ops to `gpu.binary`
/// ops holding PTX, for `target` at `opt_level`.
///
/// `nvvm-attach-target` gives every `gpu.module` an `#nvvm.target<chip = "sm_XX", features = "+ptx80">`;
/// modules should not carry a target of their own (one with a different chip would be compiled too, and
/// [`MlirToolchain::compile_to_ptx`] keeps only the PTX for `target`).
pub fn gpu_to_ptx_pipeline(target: Target, opt_level: OptLevel) -> String {
    format!(
        "builtin.module(nvvm-attach-target{{chip={chip} features={features} O={o}}},\
         gpu.module(convert-nvgpu-to-nvvm,convert-gpu-to-nvvm,reconcile-unrealized-casts),\
         gpu-to-llvm,gpu-module-to-binary{{format=isa}})",
        chip = target.chip(),
        features = target.ptx_features(),
        o = opt_level.as_u32(),
    )
}

/// The PTX of one object of a `gpu.binary` op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuBinaryPtx {
    /// The `gpu.binary`'s symbol name (the name of the `gpu.module` it was made from).
    pub binary: String,
    /// The object's target attribute as MLIR prints it (`#nvvm.target<chip = "sm_80", …>`).
    pub target_attribute: String,
    /// The PTX text.
    pub ptx: String,
}

/// An MLIR context set up for tilec: all upstream dialects, passes and LLVM translations registered, and
/// MLIR's diagnostics collected.
pub struct MlirToolchain {
    context: Context,
    diagnostics: Rc<RefCell<Vec<String>>>,
}

impl Default for MlirToolchain {
    fn default() -> Self {
        Self::new()
    }
}

impl MlirToolchain {
    /// Creates the context and registers everything (the global pass registration once per process).
    pub fn new() -> Self {
        let registry = DialectRegistry::new();
        register_all_dialects(&registry);
        let context = Context::new();
        context.append_dialect_registry(&registry);
        context.load_all_available_dialects();
        register_all_llvm_translations(&context);
        // MLIR's pass registry is one per process, filled without a lock: registered once, so that toolchains
        // made on several threads at a time (`tilec tune` compiles its candidates in parallel) do not race.
        static PASSES: std::sync::Once = std::sync::Once::new();
        PASSES.call_once(register_all_passes);

        let diagnostics = Rc::new(RefCell::new(Vec::new()));
        let sink = Rc::clone(&diagnostics);
        context.attach_diagnostic_handler(move |diagnostic| {
            let severity = match diagnostic.severity() {
                melior::diagnostic::DiagnosticSeverity::Error => "error",
                melior::diagnostic::DiagnosticSeverity::Warning => "warning",
                melior::diagnostic::DiagnosticSeverity::Note => "note",
                melior::diagnostic::DiagnosticSeverity::Remark => "remark",
            };
            let mut text = format!("{}: {severity}: {diagnostic}", diagnostic.location());
            for i in 0..diagnostic.note_count() {
                if let Ok(note) = diagnostic.note(i) {
                    text.push_str(&format!("\n{}: note: {note}", note.location()));
                }
            }
            sink.borrow_mut().push(text);
            true // handled: MLIR prints nothing itself
        });
        MlirToolchain {
            context,
            diagnostics,
        }
    }

    /// The MLIR context.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Takes the diagnostics collected since the last call.
    pub fn take_diagnostics(&self) -> Vec<String> {
        std::mem::take(&mut *self.diagnostics.borrow_mut())
    }

    fn error(&self, message: impl Into<String>) -> Error {
        Error::Mlir {
            message: message.into(),
            diagnostics: self.take_diagnostics(),
        }
    }

    /// Parses and verifies a module from MLIR text.
    pub fn parse_module(&self, text: &str) -> Result<Module<'_>> {
        self.take_diagnostics();
        let module = Module::parse(&self.context, text)
            .ok_or_else(|| self.error("could not parse the module"))?;
        if !module.as_operation().verify() {
            return Err(self.error("the module does not verify"));
        }
        Ok(module)
    }

    /// Runs a textual pass pipeline (anchored on `builtin.module(...)`) on the module.
    ///
    /// The module was verified when it was parsed ([`Self::parse_module`]); MLIR's pass manager does not verify
    /// it again after every pass (its default; `mlir-opt -verify-each=0` does the same): on `gemm.tir` those
    /// re-verifications were ~0.3 G of the ~3 G instructions of a cold compile through this backend, and the
    /// upstream passes keep a verified module valid (a failing conversion reports its own error).
    pub fn run_pipeline(&self, module: &mut Module<'_>, pipeline: &str) -> Result<()> {
        self.take_diagnostics();
        let pass_manager = PassManager::new(&self.context);
        pass_manager.enable_verifier(false);
        parse_pass_pipeline(pass_manager.as_operation_pass_manager(), pipeline)
            .map_err(|e| self.error(format!("invalid pass pipeline `{pipeline}`: {e}")))?;
        pass_manager
            .run(module)
            .map_err(|e| self.error(format!("pass pipeline failed: {e}")))
    }

    /// Translates the `gpu.module @name` at the top level of `module`, already lowered to the LLVM and NVVM
    /// dialects, into an LLVM IR module of `context` (what `gpu-module-to-binary` does before generating code).
    ///
    /// This is how the MLIR backend hands its kernels to the LLVM backend's [`NvptxTargetMachine`]
    /// (`crate::llvm::nvptx_target`): one IR pipeline, one set of code-generation options and one PTX
    /// emitter for both backends.
    ///
    /// [`NvptxTargetMachine`]: crate::llvm::nvptx_target::NvptxTargetMachine
    pub fn translate_gpu_module<'c>(
        &self,
        module: &Module<'_>,
        name: &str,
        context: &'c inkwell::context::Context,
    ) -> Result<inkwell::module::Module<'c>> {
        self.take_diagnostics();
        let Some(gpu_module) = top_level_ops(module, "gpu.module").find(|op| symbol_name(op) == name) else {
            return Err(self.error(format!("the module has no gpu.module @{name} to translate to LLVM IR")));
        };
        // SAFETY: `gpu_module` is a live operation of `module`. `context` is an LLVM context of the LLVM that
        // MLIR's translation links against (one statically linked LLVM in this process): the two crates'
        // `LLVMContextRef`/`LLVMModuleRef` are the same C pointers, bound twice. The translation returns a module
        // the caller owns (or null on failure), which `Module::new` takes ownership of (disposed on drop).
        let raw = unsafe {
            mlir_sys::mlirTranslateModuleToLLVMIR(gpu_module.to_raw(), context.raw().cast())
        };
        if raw.is_null() {
            return Err(self.error(format!("gpu.module @{name} could not be translated to LLVM IR")));
        }
        // SAFETY: see above; `raw` is non-null and owned by nobody else.
        Ok(unsafe { inkwell::module::Module::new(raw.cast()) })
    }

    /// Parses `mlir_text`, lowers it with [`gpu_to_ptx_pipeline`] and returns the PTX for `target`, one
    /// entry per `gpu.module`.
    pub fn compile_to_ptx(
        &self,
        mlir_text: &str,
        target: Target,
        opt_level: OptLevel,
    ) -> Result<Vec<GpuBinaryPtx>> {
        let mut module = self.parse_module(mlir_text)?;
        // The LLVM backend's codegen options (`-disable-lsr`), which `gpu-module-to-binary`'s code generation reads
        // (the `--backend mlir` translation gets them from `NvptxTargetMachine::new`).
        crate::llvm::nvptx_target::set_codegen_options(opt_level);
        self.run_pipeline(&mut module, &gpu_to_ptx_pipeline(target, opt_level))?;
        let chip = format!("chip = \"{}\"", target.chip());
        let binaries: Vec<_> = extract_gpu_binaries(&module)?
            .into_iter()
            .filter(|b| b.target_attribute.contains(&chip))
            .collect();
        if binaries.is_empty() {
            return Err(self.error(format!(
                "the module has no gpu.module, so no PTX for {target} came out"
            )));
        }
        Ok(binaries)
    }
}

/// The operations named `op_name` (`gpu.module`, `gpu.binary`) at the top level of `module`, in order.
fn top_level_ops<'c, 'a>(module: &'a Module<'c>, op_name: &'a str) -> impl Iterator<Item = OperationRef<'c, 'a>> + 'a {
    std::iter::successors(module.body().first_operation(), |op| op.next_in_block())
        .filter(move |op| op.name().as_string_ref().as_str().ok() == Some(op_name))
}

/// An operation's `sym_name` without its quotes (empty when it has none).
fn symbol_name(operation: &OperationRef<'_, '_>) -> String {
    operation.attribute("sym_name").map(|a| a.to_string().trim_matches('"').to_string()).unwrap_or_default()
}

/// Reads the PTX out of every `gpu.binary` op at the top level of `module` (after
/// `gpu-module-to-binary{format=isa}`).
///
/// It reads the objects through MLIR's C API (`mlirGPUObjectAttrGetObject`), which gives the string
/// exactly, rather than unescaping the printed `assembly = "...\0A..."` text.
pub fn extract_gpu_binaries(module: &Module<'_>) -> Result<Vec<GpuBinaryPtx>> {
    let mut binaries = Vec::new();
    for operation in top_level_ops(module, "gpu.binary") {
        let binary = symbol_name(&operation);
        let objects = operation
            .attribute("objects")
            .ok()
            .and_then(|a| ArrayAttribute::try_from(a).ok())
            .ok_or_else(|| Error::Mlir {
                message: format!("gpu.binary @{binary} has no `objects` array"),
                diagnostics: vec![],
            })?;
        for i in 0..objects.len() {
            let object = objects.element(i).map_err(|e| Error::Mlir {
                message: e.to_string(),
                diagnostics: vec![],
            })?;
            let raw = object.to_raw();
            // SAFETY: `raw` is a live attribute of `module`'s context; the accessors are only called on a
            // `#gpu.object`, and the returned string refs point into the context's storage, copied at once.
            let (ptx, target_attribute) = unsafe {
                if !mlir_sys::mlirAttributeIsAGPUObjectAttr(raw) {
                    continue;
                }
                let bytes = string_ref_bytes(mlir_sys::mlirGPUObjectAttrGetObject(raw)).to_vec();
                let target =
                    melior::ir::Attribute::from_raw(mlir_sys::mlirGPUObjectAttrGetTarget(raw));
                (bytes, target.to_string())
            };
            let ptx = String::from_utf8(ptx).map_err(|_| Error::Mlir {
                message: format!(
                    "gpu.binary @{binary}: object {i} is not text (was format=isa used?)"
                ),
                diagnostics: vec![],
            })?;
            binaries.push(GpuBinaryPtx {
                binary: binary.clone(),
                target_attribute,
                ptx,
            });
        }
    }
    Ok(binaries)
}

/// # Safety
/// `s` must point to `s.length` readable bytes that outlive the returned slice's use.
unsafe fn string_ref_bytes<'a>(s: mlir_sys::MlirStringRef) -> &'a [u8] {
    if s.length == 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(s.data as *const u8, s.length) }
    }
}
