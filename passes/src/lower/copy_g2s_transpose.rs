//! `tile.copy_g2s` between tiles stored in different orders (a row-major global tile into a `#col_major`
//! shared tile, or the other way round): a *transposing* synchronous copy.
//!
//! cp.async moves bytes as they are, so it cannot transpose; this copy goes through registers. Each thread
//! takes square blocks of `T x T` elements, `T` elements making 4 bytes (`T = 4` for 8-bit elements, 2 for
//! 16-bit): it loads the block's `T` global lines (`T` elements consecutive in global memory each, one 4-byte
//! load), regroups the `T x T` values (extracts and inserts, which the backend turns into byte permutes),
//! and stores `T` shared lines (one 4-byte store each). What this is for: an int8 B that is row-major in
//! global memory (N contiguous) but must be K-contiguous in shared memory for `ldmatrix` to read its
//! m16n8k32 fragments as byte pairs, which a row-major shared B cannot give (four consecutive k of one n).
//!
//! Block `b = tid + i * threads` is global line block `b / (A/T)`, along-line block `b % (A/T)` (A: the
//! tile's extent along the global lines): consecutive threads read consecutive 4 bytes of a global line
//! (coalesced). Edges as in the other copies: each load is masked by its line being inside the global tile
//! and its `T` elements being inside (all or nothing: the global line length must be a multiple of `T`,
//! recorded in `async_copy_alignment`, and the window offset along the lines provably one). With
//! `global_alignment` below 4 bytes, the `T` elements of a line are loaded one by one, each masked.

use tilec_ir::ops::CmpPredicate;
use tilec_ir::{typed, Diagnostic, OpId, Type, TypedOp, VectorType};

use super::copy_g2s::{known_divisor, CopyTiles};
use super::Lowering;
use tilec_ir::ops::BinaryArith;

impl<'f> Lowering<'f> {
    pub(super) fn lower_copy_g2s_transposed(&mut self, id: OpId, tiles: &CopyTiles, first_of_run: bool) -> Result<(), Diagnostic> {
        let span = self.func.body.op(id).span;
        let idx = tiles.indices.clone();
        let elem = self.func.body.ty(tiles.dst).element_type();
        let bits = elem.bit_width() as u64;
        let t = match bits {
            8 => 4u64,
            16 => 2,
            _ => {
                return Err(Diagnostic::error(
                    span,
                    format!("'tile.copy_g2s' from '{}' into '{}' would transpose {elem} elements; only 8- and 16-bit elements are transposed on the way", tiles.global, self.ty(tiles.dst)),
                )
                .with_note("store the shared tile in the global tile's order ('#col_major' on both, or on neither)"));
            }
        };
        // The global storage view: lines along `gl_axis`, elements along `ga_axis`.
        let (gl_axis, ga_axis) = if tiles.global_col_major { (1usize, 0usize) } else { (0, 1) };
        let extent = [tiles.rows, tiles.cols];
        let (lines, along) = (extent[gl_axis], extent[ga_axis]);
        let threads = 32 * self.num_warps as u64;
        if !lines.is_multiple_of(t) || !along.is_multiple_of(t) || !((lines / t) * (along / t)).is_multiple_of(threads) {
            return Err(Diagnostic::error(
                span,
                format!("the transposing 'tile.copy_g2s' of the {}x{} {elem} tile needs {t}x{t} blocks shared evenly among {threads} threads", tiles.rows, tiles.cols),
            )
            .with_note(format!("use fewer warps (num_warps = {}) or a larger tile", self.num_warps)));
        }
        let per_line = along / t;
        let total = (lines / t) * per_line;
        // 4-byte loads of a line's T elements, unless the rows may be less aligned.
        let access = if self.global_alignment(tiles.src)? >= 4 { t } else { 1 };
        let divisor = known_divisor(&self.func.body, idx[ga_axis], 0);
        if !divisor.is_multiple_of(access) {
            return Err(Diagnostic::error(
                span,
                format!("the transposing 'tile.copy_g2s' loads {access} {elem} elements at a time along the global lines; its offset along them is only known to be a multiple of {divisor}"),
            )
            .with_note("or set global_alignment = 2 on the kernel for element-wise loads"));
        }
        let inside = self.window_inside(tiles, &idx);
        if !inside {
            self.require_line_multiple(tiles, ga_axis, access, "4 bytes) for the transposing copy");
        }
        self.war_barrier(tiles, first_of_run);
        let tid = self.thread_id();
        // What is left of the global tile past the window's offset, per axis.
        let left = (!inside).then(|| self.window_bounds(tiles, &idx, true));
        let per_line_v = self.index(per_line as i64);
        let t_v = self.index(t as i64);
        let line_ty = VectorType::new(&[t], elem);
        for i in 0..total.div_ceil(threads) {
            let b = self.add_const(tid, (i * threads) as i64);
            let bl = self.binary(BinaryArith::Div, b, per_line_v);
            let ba = self.binary(BinaryArith::Rem, b, per_line_v);
            let l0 = self.binary(BinaryArith::Mul, bl, t_v);
            let a0 = self.binary(BinaryArith::Mul, ba, t_v);
            // (row, col) of the block element `i` lines and `j` elements into it.
            let at = |cx: &mut Self, i: u64, j: u64| {
                let l = cx.add_const(l0, i as i64);
                let a = cx.add_const(a0, j as i64);
                let mut rc = [l; 2];
                rc[gl_axis] = l;
                rc[ga_axis] = a;
                rc
            };
            // Load the T lines of the block.
            let mut loaded = Vec::new();
            for li in 0..t {
                let mut line = self.zero_vector(line_ty.clone());
                for j in (0..t).step_by(access as usize) {
                    let rc = at(self, li, j);
                    let (gr, gc) = (self.binary(BinaryArith::Add, idx[0], rc[0]), self.binary(BinaryArith::Add, idx[1], rc[1]));
                    let g = tiles.global_indices(gr, gc);
                    let mask = left.map(|left| {
                        let row_ok = self.cmp(CmpPredicate::Lt, rc[0], left[0]);
                        let col_ok = self.cmp(CmpPredicate::Lt, rc[1], left[1]);
                        self.and(row_ok, col_ok)
                    });
                    let ty = if access == 1 { Type::Scalar(elem) } else { Type::Vector(line_ty.clone()) };
                    let v = self.emit_value(typed::Load { src: tiles.src, indices: g, mask }.into_spec().result(ty));
                    if access == 1 {
                        line = self.insert(v, line, vec![j as u32]);
                    } else {
                        line = v;
                    }
                }
                loaded.push(line);
            }
            // Store the T shared lines: element `li` of shared line `j` is element `j` of loaded line `li`.
            for j in 0..t {
                let mut out = self.zero_vector(line_ty.clone());
                for (li, &line) in loaded.iter().enumerate() {
                    let x = self.extract(line, vec![j as u32]);
                    out = self.insert(x, out, vec![li as u32]);
                }
                let rc = at(self, 0, j);
                self.emit(typed::Store { value: out, dst: tiles.dst, indices: rc.to_vec(), mask: None }.into_spec());
            }
        }
        Ok(())
    }
}
