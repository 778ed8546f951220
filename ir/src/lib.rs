//! tilec's tile IR.
pub use tilec_layout as layout;
