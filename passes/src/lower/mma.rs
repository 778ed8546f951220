//! `tile.mma` → one `nvgpu.mma.sync` per (mi, ni, ki) instruction tile of the warp tile.
//!
//! Which fragment of A, B and C is which instruction tile is read off the layouts: fragment `f` of a
//! tile covers the instruction tile at `register_coord(f * V)` (lane 0, warp 0). The order is `ki`
//! outermost, then `mi`, then `ni`: each A fragment is used for a row of `ni` in a row, each B fragment
//! for a column of `mi`, and the accumulators of one `ki` step are independent of each other.

use std::collections::HashMap;

use tilec_ir::ops::{MatrixOrder, MmaShape};
use tilec_ir::{typed, Diagnostic, OpId, Type, TypedOp, Value};

use super::{Fragments, Lowering};
use crate::layout_assignment::MmaInstr;

fn tile_index(frags: &Fragments, f: u32, rows: u32, cols: u32) -> Result<(u32, u32), String> {
    let (r, c) = frags.bases.register_coord(f * frags.values);
    if r % rows != 0 || c % cols != 0 {
        return Err(format!("fragment {f} starts at ({r}, {c}), not on a {rows}x{cols} instruction tile"));
    }
    Ok((r / rows, c / cols))
}

impl<'f> Lowering<'f> {
    pub(super) fn lower_mma(&mut self, id: OpId) -> Result<(), Diagnostic> {
        let op = self.func.body.op(id);
        let span = op.span;
        let (Some(typed::Mma { a, b, c, .. }), Some(result)) = (op.view(), op.result()) else {
            return Err(Diagnostic::error(span, "malformed 'tile.mma'"));
        };
        let instr = MmaInstr::for_types(self.ty(a).element_type(), self.ty(c).element_type()).map_err(|m| Diagnostic::error(span, m))?;
        let (fa, fb, fc) = (self.fragments_of(a)?, self.fragments_of(b)?, self.fragments_of(c)?);
        let [va, vb, vc] = instr.fragment_values();
        if (fa.values, fb.values, fc.values) != (va, vb, vc) {
            return Err(Diagnostic::error(span, "the operands' layouts are not those of the chosen mma instruction; run layout-assignment"));
        }
        let err = |m: String| Diagnostic::error(span, m);
        let mut amap: HashMap<(u32, u32), Value> = HashMap::new();
        for (f, &v) in self.frags(a)?.iter().enumerate() {
            amap.insert(tile_index(&fa, f as u32, instr.m, instr.k).map_err(err)?, v);
        }
        let mut bmap: HashMap<(u32, u32), Value> = HashMap::new();
        for (f, &v) in self.frags(b)?.iter().enumerate() {
            bmap.insert(tile_index(&fb, f as u32, instr.k, instr.n).map_err(err)?, v);
        }
        let cfr = self.frags(c)?;
        let mut cidx = Vec::new();
        for f in 0..cfr.len() {
            cidx.push(tile_index(&fc, f as u32, instr.m, instr.n).map_err(err)?);
        }
        let ks = amap.keys().map(|k| k.1).max().map_or(0, |k| k + 1);
        let mut acc: Vec<Value> = cfr.clone();
        let cty = Type::Vector(fc.vector_type());
        for ki in 0..ks {
            for (f, &(mi, ni)) in cidx.iter().enumerate() {
                let (Some(&af), Some(&bf)) = (amap.get(&(mi, ki)), bmap.get(&(ki, ni))) else {
                    return Err(Diagnostic::error(span, format!("no A or B fragment for instruction tile (m {mi}, n {ni}, k {ki})")));
                };
                let mma = typed::MmaSync {
                    a: af,
                    b: bf,
                    c: acc[f],
                    mma_shape: MmaShape::new(instr.m, instr.n, instr.k),
                    layout_a: MatrixOrder::Row,
                    layout_b: MatrixOrder::Col,
                    satfinite: false,
                };
                acc[f] = self.emit_value(mma.into_spec().result(cty.clone()));
            }
        }
        self.frags.insert(result, acc);
        Ok(())
    }
}
