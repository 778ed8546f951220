//! Small analyses the cleanup passes share, computed on demand (nothing is cached across passes).
//!
//! - [`effects`]: which ops are pure (free to merge, move or delete);
//! - [`uses`]: how many placed ops use each value.

pub mod effects;
pub mod uses;

pub use effects::{is_pure, may_trap, Purity};
pub use uses::UseCounts;
