//! `tile.copy_g2s` → per-thread copies of equal *chunks* spread over all threads: `nvgpu.device_async_copy`
//! (cp.async of 16, 8 or 4 bytes), or, where the global rows are not known to be 4-byte aligned, masked
//! one-element `nvgpu.load`s gathered into a vector and one `nvgpu.store` of it (synchronous copies).
//!
//! # Storage view
//! A copy moves elements consecutive in memory: along a row of a row-major tile, down a column of a
//! `#col_major` one. Both are lowered alike on the *storage view*: a row-major `rows x cols` tile is `rows`
//! lines of `cols` elements, a column-major one `cols` lines of `rows` elements. Chunk
//! `c = tid + i * threads` of the shared tile is line `c / chunks_per_line`, elements
//! `(c % chunks_per_line) * chunk ..` of it, from the global tile at the window offset. A copy between tiles
//! stored in different orders transposes on the way, which cp.async cannot: [`super::copy_g2s_transpose`].
//!
//! # Chunks and accesses
//! A chunk is the widest of 16, 8 and 4 bytes that divides the lines and shares the tile evenly among the
//! threads (a thread without a chunk of its own would have to copy another's again: two writes of the same
//! bytes, which the simulator reports as a race). A thin tile (`1xN`, `Mx1`) with fewer chunks than threads is
//! copied by the first threads only, each one chunk, synchronously (loads and a store masked by `tid < chunks`;
//! chunks may be narrower than 4 bytes there). How it is read depends on the function attribute
//! [`GLOBAL_ALIGNMENT_ATTR`] (bytes, default 16), what the kernel may assume of the alignment of the rows
//! of a global tile: one number for all, or an array with one per argument (`[2, 16, 16]`: only `%A` is
//! narrowed).
//! - 16, 8 or 4: cp.async of that many bytes (at most the chunk); a chunk wider than that is several of them
//!   at constant offsets from one address (immediate offsets, no extra address registers).
//! - 2 or 1: a *synchronous copy*: one masked load per element, gathered into one vector and stored with one
//!   `st.shared` of the chunk (chunks may be narrower than 4 bytes here). The only way to copy rows whose
//!   length in bytes is odd or 2 mod 4 (an f16 matrix with an odd K), which cp.async cannot address.
//!
//! The driver picks the attribute from the shape at launch (`tilec sim`, `bundle`, `bench`, `tune`), like
//! CUTLASS's alignment template parameter or Triton's divisibility specialization.
//!
//! # Edges
//! A cp.async of `w` bytes needs its global address aligned to `w`, so the line length of a dynamic global
//! tile must be a multiple of `w`: the pass records this in the function attributes
//! `async_copy_requirements` (text) and `async_copy_alignment` (`[[argument, axis, multiple]]`, for tools),
//! and the window's offset along the lines must be provably a multiple of it ([`known_divisor`]). Then every
//! cp.async lies wholly inside the global tile or wholly outside it, and reads `src_elements = (in bounds) ?
//! w : 0` (zero-filling the rest) unless the window is known to lie inside a static global tile; a
//! synchronous load is masked by the same condition (zero where false, nothing read). The source indices
//! are not clamped: nothing is read outside, as in Triton and CUTLASS, and unclamped affine indices let the
//! backend strength-reduce the address of each copy to one pointer increment per k-step.
//!
//! # Synchronization
//! After the last of consecutive `tile.copy_g2s` ops: `device_async_create_group`,
//! `device_async_wait {numGroups = 0}` (then `nvgpu.fence.proxy.async` in a kernel with a wgmma, which
//! reads shared memory through the async proxy) and `nvgpu.barrier` (also after synchronous copies: the shape
//! `software-pipeline` matches, and an empty group is legal). Before the first of them, a barrier when the
//! memory effects other warps may still have pending call for one ([`crate::analysis::barriers`]): the shared
//! tile read by a `tile.copy_s2r` before (or, in a loop, after the body's last barrier in the previous
//! iteration: write after read), or the global tile stored to by a `tile.copy_r2g` since the last barrier, in
//! program order or across a loop's back edge (read after write).

use tilec_ir::ops::kernel::GlobalAlignment;
use tilec_ir::ops::{CmpPredicate, Literal};
use tilec_ir::typed::{self, AnyOp};
use tilec_ir::{Diagnostic, Dim, OpId, OpKind, OpSpec, TileType, Type, TypedOp, Value, VectorType};

