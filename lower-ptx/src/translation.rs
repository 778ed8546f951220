//! The one entry point of the backends ([`compile`], [`emit_ir`], picked by a [`Backend`]) and what both
//! translators (LLVM and MLIR) share: why a kernel could not be translated, and what a compiled module is.
//! One definition, so the driver handles either backend's result the same way.

use tilec_ir::{Diagnostic, Span};

use crate::error::Error;
use crate::kernel_info::{KernelInfo, KernelInfoError};
#[cfg(any(feature = "llvm", feature = "mlir"))]
use crate::target::{OptLevel, Target};
#[cfg(any(feature = "llvm", feature = "mlir"))]
use tilec_ir::Module;

/// Which translator turns nvgpu-level IR into PTX.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// LLVM IR with NVVM intrinsics, NVPTX code generation (`llvm::translate`, feature `llvm`).
    Llvm,
    /// MLIR `gpu`/`nvgpu`/`arith`/`scf`/`vector`, the upstream NVVM pipeline (`mlir::translate`, feature `mlir`).
    Mlir,
}

impl Backend {
    /// `llvm` or `mlir`, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Llvm => "llvm",
            Backend::Mlir => "mlir",
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A backend this build leaves out (its cargo feature is off).
#[cfg(any(feature = "llvm", feature = "mlir"))]
#[allow(dead_code)]
fn not_built(backend: Backend) -> TranslateError {
    TranslateError::Backend(Error::Llvm(format!("the {backend} backend is not part of this build (cargo feature '{backend}')")))
}

/// Compiles every kernel of the (verified, nvgpu-level) `module` to PTX for `target` at `opt` through `backend`.
#[cfg(any(feature = "llvm", feature = "mlir"))]
pub fn compile(module: &Module, target: Target, backend: Backend, opt: OptLevel) -> Result<CompiledModule, TranslateError> {
    match backend {
        #[cfg(feature = "llvm")]
        Backend::Llvm => crate::llvm::translate::compile(module, target, opt),
        #[cfg(feature = "mlir")]
        Backend::Mlir => crate::mlir::translate::compile(module, target, opt),
        #[allow(unreachable_patterns)]
        other => Err(not_built(other)),
    }
}

/// The backend's own IR for `module`: the optimised LLVM IR (`--emit llvm`) or the MLIR text (`--emit mlir`).
#[cfg(any(feature = "llvm", feature = "mlir"))]
pub fn emit_ir(module: &Module, target: Target, backend: Backend, opt: OptLevel) -> Result<String, TranslateError> {
    match backend {
        #[cfg(feature = "llvm")]
        Backend::Llvm => crate::llvm::translate::emit_ir(module, target, opt),
        #[cfg(feature = "mlir")]
        Backend::Mlir => crate::mlir::translate::emit_ir(module, target, opt),
        #[allow(unreachable_patterns)]
        other => Err(not_built(other)),
    }
}

/// Why a kernel could not be translated.
#[derive(Debug, thiserror::Error)]
pub enum TranslateError {
    /// An op, type or attribute this backend does not translate (yet), or IR that is not nvgpu-level.
    #[error("@{kernel}: '{op}': {message}")]
    Unsupported {
        /// The kernel.
        kernel: String,
        /// The op's name.
        op: &'static str,
        /// Where it is in the source.
        span: Span,
        /// What is not supported.
        message: String,
    },
    /// The kernel's parameters or shared memory cannot be described.
    #[error(transparent)]
    KernelInfo(#[from] KernelInfoError),
    /// LLVM or MLIR (builder, verifier, passes), the NVVM intrinsic helpers or ptxas failed.
    #[error(transparent)]
    Backend(#[from] Error),
}

impl TranslateError {
    /// The error as a located diagnostic (unknown span when it has none).
    pub fn to_diagnostic(&self) -> Diagnostic {
        let span = match self {
            TranslateError::Unsupported { span, .. } => *span,
            _ => Span::UNKNOWN,
        };
        Diagnostic::error(span, self.to_string())
    }
}

/// A broken internal invariant, as an error rather than a panic (the IR was verified, so this is a tilec bug).
#[cfg(any(feature = "llvm", feature = "mlir"))]
pub(crate) fn internal(what: &str) -> TranslateError {
    TranslateError::Backend(Error::Llvm(format!("internal: {what}")))
}

/// A module compiled to PTX, with the launch description of each kernel (in the module's order; the same
/// descriptions whichever backend compiled it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledModule {
    /// The PTX text (byte-identical for identical input, target and level).
    pub ptx: String,
    /// One per kernel.
    pub kernels: Vec<KernelInfo>,
}
