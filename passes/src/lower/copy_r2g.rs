//! `tile.copy_r2g` → per-thread `nvgpu.store`s of each fragment's elements.
//!
//! Element `r` of a thread is at `register_coord(r) + lane part + warp part` of the tile (additive
//! layout). Two consecutive register values on consecutive columns are stored as one `vector<2xT>`
//! when that is 2-element aligned and fully inside a row-major global tile, else as scalars (always
//! into a `#col_major` one, where consecutive columns are not consecutive in memory). Unless the window
//! is statically inside a static global tile, every store is predicated (`if %mask`): the vector store
//! on `row < rows && col + 1 < cols && (row * cols + col) % 2 == 0`, each scalar store on being in bounds
//! and the vector store not being taken. The duplicate lanes of a replicated layout store equal values.

use tilec_ir::ops::CmpPredicate;
use tilec_ir::{typed, Diagnostic, Dim, OpId, Type, TypedOp, Value, VectorType};

use super::Lowering;
use tilec_ir::ops::BinaryArith;

impl<'f> Lowering<'f> {
    pub(super) fn lower_copy_r2g(&mut self, id: OpId) -> Result<(), Diagnostic> {
        let op = self.func.body.op(id);
        let span = op.span;
        let Some(typed::CopyR2G { value, dst, dst_indices: idx }) = op.view() else {
            return Err(Diagnostic::error(span, "malformed 'tile.copy_r2g'"));
        };
        let Type::Tile(gt) = self.ty(dst).clone() else { return Err(Diagnostic::error(span, "malformed 'tile.copy_r2g'")) };
        self.written_global.insert(dst);
        if idx.len() != 2 || gt.rank() != 2 {
            return Err(Diagnostic::error(span, "'tile.copy_r2g' lowering handles rank-2 tiles"));
        }
        let frags = self.fragments_of(value)?;
        let vals = self.frags(value)?;
        let Some(&[rows, cols]) = self.ty(value).as_tile().and_then(|t| t.static_shape()).as_deref() else {
            return Err(Diagnostic::error(span, "malformed 'tile.copy_r2g'"));
        };
        let consts: Vec<Option<i64>> = idx.iter().map(|&v| self.func.body.constant_int(v)).collect();
        let (inside, even_static) = match (gt.shape.as_slice(), consts.as_slice()) {
            ([Dim::Static(gr), Dim::Static(gc)], [Some(i), Some(j)]) => (
                *i >= 0 && *j >= 0 && *i as u64 + rows <= *gr && *j as u64 + cols <= *gc,
                gc % 2 == 0 && j % 2 == 0,
            ),
            _ => (false, false),
        };
        let bases = frags.bases.clone();
        // A vector store moves elements consecutive in memory: along a row only in a row-major tile (a
        // column-major destination gets scalar stores).
        let pairs = !super::is_col_major(&gt)
            && bases.register.first() == Some(&(0, 1))
            && bases.lane.iter().chain(&bases.warp).all(|&(_, c)| c % 2 == 0)
            && frags.elem.bit_width() * 2 <= 64;
        let width = if pairs { 2 } else { 1 };
        let (tr, tc) = self.thread_coords(&bases.lane, &bases.warp);
        let gr0 = self.binary(BinaryArith::Add, idx[0], tr);
        let gc0 = self.binary(BinaryArith::Add, idx[1], tc);
        let extents = if inside {
            None
        } else {
            let dim = |cx: &mut Self, axis: u32| cx.emit_value(typed::Dim { source: dst, axis }.into_spec().result(Type::INDEX));
            Some((dim(self, 0), dim(self, 1)))
        };
        let elem = frags.elem;
        for (f, &frag) in vals.iter().enumerate() {
            for j in (0..frags.values).step_by(width as usize) {
                let r = f as u32 * frags.values + j;
                let (cr, cc) = bases.register_coord(r);
                let gr = self.add_const(gr0, cr as i64);
                let gc = self.add_const(gc0, cc as i64);
                let xs: Vec<Value> = (0..width).map(|k| self.extract(frag, frags.position(j + k))).collect();
                let store = |cx: &mut Self, value: Value, col: Value, mask: Option<Value>| {
                    cx.emit(typed::Store { value, dst, indices: vec![gr, col], mask }.into_spec());
                };
                let vector = |cx: &mut Self| {
                    let mut acc = cx.zero_vector(VectorType::new(&[2], elem));
                    for (k, &x) in xs.iter().enumerate() {
                        acc = cx.insert(x, acc, vec![k as u32]);
                    }
                    acc
                };
                match extents {
                    None if width == 2 && even_static => {
                        let v = vector(self);
                        store(self, v, gc, None);
                    }
                    None => {
                        for (k, &x) in xs.iter().enumerate() {
                            let col = self.add_const(gc, k as i64);
                            store(self, x, col, None);
                        }
                    }
                    Some((er, ec)) => {
                        let row_ok = self.cmp(CmpPredicate::Lt, gr, er);
                        let mut in_bounds = Vec::new();
                        for k in 0..width {
                            let col = self.add_const(gc, k as i64);
                            let col_ok = self.cmp(CmpPredicate::Lt, col, ec);
                            in_bounds.push((col, self.and(row_ok, col_ok)));
                        }
                        if width == 2 {
                            // (gr * cols + gc) % 2 == 0: the pair is 8-byte (f32) / 4-byte (f16) aligned.
                            let lin = self.binary(BinaryArith::Mul, gr, ec);
                            let lin = self.binary(BinaryArith::Add, lin, gc);
                            let two = self.index(2);
                            let parity = self.binary(BinaryArith::Rem, lin, two);
                            let zero = self.index(0);
                            let aligned = self.cmp(CmpPredicate::Eq, parity, zero);
                            let vec_ok = self.and(in_bounds[1].1, aligned);
                            let v = vector(self);
                            store(self, v, gc, Some(vec_ok));
                            let scalar_ok = self.not(vec_ok);
                            for (k, &x) in xs.iter().enumerate() {
                                let m = self.and(in_bounds[k].1, scalar_ok);
                                store(self, x, in_bounds[k].0, Some(m));
                            }
                        } else {
                            store(self, xs[0], in_bounds[0].0, Some(in_bounds[0].1));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
