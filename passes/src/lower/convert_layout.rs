//! `tile.convert_layout` in registers: layout assignment left only conversions whose lane and warp bases
//! agree ([`crate::layout_conversion`]; the others became copies through shared memory), so every thread
//! already holds the elements it needs. Destination register `r` is source register
//! [`permuted_register`]`(perm, r)`; the destination's fragments are regrouped from the source's with
//! `nvgpu.extract`/`nvgpu.insert` (register moves, which the backends' register allocators mostly fold
//! away), or taken as they are where a fragment is unchanged.
//!
//! `tile.transpose` is a renaming too: layout assignment gives its result the source's layout with `row` and
//! `col` exchanged, so the result's fragments are the source's, unchanged (or nothing at all under a wgmma
//! operand, which reads the shared tile).

use tilec_ir::{typed, Diagnostic, OpId};

use super::Lowering;
use crate::layout_conversion::{permuted_register, register_permutation};

impl<'f> Lowering<'f> {
    pub(super) fn lower_convert_layout(&mut self, id: OpId) -> Result<(), Diagnostic> {
        let op = self.func.body.op(id);
        let span = op.span;
        let (Some(typed::ConvertLayout { source }), Some(result)) = (op.view(), op.result()) else {
            return Err(Diagnostic::error(span, "malformed 'tile.convert_layout'"));
        };
        let src = self.fragments_of(source)?;
        let dst = self.fragments_of(result)?;
        let vals = self.frags(source)?;
        let perm = register_permutation(&src.layout, &dst.layout).map_err(|why| {
            Diagnostic::error(span, format!("internal: this 'tile.convert_layout' needs shared memory ({why}); layout assignment should have expanded it"))
        })?;
        let mut out = Vec::with_capacity(dst.count() as usize);
        for f in 0..dst.count() {
            let first = f * dst.values;
            let regs: Vec<u32> = (0..dst.values).map(|j| permuted_register(&perm, first + j)).collect();
            // A source fragment that is exactly this destination fragment is used as it is.
            let whole = src.values == dst.values
                && src.vector_type() == dst.vector_type()
                && regs[0].is_multiple_of(src.values)
                && regs.iter().enumerate().all(|(j, &r)| r == regs[0] + j as u32);
            if whole {
                out.push(vals[(regs[0] / src.values) as usize]);
                continue;
            }
            let mut acc = self.zero_vector(dst.vector_type());
            for (j, &r) in regs.iter().enumerate() {
                let x = self.register_value(&src, &vals, r);
                acc = self.insert(x, acc, dst.position(j as u32));
            }
            out.push(acc);
        }
        self.frags.insert(result, out);
        Ok(())
    }

    pub(super) fn lower_transpose(&mut self, id: OpId) -> Result<(), Diagnostic> {
        let op = self.func.body.op(id);
        let span = op.span;
        let (Some(typed::Transpose { source }), Some(result)) = (op.view(), op.result()) else {
            return Err(Diagnostic::error(span, "malformed 'tile.transpose'"));
        };
        if self.wgmma_operands.contains(&result) {
            // A wgmma reads the shared tile under it (`crate::wgmma`): nothing was loaded, nothing to rename.
            return Ok(());
        }
        let src = self.fragments_of(source)?;
        let dst = self.fragments_of(result)?;
        let renamed = src.layout.exchange_outs("row", "col").ok();
        if renamed.as_ref() != Some(&dst.layout) || src.values != dst.values {
            return Err(Diagnostic::error(span, "internal: the result layout of this 'tile.transpose' is not its source's with row and col exchanged; layout assignment should have made it so"));
        }
        let vals = self.frags(source)?;
        self.frags.insert(result, vals);
        Ok(())
    }
}