use super::{is_col_major, Lowering};
use tilec_ir::ops::BinaryArith;
use crate::kernel_attrs::kernel_attrs;

/// The function attribute bounding the width of global-to-shared copies, in bytes (16, 8, 4, 2 or 1;
/// default 16): what the kernel may assume of the alignment of every row of its global tiles (read as
/// [`tilec_ir::KernelAttrs::global_alignment`]).
pub const GLOBAL_ALIGNMENT_ATTR: &str = "global_alignment";

/// The widest global copy, in bytes.
const MAX_CHUNK_BYTES: u64 = 16;

/// How one `tile.copy_g2s` is split among the threads, on the storage view.
#[derive(Clone, Copy, Debug)]
pub(super) struct ChunkPlan {
    /// Elements per chunk, consecutive in memory (at most 16 bytes): the unit the tile is split into.
    chunk: u64,
    /// Chunks per line of the shared tile.
    per_line: u64,
    /// Chunks in the whole tile.
    total: u64,
    /// Elements of one global access (a chunk is `chunk / access` of them, at constant offsets from one
    /// address): what the line length and the window offset must be multiples of.
    access: u64,
    /// Accesses are cp.async (4, 8 or 16 bytes), else masked loads of one element gathered into one vector
    /// and stored with one `st.shared` per chunk.
    pub(super) asynchronous: bool,
    /// Fewer chunks than threads (a `1xN` vector): threads `0..total` copy one chunk each, synchronously (masked
    /// loads and a masked store); the others nothing.
    small: bool,
}

/// The global and shared tile of a copy and how their storage runs.
pub(super) struct CopyTiles {
    pub src: Value,
    /// The leading indices of a rank-reducing copy (`%b` of `%A[%b, %m0, %k0]`): they pick the 2-D slice of a
    /// rank-3 (or higher) global tile the window lies in. Empty for a rank-2 global tile.
    pub lead: Vec<Value>,
    /// The window's offset in the (slice of the) global tile (row, col).
    pub indices: Vec<Value>,
    pub dst: Value,
    pub global: TileType,
    /// Shared tile extents (rows, cols).
    pub rows: u64,
    pub cols: u64,
    /// The shared tile is stored column by column.
    pub col_major: bool,
    /// The global tile is; when it differs from `col_major`, the copy transposes
    /// ([`super::copy_g2s_transpose`]).
    pub global_col_major: bool,
    /// A vector copy: the global tile is 1-D and the shared tile `1xN` (`Some(0)`: the global tile lacks the row
    /// axis) or `Mx1` (`Some(1)`). `indices` then holds a constant 0 for that axis, and its extent counts as 1.
    pub vector_axis: Option<usize>,
}

impl CopyTiles {
    /// (lines, elements per line) of the shared tile.
    fn lines(&self) -> (u64, u64) {
        if self.col_major { (self.cols, self.rows) } else { (self.rows, self.cols) }
    }

    /// The logical axis the lines run along (1 for row-major, 0 for column-major).
    fn line_axis(&self) -> usize {
        usize::from(!self.col_major)
    }

    /// (row, col) of element `at` of line `line`.
    fn coords<T>(&self, line: T, at: T) -> (T, T) {
        if self.col_major { (at, line) } else { (line, at) }
    }

    /// The global tile's axis that the slice's `axis` (0 rows, 1 columns) is: past the leading axes; `None`
    /// for the axis a vector copy's 1-D global tile lacks.
    pub fn global_axis(&self, axis: usize) -> Option<usize> {
        match self.vector_axis {
            Some(v) if v == axis => None,
            Some(_) => Some(0),
            None => Some(self.lead.len() + axis),
        }
    }

    /// Indices into the global tile of the slice's element `(row, col)`: the leading indices, then them (only
    /// the one along the vector of a vector copy).
    pub fn global_indices(&self, row: Value, col: Value) -> Vec<Value> {
        match self.vector_axis {
            Some(0) => vec![col],
            Some(_) => vec![row],
            None => {
                let mut indices = self.lead.clone();
                indices.extend([row, col]);
                indices
            }
        }
    }
}

