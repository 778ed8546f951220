//! The error type of the backend crate.

use std::path::PathBuf;

use crate::target::Target;

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong between nvgpu-level IR and validated PTX.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An optimisation level that is not `0`..`3` (optionally written `O2` or `-O2`).
    #[error("unknown optimisation level `{0}` (expected 0, 1, 2 or 3)")]
    UnknownOptLevel(String),

    /// LLVM reported an error (target machine creation, pass pipeline, code generation, IR building).
    #[error("LLVM: {0}")]
    Llvm(String),

    /// An LLVM module failed `Module::verify`.
    #[error("invalid LLVM module:\n{0}")]
    InvalidLlvmModule(String),

    /// An intrinsic name that this LLVM does not know. Declaring it anyway would make it an external
    /// function call, which only ptxas would reject much later.
    #[error("`{0}` is not an intrinsic known to this LLVM")]
    UnknownIntrinsic(String),

    /// An intrinsic was called with operands of the wrong number or types.
    #[error("intrinsic `{intrinsic}`: {message}")]
    IntrinsicOperands {
        /// The intrinsic's name.
        intrinsic: String,
        /// What was wrong.
        message: String,
    },

    /// MLIR failed to parse, verify or lower a module. `diagnostics` holds every message MLIR emitted.
    #[error("MLIR: {message}{}", render_diagnostics(diagnostics))]
    Mlir {
        /// What tilec was doing when MLIR failed.
        message: String,
        /// The diagnostics MLIR emitted (`loc: error: message`, with notes).
        diagnostics: Vec<String>,
    },

    /// No ptxas was found in `$PTXAS`, the project-local `.tools/` directory or `PATH`.
    #[error("ptxas not found (set PTXAS, or run scripts/setup.sh to install it into .tools/); looked in: {}",
            searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    PtxasNotFound {
        /// Every place that was searched.
        searched: Vec<PathBuf>,
    },

    /// ptxas could not be started.
    #[error("could not run ptxas at {path}: {source}")]
    PtxasSpawn {
        /// The ptxas that was tried.
        path: PathBuf,
        /// The operating-system error.
        source: std::io::Error,
    },

    /// ptxas ran and rejected the PTX.
    #[error("ptxas rejected the PTX for {target}:\n{log}")]
    PtxasRejected {
        /// The target it was assembling for.
        target: Target,
        /// ptxas's output.
        log: String,
    },

    /// A file-system error (temporary files for ptxas).
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

fn render_diagnostics(diagnostics: &[String]) -> String {
    if diagnostics.is_empty() {
        String::new()
    } else {
        format!("\n{}", diagnostics.join("\n"))
    }
}
