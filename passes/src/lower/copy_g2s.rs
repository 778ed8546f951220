//! `tile.copy_g2s` → `nvgpu.device_async_copy` (cp.async) of 16-byte chunks spread over all threads.
//!
//! Chunk `c = tid + i * threads` of the shared tile (row `c / chunks_per_row`, column
//! `(c % chunks_per_row) * chunk`) comes from the global tile at the window offset. Chunks of 16 bytes
//! are preferred; 8 or 4 bytes are used when they divide the work evenly among the threads and 16 do not
//! (e.g. a 16x8 f16 tile over 32 threads). When no width divides evenly, the threads past the end redo
//! chunk `c % total` (the same bytes from the same source: a benign duplicate).
//!
//! Edges: cp.async of 16 (8, 4) bytes needs 16-byte (8-, 4-byte) aligned global addresses, so the row
//! length of a dynamic global tile must be a multiple of the chunk: the pass records this in the function
//! attribute `async_copy_requirements`. With the column offset a multiple of the chunk too (proved), every
//! chunk lies wholly inside the global tile or wholly outside it. Unless the window is known to lie inside a
//! static global tile, each copy reads `src_elements = (row < rows && col < cols) ? chunk : 0` and cp.async
//! zero-fills what it does not read. The source indices are not clamped: with `src_elements = 0` nothing is
//! read (as in Triton and CUTLASS), and unclamped affine indices let the backend strength-reduce the
//! address of each copy to one pointer increment per k-step.
//!
//! After the last of consecutive `tile.copy_g2s` ops: `device_async_create_group`,
//! `device_async_wait {numGroups = 0}` and `nvgpu.barrier`. Before the first of them, a barrier when the
//! shared tile may still be read by other warps (inside a loop, or after a `tile.copy_s2r` of it):
//! the write-after-read hazard of the previous iteration.

use tilec_ir::{Attribute, Diagnostic, Dim, OpId, OpKind, OpSpec, Type};

use super::Lowering;

