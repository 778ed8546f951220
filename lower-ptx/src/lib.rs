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
//! * [`translation`]: the one entry point ([`compile`] / [`emit_ir`] with a [`Backend`]) and what both
//!   translators share ([`TranslateError`], [`CompiledModule`]).
//!
//! The translation of tilec's nvgpu-level IR into LLVM IR (`llvm::translate`) and MLIR (`mlir::translate`)
//! builds on these modules.
//! With `--no-default-features` the crate builds without LLVM and MLIR.

#![warn(missing_docs)]

pub mod error;
pub mod kernel_info;
pub mod ptxas;
#[cfg(any(feature = "llvm", feature = "mlir"))]
mod spine;
pub mod target;
pub mod translation;

#[cfg(feature = "llvm")]
pub mod llvm;

#[cfg(feature = "mlir")]
pub mod mlir;

pub use error::{Error, Result};
pub use kernel_info::{AbiParam, AbiRole, ExtentMultiple, KernelInfo, KernelParam, ParamKind, TensorMapInfo};
pub use translation::{Backend, CompiledModule, TranslateError};
#[cfg(any(feature = "llvm", feature = "mlir"))]
pub use translation::{compile, emit_ir};
pub use target::OptLevel;
