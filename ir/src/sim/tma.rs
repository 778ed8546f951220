//! TMA, from the PTX ISA (`cp.async.bulk.tensor`, "Tensor Memory Access", "Tensor Swizzling Modes") and
//! `cuTensorMapEncodeTiled`'s documentation: `nvgpu.tma.async.load/store`, their bulk groups, and the
//! async-proxy fence.
//!
//! - A load copies the box at `coords` of the tensor map ([`crate::tma`]) into the destination tile: box
//!   element `k` (row-major over the box) goes to shared byte `swizzle(k * e)` from the tile's start, the
//!   swizzle mode's permutation of byte offsets (`tilec_layout::SwizzleMode`, `Swizzle<B, 4, 3>`), which is
//!   then read back through the tile's own layout: if the layout and the mode disagreed, the data would
//!   arrive permuted. Elements outside the tensor are zero (`CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE`). The copy
//!   lands at once, then completes the box's bytes on the mbarrier (its tx-count); for the race detector its
//!   writes belong to the async proxy, ordered only by a wait on the phase it completes. Its destination must
//!   not be read by a `nvgpu.warpgroup.mma` still in flight (any warpgroup's group not yet retired by a
//!   `wgmma.wait_group`): the tensor cores read their operands asynchronously until then.
//! - A store reads the source tile (through the swizzle) when issued and writes the box's elements that are
//!   inside the tensor; the source's bytes stay in use until a `nvgpu.tma.wait_group` of the issuing thread
//!   covers the store's bulk group (writing them before is [`SimError::AsyncHazard`]), and shared writes of
//!   the generic proxy it reads need a `nvgpu.fence.proxy.async` of the writing warp first.
//! - Hardware limits the launcher would hit are errors here too: a row pitch that is not a multiple of 16
//!   bytes, coordinates outside 32-bit integers, a swizzled tile not aligned to the mode's repeat.

use crate::body::Operation;
use crate::data::round_to;
use crate::layout::Layout;
use crate::ops::typed;
use crate::tma::{tensor_map_and_panels, TensorMap};
use super::error::{LaneMask, SimError};
use super::exec::{Ctx, Warp};
use super::memory::MemRef;
use super::race::RaceSpace;

fn error(warp: &Warp, ctx: &Ctx<'_>, op: &Operation, message: String) -> SimError {
    SimError::MBarrier { span: op.span, op: op.kind.name(), at: warp.place(ctx), message }
}

/// Where box element `k` is in a shared tile: its position in the tile's (logical row-major) data.
struct BoxPlacement {
    positions: Vec<usize>,
}

impl BoxPlacement {
    /// Box `panel` of a tile of shape `shape` (one box, or column panels one box each, consecutive in
    /// memory): its element `k` lands at byte `mode.byte_swizzle()(panel * box bytes + k * e)` of the tile
    /// (the swizzle is a function of the address; the tile starts at a multiple of its repeat, and so does
    /// each panel); the tile's layout says which element that byte belongs to.
    fn new(map: &TensorMap, layout: &Layout, shape: &[u64], panel: u64) -> Option<BoxPlacement> {
        let n: u64 = map.box_shape.iter().product();
        let e = u64::from(map.elem_bytes());
        let all: u64 = shape.iter().product();
        // The tile's own layout, inverted: physical element offset -> logical position.
        let mut by_physical = vec![usize::MAX; all as usize];
        let mut index = vec![0i64; shape.len()];
        for logical in 0..all as usize {
            let physical = layout.element_offset(shape, &index)?;
            *by_physical.get_mut(usize::try_from(physical).ok()?)? = logical;
            for axis in (0..shape.len()).rev() {
                index[axis] += 1;
                if (index[axis] as u64) < shape[axis] {
                    break;
                }
                index[axis] = 0;
            }
        }
        let swizzle = map.swizzle.byte_swizzle();
        let start = panel * map.box_bytes();
        let positions = (0..n)
            .map(|k| {
                let byte = u64::from(swizzle.apply(u32::try_from(start + k * e).ok()?));
                by_physical.get((byte / e) as usize).copied().filter(|&p| p != usize::MAX)
            })
            .collect::<Option<Vec<usize>>>()?;
        Some(BoxPlacement { positions })
    }
}

