//! Block-wide synchronization from memory effects: which tile-level accesses another warp of the block may
//! still have pending at a point, and whether an op must wait for them behind a barrier.
//!
//! Warps of a block run independently between barriers, so an access to a buffer every warp shares (a shared
//! tile, or a global tile: `bar.sync` orders global memory within a block too) conflicts with another warp's
//! earlier access to it when one of the two writes, unless a barrier lies between them. [`Pending`] is the
//! set of accesses since the last barrier; [`Pending::hazard`] names the conflict an op's [`effects`] would
//! have with them; [`carried_into_next_iteration`] is what a `tile.for` body leaves pending across its back
//! edge, so the start of the next iteration sees it (a `tile.copy_g2s` of a global tile that a `tile.copy_r2g`
//! later in the body wrote in the previous iteration: read after write through global memory).
//!
//! Barriers at the tile level: every `tile.copy_g2s` ends with one (the lowering waits for its copies and
//! synchronizes the block, so its own effects are complete after it), and `tile.barrier` is one.
//! [`crate::lower`] places a barrier before an op whose effects have a hazard with what is pending; other
//! lowerings that write shared memory from registers join here by reporting their effects through
//! [`effects`].

use std::collections::BTreeSet;

use tilec_ir::typed::{self, AnyOp};
use tilec_ir::{Body, OpId, OpKind, Value};

/// One access of a tile-level op to memory every warp of the block shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    ReadShared(Value),
    WriteShared(Value),
    ReadGlobal(Value),
    WriteGlobal(Value),
}

/// A conflict between an op's access and one pending from another warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hazard {
    /// Writing a shared tile that other warps may still be reading.
    SharedWriteAfterRead(Value),
    /// Reading a shared tile that other warps may still be writing.
    SharedReadAfterWrite(Value),
    /// Reading a global tile that other warps of the block stored to.
    GlobalReadAfterWrite(Value),
}

/// The accesses since the last barrier, by buffer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pending {
    pub read_shared: BTreeSet<Value>,
    pub written_shared: BTreeSet<Value>,
    pub written_global: BTreeSet<Value>,
}

impl Pending {
    /// Records accesses.
    pub fn add(&mut self, effects: &[Effect]) {
        for &e in effects {
            match e {
                Effect::ReadShared(v) => self.read_shared.insert(v),
                Effect::WriteShared(v) => self.written_shared.insert(v),
                Effect::WriteGlobal(v) => self.written_global.insert(v),
                // Global reads conflict only with later writes, which a copy's own barrier orders.
                Effect::ReadGlobal(_) => false,
            };
        }
    }

    /// Adds everything `other` has pending.
    pub fn merge(&mut self, other: &Pending) {
        self.read_shared.extend(&other.read_shared);
        self.written_shared.extend(&other.written_shared);
        self.written_global.extend(&other.written_global);
    }

    /// A barrier: nothing is pending.
    pub fn clear(&mut self) {
        *self = Pending::default();
    }

    /// The first conflict of `effects` with what is pending, or `None` when the op may go without a barrier.
    pub fn hazard(&self, effects: &[Effect]) -> Option<Hazard> {
        effects.iter().find_map(|&e| match e {
            Effect::WriteShared(v) if self.read_shared.contains(&v) => Some(Hazard::SharedWriteAfterRead(v)),
            Effect::ReadShared(v) if self.written_shared.contains(&v) => Some(Hazard::SharedReadAfterWrite(v)),
            Effect::ReadGlobal(v) if self.written_global.contains(&v) => Some(Hazard::GlobalReadAfterWrite(v)),
            _ => None,
        })
    }
}

/// The block-shared memory accesses of a tile-level op; a `tile.for`'s are its body's (every op nested in it).
pub fn effects(body: &Body, op: OpId) -> Vec<Effect> {
    let mut out = Vec::new();
    if body.op(op).kind == OpKind::For {
        body.walk(body.op(op).regions[0], &mut |inner| out.extend(own_effects(body, inner)));
        return out;
    }
    own_effects(body, op)
}

fn own_effects(body: &Body, op: OpId) -> Vec<Effect> {
    match AnyOp::from_op(body.op(op)) {
        Some(AnyOp::CopyG2S(typed::CopyG2S { src, dst, .. })) => vec![Effect::ReadGlobal(src), Effect::WriteShared(dst)],
        Some(AnyOp::CopyS2R(typed::CopyS2R { src, .. })) => vec![Effect::ReadShared(src)],
        Some(AnyOp::CopyR2S(typed::CopyR2S { dst, .. })) => vec![Effect::WriteShared(dst)],
        Some(AnyOp::CopyR2G(typed::CopyR2G { dst, .. })) => vec![Effect::WriteGlobal(dst)],
        _ => Vec::new(),
    }
}

/// Whether the block is synchronized right after `op` (its own accesses complete): a `tile.copy_g2s` (the
/// lowering waits for its copies and places a barrier) or a `tile.barrier`.
pub fn barrier_after(body: &Body, op: OpId) -> bool {
    matches!(body.op(op).kind, OpKind::CopyG2S | OpKind::TileBarrier)
}

/// What the body of the `tile.for` `for_op` leaves pending at its end, after its last barrier: the accesses
/// that the next iteration's first ops meet across the back edge. A nested loop counts with all its accesses
/// and as no barrier (it may run no iteration).
pub fn carried_into_next_iteration(body: &Body, for_op: OpId) -> Pending {
    let mut pending = Pending::default();
    let Some(&block) = body.op(for_op).regions.first() else { return pending };
    for &op in &body.block(block).ops {
        if barrier_after(body, op) {
            pending.clear();
        } else {
            pending.add(&effects(body, op));
        }
    }
    pending
}