impl<'f> Lowering<'f> {
    /// The alignment in bytes the copies from global tile `src` may assume ([`GLOBAL_ALIGNMENT_ATTR`]): one
    /// number for every global tile, or an array with one per function argument.
    pub(super) fn global_alignment(&self, src: Value) -> Result<u64, Diagnostic> {
        match kernel_attrs(self.func)?.global_alignment {
            None => Ok(MAX_CHUNK_BYTES),
            Some(GlobalAlignment::All(n)) => Ok(u64::from(n)),
            Some(GlobalAlignment::PerArgument(per_arg)) => {
                let args = self.func.args();
                if per_arg.len() != args.len() {
                    return Err(Diagnostic::error(
                        self.func.span,
                        format!("{GLOBAL_ALIGNMENT_ATTR} has {} entries for {} arguments", per_arg.len(), args.len()),
                    ));
                }
                Ok(args.iter().zip(per_arg).find(|&(&arg, _)| arg == src).map_or(MAX_CHUNK_BYTES, |(_, n)| u64::from(n)))
            }
        }
    }

    pub(super) fn copy_tiles(&mut self, id: OpId) -> Result<CopyTiles, Diagnostic> {
        let op = self.func.body.op(id);
        let span = op.span;
        let Some(typed::CopyG2S { src, src_indices, dst }) = op.view() else {
            return Err(Diagnostic::error(span, "malformed 'tile.copy_g2s'"));
        };
        let (Type::Tile(gt), Type::Tile(st)) = (self.ty(src), self.ty(dst)) else {
            return Err(Diagnostic::error(span, "malformed 'tile.copy_g2s'"));
        };
        let Some(&[rows, cols]) = st.static_shape().as_deref() else {
            return Err(Diagnostic::error(span, "'tile.copy_g2s' lowering needs a static rank-2 shared tile"));
        };
        // A 1-D global tile into a 1xN or Mx1 shared tile: the vector is the tile's row or column.
        let vector_axis = (gt.rank() == 1 && src_indices.len() == 1).then(|| [rows, cols].iter().position(|&n| n == 1)).flatten();
        if let Some(unit) = vector_axis {
            let (global, st_col_major) = (gt.clone(), is_col_major(st));
            let zero = self.index(0);
            let indices = if unit == 0 { vec![zero, src_indices[0]] } else { vec![src_indices[0], zero] };
            let col_major = st_col_major;
            return Ok(CopyTiles { src, lead: vec![], indices, dst, global, rows, cols, col_major, global_col_major: col_major, vector_axis });
        }
        if gt.rank() < 2 || src_indices.len() != gt.rank() {
            return Err(Diagnostic::error(span, "'tile.copy_g2s' lowering handles global tiles of rank 2 or more (a 2-D window), or a 1-D one into a 1xN or Mx1 tile"));
        }
        if gt.rank() > 2 && gt.layout.as_ref().is_some_and(|l| !matches!(l, tilec_ir::layout::Layout::RowMajor)) {
            return Err(Diagnostic::error(span, format!("'tile.copy_g2s' lowering needs a row-major rank-{} global tile", gt.rank())));
        }
        let lead = src_indices[..gt.rank() - 2].to_vec();
        let src_indices = src_indices[gt.rank() - 2..].to_vec();
        use tilec_ir::layout::Layout;
        // A `#linear` memory layout: wgmma's column panels.
        let shared_ok = |l: &Option<Layout>| l.is_none() || matches!(l, Some(Layout::RowMajor | Layout::ColMajor | Layout::Swizzled { .. })) || l.as_ref().is_some_and(Layout::is_memory_layout);
        if !shared_ok(&st.layout) {
            return Err(Diagnostic::error(span, "'tile.copy_g2s' lowering needs a row- or column-major (possibly swizzled) shared tile"));
        }
        Ok(CopyTiles {
            src,
            lead,
            indices: src_indices,
            dst,
            global: gt.clone(),
            rows,
            cols,
            col_major: is_col_major(st),
            global_col_major: is_col_major(gt),
            vector_axis: None,
        })
    }

