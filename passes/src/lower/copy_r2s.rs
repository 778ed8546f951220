//! `tile.copy_r2s` → a [`CopyPlan`] in the store direction: `nvgpu.stmatrix` where it fits, per-thread
//! `nvgpu.store`s (`st.shared`) otherwise.
//!
//! `stmatrix` moves the same elements as `ldmatrix` the other way (seed 000 prints both), so the plan of
//! the load that would fill these registers from the tile is also the plan of the store: when
//! [`CopyPlan::for_fragments`] picks `ldmatrix.xN[.trans]` for 16-bit elements and the target has
//! `stmatrix` (sm_90), each instance becomes `stmatrix.xN[.trans]` of the same registers at the same row
//! addresses. Otherwise (sm_80, 32-bit or 8-bit elements, or a layout no `ldmatrix` fits) the plan is
//! [`CopyPlan::per_thread`]: every thread stores the widest vector of register values that are
//! consecutive both in its registers and in the tile's memory (two for the mma fragments: 4 bytes of
//! f16, 8 of f32). Addresses are `(row, col)` of the tile; the backends turn them into offsets through
//! the tile's layout (`Layout::offset_with`), swizzle included. Windows as for `tile.copy_s2r`
//! ([`super::window`]).
//!
//! Barriers: the store waits (`nvgpu.barrier`) when other warps may still read or write the tile since
//! the last barrier (write after read, write after write); a later `tile.copy_s2r` of it waits for the
//! store (read after write, in `copy_s2r`).

use tilec_ir::{typed, Diagnostic, OpId, Type, TypedOp, Value, VectorType};

use super::copy_plan::{CopyInstr, CopyPlan};
use super::{Fragments, Lowering};

impl<'f> Lowering<'f> {
    pub(super) fn lower_copy_r2s(&mut self, id: OpId) -> Result<(), Diagnostic> {
        let op = self.func.body.op(id);
        let span = op.span;
        let Some(typed::CopyR2S { value, dst, dst_indices }) = op.view() else {
            return Err(Diagnostic::error(span, "malformed 'tile.copy_r2s'"));
        };
        let Type::Tile(st) = self.ty(dst).clone() else { return Err(Diagnostic::error(span, "malformed 'tile.copy_r2s'")) };
        let frags = self.fragments_of(value)?;
        let vals = self.frags(value)?;
        let shape = self.ty(value).as_tile().and_then(|t| t.static_shape()).unwrap_or_default();
        let window = self.shared_window(&st, &shape, &dst_indices, "tile.copy_r2s")?;
        let no_plan = |m: String| Diagnostic::error(span, format!("no copy plan for 'tile.copy_r2s': {m}"));
        let matrix = CopyPlan::for_fragments(window.source.clone(), &frags.layout, Some(frags.values)).map_err(no_plan)?;
        let plan = match matrix.instr {
            CopyInstr::LdMatrix { .. } if self.target.has_stmatrix() && st.elem.bit_width() == 16 => matrix,
            _ => CopyPlan::per_thread(window.source.clone(), &frags.layout).map_err(no_plan)?,
        };
        window.check_offsets(&plan, span, "tile.copy_r2s")?;
        // Write after read / write: other warps may still be reading (or writing) the tile.
        if self.shared_barriers && (self.pending_shared_reads.contains(&dst) || self.pending_shared_writes.contains(&dst)) {
            self.shared_barrier();
        }
        let (row0, col0) = self.thread_coords(&plan.lane_bases, &plan.warp_bases);
        let row0 = self.add_window_offset(row0, &window, 0);
        let col0 = self.add_window_offset(col0, &window, 1);
        let elem = frags.elem;
        for inst in &plan.instances {
            let row = self.add_const(row0, inst.origin.0 as i64);
            let col = self.add_const(col0, inst.origin.1 as i64);
            let first = inst.first_register;
            match plan.instr {
                CopyInstr::LdMatrix { num, trans } => {
                    let ty = VectorType::new(&[u64::from(num), 2], elem);
                    let v = self.gather(&frags, &vals, first, ty, |j| vec![j / 2, j % 2]);
                    self.emit(typed::StMatrix { value: v, dst, indices: vec![row, col], num_tiles: num, transpose: trans }.into_spec());
                }
                CopyInstr::Load { width: 1 } => {
                    let x = self.register_value(&frags, &vals, first);
                    self.emit(typed::Store { value: x, dst, indices: vec![row, col], mask: None }.into_spec());
                }
                CopyInstr::Load { width } => {
                    let ty = VectorType::new(&[u64::from(width)], elem);
                    let v = self.gather(&frags, &vals, first, ty, |j| vec![j]);
                    self.emit(typed::Store { value: v, dst, indices: vec![row, col], mask: None }.into_spec());
                }
            }
        }
        self.pending_shared_writes.insert(dst);
        Ok(())
    }

    /// Register value `r` of a thread (fragment `r / values`, at its position).
    pub(super) fn register_value(&mut self, frags: &Fragments, vals: &[Value], r: u32) -> Value {
        let f = (r / frags.values) as usize;
        self.extract(vals[f], frags.position(r % frags.values))
    }

    /// A vector of type `ty` holding register values `first ..` (element `j` at `position(j)`): a fragment
    /// vector as it is when it is exactly that, else built with extracts and inserts.
    pub(super) fn gather(&mut self, frags: &Fragments, vals: &[Value], first: u32, ty: VectorType, position: impl Fn(u32) -> Vec<u32>) -> Value {
        let n = ty.shape.iter().product::<u64>() as u32;
        let f = (first / frags.values) as usize;
        if first.is_multiple_of(frags.values) && n == frags.values && ty == frags.vector_type() && (0..n).all(|j| position(j) == frags.position(j)) {
            return vals[f];
        }
        let mut acc = self.zero_vector(ty);
        for j in 0..n {
            let x = self.register_value(frags, vals, first + j);
            acc = self.insert(x, acc, position(j));
        }
        acc
    }
}
