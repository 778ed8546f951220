//! [`CompileError`]: why a compile stopped, with located diagnostics and what was logged up to there.

use tilec_ir::{Diagnostic, Diagnostics};
use tilec_passes::bank_conflicts::BankConflictReport;
use tilec_passes::{IrDump, Remark};

/// What a compile left besides its output, in the order it happened: warnings about the options, IR dumps
/// asked for with [`crate::Options::print_ir`], the passes' remarks, and the bank-conflict reports asked for
/// with [`crate::Options::bank_conflicts`]. Kept on failure too ([`CompileError::log`]).
#[derive(Clone, Debug, Default)]
pub struct Log {
    /// Warnings about the options (a `print_ir` filter that names no pass of the pipeline, say).
    pub warnings: Vec<String>,
    /// The IR dumps, in order.
    pub dumps: Vec<IrDump>,
    /// The passes' remarks, in order.
    pub remarks: Vec<Remark>,
    /// The passes' located warnings ([`tilec_passes::PassContext::warn`]), in order: printed on stderr like
    /// errors (`path:line:col: warning: ...`).
    pub pass_warnings: Vec<Diagnostic>,
    /// One per function of the lowered module, when asked for.
    pub bank_conflicts: Vec<BankConflictReport>,
}

/// Why [`crate::compile`] (or [`crate::lower`], [`crate::specialize`]) failed. Every variant but
/// [`CompileError::Misaligned`] and [`CompileError::Unsupported`] carries diagnostics located in the input
/// (or, for [`CompileError::Pipeline`], in the pipeline string).
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The input module does not verify.
    #[error("{0}")]
    Invalid(Diagnostics),
    /// The pipeline string does not parse, or names a pass the registry lacks; the diagnostic is located
    /// in `text`.
    #[error("pipeline '{text}': {diagnostic}")]
    Pipeline {
        /// The pipeline string.
        text: String,
        /// Located in `text`.
        diagnostic: Diagnostic,
    },
    /// A pass failed (or broke the IR); `log` holds what was dumped before.
    #[error("{diagnostics}")]
    Pass {
        /// Located in the input.
        diagnostics: Diagnostics,
        /// Warnings and dumps up to the failure.
        log: Box<Log>,
    },
    /// The backend could not translate the lowered module; `log` holds everything the pipeline left.
    #[error("{diagnostic}")]
    Backend {
        /// Located in the input when the backend knows the op.
        diagnostic: Diagnostic,
        /// Everything the (successful) pipeline left.
        log: Box<Log>,
    },
    /// A launch's tensor extents break the copies of a specialized kernel (a lowering that does not keep to
    /// the `global_alignment` it was given).
    #[error("{0}")]
    Misaligned(String),
    /// Something this build or these options cannot do.
    #[error("{0}")]
    Unsupported(String),
}

impl CompileError {
    /// The diagnostics, located in the input (empty for the variants without any; for
    /// [`CompileError::Pipeline`], located in the pipeline string).
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        match self {
            CompileError::Invalid(d) | CompileError::Pass { diagnostics: d, .. } => d.0.clone(),
            CompileError::Pipeline { diagnostic, .. } | CompileError::Backend { diagnostic, .. } => vec![diagnostic.clone()],
            CompileError::Misaligned(_) | CompileError::Unsupported(_) => Vec::new(),
        }
    }

    /// What the compile logged before it stopped (warnings, dumps, remarks), when it got as far as the
    /// pipeline.
    pub fn log(&self) -> Option<&Log> {
        match self {
            CompileError::Pass { log, .. } | CompileError::Backend { log, .. } => Some(log),
            _ => None,
        }
    }
}