/// The position in the tensor's (logical row-major) data of box element `k` (row-major over the box, in the
/// map's axis order) of the box at `coords` (the map's order), or `None` when it is outside `shape` (the
/// tile's extents, in its own order). A transposed map's axes are the tile's in reverse.
fn global_index(map: &TensorMap, coords: &[i64], shape: &[usize], mut k: u64) -> Option<usize> {
    let tile_axes = map.tile_axes();
    let mut at = vec![0usize; shape.len()];
    let mut inside = true;
    for axis in (0..map.box_shape.len()).rev() {
        let i = (k % map.box_shape[axis]) as i64;
        k /= map.box_shape[axis];
        let g = coords[axis] + i;
        let t = tile_axes[axis];
        if g < 0 || g as usize >= shape[t] {
            inside = false;
        } else {
            at[t] = g as usize;
        }
    }
    inside.then(|| at.iter().zip(shape).fold(0usize, |flat, (&i, &n)| flat * n + i))
}

impl Warp {
    /// The tensor map, the number of boxes (column panels) of the shared tile, the global argument and the
    /// shared tile of a TMA op in `lane`, with the launch checks.
    fn tma_operands(
        &self,
        ctx: &Ctx<'_>,
        op: &Operation,
        (tensor, shared): (crate::body::Value, crate::body::Value),
        lane: u32,
    ) -> Result<(TensorMap, u64, usize, usize), SimError> {
        let (map, panels) = tensor_map_and_panels(ctx.func, tensor, shared).map_err(|m| error(self, ctx, op, m))?;
        let (MemRef::Global(g), MemRef::Shared(s)) = (self.mem(ctx, op, tensor, lane)?, self.mem(ctx, op, shared, lane)?) else {
            return Err(error(self, ctx, op, "the tensor must be global and the tile shared".into()));
        };
        let data = ctx.args[g].as_tile().ok_or_else(|| error(self, ctx, op, "the tensor has no data".into()))?;
        // cuTensorMapEncodeTiled: every global stride (the pitch of each axis but the innermost) a multiple of 16 bytes.
        // Memory order: the map's axes (a column-major tensor's axis 0 is contiguous).
        let mut pitch = u64::from(map.elem_bytes());
        let memory_order = map.tile_axes();
        for (i, &axis) in memory_order.iter().enumerate().rev() {
            if i + 1 < memory_order.len() && !pitch.is_multiple_of(16) {
                return Err(error(
                    self,
                    ctx,
                    op,
                    format!("the tensor's shape {:?} gives axis {axis} a pitch of {pitch} bytes; a tensor map needs multiples of 16", data.shape),
                ));
            }
            pitch *= data.shape.get(axis).copied().unwrap_or(1) as u64;
        }
        let base = ctx.shared.tiles[s].base;
        let align = map.swizzle.repeat_bytes().max(128);
        if !base.is_multiple_of(align) {
            return Err(error(
                self,
                ctx,
                op,
                format!("the shared tile starts at byte {base}; TMA with the {} swizzle needs a multiple of {align}", map.swizzle),
            ));
        }
        Ok((map, panels, g, s))
    }

    /// The lane's coordinates, each a 32-bit integer.
    fn tma_coords(&self, ctx: &Ctx<'_>, op: &Operation, coords: &[crate::body::Value], lane: u32) -> Result<Vec<i64>, SimError> {
        let coords = self.indices(ctx, op, coords, lane)?;
        if let Some(c) = coords.iter().find(|&&c| i32::try_from(c).is_err()) {
            return Err(error(self, ctx, op, format!("lane {lane}: coordinate {c} is not a 32-bit integer")));
        }
        Ok(coords)
    }

