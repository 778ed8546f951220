//! [`Options`]: everything that decides what [`crate::compile`] produces, with tilec's defaults.

use std::fmt;

use tilec_ir::Target;
use tilec_lower_ptx::{Backend, OptLevel};

/// What a compile produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Emit {
    /// The tile IR after the tile-level pipeline ([`tilec_passes::default_pipeline`]).
    Tir,
    /// The nvgpu-level IR after the whole pipeline ([`tilec_passes::full_pipeline`]).
    Nvgpu,
    /// LLVM IR with NVVM intrinsics (always through the LLVM backend).
    Llvm,
    /// MLIR in the gpu and nvgpu dialects (always through the MLIR backend).
    Mlir,
    /// PTX assembly, through [`Options::backend`].
    #[default]
    Ptx,
}

impl Emit {
    /// `tir`, `nvgpu`, `llvm`, `mlir` or `ptx`, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Emit::Tir => "tir",
            Emit::Nvgpu => "nvgpu",
            Emit::Llvm => "llvm",
            Emit::Mlir => "mlir",
            Emit::Ptx => "ptx",
        }
    }

    /// Whether the output is IR printed by tilec itself (no backend involved).
    pub fn is_tilec_ir(self) -> bool {
        matches!(self, Emit::Tir | Emit::Nvgpu)
    }
}

impl fmt::Display for Emit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the pipeline prints the IR (`--print-ir-*`); the dumps come back in [`crate::Log::dumps`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrintIr {
    /// After every pass.
    pub after_all: bool,
    /// After the passes of these names.
    pub after: Vec<String>,
    /// Before the passes of these names.
    pub before: Vec<String>,
}

impl PrintIr {
    /// Whether any dump was asked for.
    pub fn any(&self) -> bool {
        self.after_all || !self.after.is_empty() || !self.before.is_empty()
    }
}

/// How to compile. [`Options::default`]: sm_80, the LLVM backend, `-O3`, PTX, the default pipeline for
/// what is emitted, verification after every pass, nothing printed or timed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The GPU architecture.
    pub target: Target,
    /// The backend for [`Emit::Ptx`] (LLVM IR and MLIR each have their own).
    pub backend: Backend,
    /// LLVM's optimisation level.
    pub opt_level: OptLevel,
    /// What to produce.
    pub emit: Emit,
    /// A pipeline string (`canonicalize,dce`) run instead of the default one; the default depends on
    /// [`Options::emit`]: [`tilec_passes::default_pipeline`] for [`Emit::Tir`], else
    /// [`tilec_passes::full_pipeline`].
    pub pipeline: Option<String>,
    /// Verify the module after every pass (on by default), naming a pass that breaks the IR; off, the
    /// module is verified once, after the pipeline (what a release `tilec` does unless `--verify-each`).
    pub verify_each: bool,
    /// Time every pass and the backend ([`crate::Compiled::timing`]).
    pub timing: bool,
    /// IR dumps around passes.
    pub print_ir: PrintIr,
    /// Analyse the lowered code's shared-memory bank conflicts ([`crate::Log::bank_conflicts`]).
    pub bank_conflicts: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            target: Target::Sm80,
            backend: Backend::Llvm,
            opt_level: OptLevel::O3,
            emit: Emit::Ptx,
            pipeline: None,
            verify_each: true,
            timing: false,
            print_ir: PrintIr::default(),
            bank_conflicts: false,
        }
    }
}

impl Options {
    /// The defaults for `target`.
    pub fn for_target(target: Target) -> Options {
        Options { target, ..Options::default() }
    }

    /// The pipeline that runs: [`Options::pipeline`], or the default for what is emitted.
    pub fn pipeline_text(&self) -> String {
        match (&self.pipeline, self.emit) {
            (Some(text), _) => text.clone(),
            (None, Emit::Tir) => tilec_passes::default_pipeline(self.target).to_string(),
            (None, _) => tilec_passes::full_pipeline(self.target),
        }
    }

    /// The backend that translates: LLVM for [`Emit::Llvm`], MLIR for [`Emit::Mlir`], else
    /// [`Options::backend`].
    pub fn effective_backend(&self) -> Backend {
        match self.emit {
            Emit::Llvm => Backend::Llvm,
            Emit::Mlir => Backend::Mlir,
            _ => self.backend,
        }
    }
}
