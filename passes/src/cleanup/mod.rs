//! Small cleanup passes every pipeline uses: [`Canonicalize`] (fold and simplify), [`Cse`] (merge identical
//! pure ops) and [`Dce`] (remove unused pure ops). Each works function by function and never fails.

pub mod canonicalize;
pub mod cse;
pub mod dce;
pub mod fold;

pub use canonicalize::Canonicalize;
pub use cse::Cse;
pub use dce::Dce;