    /// `nvgpu.tma.async.load`.
    pub(super) fn tma_load(&mut self, ctx: &mut Ctx<'_>, op: &Operation, v: &typed::TmaAsyncLoad, mask: u32) -> Result<(), SimError> {
        for lane in self.predicated(ctx, op, v.predicate, mask)? {
            let (map, panels, g, s) = self.tma_operands(ctx, op, (v.tensor, v.dst), lane)?;
            let panel = u64::from(v.panel);
            if panel >= panels {
                return Err(error(self, ctx, op, format!("the load fills panel {panel} of a shared tile of {panels}")));
            }
            let coords = self.tma_coords(ctx, op, &v.coords, lane)?;
            let at = self.barrier(ctx, op, v.barriers, v.mbar_id, lane)?;
            let Some(phase) = ctx.mbarriers.state.get(&at).map(|b| b.phase()) else {
                return Err(error(self, ctx, op, format!("lane {lane}: the load completes on barrier {} before 'nvgpu.mbarrier.init' initialized it", at.1)));
            };
            let tile = &ctx.shared.tiles[s];
            let shape: Vec<u64> = tile.data.shape.iter().map(|&n| n as u64).collect();
            let placement = BoxPlacement::new(&map, &tile.layout, &shape, panel)
                .ok_or_else(|| error(self, ctx, op, "the shared tile's layout does not hold the box".into()))?;
            let start = tile.base + panel * map.box_bytes();
            let bytes = (start, start + map.box_bytes());
            if let Some(address) = ctx.shared.bulk_read_in(bytes) {
                return Err(SimError::AsyncHazard { span: op.span, op: op.kind.name(), at: self.place(ctx), lane, address });
            }
            // A wgmma group not yet retired by its warpgroup's `wait_group` may read the stage any time until
            // then: refilling it first races with the tensor cores (the ring must wait for the group first).
            self.check_not_in_flight(ctx, op, bytes)?;
            let src = ctx.args[g].as_tile().ok_or_else(|| error(self, ctx, op, "the tensor has no data".into()))?;
            let n: u64 = map.box_shape.iter().product();
            let values: Vec<f64> =
                (0..n).map(|k| global_index(&map, &coords, &src.shape, k).map_or(0.0, |i| src.values[i])).collect();
            let elem = map.elem;
            let data = &ctx.shared.tiles[s].data;
            let writes: Vec<(usize, bool)> =
                placement.positions.iter().zip(&values).map(|(&p, &x)| (p, data.values.get(p) == Some(&round_to(elem, x)))).collect();
            {
                let mut race = ctx.race.borrow_mut();
                let (agent, epoch) = race.async_agent(self.id, at, phase);
                let len = data.values.len();
                race.write_as(RaceSpace::Shared(s), len, writes, (agent, Some(epoch)), op.span, op.kind.name(), self.place(ctx))?;
            }
            let data = &mut ctx.shared.tiles[s].data;
            for (&p, x) in placement.positions.iter().zip(values) {
                if let Some(slot) = data.values.get_mut(p) {
                    *slot = round_to(elem, x);
                }
            }
            let completed = ctx.mbarriers.state.get_mut(&at).and_then(|b| b.complete_tx(map.box_bytes() as i64));
            if let Some(phase) = completed {
                ctx.race.borrow_mut().phase_completed(at, phase);
            }
        }
        Ok(())
    }

    /// `nvgpu.tma.async.store`.
    pub(super) fn tma_store(&mut self, ctx: &mut Ctx<'_>, op: &Operation, v: &typed::TmaAsyncStore, mask: u32) -> Result<(), SimError> {
        for lane in self.predicated(ctx, op, v.predicate, mask)? {
            let (map, panels, g, s) = self.tma_operands(ctx, op, (v.tensor, v.src), lane)?;
            if panels != 1 {
                return Err(error(self, ctx, op, format!("a TMA store writes one box; the shared tile holds {panels} column panels")));
            }
            let coords = self.tma_coords(ctx, op, &v.coords, lane)?;
            let tile = &ctx.shared.tiles[s];
            let placement = BoxPlacement::new(&map, &tile.layout, &map.box_shape, 0)
                .ok_or_else(|| error(self, ctx, op, "the shared tile's layout does not hold the box".into()))?;
            let bytes = (tile.base, tile.base + map.box_bytes());
            if let Some((warp, address)) = ctx.shared.unfenced_in(bytes) {
                return Err(error(
                    self,
                    ctx,
                    op,
                    format!("lane {lane}: the store reads shared byte {address}, which warp {warp} wrote through the generic proxy with no 'nvgpu.fence.proxy.async' after it"),
                ));
            }
            let len = tile.data.values.len();
            ctx.race.borrow_mut().read(RaceSpace::Shared(s), len, placement.positions.iter().copied(), self.id, op.span, op.kind.name(), self.place(ctx))?;
            let values: Vec<f64> = placement.positions.iter().map(|&p| tile.data.values[p]).collect();
            ctx.shared.bulk_issue((self.id * 32 + lane) as usize, bytes);
            let n: u64 = map.box_shape.iter().product();
            let (place, id) = (self.place(ctx), self.id);
            let super::SimArg::Tile(dst) = &mut ctx.args[g] else { return Err(error(self, ctx, op, "the tensor has no data".into())) };
            let elem = dst.elem;
            let writes: Vec<(usize, f64)> =
                (0..n).filter_map(|k| global_index(&map, &coords, &dst.shape, k).map(|i| (i, values[k as usize]))).collect();
            let race_writes = writes.iter().map(|&(i, x)| (i, dst.values.get(i) == Some(&round_to(elem, x))));
            ctx.race.borrow_mut().write(RaceSpace::Global(g), dst.values.len(), race_writes, id, op.span, op.kind.name(), place)?;
            for (i, x) in writes {
                dst.values[i] = round_to(elem, x);
            }
        }
        Ok(())
    }

