//! mbarrier objects, from the PTX ISA ("Parallel Synchronization and Communication Instructions: mbarrier"):
//! the state of each barrier of a block's `nvgpu.mbarrier.create` groups, and the ops on it.
//!
//! A barrier has a current phase (0 after `init`), an expected arrival count (`init`'s count), the arrivals
//! still pending in this phase, and a transaction count (tx-count: bytes that asynchronous copies have yet
//! to complete; `arrive.expect_tx` raises it). The phase completes when no arrival is pending and the
//! tx-count is zero: the phase number advances and the pending count is reset to the expected count.
//! `try_wait.parity p` returns once the phase of parity `p` has completed, i.e. once the current phase's
//! parity is not `p` (the usual loop waits on parity `k % 2` in its k-th round).
//!
//! Scheduling: a warp whose wait is not satisfied stops there ([`super::exec`] marks it waiting) and the
//! block's other warps run; it tries again after them. When a round of the block's warps makes no progress
//! while one waits, the wait can never end (on the GPU too: no thread that could arrive is left running),
//! and the simulator reports it at the wait with the barrier's counts.
//!
//! A TMA load's bytes complete on a barrier (complete-tx, [`MBarrier::complete_tx`]): the tx-count drops
//! by them, which completes the phase once no arrival is pending either.
//!
//! Memory ordering: arrivals release and waits acquire (the race detector's vector clocks, [`super::race`]),
//! so accesses ordered only by an mbarrier are not reported. Lanes of one warp waiting on different barriers
//! go on together, when all their phases are done.

use std::collections::HashMap;

use crate::body::{Operation, Value};
use crate::ops::typed;

use super::error::SimError;
use super::exec::{Ctx, Warp};
use super::memory::MemRef;

/// The largest arrival count of `mbarrier.init` and the largest tx-count (2^20 - 1).
pub const MAX_COUNT: i64 = (1 << 20) - 1;

/// One barrier's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MBarrier {
    phase: u64,
    expected: i64,
    pending: i64,
    tx: i64,
}

impl MBarrier {
    fn init(count: i64) -> MBarrier {
        MBarrier { phase: 0, expected: count, pending: count, tx: 0 }
    }

    /// An arrive-on operation: one pending arrival less; the phase completes when none is pending and the
    /// tx-count is zero.
    fn arrive(&mut self) -> Option<u64> {
        self.pending -= 1;
        self.try_complete()
    }

    /// The complete-tx operation of an asynchronous copy (TMA) that moved `bytes`: the tx-count drops by
    /// them, which may complete the phase. Returns the phase completed, if any.
    pub(super) fn complete_tx(&mut self, bytes: i64) -> Option<u64> {
        self.tx -= bytes;
        self.try_complete()
    }

    /// Completes the current phase if no arrival is pending and the tx-count is zero; returns its number.
    fn try_complete(&mut self) -> Option<u64> {
        if self.pending <= 0 && self.tx == 0 {
            self.phase += 1;
            self.pending = self.expected;
            return Some(self.phase - 1);
        }
        None
    }

    /// The phase in progress.
    pub(super) fn phase(&self) -> u64 {
        self.phase
    }

    /// Whether the phase of parity `parity` (0 or 1) has completed: the current one has the other parity.
    fn phase_done(&self, parity: u64) -> bool {
        self.phase % 2 != parity
    }
}

/// The barriers of one block, by (shared tile, element): created by `init`.
#[derive(Clone, Debug, Default)]
pub(super) struct MBarriers {
    pub(super) state: HashMap<(usize, usize), MBarrier>,
}

/// Which barrier a warp waits on, for the report when it never completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Waiting {
    pub op: crate::body::OpId,
    pub barrier: (usize, usize),
    pub parity: u64,
}

fn error(warp: &Warp, ctx: &Ctx<'_>, op: &Operation, message: String) -> SimError {
    SimError::MBarrier { span: op.span, op: op.kind.name(), at: warp.place(ctx), message }
}

impl Warp {
    /// The barrier `%bars[%id]` names in `lane`: its shared tile and element, bounds-checked.
    pub(super) fn barrier(&self, ctx: &Ctx<'_>, op: &Operation, bars: Value, id: Value, lane: u32) -> Result<(usize, usize), SimError> {
        let MemRef::Shared(tile) = self.mem(ctx, op, bars, lane)? else {
            return Err(error(self, ctx, op, format!("lane {lane}: the barrier group is not in shared memory")));
        };
        let n = ctx.shared.tiles.get(tile).map_or(0, |t| t.data.values.len());
        let i = self.int(ctx, op, id, lane)?;
        match usize::try_from(i) {
            Ok(i) if i < n => Ok((tile, i)),
            _ => Err(error(self, ctx, op, format!("lane {lane} names barrier {i} of a group of {n}"))),
        }
    }

    /// The lanes of `mask` where the optional predicate is true.
    pub(super) fn predicated(&self, ctx: &Ctx<'_>, op: &Operation, predicate: Option<Value>, mask: u32) -> Result<Vec<u32>, SimError> {
        let mut lanes = Vec::new();
        for lane in super::error::LaneMask(mask).lanes() {
            let on = match predicate {
                Some(p) => self.num(ctx, op, p, lane)? != 0.0,
                None => true,
            };
            if on {
                lanes.push(lane);
            }
        }
        Ok(lanes)
    }

