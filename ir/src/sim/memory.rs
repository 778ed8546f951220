//! The memories a thread block sees: the kernel's global tiles (the caller's [`TensorData`]), the block's
//! shared tiles laid out in one shared address space, and the asynchronous copies (`cp.async`) in flight.
//!
//! Addresses: global tiles start at 256-byte aligned addresses (as `cudaMalloc` gives); shared tiles are
//! placed in the order their `tile.alloc_shared` ops appear in the kernel, each at a 128-byte aligned
//! offset. Alignment checks use these addresses.
//!
//! Storage order: a tile's data is held in logical row-major order (the caller's [`TensorData`]), but an
//! access of several elements (a vector load or store, an `ldmatrix` row, a `cp.async`) moves elements that
//! are consecutive *in memory*, as the hardware does: along the layout's contiguous axis (the last axis of a
//! row-major tile, the first of a rank-2 `#col_major` one). Byte addresses are the layout's physical
//! offsets, from the one definition of a memory layout's offset map (`tilec_layout::Layout::offset_with`,
//! which the backends emit as IR), swizzles included: an access starts at its first element's physical
//! offset and runs on consecutively (a swizzle moves whole `2^M`-element chunks; the backends require
//! `2^M >=` the access, and alignment keeps it inside one chunk). So alignment and pending-copy checks see
//! the addresses the GPU sees.

use std::collections::VecDeque;

use crate::body::{Func, OpId};
use crate::data::{round_to, TensorData};
use crate::diag::Span;
use crate::shared_memory::place_shared_allocations;
use crate::layout::Layout;
use crate::types::TileType;

use super::error::SimError;

/// Shared memory of one block on the largest target (sm_90: 227 KiB usable per block).
pub const SHARED_MEMORY_LIMIT: u64 = crate::shared_memory::MAX_SHARED_BYTES;

/// A memory operand: which tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MemRef {
    /// The kernel argument with this index.
    Global(usize),
    /// The shared tile with this index (in `BlockShared::tiles`).
    Shared(usize),
}

/// One shared tile.
#[derive(Clone, Debug)]
pub(super) struct SharedTile {
    pub op: OpId,
    /// Byte address in the block's shared memory.
    pub base: u64,
    /// Its memory layout (see [`storage_layout`]).
    pub layout: Layout,
    pub data: TensorData,
}

/// The memory layout a tile is stored with: its layout, or row-major (a tile without one, or whose layout is
/// not a memory layout).
pub(super) fn storage_layout(ty: Option<&TileType>) -> &Layout {
    static ROW_MAJOR: Layout = Layout::RowMajor;
    match ty.and_then(|t| t.layout.as_ref()) {
        Some(l) if l.is_memory_layout() => l,
        _ => &ROW_MAJOR,
    }
}

/// Where the elements of one access are: element `k` of it is `data.values[start + k * stride]` (the tile's
/// data is logically row-major), and its storage offset is `physical + k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Run {
    pub start: usize,
    pub stride: usize,
    pub physical: usize,
}

impl Run {
    /// The positions in the tile's (logical row-major) data of the `count` elements of the access.
    pub fn positions(self, count: usize) -> impl Iterator<Item = usize> {
        (0..count).map(move |k| self.start + k * self.stride)
    }
}

/// The static layout of the kernel's shared tiles: one per `tile.alloc_shared` op, in program order.
#[derive(Clone, Debug)]
pub(super) struct SharedLayout {
    pub tiles: Vec<SharedTile>,
    pub bytes: u64,
}

impl SharedLayout {
    pub fn new(func: &Func) -> Result<SharedLayout, SimError> {
        // The placement every backend and analysis uses (`tilec_ir::shared_memory`).
        let mut tiles = Vec::new();
        let mut next = 0u64;
        for placed in place_shared_allocations(func) {
            let o = func.body.op(placed.op);
            let Some(t) = placed.tile else {
                return Err(SimError::Unsupported { span: o.span, op: "tile.alloc_shared", reason: "it must produce a shared tile".into() });
            };
            let Some(shape) = t.static_shape() else {
                return Err(SimError::Unsupported { span: o.span, op: "tile.alloc_shared", reason: "its shape must be static".into() });
            };
            next = placed.end();
            if next > SHARED_MEMORY_LIMIT {
                return Err(SimError::SharedMemoryExceeded { span: o.span, bytes: next, limit: SHARED_MEMORY_LIMIT });
            }
            let shape: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
            tiles.push(SharedTile { op: placed.op, base: placed.offset, layout: storage_layout(Some(t)).clone(), data: TensorData::zeros(&shape, t.elem) });
        }
        Ok(SharedLayout { tiles, bytes: next })
    }
}