impl<'f> Lowering<'f> {
    pub(super) fn lower_copy_g2s(&mut self, id: OpId, first_of_run: bool, last_of_run: bool, in_loop: bool) -> Result<(), Diagnostic> {
        let op = self.func.body.op(id).clone();
        let span = op.span;
        let (Some(src), Some(dst)) = (op.operand("src"), op.operand("dst")) else {
            return Err(Diagnostic::error(span, "malformed 'tile.copy_g2s'"));
        };
        let (Type::Tile(gt), Type::Tile(st)) = (self.ty(src).clone(), self.ty(dst).clone()) else {
            return Err(Diagnostic::error(span, "malformed 'tile.copy_g2s'"));
        };
        let Some(&[rows, cols]) = st.static_shape().as_deref() else {
            return Err(Diagnostic::error(span, "'tile.copy_g2s' lowering needs a static rank-2 shared tile"));
        };
        let idx = op.group("src_indices").to_vec();
        if idx.len() != 2 || gt.rank() != 2 {
            return Err(Diagnostic::error(span, "'tile.copy_g2s' lowering handles rank-2 tiles"));
        }
        if st.layout.is_some() && !matches!(st.layout, Some(tilec_ir::layout::Layout::RowMajor) | Some(tilec_ir::layout::Layout::Swizzled { .. })) {
            return Err(Diagnostic::error(span, "'tile.copy_g2s' lowering needs a row-major (possibly swizzled) shared tile"));
        }
        let bits = st.elem.bit_width() as u64;
        let threads = 32 * self.num_warps as u64;
        let row_bits = cols * bits;
        let widths: Vec<u64> = [128u64, 64, 32].into_iter().filter(|w| row_bits.is_multiple_of(*w)).collect();
        if widths.is_empty() {
            return Err(Diagnostic::error(span, format!("rows of {cols} x {} are not a multiple of 4 bytes; cp.async cannot copy them", st.elem)));
        }
        // Every thread copies the same number of chunks: a thread without a chunk of its own would have to
        // copy another's again, two cp.async into the same bytes (a race the simulator reports).
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
        let per_row = cols / chunk;
        let total = rows * per_row;
        let iterations = total.div_ceil(threads);

        // cp.async needs each chunk's global address aligned to its size: the window's column offset must be a
        // multiple of the chunk (rows start aligned when the row length is, a run-time requirement noted below).
        let column_divisor = known_divisor(&self.func.body, idx[1], 0);
        if !column_divisor.is_multiple_of(chunk) {
            let d = Diagnostic::error(
                span,
                format!(
                    "'tile.copy_g2s' needs its column offset to be a multiple of {chunk} {} elements ({} bytes, the size of one cp.async), and it is only known to be a multiple of {column_divisor}",
                    st.elem,
                    width_bits / 8
                ),
            )
            .with_note("offsets built from constants, block ids times constants and loops with aligned bounds and steps are understood");
            return Err(d);
        }

        // Statically inside a static global tile: no zero-fill needed.
        let consts: Vec<Option<i64>> = idx.iter().map(|&v| self.func.body.constant_int(v)).collect();
        let inside = match (gt.shape.as_slice(), consts.as_slice()) {
            ([Dim::Static(gr), Dim::Static(gc)], [Some(i), Some(j)]) => {
                *i >= 0 && *j >= 0 && *i as u64 + rows <= *gr && *j as u64 + cols <= *gc
            }
            _ => false,
        };
        if !inside && !matches!(gt.shape[1], Dim::Static(n) if n % chunk == 0) {
            let name = self.func.body.value(src).name.clone().map_or_else(|| "a global tile".to_string(), |n| format!("%{n}"));
            self.require_multiple(src, 1, chunk);
            self.requirements.insert(format!(
                "rows of {name} must be a multiple of {chunk} {} elements ({} bytes) for cp.async",
                gt.elem,
                width_bits / 8
            ));
        }

        if first_of_run && (in_loop || self.read_shared.contains(&dst)) {
            self.emit(OpSpec::new(OpKind::Barrier));
        }
        let tid = self.special(OpKind::ThreadId);
        let (extent_r, extent_c) = if inside {
            (None, None)
        } else {
            let dim = |cx: &mut Self, axis: i64| {
                cx.emit_value(OpSpec::new(OpKind::Dim).group("source", &[src]).attr("axis", axis).result(Type::INDEX))
            };
            (Some(dim(self, 0)), Some(dim(self, 1)))
        };
        // What is left of the global tile past the window's offset. Chunks are checked as `row < rows_left`
        // rather than `offset + row < rows`: the in-tile `row` is loop-invariant, and `rows_left` is one value
        // per copy op, so a k-loop pays one subtraction per bound instead of one add and compare per chunk.
        let left = match (extent_r, extent_c) {
            (Some(er), Some(ec)) => Some((self.binary(OpKind::Sub, er, idx[0]), self.binary(OpKind::Sub, ec, idx[1]))),
            _ => None,
        };
        let per_row_v = self.index(per_row as i64);
        let chunk_v = self.index(chunk as i64);
        for i in 0..iterations {
            let mut c = self.add_const(tid, (i * threads) as i64);
            if (i + 1) * threads > total {
                let t = self.index(total as i64);
                c = self.binary(OpKind::Rem, c, t);
            }
            let row = if per_row == 1 { c } else { self.binary(OpKind::Div, c, per_row_v) };
            let col = if per_row == 1 {
                self.index(0)
            } else {
                let k = self.binary(OpKind::Rem, c, per_row_v);
                self.binary(OpKind::Mul, k, chunk_v)
            };
            let gr = self.binary(OpKind::Add, idx[0], row);
            let gc = self.binary(OpKind::Add, idx[1], col);
            let mut spec = OpSpec::new(OpKind::DeviceAsyncCopy).group("dst", &[dst]).group("dst_indices", &[row, col]).attr("dstElements", chunk as i64);
            match left {
                Some((rows_left, cols_left)) => {
                    // Every chunk is wholly inside or wholly outside the global tile: its column offset is a
                    // multiple of the chunk (proved above) and so is the row length (the recorded run-time
                    // requirement). So src_elements = (gr < rows && gc < cols) ? chunk : 0, and the source
                    // indices stay unclamped: nothing is read when src_elements is 0, and affine indices let
                    // the backend advance one pointer per copy instead of recomputing the address each k-step.
                    let row_ok = self.cmp("lt", row, rows_left);
                    let col_ok = self.cmp("lt", col, cols_left);
                    let ok = self.and(row_ok, col_ok);
                    let zero = self.index(0);
                    let n = self.select(ok, chunk_v, zero);
                    spec = spec.group("src", &[src]).group("src_indices", &[gr, gc]).group("src_elements", &[n]);
                }
                _ => spec = spec.group("src", &[src]).group("src_indices", &[gr, gc]),
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

/// The largest power of two (at most 2^20) that `v` is provably a multiple of, from how it is computed:
/// constants, sums, products, minima and maxima of such values, and `tile.for` induction variables (a
/// multiple of what divides both the lower bound and the step). Anything else (block ids, run-time extents,
/// loop-carried values, divisions) counts as 1.
pub(super) fn known_divisor(body: &tilec_ir::Body, v: tilec_ir::Value, depth: u32) -> u64 {
    const CAP: u64 = 1 << 20;
    if depth > 64 {
        return 1;
    }
    match body.value(v).def {
        tilec_ir::ValueDef::OpResult { op, .. } => {
            let op = body.op(op);
            let operand = |name: &str| op.operand(name).map_or(1, |x| known_divisor(body, x, depth + 1));
            match op.kind {
                OpKind::Constant => match op.attr("value").and_then(Attribute::as_int) {
                    Some(0) => CAP,
                    Some(n) => (1u64 << n.unsigned_abs().trailing_zeros().min(20)).min(CAP),
                    None => 1,
                },
                OpKind::Add | OpKind::Sub | OpKind::Min | OpKind::Max => operand("lhs").min(operand("rhs")),
                OpKind::Mul => operand("lhs").saturating_mul(operand("rhs")).min(CAP),
                _ => 1,
            }
        }
        tilec_ir::ValueDef::BlockArg { block, index: 0 } => match body.block(block).parent_op.map(|p| body.op(p)) {
            Some(op) if op.kind == OpKind::For => {
                let d = |name: &str| op.operand(name).map_or(1, |x| known_divisor(body, x, depth + 1));
                d("lower").min(d("step"))
            }
            _ => 1,
        },
        tilec_ir::ValueDef::BlockArg { .. } => 1,
    }
}
