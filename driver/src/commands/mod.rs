//! One module per subcommand.

pub mod bench;
pub mod bundle;
pub mod check;
pub mod compare;
pub mod compile;
pub mod interp;
pub mod layout;
pub mod run;
pub mod sim;
pub mod tune;

/// The backend the CLI names, as `tilec_lower_ptx` takes it.
impl From<crate::cli::Backend> for tilec_lower_ptx::Backend {
    fn from(backend: crate::cli::Backend) -> Self {
        match backend {
            crate::cli::Backend::Llvm => tilec_lower_ptx::Backend::Llvm,
            crate::cli::Backend::Mlir => tilec_lower_ptx::Backend::Mlir,
        }
    }
}

/// What the CLI emits, as the front door takes it.
impl From<crate::cli::Emit> for tilec_compiler::Emit {
    fn from(emit: crate::cli::Emit) -> Self {
        match emit {
            crate::cli::Emit::Tir => tilec_compiler::Emit::Tir,
            crate::cli::Emit::Nvgpu => tilec_compiler::Emit::Nvgpu,
            crate::cli::Emit::Llvm => tilec_compiler::Emit::Llvm,
            crate::cli::Emit::Mlir => tilec_compiler::Emit::Mlir,
            crate::cli::Emit::Ptx => tilec_compiler::Emit::Ptx,
        }
    }
}
