//! The race detector: two accesses to one element of shared memory, or of a global tile within one thread
//! block, from different warps, at least one of them a write, that nothing orders, are a data race on the
//! GPU (the warps of a block run concurrently). The simulator runs the warps of a block one after another
//! between barriers, so it sees every access; the detector remembers, per element, the last write and the
//! reads since it (the latest per warp), and reports the first conflicting pair with both source locations.
//!
//! What orders two accesses (a happens-before relation, kept as vector clocks over the block's warps and
//! its mbarriers):
//! - program order within a warp (warp-synchronous execution);
//! - `bar.sync` (`nvgpu.barrier`): everything before it in any warp is before everything after it;
//! - an mbarrier phase: a warp's accesses before its `arrive` on a barrier are before every access of a warp
//!   whose `try_wait.parity` saw that phase (or a later one) complete (release/acquire at CTA scope). Each
//!   warp's clock counts its arrivals; a phase's clock joins the clocks of its arrivals.
//! - the async proxy: a TMA load's writes into shared memory belong to no warp; they are ordered before an
//!   access only through the mbarrier phase the load completes (its transaction bytes), i.e. a wait on that
//!   phase (or, transitively, a `bar.sync` after some warp's wait). A read of a stage whose load no wait
//!   covers is a race, even in the warp that issued the load.
//!
//! An asynchronous copy (`cp.async`) writes shared memory when it lands, at the issuing thread's
//! `nvgpu.device_async_wait`: that is the access the other warps must be ordered after (a wait followed by a
//! barrier), so the write is recorded there, in the waiting warp's interval.
//!
//! Two warps storing the same value to one element are not a reported race: the element ends up holding that
//! value either way (the replicated layouts of small register tiles store identical copies from every warp).
//!
//! Global memory is checked within a block only: blocks are not ordered by barriers at all, and a kernel whose
//! blocks write what other blocks read is outside what tilec's programs do.

use std::collections::HashMap;

use crate::diag::Span;

use super::error::{Place, SimError};

/// Which memory an access touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RaceSpace {
    /// The shared tile with this index (in the block's shared layout).
    Shared(usize),
    /// The kernel argument with this index.
    Global(usize),
}

/// Who made an access: a warp, or the async proxy completing on an mbarrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Agent {
    Warp(u32),
    /// A TMA load that completes on this barrier (its clock index), issued by warp `issuer`.
    Async { barrier: usize, issuer: u32 },
}

/// One recorded access.
#[derive(Clone, Copy, Debug)]
struct Access {
    /// Block and barrier interval ([`RaceDetector::stamp`]).
    stamp: u64,
    agent: Agent,
    /// The agent's clock when it accessed: the warp's arrivals so far plus one, or for a TMA write the
    /// number of the barrier's phase it completes plus one.
    epoch: u64,
    span: Span,
    op: &'static str,
}

impl Access {
    fn warp(&self) -> u32 {
        match self.agent {
            Agent::Warp(w) | Agent::Async { issuer: w, .. } => w,
        }
    }
}

/// What the detector remembers of one element.
#[derive(Clone, Debug, Default)]
struct Cell {
    write: Option<Access>,
    /// The reads since the write, the latest of each warp.
    reads: Vec<Access>,
}

/// A vector clock: entry `i` is what is known of agent `i` (warps first, then barriers).
type Clock = Vec<u64>;

fn join(into: &mut Clock, other: &Clock) {
    if into.len() < other.len() {
        into.resize(other.len(), 0);
    }
    for (a, &b) in into.iter_mut().zip(other) {
        *a = (*a).max(b);
    }
}

/// The clocks of one mbarrier: the join of the arrivals of the phase in progress (and of every earlier one),
/// and that of each completed phase.
#[derive(Clone, Debug, Default)]
struct BarrierClocks {
    index: usize,
    current: Clock,
    completed: Vec<Clock>,
}

