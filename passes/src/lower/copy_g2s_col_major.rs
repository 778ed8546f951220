//! `tile.copy_g2s` of a column-major global tile (`tile<?x?xf16, global, #col_major>`: logical shape
//! `rows x cols`, stored column by column) into a column-major shared tile (`#col_major`, which the
//! swizzle pass may swizzle), as 16-byte `cp.async` chunks running down the columns.
//!
//! This is the row-major lowering (`copy_g2s`) on the transpose: a *storage row* is a column, chunk
//! `c = tid + i * threads` of the shared tile is column `c / chunks_per_col`, rows
//! `(c % chunks_per_col) * chunk ..` of it, and a `cp.async` of `chunk` elements at `(row, col)` moves the
//! elements consecutive in memory, i.e. rows `row .. row + chunk` of column `col` (the storage-order
//! semantics of multi-element accesses that both backends and the warp simulator implement).
//!
//! Edges, as in the row-major case with rows and columns exchanged: the column length of a dynamic global
//! tile (its number of rows) must be a multiple of the chunk (recorded in `async_copy_requirements`), and
//! the window's row offset must be provably a multiple of the chunk, so every chunk is wholly inside or
//! wholly outside the global tile and reads `(row < rows && col < cols) ? chunk : 0` elements.
//!
//! Only matching storage orders are lowered: a column-major global tile into a row-major shared tile (or
//! the other way round) would have to transpose on the way, which 16-byte copies cannot do; the diagnostic
//! says to declare the shared tile `#col_major` (or the global one row-major).

use tilec_ir::{Attribute, Diagnostic, Dim, OpId, OpKind, OpSpec, Type};

use super::copy_g2s::known_divisor;
use super::{is_col_major, Lowering};

impl<'f> Lowering<'f> {
    /// Whether `tile.copy_g2s` op `id` involves a column-major tile (and so is lowered here).
    pub(super) fn copy_g2s_is_col_major(&self, id: OpId) -> bool {
        let op = self.func.body.op(id);
        [op.operand("src"), op.operand("dst")].into_iter().flatten().any(|v| matches!(self.ty(v), Type::Tile(t) if is_col_major(t)))
    }

