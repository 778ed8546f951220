//! `tilec-layout`: one layout algebra for tensor-core fragments, ldmatrix and
//! stmatrix patterns, shared-memory tiles and XOR swizzles.
//!
//! - [`LinearLayout`] ([`linear`]): linear maps over F2 between named hardware
//!   dimensions (`register`, `lane`, `warp`, `block`, `offset`) and tile
//!   dimensions (`row`, `col`), with `apply`, inverse lookup, `compose`,
//!   `invert`, product, reshape and `sublayout` (after Triton's linear layouts).
//! - [`hardware`]: every instruction-defined fragment layout, once, as data
//!   ([`hardware_layout`], [`hardware_layout_names`]).
//! - [`memory`] and [`swizzle`]: row/column-major tiles and CuTe-style
//!   `Swizzle<B, M, S>` as layouts on `offset`; [`swizzle_mode`]: Hopper's TMA/wgmma swizzle modes
//!   (none, 32B, 64B, 128B) defined once.
//! - [`fragment`]: gather a matrix into per-lane fragments and scatter back.
//! - [`attr`]: [`Layout`], the attribute the IR stores, with a text syntax that
//!   round-trips.
//! - [`offset`]: the one definition of a memory layout's coordinate -> offset map,
//!   generic over [`OffsetArith`] (numbers, or a backend's IR builder).
//! - [`render`]: text table, JSON and SVG pictures of a layout.

pub mod attr;
pub mod error;
mod f2;
pub mod fragment;
pub mod hardware;
pub mod linear;
pub mod memory;
pub mod offset;
pub mod render;
pub mod swizzle;
pub mod swizzle_mode;

pub use attr::{attribute_len, Layout, LayoutSyntaxError};
pub use error::LayoutError;
pub use fragment::{fragment_to_matrix, fragment_to_matrix_from_lanes, matrix_to_fragment, WARP_SIZE};
pub use hardware::{hardware_layout, hardware_layout_names, hardware_layouts, ldmatrix_row_addresses, HardwareLayout};
pub use linear::LinearLayout;
pub use memory::{col_major, column_panels, in_bytes, row_major};
pub use offset::{Checked, Extent, OffsetArith, Overflow};
pub use render::{render_json, render_svg, render_table};
pub use swizzle::Swizzle;
pub use swizzle_mode::SwizzleMode;
