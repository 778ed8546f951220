//! The interpreter's errors: each user-facing one carries the [`Span`] of the op or argument it concerns and
//! converts to a [`Diagnostic`].

use crate::diag::{Diagnostic, Span};

/// Why a run (or the derivation of its inputs and launch) failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InterpError {
    /// The number of arguments does not match the function's signature.
    #[error("'@{func}' takes {expected} argument(s), but {found} were given")]
    ArgCount { span: Span, func: String, expected: usize, found: usize },
    /// An argument is a tensor where a scalar is expected (or the other way round), or has another element type.
    #[error("argument #{index} ('{name}') should be {expected}, but is {found}")]
    ArgType { span: Span, index: usize, name: String, expected: String, found: String },
    /// A tensor argument's shape does not match the static extents of its tile type.
    #[error("argument #{index} ('{name}') has shape {found}, but its type needs {expected}")]
    ArgShape { span: Span, index: usize, name: String, expected: String, found: String },
    /// The function contains an op of the `nvgpu` dialect.
    #[error("'{op}' is an nvgpu op: the interpreter runs the tile dialect only; use 'tilec sim' to run nvgpu code")]
    NvgpuOp { span: Span, op: &'static str },
    /// Integer division or remainder by zero.
    #[error("integer division by zero in '{op}'")]
    DivisionByZero { span: Span, op: &'static str },
    /// An `index` result does not fit in the ±2^53 the interpreter holds exactly.
    #[error("'{op}' overflows: the result {value} is beyond the interpreter's exact index range of ±2^53")]
    IndexOverflow { span: Span, op: &'static str, value: i128 },
    /// A `tile.for` with a step that is zero or negative.
    #[error("'tile.for' needs a positive step, found {step}")]
    NonPositiveStep { span: Span, step: i64 },
    /// The run used up its budget of element operations ([`super::Limits::fuel`]).
    #[error("the run exceeded the interpreter's budget of {limit} element operations")]
    OutOfFuel { span: Span, limit: u64 },
    /// One block's shared memory exceeds [`super::Limits::max_shared_bytes`].
    #[error("shared memory of {bytes} bytes per block exceeds the interpreter's limit of {limit} bytes")]
    SharedMemoryTooLarge { span: Span, bytes: u64, limit: u64 },
    /// A register tile exceeds [`super::Limits::max_tile_elements`].
    #[error("a register tile of {elements} elements exceeds the interpreter's limit of {limit}")]
    TileTooLarge { span: Span, elements: u128, limit: u64 },
    /// A window of a shared tile that does not lie inside it.
    #[error("'{op}' accesses the window {window} at offset {offset}, outside the shared tile {shape}")]
    OutOfBounds { span: Span, op: &'static str, offset: String, window: String, shape: String },
    /// A launch the GPU would refuse (an extent of zero).
    #[error("invalid launch: grid {grid:?} has an extent of zero")]
    InvalidLaunch { grid: [u32; 3] },
    /// `default_args` or `default_launch` could not work out what to use.
    #[error("{message}")]
    Defaults { span: Span, message: String },
    /// Something the interpreter does not support (e.g. a register tile of dynamic shape).
    #[error("{message}")]
    Unsupported { span: Span, message: String },
    /// IR that the verifier would reject (an undefined operand, mismatched types at run time, ...).
    #[error("malformed IR (run the verifier): {message}")]
    Malformed { span: Span, message: String },
}

impl InterpError {
    /// Where the problem is ([`Span::UNKNOWN`] for a bad launch).
    pub fn span(&self) -> Span {
        match self {
            InterpError::ArgCount { span, .. }
            | InterpError::ArgType { span, .. }
            | InterpError::ArgShape { span, .. }
            | InterpError::NvgpuOp { span, .. }
            | InterpError::DivisionByZero { span, .. }
            | InterpError::IndexOverflow { span, .. }
            | InterpError::NonPositiveStep { span, .. }
            | InterpError::OutOfFuel { span, .. }
            | InterpError::SharedMemoryTooLarge { span, .. }
            | InterpError::TileTooLarge { span, .. }
            | InterpError::OutOfBounds { span, .. }
            | InterpError::Defaults { span, .. }
            | InterpError::Unsupported { span, .. }
            | InterpError::Malformed { span, .. } => *span,
            InterpError::InvalidLaunch { .. } => Span::UNKNOWN,
        }
    }

    /// The error as a located diagnostic, with a hint where one helps.
    pub fn to_diagnostic(&self) -> Diagnostic {
        let d = Diagnostic::error(self.span(), self.to_string());
        match self {
            InterpError::NvgpuOp { .. } => d.with_note("'tilec sim' lowers and runs nvgpu code on the CPU warp simulator"),
            InterpError::OutOfFuel { .. } => d.with_note("the program may not terminate; a larger budget is Limits::fuel"),
            _ => d,
        }
    }
}

impl From<InterpError> for Diagnostic {
    fn from(e: InterpError) -> Diagnostic {
        e.to_diagnostic()
    }
}
