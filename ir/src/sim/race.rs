//! The race detector: two accesses to one element of shared memory, or of a global tile within one thread
//! block, from different warps, at least one of them a write, with no barrier between them, are a data race
//! on the GPU (the warps of a block run concurrently; only `bar.sync` orders them). The simulator runs the
//! warps of a block one after another between barriers, so it sees every access of a barrier interval; the
//! detector remembers, per element, the last write and a read of the current interval, and reports the first
//! conflicting pair with both source locations.
//!
//! An asynchronous copy writes shared memory when it lands, at the issuing thread's
//! `nvgpu.device_async_wait`: that is the access the other warps must be ordered after (a wait followed by a
//! barrier), so the write is recorded there, in the waiting warp's interval.
//!
//! Two warps storing the same value to one element are not a reported race: the element ends up holding that
//! value either way (the replicated layouts of small register tiles store identical copies from every warp).
//!
//! Accesses within one warp are ordered by program order (warp-synchronous execution) and never race here.
//! Global memory is checked within a block only: blocks are not ordered by barriers at all, and a kernel whose
//! blocks write what other blocks read is outside what tilec's programs do.

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

/// One recorded access.
#[derive(Clone, Copy, Debug)]
struct Access {
    /// Block and barrier interval ([`RaceDetector::stamp`]).
    stamp: u64,
    warp: u32,
    span: Span,
    op: &'static str,
}

/// What the detector remembers of one element.
#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    write: Option<Access>,
    /// A read of the latest interval, and whether a second warp read the element in it too.
    read: Option<Access>,
    read_by_another_warp: bool,
}

/// Per-element access history of every shared tile and global argument.
#[derive(Debug, Default)]
pub(super) struct RaceDetector {
    enabled: bool,
    block: u64,
    interval: u64,
    shared: Vec<Vec<Cell>>,
    global: Vec<Vec<Cell>>,
}

impl RaceDetector {
    pub fn new(enabled: bool, shared_tiles: usize, global_args: usize) -> RaceDetector {
        RaceDetector {
            enabled,
            block: 0,
            interval: 0,
            shared: vec![Vec::new(); shared_tiles],
            global: vec![Vec::new(); global_args],
        }
    }

    /// A new thread block starts: nothing of the previous one is remembered.
    pub fn start_block(&mut self) {
        self.block += 1;
        self.interval = 0;
    }

    /// Every warp of the block passed a barrier: accesses before it are ordered before those after.
    pub fn barrier(&mut self) {
        self.interval += 1;
    }

    fn stamp(&self) -> u64 {
        (self.block << 32) | (self.interval & 0xffff_ffff)
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
        let now = Access { stamp: self.stamp(), warp, span, op };
        let Some(cells) = self.cells(space, len) else { return Ok(()) };
        for p in positions {
            let Some(cell) = cells.get_mut(p) else { continue };
            if let Some(w) = cell.write.filter(|w| w.stamp == now.stamp && w.warp != warp) {
                return Err(race(space, w, now, "reads", "wrote", place));
            }
            match cell.read {
                Some(r) if r.stamp == now.stamp => cell.read_by_another_warp |= r.warp != warp,
                _ => {
                    cell.read = Some(now);
                    cell.read_by_another_warp = false;
                }
            }
        }
        Ok(())
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
        if !self.enabled {
            return Ok(());
        }
        let now = Access { stamp: self.stamp(), warp, span, op };
        let Some(cells) = self.cells(space, len) else { return Ok(()) };
        for (p, same_value) in positions {
            let Some(cell) = cells.get_mut(p) else { continue };
            if let Some(w) = cell.write.filter(|w| w.stamp == now.stamp && w.warp != warp && !same_value) {
                return Err(race(space, w, now, "writes", "wrote", place));
            }
            if let Some(r) = cell.read.filter(|r| r.stamp == now.stamp && (r.warp != warp || cell.read_by_another_warp)) {
                return Err(race(space, r, now, "writes", "read", place));
            }
            cell.write = Some(now);
        }
        Ok(())
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
        first_warp: first.warp,
        did,
        at,
    }
}