    /// `nvgpu.mbarrier.init %bars[%id], %count {, predicate = %p}`: each (predicated) lane initializes.
    pub(super) fn mbarrier_init(&mut self, ctx: &mut Ctx<'_>, op: &Operation, v: &typed::MBarrierInit, mask: u32) -> Result<(), SimError> {
        for lane in self.predicated(ctx, op, v.predicate, mask)? {
            let at = self.barrier(ctx, op, v.barriers, v.mbar_id, lane)?;
            let count = self.int(ctx, op, v.count, lane)?;
            if !(1..=MAX_COUNT).contains(&count) {
                return Err(error(self, ctx, op, format!("lane {lane} initializes a barrier with count {count}; it must be in 1..={MAX_COUNT}")));
            }
            ctx.mbarriers.state.insert(at, MBarrier::init(count));
        }
        Ok(())
    }

    /// `nvgpu.mbarrier.arrive` and `nvgpu.mbarrier.arrive.expect_tx` (`txcount` first raises the tx-count).
    pub(super) fn mbarrier_arrive(
        &mut self,
        ctx: &mut Ctx<'_>,
        op: &Operation,
        (bars, id): (Value, Value),
        txcount: Option<Value>,
        predicate: Option<Value>,
        mask: u32,
    ) -> Result<(), SimError> {
        for lane in self.predicated(ctx, op, predicate, mask)? {
            let at = self.barrier(ctx, op, bars, id, lane)?;
            let tx = match txcount {
                Some(t) => self.int(ctx, op, t, lane)?,
                None => 0,
            };
            if !(0..=MAX_COUNT).contains(&tx) {
                return Err(error(self, ctx, op, format!("lane {lane} expects {tx} transaction bytes; it must be in 0..={MAX_COUNT}")));
            }
            let Some(barrier) = ctx.mbarriers.state.get_mut(&at) else {
                return Err(error(self, ctx, op, format!("lane {lane} arrives on barrier {} before 'nvgpu.mbarrier.init' initialized it", at.1)));
            };
            barrier.tx += tx;
            let completed = barrier.arrive();
            let mut race = ctx.race.borrow_mut();
            race.arrive(self.id, at);
            if let Some(phase) = completed {
                race.phase_completed(at, phase);
            }
        }
        Ok(())
    }

    /// `nvgpu.mbarrier.try_wait.parity`: `None` when every active lane's phase is done (the warp goes on),
    /// else the barrier a lane still waits on.
    pub(super) fn mbarrier_wait(&self, ctx: &Ctx<'_>, id: crate::body::OpId, mask: u32) -> Result<Option<Waiting>, SimError> {
        let op = ctx.func.body.op(id);
        let v = op.view::<typed::MBarrierTryWaitParity>().ok_or_else(|| error(self, ctx, op, "malformed".into()))?;
        let mut seen_phases = Vec::new();
        for lane in super::error::LaneMask(mask).lanes() {
            let at = self.barrier(ctx, op, v.barriers, v.mbar_id, lane)?;
            let parity = u64::from(self.num(ctx, op, v.phase_parity, lane)? != 0.0);
            let Some(barrier) = ctx.mbarriers.state.get(&at) else {
                return Err(error(self, ctx, op, format!("lane {lane} waits on barrier {} before 'nvgpu.mbarrier.init' initialized it", at.1)));
            };
            if !barrier.phase_done(parity) {
                return Ok(Some(Waiting { op: id, barrier: at, parity }));
            }
            // The phase seen complete: the latest one of this parity (none before phase 0).
            let phase = barrier.phase;
            let seen = if (phase + 1) % 2 == parity { phase.checked_sub(1) } else { phase.checked_sub(2) };
            seen_phases.push((at, seen));
        }
        // Every lane goes on: the warp acquires what the phases it saw released (race detector).
        let mut race = ctx.race.borrow_mut();
        for (at, seen) in seen_phases {
            if let Some(phase) = seen {
                race.acquire(self.id, at, phase);
            }
        }
        Ok(None)
    }

    /// The error for a wait that can never end (no warp of the block made progress while this one waited).
    pub(super) fn mbarrier_deadlock(&self, ctx: &Ctx<'_>, waiting: Waiting) -> SimError {
        let op = ctx.func.body.op(waiting.op);
        let (tile, i) = waiting.barrier;
        let state = ctx.mbarriers.state.get(&(tile, i)).copied().unwrap_or(MBarrier::init(0));
        error(
            self,
            ctx,
            op,
            format!(
                "the wait for phase parity {} of barrier {i} never ends: its current phase {} still needs {} of {} arrivals and {} transaction bytes, and no other warp of the block can run (each has returned, waits at a barrier or on an mbarrier)",
                waiting.parity, state.phase, state.pending, state.expected, state.tx
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_complete_on_the_last_arrival_and_zero_tx() {
        let mut b = MBarrier::init(2);
        assert!(!b.phase_done(0));
        assert_eq!(b.arrive(), None);
        assert!(!b.phase_done(0));
        assert_eq!(b.arrive(), Some(0));
        // Phase 0 completed: waiting on parity 0 returns, parity 1 (the current phase) does not.
        assert!(b.phase_done(0) && !b.phase_done(1));
        assert_eq!((b.phase, b.pending), (1, 2));
        // A pending transaction count holds the phase open after the last arrival.
        b.tx += 128;
        b.arrive();
        b.arrive();
        assert!(!b.phase_done(1));
        assert_eq!(b.pending, 0);
        // The copy's bytes complete the phase.
        assert_eq!(b.complete_tx(64), None);
        assert_eq!(b.complete_tx(64), Some(1));
        assert!(b.phase_done(1) && b.pending == 2 && b.tx == 0);
        // Bytes may complete before the arrival that expects them (the tx-count goes below zero meanwhile).
        assert_eq!(b.complete_tx(32), None);
        b.tx += 32;
        b.arrive();
        assert_eq!(b.arrive(), Some(2));
    }
}
