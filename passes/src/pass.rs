//! The [`Pass`] trait: one transformation or analysis of a [`Module`], as rustc's MIR passes are.

use tilec_ir::{Diagnostic, Module};

use crate::context::PassContext;

/// One step of a pipeline. Usually a small (often zero-sized) type; options it takes from the pipeline
/// text (`name{key=value}`) are parsed by its constructor in the [`crate::PassRegistry`] and kept as fields.
///
/// A pass changes the module in place and either succeeds or fails with a diagnostic located at the
/// offending op. It must leave IR that verifies: the [`crate::PassManager`] checks that after every pass.
pub trait Pass {
    /// The name used in pipeline strings and `--print-ir-after=NAME`, e.g. `canonicalize`.
    fn name(&self) -> &'static str;

    /// One line for `--help`-style listings.
    fn description(&self) -> &'static str;

    /// Runs the pass on every function of the module.
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<(), Diagnostic>;
}