/// Per-element access history of every shared tile and global argument.
#[derive(Debug, Default)]
pub(super) struct RaceDetector {
    enabled: bool,
    block: u64,
    interval: u64,
    shared: Vec<Vec<Cell>>,
    global: Vec<Vec<Cell>>,
    warps: usize,
    /// Each warp's vector clock.
    clocks: Vec<Clock>,
    /// By barrier (shared tile, element).
    barriers: HashMap<(usize, usize), BarrierClocks>,
}

impl RaceDetector {
    pub fn new(enabled: bool, shared_tiles: usize, global_args: usize) -> RaceDetector {
        RaceDetector {
            enabled,
            shared: vec![Vec::new(); shared_tiles],
            global: vec![Vec::new(); global_args],
            ..RaceDetector::default()
        }
    }

    /// A new thread block of `warps` warps starts: nothing of the previous one is remembered.
    pub fn start_block(&mut self, warps: usize) {
        self.block += 1;
        self.interval = 0;
        self.warps = warps;
        self.clocks = (0..warps)
            .map(|w| {
                let mut c = vec![0; warps];
                c[w] = 1;
                c
            })
            .collect();
        self.barriers.clear();
    }

    /// Every warp of the block passed a barrier: accesses before it are ordered before those after, and every
    /// warp knows what any warp knew (the mbarrier phases one of them saw).
    pub fn barrier(&mut self) {
        self.interval += 1;
        let mut all = Clock::new();
        for c in &self.clocks {
            join(&mut all, c);
        }
        // Each warp then starts a new epoch: what it does after the barrier is not known to the others (the
        // stamp orders what came before).
        for (w, c) in self.clocks.iter_mut().enumerate() {
            let own = c.get(w).copied().unwrap_or(0);
            *c = all.clone();
            c[w] = own + 1;
        }
    }

    fn stamp(&self) -> u64 {
        (self.block << 32) | (self.interval & 0xffff_ffff)
    }

    fn barrier_clocks(&mut self, key: (usize, usize)) -> &mut BarrierClocks {
        let next = self.warps + self.barriers.len();
        self.barriers.entry(key).or_insert_with(|| BarrierClocks { index: next, ..BarrierClocks::default() })
    }

    /// `warp` arrives on the barrier `key`: its accesses so far are released to the phase in progress.
    pub fn arrive(&mut self, warp: u32, key: (usize, usize)) {
        let Some(clock) = self.clocks.get(warp as usize).cloned() else { return };
        join(&mut self.barrier_clocks(key).current, &clock);
        if let Some(own) = self.clocks.get_mut(warp as usize).and_then(|c| c.get_mut(warp as usize)) {
            *own += 1;
        }
    }

    /// Phase `phase` of the barrier `key` completed.
    pub fn phase_completed(&mut self, key: (usize, usize), phase: u64) {
        let b = self.barrier_clocks(key);
        let mut clock = b.current.clone();
        if clock.len() <= b.index {
            clock.resize(b.index + 1, 0);
        }
        clock[b.index] = phase + 1;
        b.current = clock.clone();
        while b.completed.len() as u64 <= phase {
            b.completed.push(Clock::new());
        }
        b.completed[phase as usize] = clock;
    }

    /// `warp`'s wait saw phase `phase` of the barrier `key` complete: it acquires what that phase released.
    pub fn acquire(&mut self, warp: u32, key: (usize, usize), phase: u64) {
        let Some(released) = self.barriers.get(&key).and_then(|b| b.completed.get(phase as usize)).cloned() else { return };
        if let Some(c) = self.clocks.get_mut(warp as usize) {
            join(c, &released);
        }
    }

    /// The agent of a TMA load issued by `issuer` that completes phase `phase` of the barrier `key`, and its
    /// epoch.
    pub fn async_agent(&mut self, issuer: u32, key: (usize, usize), phase: u64) -> (Agent, u64) {
        let index = self.barrier_clocks(key).index;
        (Agent::Async { barrier: index, issuer }, phase + 1)
    }