    /// The widest chunk (16, 8 or 4 bytes, else narrower) that divides the lines and shares the tile evenly
    /// among the threads, and the widest access that the chunk splits into and `global_alignment` allows:
    /// cp.async of 4 bytes or more, else synchronous loads of one element.
    pub(super) fn chunk_plan(&self, id: OpId, tiles: &CopyTiles) -> Result<ChunkPlan, Diagnostic> {
        let span = self.func.body.op(id).span;
        let elem = self.func.body.ty(tiles.dst).element_type();
        let bits = elem.bit_width() as u64;
        let threads = 32 * self.num_warps as u64;
        let (lines, line_len) = tiles.lines();
        let align_bits = self.global_alignment(tiles.src)? * 8;
        let asynchronous = align_bits >= 32;
        let line_bits = line_len * bits;
        // Chunks narrower than 4 bytes only for synchronous copies (cp.async cannot copy them).
        let narrowest = if asynchronous { 32 } else { bits };
        let widths: Vec<u64> = [128u64, 64, 32, 16, 8].into_iter().filter(|&w| w >= narrowest && w >= bits && line_bits.is_multiple_of(w)).collect();
        let line_word = if tiles.col_major { "columns" } else { "rows" };
        let even = widths.iter().copied().find(|&w| (lines * line_bits / w).is_multiple_of(threads));
        // A thin tile (1xN or Mx1: a bias vector) smaller than one chunk per thread: the first `total` threads
        // copy it, one chunk each, synchronously (so chunks narrower than 4 bytes are fine: a 16x1 f16 column).
        // (Other small tiles stay an error: they would rather use fewer warps.)
        let thin = tiles.rows == 1 || tiles.cols == 1;
        let small = (even.is_none() && thin)
            .then(|| [128u64, 64, 32, 16, 8].into_iter().filter(|&w| w >= bits && line_bits.is_multiple_of(w)).find(|&w| lines * line_bits / w < threads))
            .flatten();
        if let Some(width_bits) = small {
            let chunk = width_bits / bits;
            let per_line = line_len / chunk;
            return Ok(ChunkPlan { chunk, per_line, total: lines * per_line, access: 1, asynchronous: false, small: true });
        }
        let Some(width_bits) = even else {
            let narrower = format!("or set {GLOBAL_ALIGNMENT_ATTR} = 2 on the kernel for synchronous copies");
            if widths.is_empty() {
                return Err(Diagnostic::error(span, format!("{line_word} of {line_len} x {elem} are not a multiple of 4 bytes; cp.async cannot copy them")).with_note(narrower));
            }
            let kind = if asynchronous { "4-, 8- or 16-byte cp.async copies" } else { "copies of 1 to 16 bytes" };
            let bytes = lines * line_bits / 8;
            let mut d = Diagnostic::error(span, format!("'tile.copy_g2s' cannot share the {}x{} {elem} tile ({bytes} bytes) evenly among {threads} threads with {kind}", tiles.rows, tiles.cols))
                .with_note(format!("use fewer warps (num_warps = {}) or a larger tile", self.num_warps));
            if asynchronous {
                d = d.with_note(narrower);
            }
            return Err(d);
        };
        let chunk = width_bits / bits;
        // A synchronous copy loads one element at a time: for int8, 2-byte vector loads measured half as fast
        // as single bytes (4096×4096×4098 on an H100: 2.57 against 0.99 ms).
        let access = if asynchronous { align_bits.min(width_bits) / bits } else { 1 };
        Ok(ChunkPlan { chunk, per_line: line_len / chunk, total: lines * (line_len / chunk), access, asynchronous, small: false })
    }

    pub(super) fn lower_copy_g2s(&mut self, id: OpId, first_of_run: bool, last_of_run: bool) -> Result<(), Diagnostic> {
        if first_of_run {
            let run = super::copy_g2s_tma::copy_run(self.func, id);
            self.start_tma_run(&run)?;
        }
        let tiles = self.copy_tiles(id)?;
        if self.tma_copies.contains(&id) {
            self.lower_copy_g2s_tma(&tiles, first_of_run)?;
        } else {
            if tiles.col_major != tiles.global_col_major {
                self.lower_copy_g2s_transposed(id, &tiles, first_of_run)?;
            } else {
                self.lower_copy_g2s_in_order(id, &tiles, first_of_run)?;
            }
            self.emit(OpSpec::new(OpKind::DeviceAsyncCreateGroup));
        }
        if last_of_run {
            // A run of TMA loads only has no cp.async group to wait for.
            let any_async = self.tma_run.is_none_or(|run| run.any_async);
            if any_async {
                self.emit(typed::DeviceAsyncWait { num_groups: 0 }.into_spec());
            }
            self.finish_tma_run();
            if any_async && !self.wgmma.is_empty() {
                // cp.async writes through the generic proxy, wgmma reads through the async proxy (TMA writes
                // through the async proxy: no fence).
                self.emit(OpSpec::new(OpKind::FenceProxyAsync));
            }
            self.emit(OpSpec::new(OpKind::Barrier));
            self.barrier_placed();
        }
        Ok(())
    }