    /// `nvgpu.tma.commit_group`, `nvgpu.tma.wait_group` (`wait = Some(numGroups)`).
    pub(super) fn tma_group(&mut self, ctx: &mut Ctx<'_>, wait: Option<u32>, mask: u32) {
        for lane in LaneMask(mask).lanes() {
            let thread = (self.id * 32 + lane) as usize;
            match wait {
                None => ctx.shared.bulk_commit(thread),
                Some(keep) => ctx.shared.bulk_wait(thread, keep as usize),
            }
        }
    }

    /// `nvgpu.fence.proxy.async`: this warp's generic-proxy shared writes so far are visible to the async proxy.
    pub(super) fn fence_proxy_async(&mut self, ctx: &mut Ctx<'_>) {
        ctx.shared.fence_proxy(self.id);
    }
}

/// Whether the kernel has a TMA store (the simulator then tracks generic-proxy shared writes for the fence
/// check).
pub(super) fn has_tma_store(func: &crate::body::Func) -> bool {
    func.body.any_op(func.entry, &mut |op| op.kind == crate::ops::OpKind::TmaAsyncStore)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ScalarType;
    use tilec_layout::{Swizzle, SwizzleMode};

    /// With the tile's layout the mode's own swizzle, box element (r, c) is read back at (r, c); with a
    /// row-major tile and the 128-byte mode, the 16-byte chunks of row r come out XOR-permuted by r % 8.
    #[test]
    fn box_lands_through_the_swizzle() {
        let map = TensorMap { arg: 0, elem: ScalarType::F16, rank: 2, box_shape: vec![8, 64], swizzle: SwizzleMode::B128, transposed: false };
        let matching = Layout::Swizzled { swizzle: Swizzle { bits: 3, base: 3, shift: 3 }, base: Box::new(Layout::RowMajor) };
        let p = BoxPlacement::new(&map, &matching, &[8, 64], 0).unwrap();
        assert!(p.positions.iter().enumerate().all(|(k, &pos)| k == pos));
        let p = BoxPlacement::new(&map, &Layout::RowMajor, &[8, 64], 0).unwrap();
        for r in 0..8usize {
            for c in 0..64usize {
                // 8 f16 per 16-byte chunk: chunk c / 8 moves to (c / 8) ^ r.
                let want = r * 64 + ((c / 8) ^ r) * 8 + c % 8;
                assert_eq!(p.positions[r * 64 + c], want, "r={r} c={c}");
            }
        }
    }

    /// A 16x128 f16 tile in wgmma's two 16x64 column panels (128-byte mode): box (r, c) of panel 1 is the
    /// tile's (r, 64 + c), and panel 0's box the tile's (r, c).
    #[test]
    fn panels_land_side_by_side() {
        // offset bits 0..6: column 1..32 in the panel; 6..10: row 1..8; bit 10: the second panel.
        let mut bases: Vec<Vec<u32>> = (0..6).map(|i| vec![0, 1 << i]).collect();
        bases.extend((0..4).map(|i| vec![1 << i, 0]));
        bases.push(vec![0, 64]);
        let panels = tilec_layout::LinearLayout::new([("offset", bases)], [("row", 16), ("col", 128)]).unwrap();
        let layout = Layout::Swizzled { swizzle: Swizzle { bits: 3, base: 3, shift: 3 }, base: Box::new(Layout::Linear(panels)) };
        let map = TensorMap { arg: 0, elem: ScalarType::F16, rank: 2, box_shape: vec![16, 64], swizzle: SwizzleMode::B128, transposed: false };
        for panel in 0..2u64 {
            let p = BoxPlacement::new(&map, &layout, &[16, 128], panel).unwrap();
            for r in 0..16usize {
                for c in 0..64usize {
                    assert_eq!(p.positions[r * 64 + c], r * 128 + panel as usize * 64 + c, "panel {panel} r={r} c={c}");
                }
            }
        }
    }

    #[test]
    fn out_of_bounds_elements_have_no_global_index() {
        // A 4x8 box at (-1, 6) of a 3x10 tensor: rows -1 and 3 are outside, columns 10.. too.
        let map = TensorMap { arg: 0, elem: ScalarType::F16, rank: 2, box_shape: vec![4, 8], swizzle: SwizzleMode::None, transposed: false };
        let shape = [3usize, 10];
        assert_eq!(global_index(&map, &[-1, 6], &shape, 0), None);
        assert_eq!(global_index(&map, &[-1, 6], &shape, 8), Some(6)); // (0, 6)
        assert_eq!(global_index(&map, &[-1, 6], &shape, 8 + 3), Some(9)); // (0, 9)
        assert_eq!(global_index(&map, &[-1, 6], &shape, 8 + 4), None); // (0, 10)
        assert_eq!(global_index(&map, &[-1, 6], &shape, 3 * 8), Some(2 * 10 + 6));
    }

    /// A transposed map over a 10x3 column-major tensor (K = 10 contiguous, N = 3): the box is 4 (n) x 8 (k)
    /// at (n, k) = (-1, 6); box element (i, j) is the tensor's (k, n) = (6 + j, -1 + i), at logical
    /// row-major position k * 3 + n.
    #[test]
    fn transposed_maps_swap_the_axes() {
        let map = TensorMap { arg: 0, elem: ScalarType::I8, rank: 2, box_shape: vec![4, 8], swizzle: SwizzleMode::None, transposed: true };
        let shape = [10usize, 3];
        assert_eq!(global_index(&map, &[-1, 6], &shape, 0), None); // n = -1
        assert_eq!(global_index(&map, &[-1, 6], &shape, 8), Some(6 * 3)); // (k 6, n 0)
        assert_eq!(global_index(&map, &[-1, 6], &shape, 8 + 3), Some(9 * 3)); // (k 9, n 0)
        assert_eq!(global_index(&map, &[-1, 6], &shape, 8 + 4), None); // k = 10
        assert_eq!(global_index(&map, &[-1, 6], &shape, 3 * 8), Some(6 * 3 + 2)); // (k 6, n 2)
        assert_eq!(global_index(&map, &[-1, 6], &shape, 4 * 8), None); // n = 3
    }

    /// A 128x16 int8 column-major tile in the 128-byte mode (`#swizzle<3, 4, 3, #col_major>`: wgmma's K-major
    /// B): the transposed map's box is 16 (n) x 128 (k), and box element (n, k) must be read back as the
    /// tile's (k, n), at logical position k * 16 + n; with plain `#col_major` the 16-byte chunks of column n
    /// come out XOR-permuted by n % 8.
    #[test]
    fn transposed_box_lands_in_a_k_major_tile() {
        let map = TensorMap { arg: 0, elem: ScalarType::I8, rank: 2, box_shape: vec![16, 128], swizzle: SwizzleMode::B128, transposed: true };
        let layout = Layout::Swizzled { swizzle: Swizzle { bits: 3, base: 4, shift: 3 }, base: Box::new(Layout::ColMajor) };
        let p = BoxPlacement::new(&map, &layout, &[128, 16], 0).unwrap();
        let plain = BoxPlacement::new(&map, &Layout::ColMajor, &[128, 16], 0).unwrap();
        for n in 0..16usize {
            for k in 0..128usize {
                assert_eq!(p.positions[n * 128 + k], k * 16 + n, "n={n} k={k}");
                let moved = ((k / 16) ^ (n % 8)) * 16 + k % 16;
                assert_eq!(plain.positions[n * 128 + k], moved * 16 + n, "plain n={n} k={k}");
            }
        }
    }
}