/// A copy issued by `nvgpu.device_async_copy` that has not landed yet.
#[derive(Clone, Debug)]
pub(super) struct PendingCopy {
    pub tile: usize,
    /// Where the destination elements are in the tile's data.
    pub run: Run,
    /// The values read from global memory, zero-filled past `src_elements`.
    pub values: Vec<f64>,
    /// Byte range in shared memory.
    pub bytes: (u64, u64),
    /// The copy op, for the race detector (the write it reports happens when the copy lands).
    pub span: Span,
}

/// A copy that landed: which elements of which shared tile it wrote.
#[derive(Clone, Debug)]
pub(super) struct Landed {
    pub tile: usize,
    pub run: Run,
    pub count: usize,
    pub span: Span,
    /// For each element written, whether it already held the value the copy wrote.
    pub same_value: Vec<bool>,
}

/// One thread's asynchronous copies: those not yet committed, and the committed groups, oldest first.
#[derive(Clone, Debug, Default)]
pub(super) struct ThreadCopies {
    pub open: Vec<PendingCopy>,
    pub groups: VecDeque<Vec<PendingCopy>>,
}

/// A byte range `[start, end)` of shared memory.
type ByteRange = (u64, u64);

/// One thread's TMA stores whose shared source is still being read: those not yet committed, and the
/// committed bulk async-groups, oldest first.
type BulkGroups = (Vec<ByteRange>, VecDeque<Vec<ByteRange>>);

/// Shared memory of one block plus the asynchronous copies in flight.
#[derive(Clone, Debug)]
pub(super) struct BlockShared {
    pub tiles: Vec<SharedTile>,
    /// For each byte of shared memory, how many pending copies write it.
    pending: Vec<u16>,
    pub copies: Vec<ThreadCopies>,
    /// For each byte, how many TMA stores not yet waited for still read it.
    bulk_reading: Vec<u16>,
    /// Per thread: the byte ranges its TMA stores read, not yet committed, and the committed bulk groups.
    bulk: Vec<BulkGroups>,
    /// Whether generic-proxy shared writes are tracked for the async-proxy fence (kernels with TMA stores).
    pub track_generic_writes: bool,
    /// Per warp, the shared byte ranges it wrote through the generic proxy since its last
    /// `fence.proxy.async`.
    unfenced: Vec<Vec<(u64, u64)>>,
    /// Per tile, from a physical element offset to the element's position in the (row-major) data: built
    /// when wgmma first reads the tile by address.
    inverse: Vec<Option<Vec<usize>>>,
    /// The `nvgpu.warpgroup.mma`s each warpgroup issued, by (warpgroup, issue number): descriptors and shape,
    /// as the first of its warps issued them (the others must issue the same).
    pub wgmma_issues: std::collections::HashMap<(u32, u64), (u64, u64, [u32; 3])>,
    /// For each byte, how many `nvgpu.warpgroup.mma`s in flight (issued, not yet retired by a wait) read it:
    /// the hardware may read it any time until then, so no one may write it.
    async_reads: Vec<u16>,
}

impl BlockShared {
    pub fn new(layout: &SharedLayout, threads: usize) -> BlockShared {
        BlockShared {
            tiles: layout.tiles.clone(),
            pending: vec![0; layout.bytes as usize],
            copies: vec![ThreadCopies::default(); threads],
            bulk_reading: vec![0; layout.bytes as usize],
            bulk: vec![Default::default(); threads],
            track_generic_writes: false,
            unfenced: vec![Vec::new(); threads.div_ceil(32)],
            inverse: vec![None; layout.tiles.len()],
            wgmma_issues: std::collections::HashMap::new(),
            async_reads: vec![0; layout.bytes as usize],
        }
    }

