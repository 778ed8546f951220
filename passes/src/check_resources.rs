//! The `check-resources` pass: what a kernel asks of one thread block must fit the target. Today that is
//! shared memory: the `tile.alloc_shared` of a function (each 128-byte aligned, as the backends place them)
//! against [`Target::max_shared_bytes_per_block`]. Run it last: software pipelining multiplies allocations.

use tilec_ir::{Diagnostic, MemorySpace, Module, OpKind, Type};

use crate::context::PassContext;
use crate::pass::Pass;

/// Alignment of every shared allocation in both backends.
pub const SHARED_ALIGN: u64 = 128;

/// The bytes a shared tile occupies (before alignment).
pub fn tile_bytes(t: &tilec_ir::TileType) -> u64 {
    t.num_elements().unwrap_or(0).saturating_mul(u64::from(t.elem.bit_width())).div_ceil(8)
}

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
            func.body.walk(func.entry, &mut |id| {
                let op = func.body.op(id);
                if op.kind != OpKind::AllocShared {
                    return;
                }
                let Some(Type::Tile(t)) = op.result().map(|r| func.body.ty(r)) else { return };
                if t.space != MemorySpace::Shared {
                    return;
                }
                let bytes = tile_bytes(t);
                total = total.div_ceil(SHARED_ALIGN).saturating_mul(SHARED_ALIGN).saturating_add(bytes);
                count += 1;
                if total > limit && first_over.is_none() {
                    first_over = Some(op.span);
                }
            });
            if let Some(span) = first_over {
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "@{} needs {total} bytes of shared memory in {count} allocation(s), more than the {limit} bytes one thread block may have on {}",
                        func.name,
                        cx.target.name()
                    ),
                )
                .with_note("this allocation is the first past the limit; software pipelining multiplies the copied tiles by its stage count (pipeline_stages)"));
            }
        }
        Ok(())
    }
}