    /// Whether `a` happens before the current point of `warp` (accesses of another block always do).
    fn ordered(&self, a: &Access, warp: u32, stamp: u64) -> bool {
        if a.stamp >> 32 != stamp >> 32 {
            return true;
        }
        let known = |agent: usize| self.clocks.get(warp as usize).and_then(|c| c.get(agent)).copied().unwrap_or(0);
        match a.agent {
            Agent::Warp(u) => u == warp || a.stamp < stamp || known(u as usize) >= a.epoch,
            Agent::Async { barrier, .. } => known(barrier) >= a.epoch,
        }
    }

    fn cells(&mut self, space: RaceSpace, len: usize) -> Option<&mut Vec<Cell>> {
        let cells = match space {
            RaceSpace::Shared(i) => self.shared.get_mut(i)?,
            RaceSpace::Global(i) => self.global.get_mut(i)?,
        };
        if cells.len() < len {
            cells.resize(len, Cell::default());
        }
        Some(cells)
    }

    fn now(&self, agent: Agent, epoch: Option<u64>, span: Span, op: &'static str) -> Access {
        let epoch = epoch.unwrap_or_else(|| match agent {
            Agent::Warp(w) => self.clocks.get(w as usize).and_then(|c| c.get(w as usize)).copied().unwrap_or(1),
            Agent::Async { .. } => 0,
        });
        Access { stamp: self.stamp(), agent, epoch, span, op }
    }

    /// Records that `warp` read the elements at `positions` of `space` (of `len` elements) in `op`.
    #[allow(clippy::too_many_arguments)]
    pub fn read(
        &mut self,
        space: RaceSpace,
        len: usize,
        positions: impl IntoIterator<Item = usize>,
        warp: u32,
        span: Span,
        op: &'static str,
        place: Place,
    ) -> Result<(), SimError> {
        if !self.enabled {
            return Ok(());
        }
        let now = self.now(Agent::Warp(warp), None, span, op);
        let stamp = now.stamp;
        let Some(mut cells) = self.cells(space, len).map(std::mem::take) else { return Ok(()) };
        let mut result = Ok(());
        for p in positions {
            let Some(cell) = cells.get_mut(p) else { continue };
            if let Some(w) = cell.write.filter(|w| !self.ordered(w, warp, stamp)) {
                result = Err(race(space, w, now, "reads", "wrote", place));
                break;
            }
            match cell.reads.iter_mut().find(|r| r.agent == now.agent) {
                Some(r) => *r = now,
                None => cell.reads.push(now),
            }
        }
        self.put_back(space, cells);
        result
    }

    fn put_back(&mut self, space: RaceSpace, cells: Vec<Cell>) {
        let slot = match space {
            RaceSpace::Shared(i) => self.shared.get_mut(i),
            RaceSpace::Global(i) => self.global.get_mut(i),
        };
        if let Some(slot) = slot {
            *slot = cells;
        }
    }

    /// Records that `warp` wrote the elements at `positions` of `space` (of `len` elements) in `op`; with each
    /// position, whether the write stores the value already there. Two warps writing the same value to one
    /// element is not reported (the replicated register layouts of small tiles store identical copies from
    /// every warp): whichever lands last, the element holds that value.
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &mut self,
        space: RaceSpace,
        len: usize,
        positions: impl IntoIterator<Item = (usize, bool)>,
        warp: u32,
        span: Span,
        op: &'static str,
        place: Place,
    ) -> Result<(), SimError> {
        self.write_as(space, len, positions, (Agent::Warp(warp), None), span, op, place)
    }

    /// [`RaceDetector::write`] by any agent (a TMA load's async-proxy write: [`RaceDetector::async_agent`]).
    #[allow(clippy::too_many_arguments)]
    pub fn write_as(
        &mut self,
        space: RaceSpace,
        len: usize,
        positions: impl IntoIterator<Item = (usize, bool)>,
        (agent, epoch): (Agent, Option<u64>),
        span: Span,
        op: &'static str,
        place: Place,
    ) -> Result<(), SimError> {
        if !self.enabled {
            return Ok(());
        }
        let now = self.now(agent, epoch, span, op);
        // The async proxy's write is ordered after what its issuing warp knew at the issue, nothing more.
        let (stamp, warp) = (now.stamp, now.warp());
        let Some(mut cells) = self.cells(space, len).map(std::mem::take) else { return Ok(()) };
        let mut result = Ok(());
        for (p, same_value) in positions {
            let Some(cell) = cells.get_mut(p) else { continue };
            if let Some(w) = cell.write.filter(|w| !same_value && !self.ordered(w, warp, stamp)) {
                result = Err(race(space, w, now, "writes", "wrote", place));
                break;
            }
            if let Some(r) = cell.reads.iter().find(|r| !self.ordered(r, warp, stamp)) {
                result = Err(race(space, *r, now, "writes", "read", place));
                break;
            }
            cell.reads.clear();
            cell.write = Some(now);
        }
        self.put_back(space, cells);
        result
    }
}

