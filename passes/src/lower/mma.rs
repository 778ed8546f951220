//! `tile.mma` → one `nvgpu.mma.sync` per (mi, ni, ki) instruction tile of the warp tile, or, where layout
//! assignment chose wgmma ([`crate::wgmma`]), warpgroup MMAs reading B, and A, from shared memory, or A
//! from registers ([`Lowering::lower_wgmma`]).
//!
//! Which fragment of A, B and C is which instruction tile is read off the layouts: fragment `f` of a
//! tile covers the instruction tile at `register_coord(f * V)` (lane 0, warp 0). The order is `ki`
//! outermost, then `mi`, then `ni`: each A fragment is used for a row of `ni` in a row, each B fragment
//! for a column of `mi`, and the accumulators of one `ki` step are independent of each other.

use rustc_hash::FxHashMap as HashMap;

use tilec_ir::ops::{MatrixOrder, MmaShape};
use tilec_ir::{typed, Diagnostic, OpId, Type, TypedOp, Value, VectorType};

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
        if let Some(mma) = op.view::<typed::Mma>().filter(crate::wgmma::is_wgmma) {
            return self.lower_wgmma(id, &mma, result);
        }
        let instr = MmaInstr::for_types(self.ty(a).element_type(), self.ty(c).element_type()).map_err(|m| Diagnostic::error(span, m))?;
        let (fa, fb, fc) = (self.fragments_of(a)?, self.fragments_of(b)?, self.fragments_of(c)?);
        let [va, vb, vc] = instr.fragment_values();
        if (fa.values, fb.values, fc.values) != (va, vb, vc) {
            return Err(Diagnostic::error(span, "the operands' layouts are not those of the chosen mma instruction; run layout-assignment"));
        }
        let err = |m: String| Diagnostic::error(span, m);
        let mut amap: HashMap<(u32, u32), Value> = HashMap::default();
        for (f, &v) in self.frags(a)?.iter().enumerate() {
            amap.insert(tile_index(&fa, f as u32, instr.m, instr.k).map_err(err)?, v);
        }
        let mut bmap: HashMap<(u32, u32), Value> = HashMap::default();
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

    /// A wgmma `tile.mma`: per warpgroup (its m and n offsets from the warp id, through the accumulator
    /// layout's warp bases above the warpgroup's four warps), the accumulator fragments (one per m64 tile,
    /// N/2 values) flattened to the instruction's `vector<N/2 x acc>`; `nvgpu.wgmma.fence`; per k step (16,
    /// or 32 for 8-bit) the descriptor of B at `[k, n0]` and, per m64 tile, that of A at `[m0, k]` (indices
    /// exchanged on a shared tile the mma reads transposed), or A's register fragment of that m64 tile and k
    /// step, and one `nvgpu.warpgroup.mma`; commit, `wait_group 0` (nothing stays in flight: the shared tiles may be
    /// refilled after the next barrier), and the results regrouped into fragments. In a pipelined k-loop,
    /// software-pipeline carries the flat vectors instead and keeps one group in flight
    /// (`pipelining::wgmma_in_flight`). A descriptor's start is
    /// the element's address through the tile's layout: inside a K-major swizzle atom it moves by the k
    /// step's bytes (the rows at a multiple of 8 are unswizzled), in an MN-major tile by whole K rows.
    pub(super) fn lower_wgmma(&mut self, id: OpId, mma: &typed::Mma, result: Value) -> Result<(), Diagnostic> {
        let span = self.func.body.op(id).span;
        let plan = self.wgmma.get(&id).cloned().ok_or_else(|| Diagnostic::error(span, "internal: no wgmma plan for this 'tile.mma'"))?;
        let fc = self.fragments_of(mma.c)?;
        if fc.values != plan.n / 2 || fc.count() != plan.m_tiles {
            return Err(Diagnostic::error(span, "the accumulator's layout is not the wgmma one; run layout-assignment"));
        }
        let acc_elem = fc.elem;
        let cfr = self.frags(mma.c)?;
        // Warpgroup offsets: the warp bases above the first two (the warps inside a warpgroup).
        let group_bases: Vec<(u32, u32)> = fc.bases.warp.iter().enumerate().map(|(i, &b)| if i < 2 { (0, 0) } else { b }).collect();
        let warp = self.warp_id();
        let (m0, n0) = self.bit_terms(warp, &group_bases);
        // Fragment f is m64 tile f of the warpgroup.
        for f in 0..fc.count() {
            let (r, c) = fc.bases.register_coord(f * fc.values);
            if (r, c) != (64 * f, 0) {
                return Err(Diagnostic::error(span, format!("accumulator fragment {f} starts at ({r}, {c}), not at m64 tile {f}")));
            }
        }
        let flat = VectorType::new(&[u64::from(plan.n / 2)], acc_elem);
        let fty = fc.vector_type();
        let mut acc: Vec<Value> = Vec::with_capacity(cfr.len());
        for &frag in &cfr {
            let mut v = self.zero_vector(flat.clone());
            for j in 0..fc.values {
                let x = self.extract(frag, fc.position(j));
                v = self.insert(x, v, vec![j]);
            }
            acc.push(v);
        }
        // A from registers: fragment f is k step f % (K / k) of m64 tile f / (K / k) (`wgmma_a_layout`).
        let mut register_a: HashMap<(u32, u32), Value> = HashMap::default();
        if plan.a.is_none() {
            let fa = self.fragments_of(mma.a)?;
            let err = |m: String| Diagnostic::error(span, m);
            for (f, &v) in self.frags(mma.a)?.iter().enumerate() {
                register_a.insert(tile_index(&fa, f as u32, 64, plan.k).map_err(err)?, v);
            }
        }
        self.emit(typed::WgmmaFence {}.into_spec());
        let k_total = self.ty(mma.a).as_tile().and_then(|t| t.static_shape()).and_then(|s| s.get(1).copied()).unwrap_or(0) as u32;
        let descriptor = |operand: &crate::wgmma::WgmmaOperand| {
            (operand.mode.span_bytes() as u32, operand.leading_byte_offset, operand.stride_byte_offset)
        };
        let (swb, lbob, sbob) = descriptor(&plan.b);
        let shape = plan.shape();
        let flat_ty = Type::Vector(flat.clone());
        // A descriptor's indices on its shared tile: exchanged where the mma reads a transpose of it.
        let at = |operand: &crate::wgmma::WgmmaOperand, first: Value, second: Value| if operand.transposed { vec![second, first] } else { vec![first, second] };
        for ks in 0..k_total / plan.k {
            let k = self.index(i64::from(ks * plan.k));
            let db = typed::WarpgroupGenerateDescriptor { tensor: plan.b.shared, indices: at(&plan.b, k, n0), swizzle: swb, leading_byte_offset: lbob, stride_byte_offset: sbob };
            let db = self.emit_value(db.into_spec().result(Type::INDEX));
            for (mt, slot) in acc.iter_mut().enumerate() {
                let a = match &plan.a {
                    Some(pa) => {
                        let m = self.add_const(m0, 64 * mt as i64);
                        let (swa, lboa, sboa) = descriptor(pa);
                        let da = typed::WarpgroupGenerateDescriptor { tensor: pa.shared, indices: at(pa, m, k), swizzle: swa, leading_byte_offset: lboa, stride_byte_offset: sboa };
                        self.emit_value(da.into_spec().result(Type::INDEX))
                    }
                    None => *register_a.get(&(mt as u32, ks)).ok_or_else(|| {
                        Diagnostic::error(span, format!("no register A fragment for m64 tile {mt}, k step {ks}; run layout-assignment"))
                    })?,
                };
                let op = typed::WarpgroupMma {
                    descriptor_a: a,
                    descriptor_b: db,
                    matrix_c: *slot,
                    mma_shape: shape,
                    transpose_a: plan.a.as_ref().is_some_and(|a| a.mn_major),
                    transpose_b: plan.b.mn_major,
                };
                *slot = self.emit_value(op.into_spec().result(flat_ty.clone()));
            }
        }
        self.emit(typed::WgmmaCommitGroup {}.into_spec());
        self.emit(typed::WgmmaWaitGroup { num_groups: 0 }.into_spec());
        let mut out = Vec::with_capacity(acc.len());
        for &v in &acc {
            let mut frag = self.zero_vector(fty.clone());
            for j in 0..fc.values {
                let x = self.extract(v, vec![j]);
                frag = self.insert(x, frag, fc.position(j));
            }
            out.push(frag);
        }
        self.frags.insert(result, out);
        Ok(())
    }
}