    /// A wgmma in flight reads `[start, end)` (`add`), or has retired (`!add`).
    pub fn async_read(&mut self, (start, end): (u64, u64), add: bool) {
        for b in start..end {
            if let Some(n) = self.async_reads.get_mut(b as usize) {
                *n = if add { n.saturating_add(1) } else { n.saturating_sub(1) };
            }
        }
    }

    /// The first byte in `[start, end)` that a wgmma in flight reads.
    pub fn async_read_in(&self, (start, end): (u64, u64)) -> Option<u64> {
        (start..end).find(|&b| self.async_reads.get(b as usize).is_some_and(|&n| n > 0))
    }

    /// The first byte in `[start, end)` that a TMA store not yet waited for reads, if any.
    pub fn bulk_read_in(&self, (start, end): (u64, u64)) -> Option<u64> {
        (start..end).find(|&b| self.bulk_reading.get(b as usize).is_some_and(|&n| n > 0))
    }

    /// A TMA store of `thread` reads `bytes` until a wait covers it.
    pub fn bulk_issue(&mut self, thread: usize, bytes: (u64, u64)) {
        for b in bytes.0..bytes.1 {
            if let Some(n) = self.bulk_reading.get_mut(b as usize) {
                *n = n.saturating_add(1);
            }
        }
        self.bulk[thread].0.push(bytes);
    }

    /// `cp.async.bulk.commit_group`.
    pub fn bulk_commit(&mut self, thread: usize) {
        let open = std::mem::take(&mut self.bulk[thread].0);
        self.bulk[thread].1.push_back(open);
    }

    /// `cp.async.bulk.wait_group keep`: the oldest groups until at most `keep` are pending are done.
    pub fn bulk_wait(&mut self, thread: usize, keep: usize) {
        while self.bulk[thread].1.len() > keep {
            for (start, end) in self.bulk[thread].1.pop_front().unwrap_or_default() {
                for b in start..end {
                    if let Some(n) = self.bulk_reading.get_mut(b as usize) {
                        *n = n.saturating_sub(1);
                    }
                }
            }
        }
    }

    /// A generic-proxy write of `bytes` by `warp` (recorded only when [`BlockShared::track_generic_writes`]).
    pub fn generic_write(&mut self, warp: u32, bytes: (u64, u64)) {
        if self.track_generic_writes {
            if let Some(list) = self.unfenced.get_mut(warp as usize) {
                list.push(bytes);
            }
        }
    }

    /// `fence.proxy.async` by `warp`.
    pub fn fence_proxy(&mut self, warp: u32) {
        if let Some(list) = self.unfenced.get_mut(warp as usize) {
            list.clear();
        }
    }

    /// A warp with an unfenced generic write into `[start, end)`, and the first such byte.
    pub fn unfenced_in(&self, (start, end): (u64, u64)) -> Option<(u32, u64)> {
        self.unfenced.iter().enumerate().find_map(|(w, list)| {
            list.iter().find(|&&(s, e)| s < end && start < e).map(|&(s, _)| (w as u32, s.max(start)))
        })
    }

    /// The position in tile `tile`'s data of the element at physical offset `physical`.
    pub fn logical_position(&mut self, tile: usize, physical: usize) -> Option<usize> {
        if self.inverse.get(tile)?.is_none() {
            let t = &self.tiles[tile];
            let shape: Vec<u64> = t.data.shape.iter().map(|&n| n as u64).collect();
            let n = t.data.values.len();
            let mut inverse = vec![usize::MAX; n];
            let mut index = vec![0i64; shape.len()];
            for position in 0..n {
                let mut rest = position;
                for axis in (0..shape.len()).rev() {
                    index[axis] = (rest % shape[axis] as usize) as i64;
                    rest /= shape[axis] as usize;
                }
                let p = t.layout.element_offset(&shape, &index).and_then(|p| usize::try_from(p).ok());
                if let Some(slot) = p.and_then(|p| inverse.get_mut(p)) {
                    *slot = position;
                }
            }
            self.inverse[tile] = Some(inverse);
        }
        self.inverse[tile].as_ref()?.get(physical).copied().filter(|&p| p != usize::MAX)
    }