    /// A copy between tiles stored in the same order: cp.async, or synchronous loads and stores.
    fn lower_copy_g2s_in_order(&mut self, id: OpId, tiles: &CopyTiles, first_of_run: bool) -> Result<(), Diagnostic> {
        let plan = self.chunk_plan(id, tiles)?;
        let span = self.func.body.op(id).span;
        let idx = tiles.indices.clone();
        let elem = self.func.body.ty(tiles.dst).element_type();
        let bits = elem.bit_width() as u64;
        let (chunk, access) = (plan.chunk, plan.access);
        let access_bytes = access * bits / 8;
        let copy_word = if plan.asynchronous { "cp.async" } else { "load" };

        // Each access's global address must be aligned to its size: the window's offset along the lines must
        // be a multiple of it (lines start aligned when their length is: a run-time requirement, below).
        let axis = tiles.line_axis();
        let divisor = known_divisor(&self.func.body, idx[axis], 0);
        if !divisor.is_multiple_of(access) {
            let (what, down) = if tiles.col_major { ("row offset", " down a column") } else { ("column offset", "") };
            return Err(Diagnostic::error(
                span,
                format!("'tile.copy_g2s' needs its {what} to be a multiple of {access} {elem} elements ({access_bytes} bytes, the size of one {copy_word}{down}), and it is only known to be a multiple of {divisor}"),
            )
            .with_note("offsets built from constants, block ids times constants and loops with aligned bounds and steps are understood")
            .with_note(format!("or set {GLOBAL_ALIGNMENT_ATTR} = {} on the kernel for narrower copies", (divisor * bits / 8).clamp(1, 16))));
        }

        let inside = self.window_inside(tiles, &idx);
        if !inside {
            self.require_line_multiple(tiles, axis, access, &format!("{access_bytes} bytes) for {copy_word}"));
        }
        self.war_barrier(tiles, first_of_run);
        let tid = self.thread_id();
        // The bounds each access is checked against. Row-major: what is left of the global tile past the
        // window's offset, `row < rows_left && col < cols_left`: the in-tile `row` is loop-invariant and
        // `rows_left` is one value per copy op, so a k-loop pays one subtraction per bound instead of one add
        // and compare per access. Column-major: the global indices against the extents, `gr < rows && gc <
        // cols`, which measured fewer spills there (gemm_s8_b_col: 228 instead of 264 bytes of spill loads).
        let bounds = (!inside).then(|| self.window_bounds(tiles, &idx, !tiles.col_major));
        let threads = 32 * self.num_warps as u64;
        let per_line_v = self.index(plan.per_line as i64);
        let chunk_v = self.index(chunk as i64);
        for i in 0..plan.total.div_ceil(threads) {
            let mut c = self.add_const(tid, (i * threads) as i64);
            let active = plan.small.then(|| {
                let t = self.index(plan.total as i64);
                self.cmp(CmpPredicate::Lt, tid, t)
            });
            if (i + 1) * threads > plan.total && !plan.small {
                let t = self.index(plan.total as i64);
                c = self.binary(BinaryArith::Rem, c, t);
            }
            let line = if plan.per_line == 1 { c } else { self.binary(BinaryArith::Div, c, per_line_v) };
            let at = if plan.per_line == 1 {
                self.index(0)
            } else {
                let k = self.binary(BinaryArith::Rem, c, per_line_v);
                self.binary(BinaryArith::Mul, k, chunk_v)
            };
            // The access `offset` elements into the chunk: its in-tile and global indices and whether it is
            // inside the global tile.
            let access_at = |cx: &mut Self, offset: u64| {
                let at = cx.add_const(at, offset as i64);
                let (row, col) = tiles.coords(line, at);
                let gr = cx.binary(BinaryArith::Add, idx[0], row);
                let gc = cx.binary(BinaryArith::Add, idx[1], col);
                let ok = bounds.map(|[rows, cols]| {
                    let (r, c) = if tiles.col_major { (gr, gc) } else { (row, col) };
                    let row_ok = cx.cmp(CmpPredicate::Lt, r, rows);
                    let col_ok = cx.cmp(CmpPredicate::Lt, c, cols);
                    cx.and(row_ok, col_ok)
                });
                let ok = match (ok, active) {
                    (Some(ok), Some(a)) => Some(cx.and(ok, a)),
                    (ok, a) => ok.or(a),
                };
                ([row, col], [gr, gc], ok)
            };
            // Accesses at constant offsets from the chunk's first (immediate offsets in the instructions).
            let first = access_at(self, 0);
            let accesses: Vec<_> = (0..chunk).step_by(access as usize).map(|j| if j == 0 { first } else { access_at(self, j) }).collect();
            if plan.asynchronous {
                // Each cp.async is wholly inside or wholly outside the global tile (see the module
                // documentation): it reads `ok ? access : 0` elements.
                let access_v = self.index(access as i64);
                for (dst_at, src_at, ok) in accesses {
                    let src_elements = ok.map(|ok| {
                        let zero = self.index(0);
                        self.select(ok, access_v, zero)
                    });
                    let copy = typed::DeviceAsyncCopy {
                        src: tiles.src,
                        src_indices: tiles.global_indices(src_at[0], src_at[1]),
                        dst: tiles.dst,
                        dst_indices: dst_at.to_vec(),
                        src_elements,
                        dst_elements: access as u32,
                    };
                    self.emit(copy.into_spec());
                }
            } else {
                // Masked loads gathered into one vector, stored with one `st.shared` of the whole chunk.
                let mut gathered = self.zero_vector(VectorType::new(&[chunk], elem));
                for (j, (_, src_at, ok)) in accesses.into_iter().enumerate() {
                    let ty = if access == 1 { Type::Scalar(elem) } else { Type::Vector(VectorType::new(&[access], elem)) };
                    let v = self.emit_value(typed::Load { src: tiles.src, indices: tiles.global_indices(src_at[0], src_at[1]), mask: ok }.into_spec().result(ty));
                    for e in 0..access {
                        let x = if access == 1 { v } else { self.extract(v, vec![e as u32]) };
                        gathered = self.insert(x, gathered, vec![(j as u64 * access + e) as u32]);
                    }
                }
                let value = if chunk == 1 { self.extract(gathered, vec![0]) } else { gathered };
                self.emit(typed::Store { value, dst: tiles.dst, indices: first.0.to_vec(), mask: active }.into_spec());
            }
        }
        Ok(())
    }
}

