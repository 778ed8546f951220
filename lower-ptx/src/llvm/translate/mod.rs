//! nvgpu-level tilec IR → LLVM IR with NVVM intrinsics → PTX (feature `llvm`).
//!
//! The pipeline reads top to bottom in [`compile`]:
//! 1. [`translate_module`]: every `tile.func` becomes a `ptx_kernel` function in one LLVM module
//!    ([`translate_func`] for one), with the parameter list of its [`KernelInfo`], launch bounds
//!    (`"nvvm.maxntid"`) from `num_warps`, and one shared-memory global per `tile.alloc_shared` (or one
//!    dynamic `extern` array above 48 KiB, see [`SharedPlan`](crate::kernel_info::SharedPlan));
//! 2. LLVM's verifier, `default<On>` pipeline and NVPTX code generation
//!    ([`NvptxTargetMachine::compile_to_ptx`]).
//!
//! As in MLIR's `NVGPUToNVVM`, each nvgpu op kind has its own lowering function (in [`nvgpu`]:
//! `lower_ldmatrix`, `lower_stmatrix`, `lower_mma_sync`, `lower_device_async_copy`, …); the per-thread
//! `tile` ops (constants, arithmetic, comparisons, casts, ids) are in [`scalar`], `tile.for` in
//! [`control`], address computation through tile layouts in [`memory`], and the IR-type → LLVM-type map
//! in [`types`].
//!
//! Values: `index` is `i64`, per-thread vectors `vector<NxMxT>` are flat LLVM vectors `<N*M x T>` (so
//! loop-carried fragments are phis of vectors and stay in registers); the `mma`/`ldmatrix` register views
//! (`<2 x half>`, `i32`) are taken with `shufflevector`/`bitcast` at the intrinsic call, which LLVM folds.

mod control;
mod func;
mod memory;
pub mod nvgpu;
mod scalar;
mod types;

use inkwell::context::Context;
use inkwell::module::Module as LlvmModule;

use tilec_ir::body::{Func, Module};

use crate::error::Error;
use crate::kernel_info::KernelInfo;
use crate::llvm::NvptxTargetMachine;
use func::FuncTranslator;
use crate::target::{OptLevel, Target};

/// The name of the LLVM module tilec builds (it appears in no output).
pub const MODULE_NAME: &str = "tilec";

pub use crate::translation::{CompiledModule, TranslateError};
pub(crate) use crate::translation::internal;

impl From<inkwell::builder::BuilderError> for TranslateError {
    fn from(e: inkwell::builder::BuilderError) -> Self {
        TranslateError::Backend(Error::Llvm(format!("IR builder: {e}")))
    }
}

/// Result alias of the translation.
pub type Result<T, E = TranslateError> = std::result::Result<T, E>;

/// What [`compile`] returns besides PTX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// The LLVM IR as translated, before optimisation (verified).
    LlvmUnoptimized,
    /// The LLVM IR after the `default<On>` pipeline (what `--emit llvm` prints).
    Llvm,
    /// PTX.
    Ptx,
}

/// Translates one kernel into a fresh LLVM module configured for `target` (triple and data layout set),
/// not yet verified or optimised.
pub fn translate_func<'ctx>(
    context: &'ctx Context,
    func: &Func,
    target: Target,
) -> Result<(LlvmModule<'ctx>, KernelInfo)> {
    let machine = NvptxTargetMachine::new(target, OptLevel::O0)?;
    let module = context.create_module(MODULE_NAME);
    machine.configure_module(&module);
    let info = FuncTranslator::new(&module, func, target)?.translate()?;
    Ok((module, info))
}

/// Translates every kernel of `module` into one LLVM module configured for `target`.
pub fn translate_module<'ctx>(
    context: &'ctx Context,
    module: &Module,
    target: Target,
) -> Result<(LlvmModule<'ctx>, Vec<KernelInfo>)> {
    let machine = NvptxTargetMachine::new(target, OptLevel::O0)?;
    let llvm = context.create_module(MODULE_NAME);
    machine.configure_module(&llvm);
    let mut kernels = Vec::with_capacity(module.funcs.len());
    for func in &module.funcs {
        kernels.push(FuncTranslator::new(&llvm, func, target)?.translate()?);
    }
    Ok((llvm, kernels))
}

/// Translates, verifies, optimises and emits `emit` for `module`: the text and the kernels' descriptions.
pub fn compile(module: &Module, target: Target, opt: OptLevel, emit: Emit) -> Result<(String, Vec<KernelInfo>)> {
    let context = Context::create();
    let (llvm, kernels) = translate_module(&context, module, target)?;
    let machine = NvptxTargetMachine::new(target, opt)?;
    machine.configure_module(&llvm);
    machine.verify(&llvm)?;
    let text = match emit {
        Emit::LlvmUnoptimized => llvm.print_to_string().to_string(),
        Emit::Llvm => {
            machine.optimize(&llvm)?;
            machine.verify(&llvm)?;
            llvm.print_to_string().to_string()
        }
        Emit::Ptx => machine.compile_to_ptx(&llvm)?,
    };
    Ok((text, kernels))
}

/// Compiles every kernel of `module` to PTX for `target` at `opt`.
pub fn compile_to_ptx(module: &Module, target: Target, opt: OptLevel) -> Result<CompiledModule> {
    let (ptx, kernels) = compile(module, target, opt, Emit::Ptx)?;
    Ok(CompiledModule { ptx, kernels })
}

/// The optimised LLVM IR of `module` for `target` at `opt` (what `tilec --emit llvm` prints).
pub fn compile_to_llvm_ir(module: &Module, target: Target, opt: OptLevel) -> Result<String> {
    compile(module, target, opt, Emit::Llvm).map(|(text, _)| text)
}
