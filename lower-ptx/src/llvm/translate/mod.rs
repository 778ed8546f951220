//! nvgpu-level tilec IR → LLVM IR with NVVM intrinsics → PTX (feature `llvm`).
//!
//! The pipeline reads top to bottom in [`emit`]:
//! 1. [`translate_module`]: every `tile.func` becomes a `ptx_kernel` function in one LLVM module
//!    (a [`FuncTranslator`](func::FuncTranslator) each), with the parameter list of its [`KernelInfo`], launch bounds
//!    (`"nvvm.maxntid"`) from `num_warps`, and one shared-memory global per `tile.alloc_shared` (or one
//!    dynamic `extern` array above 48 KiB, see [`SharedPlan`](crate::kernel_info::SharedPlan));
//! 2. LLVM's verifier, `default<On>` pipeline and NVPTX code generation
//!    ([`NvptxTargetMachine::compile_to_ptx`]).
//!
//! The walk over a kernel is the spine's ([`crate::spine`], shared with the MLIR backend); this backend
//! implements its traits: as in MLIR's `NVGPUToNVVM`, each nvgpu op kind has its own method of `EmitNvgpu`
//! (in [`nvgpu`]: `ldmatrix`, `stmatrix`, `mma_sync`, `device_async_copy`, …); the per-thread `tile` ops
//! (constants, arithmetic, comparisons, casts, ids) are `EmitScalar` in [`scalar`], `tile.for` is `EmitLoop`
//! in [`control`], the entry point and arguments `EmitKernel` in [`func`], address computation through
//! tile layouts in [`memory`], and the IR-type → LLVM-type map in [`types`].
//!
//! Values: `index` is `i64`; a per-thread vector `vector<NxMxT>` is its lanes ([`lanes`]): the registers
//! that made it (an `ldmatrix`'s `i32` words, an `mma.sync`'s floats), taken apart and regrouped without
//! instructions, and made into a flat LLVM vector `<N*M x T>` (or an intrinsic's register) only where an
//! instruction reads one (loops carry vectors as vector phis).

mod control;
mod func;
mod hopper;
mod lanes;
mod memory;
pub mod nvgpu;
mod scalar;
mod types;

use inkwell::context::Context;
use inkwell::module::Module as LlvmModule;

use tilec_ir::body::Module;

use crate::error::Error;
use crate::kernel_info::KernelInfo;
use crate::llvm::NvptxTargetMachine;
use crate::spine::{self, Kernel};
use crate::target::{OptLevel, Target};
use func::FuncTranslator;

/// The name of the LLVM module tilec builds (it appears in no output).
pub const MODULE_NAME: &str = "tilec";

pub use crate::translation::{CompiledModule, TranslateError};
pub(crate) use crate::translation::internal;

impl From<inkwell::builder::BuilderError> for TranslateError {
    fn from(e: inkwell::builder::BuilderError) -> Self {
        TranslateError::Backend(Error::Llvm(format!("IR builder: {e}")))
    }
}

pub(crate) use crate::spine::Result;

/// Translates every kernel of `module` into one LLVM module configured for `target`.
pub fn translate_module<'ctx>(
    context: &'ctx Context,
    module: &Module,
    target: Target,
) -> Result<(LlvmModule<'ctx>, Vec<KernelInfo>)> {
    let machine = NvptxTargetMachine::new(target, OptLevel::O0)?;
    let llvm = context.create_module(MODULE_NAME);
    machine.configure_module(&llvm);
    spine::check_kernel_names(module)?;
    let mut kernels = Vec::with_capacity(module.funcs.len());
    for func in &module.funcs {
        let kernel = Kernel::new(func, target)?;
        spine::emit_kernel(&mut FuncTranslator::new(&llvm, &kernel), &kernel)?;
        kernels.push(kernel.info);
    }
    Ok((llvm, kernels))
}

/// What [`emit`] returns besides the kernels' descriptions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Emit {
    /// The LLVM IR as translated, before optimisation (verified).
    UnoptimizedIr,
    /// The LLVM IR after the `default<On>` pipeline (what `--emit llvm` prints).
    Ir,
    /// PTX.
    Ptx,
}

/// Translates, verifies, optimises and emits `emit` for `module`: the text and the kernels' descriptions.
fn emit(module: &Module, target: Target, opt: OptLevel, emit: Emit) -> Result<(String, Vec<KernelInfo>)> {
    let context = Context::create();
    let (llvm, kernels) = translate_module(&context, module, target)?;
    let machine = NvptxTargetMachine::new(target, opt)?;
    machine.configure_module(&llvm);
    machine.verify(&llvm)?;
    let text = match emit {
        Emit::UnoptimizedIr => llvm.print_to_string().to_string(),
        Emit::Ir => {
            machine.optimize(&llvm)?;
            machine.verify(&llvm)?;
            llvm.print_to_string().to_string()
        }
        Emit::Ptx => machine.optimize_and_emit(&llvm)?,
    };
    Ok((text, kernels))
}

/// Compiles every kernel of `module` to PTX for `target` at `opt`.
pub fn compile(module: &Module, target: Target, opt: OptLevel) -> Result<CompiledModule> {
    let (ptx, kernels) = emit(module, target, opt, Emit::Ptx)?;
    Ok(CompiledModule { ptx, kernels })
}

/// The optimised LLVM IR of `module` for `target` at `opt` (what `tilec --emit llvm` prints).
pub fn emit_ir(module: &Module, target: Target, opt: OptLevel) -> Result<String> {
    emit(module, target, opt, Emit::Ir).map(|(text, _)| text)
}

/// The LLVM IR of `module` as translated, verified but not optimised (LLVM only: MLIR's text is never optimised).
pub fn emit_unoptimized_ir(module: &Module, target: Target, opt: OptLevel) -> Result<String> {
    emit(module, target, opt, Emit::UnoptimizedIr).map(|(text, _)| text)
}
