//! What both translators (LLVM and MLIR) share: why a kernel could not be translated, and what a
//! compiled module is. One definition, so the driver handles either backend's result the same way.

use tilec_ir::{Diagnostic, Span};

use crate::error::Error;
use crate::kernel_info::{KernelInfo, KernelInfoError};

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