    pub(super) fn lower_copy_g2s_col_major(&mut self, id: OpId, first_of_run: bool, last_of_run: bool, in_loop: bool) -> Result<(), Diagnostic> {
        let op = self.func.body.op(id).clone();
        let span = op.span;
        let (Some(src), Some(dst)) = (op.operand("src"), op.operand("dst")) else {
            return Err(Diagnostic::error(span, "malformed 'tile.copy_g2s'"));
        };
        let (Type::Tile(gt), Type::Tile(st)) = (self.ty(src).clone(), self.ty(dst).clone()) else {
            return Err(Diagnostic::error(span, "malformed 'tile.copy_g2s'"));
        };
        let idx = op.group("src_indices").to_vec();
        let Some(&[rows, cols]) = st.static_shape().as_deref() else {
            return Err(Diagnostic::error(span, "'tile.copy_g2s' lowering needs a static rank-2 shared tile"));
        };
        if idx.len() != 2 || gt.rank() != 2 {
            return Err(Diagnostic::error(span, "'tile.copy_g2s' lowering handles rank-2 tiles"));
        }
        match (is_col_major(&gt), is_col_major(&st)) {
            (true, true) => {}
            (true, false) => {
                return Err(Diagnostic::error(span, format!("'tile.copy_g2s' from the column-major '{gt}' into the row-major '{st}' would transpose; cp.async copies cannot"))
                    .with_note("declare the shared tile column-major too: 'tile.alloc_shared : tile<...xT, shared, #col_major>'; its copy to registers reads it with ldmatrix(.trans)"));
            }
            _ => {
                return Err(Diagnostic::error(span, format!("'tile.copy_g2s' from the row-major '{gt}' into the column-major '{st}' would transpose; cp.async copies cannot"))
                    .with_note("declare the shared tile row-major (no layout), or the global tile '#col_major'"));
            }
        }
        let bits = st.elem.bit_width() as u64;
        let threads = 32 * self.num_warps as u64;
        let widths: Vec<u64> = [128u64, 64, 32].into_iter().filter(|w| (rows * bits).is_multiple_of(*w)).collect();
        if widths.is_empty() {
            return Err(Diagnostic::error(span, format!("columns of {rows} x {} are not a multiple of 4 bytes; cp.async cannot copy them", st.elem)));
        }
        // As in the row-major case: every thread copies the same number of chunks (no two cp.async into the
        // same bytes).
        let Some(width_bits) = widths.iter().copied().find(|w| (rows * cols * bits / w).is_multiple_of(threads)) else {
            return Err(Diagnostic::error(
                span,
                format!(
                    "'tile.copy_g2s' cannot share the {rows}x{cols} {} tile ({} bytes) evenly among {threads} threads with 4-, 8- or 16-byte cp.async copies",
                    st.elem,
                    rows * cols * bits / 8
                ),
            )
            .with_note(format!("use fewer warps (num_warps = {}) or a larger tile", self.num_warps)));
        };
        let chunk = width_bits / bits;
        let per_col = rows / chunk;
        let total = cols * per_col;
        let iterations = total.div_ceil(threads);

        // cp.async needs each chunk's global address aligned to its size: in a column-major tile the chunk runs
        // down a column, so the window's *row* offset must be a multiple of the chunk (columns start aligned
        // when the column length is: a run-time requirement, recorded below).
        let row_divisor = known_divisor(&self.func.body, idx[0], 0);
        if !row_divisor.is_multiple_of(chunk) {
            return Err(Diagnostic::error(
                span,
                format!(
                    "'tile.copy_g2s' of a column-major tile needs its row offset to be a multiple of {chunk} {} elements ({} bytes, the size of one cp.async down a column), and it is only known to be a multiple of {row_divisor}",
                    st.elem,
                    width_bits / 8
                ),
            )
            .with_note("offsets built from constants, block ids times constants and loops with aligned bounds and steps are understood"));
        }

        let consts: Vec<Option<i64>> = idx.iter().map(|&v| self.func.body.constant_int(v)).collect();
        let inside = match (gt.shape.as_slice(), consts.as_slice()) {
            ([Dim::Static(gr), Dim::Static(gc)], [Some(i), Some(j)]) => *i >= 0 && *j >= 0 && *i as u64 + rows <= *gr && *j as u64 + cols <= *gc,
            _ => false,
        };
        if !inside && !matches!(gt.shape[0], Dim::Static(n) if n % chunk == 0) {
            let name = self.func.body.value(src).name.clone().map_or_else(|| "a global tile".to_string(), |n| format!("%{n}"));
            self.require_multiple(src, 0, chunk);
            self.requirements.insert(format!(
                "columns of {name} (column-major) must be a multiple of {chunk} {} elements ({} bytes) for cp.async",
                gt.elem,
                width_bits / 8
            ));
        }

        if first_of_run && (in_loop || self.read_shared.contains(&dst)) {
            self.emit(OpSpec::new(OpKind::Barrier));
        }
        let tid = self.special(OpKind::ThreadId);
        let extents = if inside {
            None
        } else {
            let dim = |cx: &mut Self, axis: i64| cx.emit_value(OpSpec::new(OpKind::Dim).group("source", &[src]).attr("axis", axis).result(Type::INDEX));
            Some((dim(self, 0), dim(self, 1)))
        };
        let per_col_v = self.index(per_col as i64);
        let chunk_v = self.index(chunk as i64);
        for i in 0..iterations {
            let mut c = self.add_const(tid, (i * threads) as i64);
            if (i + 1) * threads > total {
                let t = self.index(total as i64);
                c = self.binary(OpKind::Rem, c, t);
            }
            let col = if per_col == 1 { c } else { self.binary(OpKind::Div, c, per_col_v) };
            let row = if per_col == 1 {
                self.index(0)
            } else {
                let k = self.binary(OpKind::Rem, c, per_col_v);
                self.binary(OpKind::Mul, k, chunk_v)
            };
            let gr = self.binary(OpKind::Add, idx[0], row);
            let gc = self.binary(OpKind::Add, idx[1], col);
            let mut spec = OpSpec::new(OpKind::DeviceAsyncCopy)
                .group("dst", &[dst])
                .group("dst_indices", &[row, col])
                .attr("dstElements", chunk as i64)
                .group("src", &[src])
                .group("src_indices", &[gr, gc]);
            if let Some((er, ec)) = extents {
                // Wholly inside or wholly outside (see the module documentation); the source indices stay
                // unclamped, as in the row-major lowering: nothing is read when src_elements is 0.
                let row_ok = self.cmp("lt", gr, er);
                let col_ok = self.cmp("lt", gc, ec);
                let ok = self.and(row_ok, col_ok);
                let zero = self.index(0);
                let n = self.select(ok, chunk_v, zero);
                spec = spec.group("src_elements", &[n]);
            }
            self.emit(spec);
        }
        self.emit(OpSpec::new(OpKind::DeviceAsyncCreateGroup));
        if last_of_run {
            self.emit(OpSpec::new(OpKind::DeviceAsyncWait).attr("numGroups", Attribute::Int(0)));
            self.emit(OpSpec::new(OpKind::Barrier));
        }
        Ok(())
    }
}
