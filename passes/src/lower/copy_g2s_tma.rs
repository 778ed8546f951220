//! `tile.copy_g2s` → TMA loads (sm_90a, issue 18): one `nvgpu.tma.async.load` per box of the window (one for
//! a tile TMA writes as one box; one per column panel, `{panel = p}`, for a wgmma operand in column panels,
//! such as a 32x128 f16 B as two 32x64 boxes), issued by thread 0, completing on an mbarrier, instead of every
//! thread's cp.async chunks.
//!
//! # When
//! The kernel attribute `copy_g2s` (`"tma"` / `"cp_async"`); without it TMA on sm_90a wherever it is legal,
//! else cp.async with a remark saying why ([`Lowering::tma_illegal`], the one definition of legality; an
//! explicit `"tma"` where it is not legal is an error at the copy). Legal: a rank-2 row-major global tile that
//! is a kernel argument, into a `tile.alloc_shared` tile whose layout TMA writes as boxes
//! ([`tilec_ir::tma::tma_boxes`]: row-major, a swizzle mode whose span is the row, or column panels one span
//! wide under their mode), or a column-major global tile into a column-major shared tile, the transpose of
//! one of those (the map is over the transposed view, K contiguous: the K-major B of an 8-bit wgmma; its
//! coordinates are (column, row)), rows (columns) aligned to 16
//! bytes (`global_alignment` 16, the default: the launch-time variant with narrower rows keeps cp.async,
//! [`crate::lower::GLOBAL_ALIGNMENT_ATTR`]), and at most one enclosing `tile.for` (the mbarrier's phase parity
//! follows from its induction variable). Edges need nothing: TMA zero-fills the part of the box outside the
//! tensor and reads nothing there, so the masked copies go.
//!
//! # What (one run of consecutive copies)
//! One mbarrier per run (`nvgpu.mbarrier.create`, initialised for one arrival by thread 0 at the top of the
//! kernel, then a barrier). Before the run's first TMA load, thread 0 does `arrive.expect_tx` with the run's
//! total box bytes (every panel's of every copy); each TMA copy is one load per box by thread 0, panel `p` at
//! the map's inner coordinate plus `p * panel width`; after the run every thread waits with
//! `try_wait.parity` on the use's parity (0 outside loops; `((k - lb) / step) % 2` in a loop: the phase
//! flips once per iteration), then the run's barrier as for cp.async (it is also what `software-pipeline`
//! matches and replaces by its mbarrier ring). cp.async copies of the same run keep their group and wait.

use tilec_ir::ops::kernel::CopyG2SMode;
use tilec_ir::ops::CmpPredicate;
use tilec_ir::tma::{tensor_map_and_panels, tensor_map_of};
use tilec_ir::{typed, Diagnostic, Dim, MemorySpace, OpId, OpKind, ScalarType, Target, TypedOp, Value};

use super::copy_g2s::CopyTiles;
use super::Lowering;
use crate::kernel_attrs::kernel_attrs;
use tilec_ir::ops::BinaryArith;

/// The suspend-time hint of the waits, in ns (as CUTLASS's `ClusterBarrier::wait`).
const WAIT_TICKS: i64 = 1_000_000;

/// The mbarrier of the run of copies being lowered.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TmaRun {
    /// `tile<1 x index, shared>`.
    pub barriers: Value,
    /// Box bytes of the run's TMA loads.
    pub bytes: u64,
    /// Whether the `arrive.expect_tx` has been emitted.
    pub announced: bool,
    /// Whether some copy of the run is a cp.async (or synchronous) one.
    pub any_async: bool,
}

