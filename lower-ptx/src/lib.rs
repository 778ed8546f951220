//! tilec backends: from nvgpu-level IR to PTX.
//!
//! This crate holds the parts of the backends that do not depend on the shape of the IR:
//!
//! * [`target`]: optimisation levels ([`OptLevel`]); the GPU targets are [`tilec_ir::Target`].
//! * [`ptxas`]: finding and running NVIDIA's `ptxas` to validate PTX, and parsing its `-v` resource report.
//! * [`llvm`] (feature `llvm`): NVPTX target machines, LLVM's optimisation pipeline, PTX emission, and
//!   typed declarations of the NVVM intrinsics (`ldmatrix`, `stmatrix`, `mma`, `cp.async`, barriers, special
//!   registers) through inkwell.
//! * [`mlir`] (feature `mlir`): an MLIR context with all dialects, passes and LLVM translations registered, and
//!   the upstream `gpu`/`nvgpu` → NVVM → PTX pipeline through melior, with MLIR diagnostics returned as errors.
//! * [`translation`]: what both translators share ([`translation::TranslateError`], [`translation::CompiledModule`]).
//!
//! The translation of tilec's nvgpu-level IR into LLVM IR / MLIR builds on these modules.
//! With `--no-default-features` the crate builds without LLVM and MLIR.

#![warn(missing_docs)]

pub mod error;
pub mod kernel_info;
pub mod ptxas;
pub mod target;
pub mod translation;

#[cfg(feature = "llvm")]
pub mod llvm;

/// nvgpu-level IR → LLVM IR → PTX (lives in `llvm/translate/`; declared here so `llvm/mod.rs` stays as is).
#[cfg(feature = "llvm")]
#[path = "llvm/translate/mod.rs"]
pub mod translate;

#[cfg(feature = "mlir")]
pub mod mlir;

pub use error::{Error, Result};
pub use kernel_info::{AbiParam, AbiRole, ExtentMultiple, KernelInfo, KernelParam, ParamKind};
#[cfg(feature = "llvm")]
pub use translate::{compile_to_llvm_ir, compile_to_ptx, translate_func, translate_module, CompiledModule, TranslateError};
pub use target::OptLevel;