fn race(space: RaceSpace, first: Access, second: Access, does: &'static str, did: &'static str, at: Place) -> SimError {
    let space = match space {
        RaceSpace::Shared(_) => "shared",
        RaceSpace::Global(_) => "global",
    };
    SimError::Race {
        span: second.span,
        op: second.op,
        does,
        space,
        first_span: first.span,
        first_op: first.op,
        first_warp: first.warp(),
        did,
        at,
        async_proxy: matches!(first.agent, Agent::Async { .. }) || matches!(second.agent, Agent::Async { .. }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLACE: Place = Place { block: [0, 0, 0], warp: 0 };

    fn detector() -> RaceDetector {
        let mut d = RaceDetector::new(true, 1, 0);
        d.start_block(2);
        d
    }

    fn write(d: &mut RaceDetector, warp: u32) -> Result<(), SimError> {
        d.write(RaceSpace::Shared(0), 4, [(0, false)], warp, Span::default(), "nvgpu.store", PLACE)
    }

    fn read(d: &mut RaceDetector, warp: u32) -> Result<(), SimError> {
        d.read(RaceSpace::Shared(0), 4, [0], warp, Span::default(), "nvgpu.load", PLACE)
    }

    /// After a barrier, accesses of the new interval are unordered again (each warp starts a new epoch).
    #[test]
    fn a_barrier_orders_only_what_came_before_it() {
        let mut d = detector();
        write(&mut d, 0).unwrap();
        d.barrier();
        read(&mut d, 1).unwrap();
        d.barrier();
        write(&mut d, 0).unwrap();
        assert!(read(&mut d, 1).is_err());
    }

    /// Warp 0 writes, then arrives; warp 1 reads after its wait saw that phase: ordered. Without the wait
    /// (or before the arrival), a race.
    #[test]
    fn an_mbarrier_phase_orders_the_arrivals_accesses_before_the_waiters() {
        let key = (0, 0);
        let mut d = detector();
        write(&mut d, 0).unwrap();
        d.arrive(0, key);
        d.phase_completed(key, 0);
        assert!(read(&mut d, 1).is_err());
        let mut d = detector();
        write(&mut d, 0).unwrap();
        d.arrive(0, key);
        d.phase_completed(key, 0);
        d.acquire(1, key, 0);
        read(&mut d, 1).unwrap();
        // A write by warp 0 after its arrival is not covered by that phase.
        write(&mut d, 0).unwrap_err();
    }

    /// A TMA load's write (the async proxy, completing phase 0) is ordered only by a wait on that phase, for
    /// the issuing warp too.
    #[test]
    fn a_tma_write_needs_the_wait_on_its_phase() {
        let key = (0, 0);
        let mut d = detector();
        let (agent, epoch) = d.async_agent(0, key, 0);
        d.write_as(RaceSpace::Shared(0), 4, [(0, false)], (agent, Some(epoch)), Span::default(), "nvgpu.tma.async.load", PLACE).unwrap();
        assert!(read(&mut d, 0).is_err());
        d.phase_completed(key, 0);
        d.acquire(0, key, 0);
        read(&mut d, 0).unwrap();
        // Warp 1 has not waited: still a race, until a barrier after warp 0's wait.
        assert!(read(&mut d, 1).is_err());
        d.barrier();
        read(&mut d, 1).unwrap();
    }
}
