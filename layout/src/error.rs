//! The error type of the layout algebra.

use thiserror::Error;

/// Why a layout could not be built, combined or applied.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LayoutError {
    /// A dimension size that is not a power of two (linear layouts over F2 only
    /// describe power-of-two extents).
    #[error("size {size} of dimension `{dim}` is not a power of two")]
    NotPowerOfTwo { dim: String, size: u64 },
    /// The same dimension name appears twice among the inputs or the outputs.
    #[error("dimension `{0}` appears twice")]
    DuplicateDim(String),
    /// A named dimension does not exist in the layout.
    #[error("no dimension named `{0}`")]
    UnknownDim(String),
    /// A basis vector has the wrong number of components.
    #[error("basis {index} of `{in_dim}` has {found} components, expected one per output dimension ({expected})")]
    BasisArity { in_dim: String, index: usize, expected: usize, found: usize },
    /// A basis vector component lies outside its output dimension.
    #[error("basis {index} of `{in_dim}` maps to {out_dim} = {value}, outside its size {size}")]
    BasisOutOfRange { in_dim: String, index: usize, out_dim: String, value: u32, size: u32 },
    /// The layout would need more than 63 input or output bits, or a single
    /// dimension of more than 2^31 elements.
    #[error("layout too large: {0}")]
    TooLarge(String),
    /// Two layouts cannot be combined the way that was asked.
    #[error("incompatible layouts: {0}")]
    Incompatible(String),
    /// An input value does not fit its dimension, or the wrong number of values was given.
    #[error("bad input: {0}")]
    BadInput(String),
    /// `invert` on a layout that is not a bijection.
    #[error("layout is not invertible: {0}")]
    NotInvertible(String),
    /// A coordinate that no input maps to.
    #[error("no input maps to {0}")]
    NoPreimage(String),
    /// A hardware layout name that is not in the catalogue.
    #[error("unknown hardware layout `{0}`")]
    UnknownHardwareLayout(String),
    /// A gather/scatter through a layout whose data has the wrong shape, or
    /// lanes that disagree about one element.
    #[error("fragment: {0}")]
    Fragment(String),
}
