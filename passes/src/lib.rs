//! tilec's pass library (issue 5): the pass framework and the cleanup passes.
//!
//! The framework follows rustc's MIR passes and Cranelift's pipeline: a pass is a small type implementing
//! one trait, the pipeline is a visible list in one place, and the IR can be printed around any pass.
//!
//! - [`Pass`] ([`pass`]): `name`, `description`, `run(&mut Module, &mut PassContext)`;
//! - [`PassContext`] ([`context`]): the [`Target`](tilec_ir::Target), global options, remarks and typed reports;
//! - [`PassRegistry`] ([`registry`]): names → constructors; [`PassRegistry::with_builtin`] lists every
//!   built-in pass; embedders add theirs with [`PassRegistry::register`];
//! - [`Pipeline`] ([`pipeline`]): `"canonicalize,cse,dce"` with options `name{key=value}`, and
//!   [`default_pipeline`], the default list;
//! - [`PassManager`] ([`manager`]): runs passes, verifies after each, `--print-ir-before/after(-all)`,
//!   `--timing` ([`TimingReport`]);
//! - [`cleanup`]: `canonicalize`, `cse`, `dce`; [`analysis`]: effects and use counts.
//!
//! # Adding a pass
//! Write a type implementing [`Pass`] in its own module; add one line to [`PassRegistry::with_builtin`];
//! add its name to the list in [`default_pipeline`] if it should run by default.
//!
//! # Running a pipeline from Rust
//! ```
//! use tilec_ir::Target;
//! use tilec_passes::{default_pipeline, PassContext, PassManager, PassRegistry};
//!
//! let mut module = tilec_ir::parse_module("tile.func @f() {\n  tile.return\n}\n").unwrap();
//! let registry = PassRegistry::with_builtin();
//! let pm = PassManager::from_pipeline(&registry, default_pipeline(Target::Sm80)).unwrap();
//! pm.run(&mut module, &mut PassContext::new(Target::Sm80)).unwrap();
//! ```

pub mod analysis;
pub mod bank_conflicts;
pub mod check_resources;
pub mod cleanup;
pub mod context;
pub mod expect;
pub mod kernel_attrs;
pub mod layout_assignment;
pub mod layout_conversion;
pub mod lower;
pub mod manager;
pub mod options;
pub mod pass;
pub mod persistent;
pub mod pipeline;
pub mod pipelining;
pub mod rasterize;
pub mod slice_layout;
pub mod registry;
pub mod swizzle;
pub mod timing;
pub mod wgmma;

pub use context::{PassContext, Remark};
pub use layout_assignment::LayoutAssignment;
pub use lower::LowerTileToNvgpu;
pub use manager::{DumpPoint, IrDump, PassManager, PipelineError, RunReport, Verify};
pub use options::PassOptions;
pub use pass::Pass;
pub use persistent::PersistentGrid;
pub use pipelining::SoftwarePipeline;
pub use rasterize::Rasterize;
pub use pipeline::{default_pipeline, full_pipeline, lowering_pipeline, Pipeline, PipelineEntry};
pub use registry::{PassConstructor, PassInfo, PassRegistry};
pub use timing::{TimingKind, TimingReport, TimingRow};

#[cfg(test)]
pub(crate) mod testing {
    use crate::{Pass, PassContext};
    use tilec_ir::Target;

    /// Runs one pass on `input` and checks the printed result against `expected` (both trimmed), and
    /// that the result verifies.
    pub fn check_pass(pass: impl Pass, input: &str, expected: &str) {
        let mut module = tilec_ir::parse_module(input.trim()).unwrap_or_else(|d| panic!("input does not parse: {d}"));
        tilec_ir::verify::verify_module(&module).unwrap_or_else(|d| panic!("input does not verify: {d}"));
        pass.run(&mut module, &mut PassContext::new(Target::Sm80)).unwrap();
        let printed = tilec_ir::print_module(&module);
        tilec_ir::verify::verify_module(&module).unwrap_or_else(|d| panic!("output does not verify: {d}\n{printed}"));
        assert_eq!(printed.trim(), expected.trim(), "\n--- got:\n{printed}");
    }
}