    /// The first byte in `[start, end)` that a pending copy writes, if any.
    pub fn pending_in(&self, (start, end): (u64, u64)) -> Option<u64> {
        (start..end).find(|&b| self.pending.get(b as usize).is_some_and(|&n| n > 0))
    }

    pub fn issue(&mut self, thread: usize, copy: PendingCopy) {
        for b in copy.bytes.0..copy.bytes.1 {
            if let Some(n) = self.pending.get_mut(b as usize) {
                *n = n.saturating_add(1);
            }
        }
        self.copies[thread].open.push(copy);
    }

    pub fn commit(&mut self, thread: usize) {
        let open = std::mem::take(&mut self.copies[thread].open);
        self.copies[thread].groups.push_back(open);
    }

    /// Lands the thread's oldest groups until at most `keep` committed groups are pending; returns what landed.
    pub fn wait(&mut self, thread: usize, keep: usize) -> Vec<Landed> {
        let mut landed = Vec::new();
        while self.copies[thread].groups.len() > keep {
            if let Some(group) = self.copies[thread].groups.pop_front() {
                for copy in group {
                    let data = &self.tiles[copy.tile].data;
                    let same_value =
                        copy.run.positions(copy.values.len()).zip(&copy.values).map(|(i, &v)| data.values.get(i) == Some(&round_to(data.elem, v))).collect();
                    landed.push(Landed { tile: copy.tile, run: copy.run, count: copy.values.len(), span: copy.span, same_value });
                    self.land(thread, copy);
                }
            }
        }
        landed
    }

    /// Lands every copy still in flight (at the end of the block: the hardware would complete them too).
    pub fn drain(&mut self) {
        for thread in 0..self.copies.len() {
            self.commit(thread);
            let _ = self.wait(thread, 0);
            self.bulk_commit(thread);
            self.bulk_wait(thread, 0);
        }
    }

    fn land(&mut self, thread: usize, copy: PendingCopy) {
        self.generic_write((thread / 32) as u32, copy.bytes);
        for b in copy.bytes.0..copy.bytes.1 {
            if let Some(n) = self.pending.get_mut(b as usize) {
                *n = n.saturating_sub(1);
            }
        }
        let data = &mut self.tiles[copy.tile].data;
        let count = copy.values.len();
        for (i, v) in copy.run.positions(count).zip(copy.values) {
            if let Some(slot) = data.values.get_mut(i) {
                *slot = round_to(data.elem, v);
            }
        }
    }
}

/// Where an access of `count` elements starting at `index` is, in a tile of `shape` stored with the memory
/// layout `layout`: `None` unless every coordinate is inside and the `count` elements stay inside the
/// layout's contiguous axis.
pub(super) fn locate(shape: &[usize], layout: &Layout, index: &[i64], count: usize) -> Option<Run> {
    if index.len() != shape.len() || shape.is_empty() {
        return None;
    }
    let inside = |axis: usize| {
        let (i, n) = (index[axis], shape[axis]);
        i >= 0 && (i as usize) < n
    };
    if !(0..shape.len()).all(inside) {
        return None;
    }
    let axis = layout.contiguous_axis(shape.len())?;
    if index[axis] as usize + count > shape[axis] {
        return None;
    }
    let shape64: Vec<u64> = shape.iter().map(|&n| n as u64).collect();
    // The data is logically row-major; the storage offset is the layout's.
    let start = usize::try_from(Layout::RowMajor.element_offset(&shape64, index)?).ok()?;
    let physical = usize::try_from(layout.element_offset(&shape64, index)?).ok()?;
    Some(Run { start, stride: shape[axis + 1..].iter().product(), physical })
}

/// Byte address of element `offset` of a tile starting at `base`, and the byte just past `count` elements.
pub(super) fn byte_range(base: u64, bits: u32, offset: usize, count: usize) -> (u64, u64) {
    let start_bits = base * 8 + offset as u64 * u64::from(bits);
    let end_bits = start_bits + count as u64 * u64::from(bits);
    (start_bits / 8, end_bits.div_ceil(8))
}

/// The span of a function, for argument errors.
pub(super) fn func_span(func: &Func) -> Span {
    func.span
}
