//! Where a kernel's shared tiles live: the one placement rule (program order, each allocation at the next
//! [`SHARED_ALIGN`]-aligned offset), the alignment, and the limits. The backends, the warp simulator, the
//! bank-conflict analysis, software pipelining and `check-resources` all place tiles through this module, so
//! the addresses they reason about are the addresses the PTX uses.
//!
//! A tile that `nvgpu.warpgroup.generate.descriptor` reads is aligned to [`WGMMA_ALIGN`] (1024 bytes) instead:
//! wgmma swizzles shared *addresses* (bits 4-6 by bits 7-9 for 128 bytes), the tile's layout swizzles *offsets*,
//! and the two agree when the tile starts at a multiple of the largest swizzle pattern (8 rows of 128 bytes).

use crate::body::{Func, OpId};
use crate::ops::OpKind;
use crate::target::Target;
use crate::types::{TileType, Type};

/// Alignment of every shared allocation, in bytes (both backends declare their arrays with it).
pub const SHARED_ALIGN: u64 = 128;

/// Alignment of a shared tile that a wgmma descriptor reads: the 128-byte swizzle's pattern repeats every
/// 1024 bytes (the descriptor's base offset, 0 here, would otherwise have to say where the tile starts in it).
pub const WGMMA_ALIGN: u64 = 1024;

/// The most static shared memory a kernel may declare (48 KiB); more needs dynamic shared memory.
pub const STATIC_SHARED_LIMIT: u64 = 48 * 1024;

/// The most shared memory one block may use on the largest target (sm_90: 227 KiB). Per-target limits are
/// [`Target::max_shared_bytes_per_block`].
pub const MAX_SHARED_BYTES: u64 = Target::Sm90.max_shared_bytes_per_block();

/// `offset` rounded up to the next multiple of [`SHARED_ALIGN`] (saturating).
pub fn align_shared(offset: u64) -> u64 {
    offset.div_ceil(SHARED_ALIGN).saturating_mul(SHARED_ALIGN)
}

/// The bytes a shared tile occupies before alignment (0 when its shape is not static).
pub fn tile_bytes(t: &TileType) -> u64 {
    t.num_elements().unwrap_or(0).saturating_mul(u64::from(t.elem.bit_width())).div_ceil(8)
}

/// One `tile.alloc_shared` (or `nvgpu.mbarrier.create`), placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacedAllocation<'f> {
    /// The `tile.alloc_shared` op.
    pub op: OpId,
    /// The tile it allocates (`None` when the op does not produce a tile: the verifier rejects that).
    pub tile: Option<&'f TileType>,
    /// Byte offset in the block's shared memory (a multiple of `align`).
    pub offset: u64,
    /// Size in bytes ([`tile_bytes`]).
    pub bytes: u64,
    /// Its alignment: [`SHARED_ALIGN`], or [`WGMMA_ALIGN`] for a tile a wgmma descriptor reads.
    pub align: u64,
}

impl PlacedAllocation<'_> {
    /// The first byte past the allocation: the block's shared memory in use up to and including it.
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.bytes)
    }
}

/// Every `tile.alloc_shared` and `nvgpu.mbarrier.create` of `func` in program order, each at the next [`SHARED_ALIGN`]-aligned offset
/// after the previous one (a swizzled TMA tile or a wgmma-read tile at the next multiple of its [`tile_alignments`]). Callers decide what is an error (a shape that is not static, a total over a limit).
pub fn place_shared_allocations(func: &Func) -> Vec<PlacedAllocation<'_>> {
    let mut ops = Vec::new();
    func.body.walk(func.entry, &mut |op| {
        // `nvgpu.mbarrier.create` allocates its group of barriers like a shared tile.
        if matches!(func.body.op(op).kind, OpKind::AllocShared | OpKind::MBarrierCreate) {
            ops.push(op);
        }
    });
    let mut placed = Vec::with_capacity(ops.len());
    let mut next = 0u64;
    // A swizzled TMA tile, or a tile a wgmma descriptor reads, starts at a multiple of its swizzle's repeat.
    let aligned = tile_alignments(func);
    for op in ops {
        let result = func.body.op(op).result();
        let tile = match result.map(|r| func.body.ty(r)) {
            Some(Type::Tile(t)) => Some(t),
            _ => None,
        };
        let bytes = tile.map_or(0, tile_bytes);
        let align = result.and_then(|r| aligned.get(&r)).copied().unwrap_or(SHARED_ALIGN);
        let offset = next.div_ceil(align).saturating_mul(align);
        next = offset.saturating_add(bytes);
        placed.push(PlacedAllocation { op, tile, offset, bytes, align });
    }
    placed
}

/// The alignment (more than [`SHARED_ALIGN`]) each shared tile needs, by its value: a swizzled TMA tile's
/// repeat (`crate::tma::tile_alignments`), [`WGMMA_ALIGN`] for a tile a wgmma descriptor reads.
pub fn tile_alignments(func: &Func) -> std::collections::HashMap<crate::body::Value, u64> {
    let mut align = crate::tma::tile_alignments(func);
    func.body.walk(func.entry, &mut |id| {
        let op = func.body.op(id);
        if op.kind == OpKind::WarpgroupGenerateDescriptor {
            if let Some(&tile) = op.operands.first() {
                let entry = align.entry(tile).or_insert(WGMMA_ALIGN);
                *entry = (*entry).max(WGMMA_ALIGN);
            }
        }
    });
    align
}

/// The shared memory `func`'s allocations take in total (the end of the last one).
pub fn shared_bytes(func: &Func) -> u64 {
    place_shared_allocations(func).last().map_or(0, PlacedAllocation::end)
}
