//! The LLVM NVPTX backend plumbing (feature `llvm`, inkwell on LLVM 22).
//!
//! * [`nvptx_target`]: NVPTX target machines per [`Target`](tilec_ir::Target), LLVM's new-pass-manager
//!   optimisation pipeline, and deterministic PTX emission.
//! * [`nvvm_intrinsics`]: typed declarations and calls of the NVVM intrinsics tilec lowers to. Every name is
//!   looked up in LLVM's intrinsic table first, so a misspelt name is an error here instead of an external
//!   call that only ptxas would reject.
//! * [`kernel`]: kernel entry points (the `ptx_kernel` calling convention), launch bounds, shared memory.

pub mod kernel;
pub mod nvptx_target;
pub mod nvvm_intrinsics;
/// nvgpu-level tilec IR → LLVM IR → PTX (the `--backend llvm` translation).
pub mod translate;

pub use kernel::{
    add_dynamic_shared_memory, add_static_shared_array, declare_kernel, set_launch_bounds,
    AddressSpace, PTX_KERNEL_CALLING_CONVENTION,
};
pub use nvptx_target::{NvptxTargetMachine, NVPTX_TRIPLE};
pub use nvvm_intrinsics::{
    CpAsync, CpAsyncCache, FragmentRegister, LdMatrix, MatrixCount, MmaInstr, MmaOperand, Nvvm,
    SpecialRegister, StMatrix,
};
