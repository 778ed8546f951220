//! tilec's front door: one call from a module of tile IR to PTX (or any other output), used by the `tilec`
//! CLI, its `sim`, `bundle`, `bench` and `tune` commands, the fuzz harness, the tests, and embedders.
//!
//! ```
//! use tilec_compiler::{compile, Emit, Options};
//!
//! let module = tilec_ir::parse_module(
//!     "tile.func @f() {\n  %a = tile.constant 2 : index\n  %b = tile.add %a, %a : index\n  tile.return\n}\n",
//! ).unwrap();
//! // The defaults: sm_80, the LLVM backend, -O3, PTX. Here: the tile IR after the tile-level pipeline.
//! let options = Options { emit: Emit::Tir, ..Options::default() };
//! let compiled = compile(module, &options).unwrap();
//! assert!(compiled.output.contains("tile.func @f"));
//! assert!(!compiled.output.contains("tile.add"), "folded and removed");
//! ```
//!
//! * [`compile`]: verify, run the pass pipeline ([`Options::pipeline`], or the default for [`Options::emit`]),
//!   emit. [`Compiled`] holds the output, each kernel's launch description ([`tilec_lower_ptx::KernelInfo`]),
//!   the lowered module, and the [`Log`] (IR dumps, remarks, warnings) and timing asked for.
//! * [`lower`]: the pipeline alone (what the simulator runs, what `tilec check` checks); [`emit`]: the
//!   backend alone, on a lowered module.
//! * [`specialize`] / [`compile_for_extents`]: launch-time specialization. A kernel lowered for the tensor
//!   extents of one launch, narrowing its global copies when the rows are not 16-byte aligned
//!   ([`AlignmentVariant`], see [`mod@specialize`]).
//! * [`Compiler`]: the same entry points over a pass registry an embedder can add passes to
//!   (`examples/embed.rs`: `cargo run -p tilec-compiler --example embed`).
//!
//! Failures are [`CompileError`]s: located [`tilec_ir::Diagnostic`]s (render them with
//! [`tilec_ir::SourceFile::render`]) and what was logged before the failure. Nothing here prints, reads
//! files or exits: that is the driver's part.
//!
//! Without the `llvm` and `mlir` features (both on by default) the crate builds without LLVM and MLIR;
//! [`lower`] and [`specialize`] work, and emitting through a backend is [`CompileError::Unsupported`].

#![warn(missing_docs)]

mod compiler;
mod error;
mod options;
pub mod specialize;

pub use compiler::{emit, Compiled, Compiler, Emitted, Lowered};
pub use error::{CompileError, Log};
pub use options::{Emit, Options, PrintIr};
pub use specialize::{alignment_variant, AlignmentVariant, Specialized};
pub use tilec_ir::Target;
pub use tilec_lower_ptx::{Backend, KernelInfo, OptLevel};

use tilec_ir::{Func, Module};

/// Compiles `module` with `options` and the built-in passes: [`Compiler::compile`].
pub fn compile(module: Module, options: &Options) -> Result<Compiled, CompileError> {
    Compiler::new().compile(module, options)
}

/// Verifies `module` and runs the pipeline over it, without a backend: [`Compiler::lower`].
pub fn lower(module: Module, options: &Options) -> Result<Lowered, CompileError> {
    Compiler::new().lower(module, options)
}

/// The kernel `func` alone, through the pipeline: [`Compiler::lower_kernel`].
pub fn lower_kernel(func: &Func, options: &Options) -> Result<Module, CompileError> {
    Compiler::new().lower_kernel(func, options)
}

/// The kernel `func` lowered for a launch with these tensor extents: [`Compiler::specialize`].
pub fn specialize(func: &Func, options: &Options, extents: &[Option<Vec<u64>>]) -> Result<Specialized, CompileError> {
    Compiler::new().specialize(func, options, extents)
}

/// The kernel `func` compiled for a launch with these tensor extents: [`Compiler::compile_for_extents`].
pub fn compile_for_extents(func: &Func, options: &Options, extents: &[Option<Vec<u64>>]) -> Result<(Compiled, Option<AlignmentVariant>), CompileError> {
    Compiler::new().compile_for_extents(func, options, extents)
}
