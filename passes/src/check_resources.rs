//! The `check-resources` pass: what a kernel asks of one thread block must fit the target. Today that is
//! shared memory: the `tile.alloc_shared` of a function (placed by [`tilec_ir::shared_memory`], as the backends place them)
//! against [`Target::max_shared_bytes_per_block`](tilec_ir::Target::max_shared_bytes_per_block). Run it last: software pipelining multiplies allocations.

use tilec_ir::shared_memory::place_shared_allocations;
use tilec_ir::{Diagnostic, MemorySpace, Module};

use crate::context::PassContext;
use crate::pass::Pass;

/// The `check-resources` pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckResources;

impl Pass for CheckResources {
    fn name(&self) -> &'static str {
        "check-resources"
    }

    fn description(&self) -> &'static str {
        "Check that each kernel's shared memory fits one thread block of the target"
    }

    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<(), Diagnostic> {
        let limit = cx.target.max_shared_bytes_per_block();
        for func in &module.funcs {
            let mut total = 0u64;
            let mut first_over = None;
            let mut count = 0usize;
            for placed in place_shared_allocations(func) {
                if placed.tile.is_none_or(|t| t.space != MemorySpace::Shared) {
                    continue;
                }
                total = placed.end();
                count += 1;
                if total > limit && first_over.is_none() {
                    first_over = Some(func.body.op(placed.op).span);
                }
            }
            if let Some(span) = first_over {
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "@{} needs {total} bytes of shared memory in {count} allocation(s), more than the {limit} bytes one thread block may have on {}",
                        func.name,
                        cx.target.chip()
                    ),
                )
                .with_note("this allocation is the first past the limit; software pipelining multiplies the copied tiles by its stage count (pipeline_stages)"));
            }
        }
        Ok(())
    }
}
