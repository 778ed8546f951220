//! The MLIR backend plumbing (feature `mlir`, melior 0.27.8 on MLIR 22).
//!
//! [`MlirToolchain`] owns an MLIR context with every upstream dialect, pass and LLVM translation registered,
//! and a diagnostic handler that collects MLIR's messages, so that failures come back as
//! [`Error::Mlir`](crate::Error::Mlir) with the diagnostic text instead of being printed to stderr.
//! [`MlirToolchain::compile_to_ptx`] runs the upstream `gpu`/`nvgpu` → NVVM → PTX pipeline
//! ([`gpu_to_ptx_pipeline`], upstream's own `gpu-module-to-binary` and `default<On>`) on a module given as MLIR
//! text and returns the PTX of its `gpu.binary` ops: a check of the toolchain on hand-written MLIR. The
//! `--backend mlir` translation ([`translate`]) instead stops at the LLVM dialect and generates code with the
//! LLVM backend's target machine ([`MlirToolchain::translate_gpu_module`]).

mod gpu_to_ptx;
/// nvgpu-level tilec IR → MLIR text → PTX (the `--backend mlir` translation).
pub mod translate;

pub use gpu_to_ptx::{extract_gpu_binaries, gpu_to_ptx_pipeline, GpuBinaryPtx, MlirToolchain};