impl Lowering<'_> {
    /// Whether the copy's window lies statically inside a static global tile (no bounds checks needed).
    pub(super) fn window_inside(&self, tiles: &CopyTiles, idx: &[Value]) -> bool {
        let consts: Vec<Option<i64>> = match tiles.vector_axis {
            Some(unit) => vec![self.func.body.constant_int(idx[1 - unit])],
            None => tiles.lead.iter().chain(idx).map(|&v| self.func.body.constant_int(v)).collect(),
        };
        let window = match tiles.vector_axis {
            Some(0) => vec![tiles.cols],
            Some(_) => vec![tiles.rows],
            None => {
                let mut window = vec![1; tiles.lead.len()];
                window.extend([tiles.rows, tiles.cols]);
                window
            }
        };
        consts.len() == tiles.global.shape.len()
            && tiles.global.shape.iter().zip(&consts).zip(&window).all(|((d, i), &w)| match (d, i) {
                (Dim::Static(n), Some(i)) => *i >= 0 && *i as u64 + w <= *n,
                _ => false,
            })
    }

    /// Records that the global tile's extent `axis` (its line length) must be a multiple of `access`
    /// elements, unless it is a static one that is; `why` ends the requirement's text ("16 bytes) for cp.async").
    /// `axis` is the slice's (0 or 1); the requirement names the global tile's axis it is (past the leading
    /// axes of a rank-reducing copy).
    pub(super) fn require_line_multiple(&mut self, tiles: &CopyTiles, axis: usize, access: u64, why: &str) {
        let Some(axis) = tiles.global_axis(axis) else { return };
        if access <= 1 || matches!(tiles.global.shape.get(axis), Some(Dim::Static(n)) if n % access == 0) {
            return;
        }
        let name = self.func.body.value(tiles.src).name.clone().map_or_else(|| "a global tile".to_string(), |n| format!("%{n}"));
        self.require_multiple(tiles.src, axis as i64, access);
        let lines = if tiles.global_col_major { format!("columns of {name} (column-major)") } else { format!("rows of {name}") };
        self.requirements.insert(format!("{lines} must be a multiple of {access} {} elements ({why}", tiles.global.elem));
    }

    /// The global tile's extents (rows, cols), or with `left`, what is left of them past the window's
    /// offset `idx`: what each access's in-tile (`left`) or global indices are checked against.
    ///
    /// A rank-reducing copy whose leading indices are outside the global tile gets a row bound of 0, so
    /// every access fails its row check (reads zeros): one `select` per copy, nothing per access.
    pub(super) fn window_bounds(&mut self, tiles: &CopyTiles, idx: &[Value], left: bool) -> [Value; 2] {
        // The axis a vector copy's 1-D global tile lacks has extent 1.
        let extents = [0, 1].map(|axis| match tiles.global_axis(axis) {
            Some(axis) => self.emit_value(typed::Dim { source: tiles.src, axis: axis as u32 }.into_spec().result(Type::INDEX)),
            None => self.index(1),
        });
        let mut bounds = if left { [0, 1].map(|axis| self.binary(BinaryArith::Sub, extents[axis], idx[axis])) } else { extents };
        if let Some(lead_ok) = self.leading_in_bounds(tiles.src, &tiles.lead) {
            let zero = self.index(0);
            bounds[0] = self.select(lead_ok, bounds[0], zero);
        }
        bounds
    }

    /// Whether the leading indices `lead` of a rank-reducing access to the global tile `src` are inside it
    /// (`lead[i] < extent i`), or `None` when there are none. Like the window's offsets, they are assumed
    /// non-negative.
    pub(super) fn leading_in_bounds(&mut self, src: Value, lead: &[Value]) -> Option<Value> {
        let mut ok = None;
        for (axis, &i) in lead.iter().enumerate() {
            let extent = self.emit_value(typed::Dim { source: src, axis: axis as u32 }.into_spec().result(Type::INDEX));
            let inside = self.cmp(CmpPredicate::Lt, i, extent);
            ok = Some(match ok {
                None => inside,
                Some(prev) => self.and(prev, inside),
            });
        }
        ok
    }

    /// A barrier before a copy when another warp may still touch what it touches ([`crate::analysis::barriers`]):
    /// before the first of consecutive copies when the shared tile may still be read by other warps (after a
    /// `tile.copy_s2r` of it, or, in a loop, one after the body's last barrier in the previous iteration:
    /// write after read), and before a copy out of a global tile that this block stored to
    /// (`tile.copy_r2g`) since the last barrier, in program order or across a loop's back edge (read after
    /// write: `bar.sync` orders global memory within the block too).
    pub(super) fn war_barrier(&mut self, tiles: &CopyTiles, first_of_run: bool) {
        use crate::analysis::barriers::{Effect, Pending};
        let mut pending = Pending::default();
        if first_of_run {
            pending.read_shared = self.read_shared.union(&self.carried.read_shared).copied().collect();
        }
        // A `tile.copy_r2s` of other warps into the tile since the last barrier: write after write.
        let shared_waw = first_of_run && self.shared_barriers && self.pending_shared_writes.contains(&tiles.dst);
        if self.global_barriers {
            pending.written_global = self.written_global.clone();
        }
        if shared_waw || pending.hazard(&[Effect::ReadGlobal(tiles.src), Effect::WriteShared(tiles.dst)]).is_some() {
            self.block_barrier();
        }
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
            let of = |x: Value| known_divisor(body, x, depth + 1);
            match AnyOp::from_op(body.op(op)) {
                Some(AnyOp::Constant(typed::Constant { value: Literal::Int(0) })) => CAP,
                Some(AnyOp::Constant(typed::Constant { value: Literal::Int(n) })) => (1u64 << n.unsigned_abs().trailing_zeros().min(20)).min(CAP),
                Some(
                    AnyOp::Add(typed::Add { lhs, rhs })
                    | AnyOp::Sub(typed::Sub { lhs, rhs })
                    | AnyOp::Min(typed::Min { lhs, rhs })
                    | AnyOp::Max(typed::Max { lhs, rhs }),
                ) => of(lhs).min(of(rhs)),
                Some(AnyOp::Mul(typed::Mul { lhs, rhs })) => of(lhs).saturating_mul(of(rhs)).min(CAP),
                _ => 1,
            }
        }
        tilec_ir::ValueDef::BlockArg { block, index: 0 } => match body.block(block).parent_op.and_then(|p| body.op(p).view::<typed::For>()) {
            Some(header) => known_divisor(body, header.lower, depth + 1).min(known_divisor(body, header.step, depth + 1)),
            _ => 1,
        },
        tilec_ir::ValueDef::BlockArg { .. } => 1,
    }
}