impl Lowering<'_> {
    /// Why the copy `id` cannot be a TMA load here, or `None` when it can.
    pub(super) fn tma_illegal(&mut self, id: OpId, tiles: &CopyTiles) -> Result<Option<String>, Diagnostic> {
        if self.target != Target::Sm90a {
            return Ok(Some(format!("TMA needs --target sm_90a, not {}", self.target)));
        }
        if tiles.vector_axis.is_some() || !tiles.lead.is_empty() {
            return Ok(Some("TMA copies here only 2-D windows of rank-2 global tiles".into()));
        }
        if tiles.col_major != tiles.global_col_major {
            return Ok(Some("TMA does not transpose: the global and the shared tile must both be row-major or both column-major".into()));
        }
        let align = self.global_alignment(tiles.src)?;
        let (lines, lines_of) =
            if tiles.global_col_major { ("columns", "columns of the column-major global tile") } else { ("rows", "rows of the global tile") };
        if align < 16 {
            return Ok(Some(format!("global_alignment = {align}: TMA needs {lines} of a multiple of 16 bytes")));
        }
        let elem_bytes = u64::from(tiles.global.elem.bit_width() / 8);
        // The contiguous axis: its extent in bytes is the pitch of the other, which a tensor map needs to be a
        // multiple of 16 bytes.
        let contiguous = usize::from(!tiles.global_col_major);
        if let Some(Dim::Static(n)) = tiles.global.shape.get(contiguous) {
            if !(n * elem_bytes).is_multiple_of(16) {
                return Ok(Some(format!(
                    "the {lines_of} are {} bytes ({n} x {}), a pitch a tensor map cannot express: TMA needs a multiple of 16 bytes",
                    n * elem_bytes,
                    tiles.global.elem
                )));
            }
        }
        if let Err(why) = tensor_map_of(self.func, tiles.src, tiles.dst) {
            return Ok(Some(why));
        }
        // The phase parity of the mbarrier's uses: known outside loops and in one loop level.
        let mut loops = 0;
        let mut block = self.func.body.op(id).parent;
        while let Some(b) = block {
            let Some(parent) = self.func.body.block(b).parent_op else { break };
            if self.func.body.op(parent).kind != OpKind::For {
                return Ok(Some(format!("the copy is inside '{}'", self.func.body.op(parent).kind.name())));
            }
            loops += 1;
            block = self.func.body.op(parent).parent;
        }
        if loops > 1 {
            return Ok(Some("the copy is in nested loops (its mbarrier's phase is tracked in one loop level)".into()));
        }
        Ok(None)
    }

    /// Whether copy `id` becomes a TMA load: the kernel's `copy_g2s` attribute and [`Lowering::tma_illegal`];
    /// an error for `copy_g2s = "tma"` where it is illegal, a remark where the default falls back.
    pub(super) fn use_tma(&mut self, id: OpId, tiles: &CopyTiles) -> Result<bool, Diagnostic> {
        let mode = kernel_attrs(self.func)?.copy_g2s;
        if mode == Some(CopyG2SMode::CpAsync) {
            return Ok(false);
        }
        let why = self.tma_illegal(id, tiles)?;
        let span = self.func.body.op(id).span;
        match (mode, why) {
            (_, None) => Ok(true),
            // A narrower global_alignment is the launch-time variant for rows TMA cannot address: cp.async there.
            (Some(CopyG2SMode::Tma), Some(why)) if !why.starts_with("global_alignment") => Err(Diagnostic::error(
                span,
                format!("copy_g2s = \"tma\": this 'tile.copy_g2s' cannot be a TMA load: {why}"),
            )
            .with_note("set copy_g2s = \"cp_async\", or leave it out for TMA wherever it is legal")),
            (_, Some(why)) => {
                if self.target == Target::Sm90a {
                    // What the copy becomes instead: cp.async, or synchronous loads (a narrow
                    // global_alignment, or a thin tile with less than one chunk per thread: a bias row).
                    let synchronous = self.chunk_plan(id, tiles).is_ok_and(|p| !p.asynchronous);
                    let how = if synchronous { "synchronous loads (ld.global)" } else { "cp.async" };
                    self.remarks.push((span, format!("copy_g2s: {how}, not TMA: {why}")));
                }
                Ok(false)
            }
        }
    }

    /// Before the first copy of a run (`run`): decides which copies are TMA loads (remembered in
    /// `tma_copies`) and, when some are, makes the run's mbarrier.
    pub(super) fn start_tma_run(&mut self, run: &[OpId]) -> Result<(), Diagnostic> {
        let mut boxes = Vec::new();
        for &id in run {
            let b = self.tma_box_bytes(id)?;
            if b.is_some() {
                self.tma_copies.insert(id);
            }
            boxes.push(b);
        }
        let bytes: u64 = boxes.iter().flatten().sum();
        let any_async = boxes.iter().any(Option::is_none);
        if boxes.iter().all(Option::is_none) {
            self.tma_run = None;
            return Ok(());
        }
        let barriers = self.hoist_value(typed::MBarrierCreate {}.into_spec().result(tilec_ir::TileType::new(&[1], ScalarType::Index, MemorySpace::Shared)));
        let zero = self.index(0);
        let one = self.index(1);
        let first = self.elected();
        self.hoist_op(typed::MBarrierInit { barriers, mbar_id: zero, count: one, predicate: Some(first) }.into_spec());
        self.hoist_op(typed::Barrier {}.into_spec());
        self.tma_run = Some(TmaRun { barriers, bytes, announced: false, any_async });
        Ok(())
    }

    /// Thread 0, the thread that issues the TMA loads, as `warp_id == 0 && elect_sync` (hoisted, once, at the
    /// top of the kernel where every lane runs): the same thread as `tid == 0`, but ptxas knows that one lane
    /// issues what the elected predicate guards, so a TMA load is one instruction; under `tid == 0` it loops
    /// over the warp's active lanes, moving each one's operands into uniform registers, which cost
    /// gemm_s8_128 (mma.sync, 255 registers) ~400 bytes of spills on sm_90a.
    pub(super) fn elected(&mut self) -> Value {
        if let Some(v) = self.elected {
            return v;
        }
        let warp = self.warp_id();
        let zero = self.index(0);
        let warp0 = self.hoist_value(typed::Cmp { lhs: warp, rhs: zero, predicate: CmpPredicate::Eq }.into_spec().result(ScalarType::I1));
        let lane = self.hoist_value(typed::ElectSync {}.into_spec().result(ScalarType::I1));
        let v = self.hoisted_binary(BinaryArith::Min, warp0, lane);
        self.elected = Some(v);
        v
    }

    /// The copy as TMA loads by thread 0, one per box (after the run's `arrive.expect_tx`).
    pub(super) fn lower_copy_g2s_tma(&mut self, tiles: &CopyTiles, first_of_run: bool) -> Result<(), Diagnostic> {
        let Some(run) = self.tma_run else { return Err(Diagnostic::error(self.span, "internal: a TMA copy outside a run")) };
        self.war_barrier(tiles, first_of_run);
        // The tensor map's row pitch must be a multiple of 16 bytes (checked at launch, as for cp.async).
        let elem_bytes = u64::from(tiles.global.elem.bit_width() / 8);
        self.require_line_multiple(tiles, usize::from(!tiles.global_col_major), 16 / elem_bytes, "16 bytes) for TMA");
        let zero = self.index(0);
        let first = self.elected();
        if !run.announced {
            let bytes = self.index(run.bytes as i64);
            self.emit(typed::MBarrierArriveExpectTx { barriers: run.barriers, mbar_id: zero, txcount: bytes, predicate: Some(first) }.into_spec());
            self.tma_run = Some(TmaRun { announced: true, ..run });
        }
        let (map, panels) = tensor_map_and_panels(self.func, tiles.src, tiles.dst).map_err(|why| Diagnostic::error(self.span, format!("internal: a TMA copy without a tensor map: {why}")))?;
        let (&[row, col], Some(&panel_cols)) = (tiles.indices.as_slice(), map.box_shape.last()) else {
            return Err(Diagnostic::error(self.span, "internal: a TMA copy of a window that is not 2-D"));
        };
        // The map's axis order: a column-major tensor's map is over its transpose (column, row).
        let (outer, inner) = if map.transposed { (col, row) } else { (row, col) };
        for panel in 0..panels {
            let inner = if panel == 0 {
                inner
            } else {
                let offset = self.index((panel * panel_cols) as i64);
                self.binary(BinaryArith::Add, inner, offset)
            };
            let load = typed::TmaAsyncLoad {
                tensor: tiles.src,
                coords: vec![outer, inner],
                barriers: run.barriers,
                mbar_id: zero,
                dst: tiles.dst,
                predicate: Some(first),
                panel: panel as u32,
            };
            self.emit(load.into_spec());
        }
        Ok(())
    }

    /// After the run's last copy: every thread waits for the run's mbarrier phase.
    pub(super) fn finish_tma_run(&mut self) {
        let Some(run) = self.tma_run.take() else { return };
        let parity = self.use_parity();
        let zero = self.index(0);
        let ticks = self.index(WAIT_TICKS);
        self.emit(typed::MBarrierTryWaitParity { barriers: run.barriers, mbar_id: zero, phase_parity: parity, ticks }.into_spec());
    }

    /// The parity of the phase this use of the run's mbarrier completes: 0 outside loops, the parity of the
    /// iteration's number in a loop (`((k - lb) / step) % 2 != 0`).
    fn use_parity(&mut self) -> Value {
        let parent = self.func.body.op(self.at).parent.and_then(|b| self.func.body.block(b).parent_op);
        let header = parent.and_then(|p| self.func.body.op(p).view::<typed::For>().map(|h| (p, h)));
        let Some((l, header)) = header else { return self.bool_const(false) };
        let iv = self.func.body.block(self.func.body.op(l).regions[0]).args[0];
        let two = self.index(2);
        let zero = self.index(0);
        let from = self.binary(BinaryArith::Sub, iv, header.lower);
        let n = self.binary(BinaryArith::Div, from, header.step);
        let r = self.binary(BinaryArith::Rem, n, two);
        self.cmp(CmpPredicate::Ne, r, zero)
    }

    /// Box bytes of copy `id` when it becomes a TMA load, `None` for cp.async.
    pub(super) fn tma_box_bytes(&mut self, id: OpId) -> Result<Option<u64>, Diagnostic> {
        let tiles = self.copy_tiles(id)?;
        if !self.use_tma(id, &tiles)? {
            return Ok(None);
        }
        let (map, panels) = tensor_map_and_panels(self.func, tiles.src, tiles.dst).map_err(|why| Diagnostic::error(self.span, format!("internal: a TMA copy without a tensor map: {why}")))?;
        Ok(Some(map.box_bytes() * panels))
    }
}

/// Ops of a run of consecutive `tile.copy_g2s` starting at `id` in its block.
pub(super) fn copy_run(func: &tilec_ir::Func, id: OpId) -> Vec<OpId> {
    let Some(block) = func.body.op(id).parent else { return vec![id] };
    let ops = &func.body.block(block).ops;
    let start = ops.iter().position(|&o| o == id).unwrap_or(0);
    ops[start..].iter().copied().take_while(|&o| func.body.op(o).kind == OpKind::CopyG2S).collect()
}
