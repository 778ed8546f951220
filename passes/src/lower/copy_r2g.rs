//! `tile.copy_r2g` → per-thread `nvgpu.store`s of each fragment's elements.
//!
//! Element `r` of a thread is at `register_coord(r) + lane part + warp part` of the tile (additive
//! layout). Two consecutive register values on consecutive columns are stored as one `vector<2xT>`
//! when that is 2-element aligned and fully inside a row-major global tile, else as scalars (always
//! into a `#col_major` one, where consecutive columns are not consecutive in memory). Unless the window
//! is statically inside a static global tile, every store is predicated (`if %mask`): the vector store
//! on `row < rows && col + 1 < cols && (row * cols + col) % 2 == 0`, each scalar store on being in bounds
//! and the vector store not being taken. The duplicate lanes of a replicated layout store equal values.
//!
//! Into a global tile of rank 3 or more (a rank-reducing copy, `%C[%b, %m0, %n0]`), the leading indices pick
//! the 2-D slice: they prefix every store's indices, a leading index outside the tile masks every store
//! (folded into the row bound once per copy), and the pair alignment counts the slice's offset in the tile.
//! Into a 1-D global tile (a vector copy, from a `1xN` or `Mx1` tile), the vector is the tile's row or column:
//! the other axis has offset 0 and extent 1.

use tilec_ir::ops::CmpPredicate;
use tilec_ir::{typed, Diagnostic, Dim, OpId, Type, TypedOp, Value, VectorType};

use super::Lowering;
use tilec_ir::ops::BinaryArith;

impl<'f> Lowering<'f> {
    pub(super) fn lower_copy_r2g(&mut self, id: OpId) -> Result<(), Diagnostic> {
        let op = self.func.body.op(id);
        let span = op.span;
        let Some(typed::CopyR2G { value, dst, dst_indices }) = op.view() else {
            return Err(Diagnostic::error(span, "malformed 'tile.copy_r2g'"));
        };
        let Type::Tile(gt) = self.ty(dst).clone() else { return Err(Diagnostic::error(span, "malformed 'tile.copy_r2g'")) };
        self.written_global.insert(dst);
        let Some(&[rows, cols]) = self.ty(value).as_tile().and_then(|t| t.static_shape()).as_deref() else {
            return Err(Diagnostic::error(span, "malformed 'tile.copy_r2g'"));
        };
        // A 1xN or Mx1 tile into a 1-D global tile (a vector copy): the vector is the tile's row or column; the
        // other axis has offset 0 and extent 1.
        let vector_axis = (gt.rank() == 1 && dst_indices.len() == 1).then(|| [rows, cols].iter().position(|&n| n == 1)).flatten();
        if vector_axis.is_none() && (gt.rank() < 2 || dst_indices.len() != gt.rank()) {
            return Err(Diagnostic::error(span, "'tile.copy_r2g' lowering handles global tiles of rank 2 or more (a 2-D window), or a 1xN or Mx1 tile into a 1-D one"));
        }
        if gt.rank() > 2 && super::is_col_major(&gt) {
            return Err(Diagnostic::error(span, format!("'tile.copy_r2g' lowering needs a row-major rank-{} global tile", gt.rank())));
        }
        // The leading indices of a rank-reducing copy, and the window's offset in the slice they pick.
        let nlead = gt.rank().saturating_sub(2);
        let (lead, idx) = match vector_axis {
            Some(unit) => {
                let zero = self.index(0);
                (vec![], if unit == 0 { vec![zero, dst_indices[0]] } else { vec![dst_indices[0], zero] })
            }
            None => (dst_indices[..nlead].to_vec(), dst_indices[nlead..].to_vec()),
        };
        let at = |row: Value, col: Value| -> Vec<Value> {
            match vector_axis {
                Some(0) => vec![col],
                Some(_) => vec![row],
                None => lead.iter().copied().chain([row, col]).collect(),
            }
        };
        let frags = self.fragments_of(value)?;
        let vals = self.frags(value)?;
        let consts: Vec<Option<i64>> = dst_indices.iter().map(|&v| self.func.body.constant_int(v)).collect();
        let window = match vector_axis {
            Some(unit) => vec![[rows, cols][1 - unit]],
            None => {
                let mut window = vec![1; nlead];
                window.extend([rows, cols]);
                window
            }
        };
        let inside = gt.shape.iter().zip(&consts).zip(&window).all(|((d, i), &w)| match (d, i) {
            (Dim::Static(n), Some(i)) => *i >= 0 && *i as u64 + w <= *n,
            _ => false,
        });
        // Every pair's offset is even when the last extent and the column offset are (the row starts, and the
        // slice's start, are multiples of the last extent).
        let even_static = matches!((gt.shape.last(), consts.last()), (Some(Dim::Static(gc)), Some(Some(j))) if gc % 2 == 0 && j % 2 == 0);
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
            let dim = |cx: &mut Self, axis: usize| cx.emit_value(typed::Dim { source: dst, axis: axis as u32 }.into_spec().result(Type::INDEX));
            let (mut er, ec) = match vector_axis {
                Some(0) => (self.index(1), dim(self, 0)),
                Some(_) => (dim(self, 0), self.index(1)),
                None => (dim(self, nlead), dim(self, nlead + 1)),
            };
            // The row offset of the slice in the tile, in rows: `((l0 * E1 + l1) * ... ) * E_rows` (0 for rank 2).
            let mut slice_rows = None;
            for (axis, &l) in lead.iter().enumerate() {
                let scaled = match slice_rows {
                    None => l,
                    Some(prev) => {
                        let e = dim(self, axis);
                        let p = self.binary(BinaryArith::Mul, prev, e);
                        self.binary(BinaryArith::Add, p, l)
                    }
                };
                slice_rows = Some(scaled);
            }
            let slice_rows = slice_rows.map(|s| self.binary(BinaryArith::Mul, s, er));
            // A leading index outside the tile stores nothing: a row bound of 0.
            if let Some(lead_ok) = self.leading_in_bounds(dst, &lead) {
                let zero = self.index(0);
                er = self.select(lead_ok, er, zero);
            }
            Some((er, ec, slice_rows))
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
                    cx.emit(typed::Store { value, dst, indices: at(gr, col), mask }.into_spec());
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
                    Some((er, ec, slice_rows)) => {
                        let row_ok = self.cmp(CmpPredicate::Lt, gr, er);
                        let mut in_bounds = Vec::new();
                        for k in 0..width {
                            let col = self.add_const(gc, k as i64);
                            let col_ok = self.cmp(CmpPredicate::Lt, col, ec);
                            in_bounds.push((col, self.and(row_ok, col_ok)));
                        }
                        if width == 2 {
                            // (gr * cols + gc) % 2 == 0: the pair is 8-byte (f32) / 4-byte (f16) aligned
                            // (with the slice's rows before `gr` in a rank-reducing copy).
                            let row = match slice_rows {
                                Some(s) => self.binary(BinaryArith::Add, s, gr),
                                None => gr,
                            };
                            let lin = self.binary(BinaryArith::Mul, row, ec);
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
