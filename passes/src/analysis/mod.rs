//! Small analyses the cleanup passes share, computed on demand (nothing is cached across passes).
//!
//! - [`effects`]: which ops are pure (free to merge, move or delete);
//! - [`barriers`]: which block-shared memory accesses are pending between barriers (where the lowering
//!   must synchronize, across loop back edges too);
//! - [`uses`]: how many placed ops use each value.

pub mod barriers;
pub mod effects;
pub mod uses;

pub use effects::{is_pure, may_trap, Purity};
pub use uses::UseCounts;
