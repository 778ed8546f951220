//! tilec's tile IR.
//!
//! - [`types`], [`attr`]: what values and attributes are;
//! - [`ops`]: the catalogue of operations of the `tile` and `nvgpu` dialects;
//! - [`body`]: modules, functions, and the arena of values, operations and blocks;
//! - [`syntax`]: the textual format (parse and print round-trip);
//! - [`verify`]: the verifier, with located diagnostics;
//! - [`builder`]: constructing IR from Rust;
//! - [`diag`]: spans and diagnostics;
//! - [`target`]: the GPU architectures ([`Target`]); [`shared_memory`]: where shared tiles are placed, and the limits.
//!
//! Layouts live in the `tilec-layout` crate, re-exported here as [`layout`].

pub use tilec_layout as layout;

pub mod attr;
pub mod body;
pub mod builder;
pub mod data;
pub mod diag;
pub mod expect;
pub mod interp;
pub mod ops;
pub mod shared_memory;
pub mod sim;
pub mod syntax;
pub mod target;
pub mod tma;
pub mod types;
pub mod verify;

pub use attr::{AttrMap, Attribute};
pub use body::{Block, ASYNC_COPY_ALIGNMENT_ATTR, BlockId, Body, Func, Module, OpId, OpSpec, Operation, Value, ValueDef};
pub use diag::{Diagnostic, Diagnostics, SourceFile, Span};
pub use ops::kernel::KernelAttrs;
pub use ops::{typed, AttrValue, OpDef, OpKind, TypedOp};
pub use syntax::edit::set_func_attributes;
pub use syntax::parser::{is_param_name, kernel_params, parse_module, parse_type};
pub use syntax::printer::{print_func, print_module};
pub use target::{Target, UnknownTarget};
pub use types::{Dim, MemorySpace, ScalarType, TileType, Type, VectorType};
